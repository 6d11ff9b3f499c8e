"""The controller against the simulator node's MuJoCo backend (``engine: mujoco``), in
lockstep: a world with a table, a push on ``~/apply_wrench``, the end effector pressed
on the table; and bad pushes rejected with the simulator running on."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from rnea_ros.core.errors import ParameterError, RneaError
from rnea_ros.nodes.contact_loop import push
from rnea_ros.nodes.harness import ClosedLoop, overrides
from rnea_ros.nodes.simulator import SIMULATOR_PARAMETERS, SimulatorNode
from rnea_ros.samples import sample_urdf, share_directory

pytest.importorskip("mujoco")

URDF = "package://rnea_ros/urdf/arm7.urdf"
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 1.0}
START = [0.0, 0.1, 0.0, -2.0, 0.0, 2.2, 0.8]  # flange above the table (top at 0.40 m)
PRESS = [0.0, 0.3, 0.0, -2.0, 0.0, 2.2, 0.8]  # flange 0.1 m below the top: pressed on it
# The shipped simulator file's drive damping (config/arm7_simulator.yaml, like a real arm's
# drives) brings a pushed arm under pure gravity compensation to rest; frictionless, it
# would coast on for ever.
DAMPING = yaml.safe_load((share_directory() / "config" / "arm7_simulator.yaml").read_text()
                         )["/**"]["ros__parameters"]["damping"]  # [N m s/rad]


def simulator(**extra):
    return {"urdf_path": URDF, "engine": "mujoco", "world": "table", "integrator": "rk4",
            "initial_positions": START, "damping": DAMPING, **extra}


def speed(loop: ClosedLoop, since: float) -> float:
    """Largest joint speed [rad/s] in the states stamped after ``since``."""
    t = np.array(loop.probe.recording.t)
    return float(np.abs(np.array(loop.probe.recording.qd)[t > since]).max())


def test_gravity_mode_yields_to_a_push_and_settles_to_a_steady_hold() -> None:
    with ClosedLoop(CONTROLLER, simulator()) as loop:
        node = loop.simulator
        assert node is not None and loop.run_for(0.3)
        before = np.array(loop.probe.recording.q[-1])
        push(loop, "flange", (0.0, 30.0, 0.0))  # 0.1 s (wrench_duration) sideways
        assert loop.spin_until(lambda: node.pushes == 1, 10.0)
        assert loop.run_for(5.0, wall_timeout=180.0)
        t_end = loop.sim_time
        q = np.array(loop.probe.recording.q)
        t = np.array(loop.probe.recording.t)
        yielded = float(np.abs(q[-1] - before).max())
        # Yields, then holds still: the last 0.5 s move less than 1 mrad, slower and slower.
        last = q[t > t_end - 0.5]
        print(f"push: yielded {yielded:.3f} rad; last 0.5 s: moved "
              f"{np.abs(last - last[-1]).max():.2e} rad, speed {speed(loop, t_end - 0.5):.2e}")
        assert len(DAMPING) == 7 and min(DAMPING) > 0.0  # the shipped arm is damped
        assert yielded > 0.05
        assert float(np.abs(last - last[-1]).max()) < 1e-3
        assert speed(loop, t_end - 0.5) < speed(loop, t_end - 2.0) < speed(loop, 0.0)
        c = loop.controller.controller
        assert sum(c.rejected.values()) == 0 and c.watchdog_late == 0


def test_inverse_dynamics_pressed_on_the_table_stays_bounded_and_quiet() -> None:
    with ClosedLoop({**CONTROLLER, "mode": "inverse_dynamics"}, simulator()) as loop:
        assert loop.run_for(0.1)
        ctl = loop.controller.controller
        T = np.array([0.0, 1.0, 10.0])
        positions = np.array([START, PRESS, PRESS])
        loop.probe.send_trajectory(ctl.reference_names, T, positions)
        assert loop.spin_until(lambda: ctl.reference.trajectory is not None, 5.0)
        assert loop.run_for(3.0, wall_timeout=120.0)
        node = loop.simulator
        assert node is not None
        commands = np.array(loop.probe.recording.commands)
        q = np.array(loop.probe.recording.q)
        t = np.array(loop.probe.recording.t)
        limit = node.effort_limit
        touching = node.sim.touching()
        print(f"pressed on the table: {touching}, |tau| max {np.abs(commands).max():.1f} N m, "
              f"|q - target| = {np.abs(q[-1] - PRESS).max():.3f} rad")
        assert np.all(np.isfinite(commands)) and np.all(np.abs(commands) <= limit + 1e-9)
        assert any(world == "world/table" for _, world in touching)
        assert np.abs(q[-1] - PRESS).max() > 0.02  # the table stops the arm short of it
        # Resting on it, not bouncing: over the last 0.5 s the joints stay within 5 mrad (the
        # soft contact lets the pressed arm creep ~2 mrad/s along the top) and the torques
        # within a few N m.
        last = q[t > t[-1] - 0.5]
        recent = commands[-500:]
        spread = float(np.ptp(recent, axis=0).max())
        print(f"last 0.5 s: joints within {np.ptp(last, axis=0).max():.2e} rad, torques within "
              f"{spread:.2f} N m, speed {speed(loop, t[-1] - 0.5):.3f} rad/s")
        assert float(np.ptp(last, axis=0).max()) < 5e-3 and spread < 5.0
        assert ctl.watchdog_late == 0 and ctl.stale_events == 0
        assert sum(ctl.rejected.values()) == 0


def test_bad_pushes_are_rejected_and_the_simulation_runs_on() -> None:
    with ClosedLoop(CONTROLLER, simulator()) as loop:
        node = loop.simulator
        assert node is not None and loop.run_for(0.1)
        push(loop, "no_such_link", (1.0, 0.0, 0.0))
        push(loop, "flange", (float("nan"), 0.0, 0.0))
        assert loop.spin_until(lambda: node.rejected_wrenches == 2, 10.0)
        assert node.pushes == 0 and not node.sim.pushes
        assert loop.run_for(0.2)
        assert np.all(np.isfinite(np.array(loop.probe.recording.q)))


@pytest.mark.parametrize(("extra", "named"), [
    ({"world": "no_such_world"}, r"world 'no_such_world': no such file; shipped worlds: 'table'"),
    ({"engine": "bullet"}, r"parameter 'engine' is 'bullet'; valid: 'pinocchio', 'mujoco'"),
    ({"engine": "pinocchio"}, r"parameter 'world' \('table'\) needs engine 'mujoco'"),
    ({"base_motion.roll_amplitude": 0.1}, r"'base_motion\.\*' only with engine 'pinocchio'"),
    ({"wrench_duration": -1.0}, r"parameter 'wrench_duration' must be >= 0"),
])
def test_bad_start_up_parameters_are_refused_naming_them(extra: dict, named: str) -> None:
    with ClosedLoop(None, None) as loop:
        with pytest.raises(ParameterError, match=named):
            SimulatorNode(context=loop.context,
                          parameter_overrides=overrides({**simulator(), **extra}))


def test_a_urdf_mujoco_cannot_compile_is_refused_at_start() -> None:
    # A collision mesh that does not exist: our URDF reader ignores geometry, MuJoCo not.
    text = sample_urdf("arm7").read_text().replace(
        '<collision>\n      <origin xyz="0 0 -0.06" rpy="0 0 0"/>\n      <geometry><cylinder '
        'radius="0.06" length="0.12"/></geometry>',
        '<collision>\n      <origin xyz="0 0 -0.06" rpy="0 0 0"/>\n      <geometry><mesh '
        'filename="missing_link1.stl"/></geometry>', 1)
    assert "missing_link1.stl" in text
    params = {**simulator(), "urdf_path": "", "robot_description": text}
    with ClosedLoop(None, None) as loop:
        with pytest.raises(RneaError, match=r"MuJoCo cannot (compile|read)"):
            SimulatorNode(context=loop.context, parameter_overrides=overrides(params))


def node_parameters(path) -> dict:
    """The flat ``ros__parameters`` of a shipped one-node file (keyed ``/**``)."""
    def flat(tree: dict, prefix: str = "") -> dict:
        out: dict = {}
        for key, value in tree.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict)
                       else {f"{prefix}{key}": value})
        return out

    return flat(yaml.safe_load(path.read_text())["/**"]["ros__parameters"])


def test_sim_launch_engine_world_viewer_arguments_set_declared_parameters() -> None:
    """``sim.launch.py engine:=mujoco world:=table`` (without ``launch`` installed: its
    tables, then the simulator with the shipped arm7 file and what those arguments add,
    against the controller with its shipped file): the arm holds and touches nothing."""
    import importlib.util

    from rnea_ros.samples import share_directory

    root = share_directory()
    spec = importlib.util.spec_from_file_location("sim_launch", root / "launch" / "sim.launch.py")
    assert spec is not None and spec.loader is not None
    sim_launch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim_launch)
    assert sim_launch.ARGUMENTS["engine"][0] == sim_launch.ARGUMENTS["world"][0] == ""
    assert sim_launch.ARGUMENTS["viewer"][0] == "false"
    assert {"engine", "world", "viewer"} <= set(SIMULATOR_PARAMETERS)
    sim = {**node_parameters(root / "config" / "arm7_simulator.yaml"), "urdf_path": URDF,
           "engine": "mujoco", "world": "table"}
    ctl = {**node_parameters(root / "config" / "arm7_controller.yaml"), "urdf_path": URDF,
           "watchdog_timeout": 1.0}
    with ClosedLoop(ctl, sim) as loop:
        assert loop.run_for(2.0, wall_timeout=120.0)
        q = np.array(loop.probe.recording.q)
        assert float(np.abs(q[-1] - q[0]).max()) < 1e-3
        assert loop.simulator is not None and loop.simulator.sim.touching() == []


def test_the_imu_on_mujoco_reads_gravity_and_the_controller_holds_with_it() -> None:
    controller = {**CONTROLLER, "imu.topic": "imu"}
    with ClosedLoop(controller, simulator(**{"imu.enable": True, "world": ""})) as loop:
        assert loop.run_for(1.0, wall_timeout=90.0)
        q = np.array(loop.probe.recording.q)
        c = loop.controller.controller
        assert float(np.abs(q[-1] - np.array(START)).max()) < 1e-3
        assert c.imu.fallback_steps == 0 and not c.imu.rejected
        f = loop.simulator.imu_msg.linear_acceleration
        assert abs(np.linalg.norm([f.x, f.y, f.z]) - 9.81) < 1e-6  # specific force at rest


def simulator_status(loop: ClosedLoop) -> tuple[object, dict[str, str]]:
    """The simulator's latest status on /diagnostics and its values."""
    for array in reversed(loop.probe.recording.diagnostics):
        for s in array.status:
            if "rnea_simulator" in s.name:
                return s, {v.key: v.value for v in s.values}
    return None, {}


def test_a_huge_push_is_refused_and_mujocos_own_reset_is_an_error() -> None:
    """Issue 35 item 5 over the node: a finite 1e12 N push made MuJoCo reset itself (the
    arm 2 rad to q = 0 in one step) with /diagnostics OK and 0 diverged steps. The node
    refuses it (wrench_max_force, counted); and when MuJoCo blows up all the same (here
    the push put on the plant directly, past the node's bound), the step is not taken:
    the published joints do not jump, /diagnostics says ERROR with MuJoCo's reason."""
    from diagnostic_msgs.msg import DiagnosticStatus

    with ClosedLoop(CONTROLLER, simulator()) as loop:
        node = loop.simulator
        assert node is not None and loop.run_for(0.2)
        push(loop, "flange", (0.0, 1e12, 0.0))
        assert loop.spin_until(lambda: node.rejected_wrenches == 1, 10.0)
        assert node.pushes == 0 and not node.sim.pushes
        node.sim.apply_wrench("flange", np.array([0.0, 1e12, 0.0]), np.zeros(3), 0.1)
        assert loop.run_for(0.3)
        q = np.array(loop.probe.recording.q)
        jump = float(np.abs(np.diff(q, axis=0)).max())
        assert jump < 1e-3, jump  # main: 2 rad
        assert node.sim.diverged == 1 and not node.sim.pushes

        def error_reported() -> bool:
            status, values = simulator_status(loop)
            return status is not None and status.level == DiagnosticStatus.ERROR and \
                "reset its state" in values.get("last step not taken", "")
        assert loop.spin_until(error_reported, 10.0), simulator_status(loop)
        status, values = simulator_status(loop)
        print(f"/diagnostics: {status.message}")
        assert "integration unstable" in status.message and "bad QACC" in status.message
        assert values["diverged steps (not taken)"] == "1"
        assert values["rejected wrenches"] == "1"
        c = loop.controller.controller
        assert sum(c.rejected.values()) == 0


def test_a_world_with_actuators_is_refused_at_start_and_one_inside_the_robot_reported(
        tmp_path) -> None:
    """Issue 35 item 6 over the node: a world with its own <actuator> started, then the
    simulator died at its first step; a world through the arm at start was silent."""
    world = tmp_path / "conveyor.xml"
    world.write_text('<mujoco><worldbody><body name="belt" pos="1.5 0 0.1"><joint name="s" '
                     'type="slide"/><geom size="0.1"/></body></worldbody><actuator>'
                     '<motor name="belt_motor" joint="s"/></actuator></mujoco>')
    with ClosedLoop(None, None) as loop:
        with pytest.raises(ParameterError, match=rf"world '{world}': <actuator> element\(s\) "
                           r"'belt_motor'"):
            SimulatorNode(context=loop.context,
                          parameter_overrides=overrides(simulator(world=str(world))))
        world.write_text('<mujoco><worldbody><body name="wall" pos="0 0 0.3"><geom '
                         'name="slab" type="box" size="0.3 0.02 0.3"/></body></worldbody>'
                         '</mujoco>')
        node = SimulatorNode(context=loop.context,
                             parameter_overrides=overrides(simulator(world=str(world))))
        try:
            found = node.sim.start_penetrations
            assert found and {w for _, w, _ in found} == {"world/slab"}, found
            loop.executor.add_node(node)
            assert loop.spin_until(lambda: node.diagnostics_pub.get_subscription_count() >= 1,
                                   10.0)
            node.publish_diagnostics()
            assert loop.spin_until(lambda: simulator_status(loop)[0] is not None, 10.0)
            values = simulator_status(loop)[1]
            assert values["contacts at start (penetrating)"] == str(len(found)), values
        finally:
            node.destroy_node()
