"""Parallel robots over DDS (loopback, in-process, lockstep): ``robot:=delta`` and
``robot:=gough_stewart`` with their own launch files (``config/<robot>_*.yaml``: the
controller runs them as a platform and legs, ``loops.parallel``; the embedded simulator
in Pinocchio's constrained dynamics publishes active and passive joints) hold and track
in a namespace, the live oracle agreeing; a state with no platform pose is rejected and
reported, the watchdog holds, good states recover; a wrong family or joint name ends
the node at start with one line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from test_closed_loop_robots import controller_status, publish_until_command, state
from test_multi_robot import launch_parameters

import rnea_ros.core as rc
from rnea_ros.control.config import resolve_path
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid

ROBOTS = ("delta", "gough_stewart")
HOLD_TOLERANCE = 1e-6  # rad or m, every joint (active and passive), 3 s
# Cosine on every active joint (rad, m), 0.5 Hz; tracking bound on the active joints.
MOTION = {"delta": (0.1, 5e-4), "gough_stewart": (0.02, 1e-4)}
UNREACHABLE = {"delta": [1.4, 1.4, 1.4], "gough_stewart": [0.12, 0.12, 0.12, -0.12, -0.12,
                                                           -0.12]}


def loops_of(robot: str) -> rc.ClosedLoopModel:
    urdf = resolve_path(f"package://rnea_ros/urdf/{robot}.urdf")
    return rc.load_loops(load_urdf(urdf), urdf.with_name(f"{robot}.loops.yaml"))


@pytest.mark.parametrize("robot", ROBOTS)
def test_holds_then_tracks_in_a_namespace(robot: str) -> None:
    """sim.launch.py robot:=<robot> namespace:=par: gravity mode holds the start pose
    (every joint within HOLD_TOLERANCE, 3 s, the passive encoders agreeing), then
    inverse_dynamics (switched at runtime) tracks a 0.5 Hz cosine on every active joint;
    the live oracle (Pinocchio's constrained dynamics at the platform's tree state)
    agrees with every 50th torque. The plant without the shipped drive damping: the
    controller's model has no drive friction, and the exact feedforward is tested where it
    matches the plant (gough_stewart's 300 N s/m, not fed forward, lag the legs ~4 mm at
    the 0.06 m/s of this cosine with kp 5000 N/m)."""
    loops = loops_of(robot)
    controller, simulator = launch_parameters(robot)
    simulator = {**simulator, "damping": [0.0]}
    assert controller["loops.parallel"] == robot and simulator["publish_passive"]
    q0 = rc.solve_loops(loops, simulator["initial_positions"])
    oracle = {"oracle.enable": True, "oracle.every_n": 50}
    with ClosedLoop({**controller, "diagnostics_period": 0.2, **oracle}, simulator,
                    namespace="par") as loop:
        assert loop.controller.command_pub.topic_name == "/par/effort_controller/commands"
        c = loop.controller.controller
        assert type(c).__name__ == "ParallelController"
        assert loop.run_for(3.0)
        recorded = np.array(loop.probe.recording.q)
        expected = np.r_[q0[loops.active_index], q0[loops.passive_index]]
        assert recorded.shape[1] == loops.n
        hold = float(np.abs(recorded - expected).max())
        assert hold < HOLD_TOLERANCE, hold
        assert c.commands + loop.controller.intake.shed >= 2990 and sum(c.rejected.values()) == 0
        assert c.passive_checks + loop.controller.intake.shed >= 2990
        assert c.passive_deviation_max < HOLD_TOLERANCE
        status, values = controller_status(loop)
        assert status is not None and status.level == DiagnosticStatus.OK, values
        assert float(values["loop solve p50 [us]"]) > 0.0  # the platform's pose solves
        assert c.oracle_checks >= min(59, c.commands // 50 - 1) and c.oracle_discrepancy < 1e-9

        result = loop.set_controller_parameters({"mode": "inverse_dynamics"})[0]
        assert result.successful, result.reason
        amplitude, tolerance = MOTION[robot]
        t, error, _ = track_sinusoid(loop, recorded[-1, :loops.n_active], amplitude, np.pi,
                                     3.0)
        assert t.size > 2900
        assert np.abs(error).max() < tolerance, np.abs(error).max()
        assert sum(c.rejected.values()) == 0 and c.saturated == 0
        assert np.all(np.isfinite(loop.probe.recording.commands))
        assert c.oracle_checks >= min(119, c.commands // 50 - 1) and c.oracle_discrepancy < 1e-9


MUJOCO_HOLD_TOLERANCE = 1e-4  # rad or m, every joint, 3 s (measured: Delta 3e-6; 1.8e-3
# when its weld cuts were MuJoCo welds, docs/simulation.md)


@pytest.mark.parametrize("robot", ROBOTS)
def test_gravity_mode_holds_on_the_mujoco_engine(robot: str) -> None:
    """sim.launch.py robot:=<robot> engine:=mujoco: the controller's gravity torques
    (platform_inverse_dynamics) hold MuJoCo's plant, every published joint within
    MUJOCO_HOLD_TOLERANCE for 3 s, loops closed, nothing rejected."""
    pytest.importorskip("mujoco")
    loops = loops_of(robot)
    controller, simulator = launch_parameters(robot)
    q0 = rc.solve_loops(loops, simulator["initial_positions"])
    with ClosedLoop(controller, {**simulator, "engine": "mujoco"}) as loop:
        assert type(loop.simulator.sim).__name__ == "MujocoSimulator"
        assert loop.run_for(3.0, wall_timeout=180.0)
        recorded = np.array(loop.probe.recording.q)
        expected = np.r_[q0[loops.active_index], q0[loops.passive_index]]
        hold = float(np.abs(recorded - expected).max())
        print(f"{robot} on MuJoCo: every joint within {hold:.2e} of the start for 3 s, loops "
              f"closed to {loop.simulator.sim.closure_error():.1e}")
        assert hold < MUJOCO_HOLD_TOLERANCE, hold
        c = loop.controller.controller
        assert c.commands + loop.controller.intake.shed >= 2990 and sum(c.rejected.values()) == 0
@pytest.mark.parametrize("robot", ROBOTS)
def test_no_platform_pose_is_rejected_the_watchdog_holds_and_good_states_recover(
        robot: str) -> None:
    """The controller fed by the probe: active positions no leg can reach (within their
    limits) are rejected (counted on /diagnostics), nothing non-finite is
    published, the watchdog holds gravity at the last solved pose, a good state is used."""
    loops = loops_of(robot)
    controller, _ = launch_parameters(robot)
    params = {**controller, "watchdog_timeout": 0.3, "diagnostics_period": 0.1,
              "diagnostics_window": 0.1}
    active = list(loops.active_names)
    qa = np.array(launch_parameters(robot)[1]["initial_positions"])
    with ClosedLoop(params, None) as fed:
        fed.spin_until(lambda: fed.probe.state_pub.get_subscription_count() >= 1, 10.0)
        c = fed.controller.controller
        commands = fed.probe.recording.commands
        publish_until_command(fed, state(1.0, qa, active))
        q_good = rc.solve_loops(loops, qa)
        before = len(commands)
        for k in range(10):
            fed.probe.state_pub.publish(state(1.01 + 0.01 * k, UNREACHABLE[robot], active))
            fed.spin_until(lambda: False, 0.005)
        # Out of reach, found while walking there (platform_pose), or, on a busy machine,
        # the walk out of its wall-time backstop first (platform_budget): rejected either way;
        # or shed, when a newer one was already queued (a busy machine: nodes/shedding.py).
        def rejected() -> int:
            return c.rejected["platform_pose"] + c.rejected["platform_budget"]
        intake = fed.controller.intake
        assert fed.spin_until(lambda: rejected() + intake.shed == 10, 5.0), c.rejected
        assert rejected() >= 1 and sum(c.rejected.values()) + intake.shed == 10
        assert fed.spin_until(lambda: c.stale, 5.0)
        assert fed.spin_until(lambda: len(commands) > before, 5.0)
        held = np.array(commands[before:])
        assert np.all(np.isfinite(held))
        assert np.allclose(held[-1], rc.loop_gravity(loops, q_good), atol=1e-9)
        # The watchdog may go stale while the rejections are still being handled (on a
        # busy machine), so a status can say 'stale' with fewer of them: wait for the
        # status that reports both (published every 0.1 s), then read it.
        total = str(sum(c.rejected.values()))
        assert fed.spin_until(lambda: controller_status(fed)[1].get("watchdog") == "stale"
                              and controller_status(fed)[1].get("rejected") == total, 5.0), \
            controller_status(fed)[1]
        assert controller_status(fed)[1]["rejected: platform_pose"] == \
            str(c.rejected["platform_pose"])
        status, _ = controller_status(fed)
        assert status.level == DiagnosticStatus.ERROR  # stale
        q_new = rc.solve_loops(loops, qa + 0.01)
        # (not publish_until_command: while stale the watchdog publishes its hold at every
        # look, so the next command to reach the probe may be a hold; wait for the state
        # to clear the watchdog, then for its command)
        fed.probe.state_pub.publish(state(2.0, qa + 0.01, active))
        assert fed.spin_until(lambda: not c.stale, 5.0)
        expected = rc.loop_gravity(loops, q_new)
        assert fed.spin_until(lambda: np.allclose(commands[-1], expected, atol=1e-9), 5.0), \
            (commands[-1], expected)


def start(params: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args",
                           *params], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ), check=False)


def test_a_wrong_family_or_joint_ends_the_controller_with_one_line() -> None:
    urdf = "package://rnea_ros/urdf/delta.urdf"
    result = start(["-p", f"urdf_path:={urdf}", "-p", "loops.parallel:=gough_stewart"])
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "is not a GoughStewart" in output and "'loops.parallel'" in output, output
    assert "Traceback" not in output
    assert sum("cannot start" in line for line in output.splitlines()) == 1
    result = start(["-p", f"urdf_path:={urdf}", "-p", "loops.parallel:=delta", "-p",
                    "joints:=[leg1_arm, leg2_arm, leg4_arm]"])
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "'leg4_arm'" in output and "leg3_arm" in output and "Traceback" not in output
