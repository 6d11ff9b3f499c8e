"""The controller node's contact monitoring over DDS, in lockstep against the MuJoCo
simulator (``world: table``), in a namespace: a 30 N push on a link is detected and
isolated to it, ``~/external_torque`` within 10 % of the true ``J^T F`` at its peak,
``~/external_wrench`` within 10 % of the 30 N force, ``~/contact`` published, the
``hold`` reaction damps the arm with every command step within the slew limit,
``~/rearm_contact`` and the parameter ``contact.rearm`` clear it; an arm driven into the
table is detected within 30 ms of touching it and stopped (below 0.01 rad/s) within
0.2 s; non-finite or huge thresholds are refused at run time; a closed-loop robot
refuses ``contact.enable`` naming the reason."""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from std_srvs.srv import Trigger

import rnea_ros.core as rc
from rnea_ros.core.errors import RneaError
from rnea_ros.nodes.contact_loop import listen, push, push_direction, true_torques
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import ClosedLoop, overrides

pytest.importorskip("mujoco")

URDF = "package://rnea_ros/urdf/arm7.urdf"
START = [0.0, 0.1, 0.0, -2.0, 0.0, 2.2, 0.8]
# Per joint [N m]: a 30 N push at link4's centre of mass makes ~1 N m about joint4
THRESHOLDS = [2.0, 2.0, 1.0, 0.5, 0.3, 0.3, 0.3]
RATE = 1000.0  # [N m/s] effort_rate_limits (the default)
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 1.0, "contact.enable": True,
              "contact.thresholds": THRESHOLDS, "contact.reaction": "hold"}
GAIN = 50.0  # [1/s] contact.observer_gain (the default)
SIMULATOR = {"urdf_path": URDF, "engine": "mujoco", "world": "table", "integrator": "rk4",
             "initial_positions": START, "damping": [0.5] * 7}


def rearm_by_parameter(loop: ClosedLoop) -> None:
    """``contact.rearm: true`` clears the latched reaction and is set back to false."""
    node = loop.controller
    assert node is not None and node.contact is not None
    (result,) = loop.set_controller_parameters({"contact.rearm": True})
    assert result.successful
    assert node.contact.supervisor.latched is None
    assert node.get_parameter("contact.rearm").value is False


def test_push_detected_isolated_held_and_rearmed_in_a_namespace() -> None:
    with ClosedLoop(CONTROLLER, SIMULATOR, namespace="left") as loop:
        got = listen(loop.probe)
        node, sim = loop.controller, loop.simulator
        assert node is not None and sim is not None and node.contact is not None
        assert loop.run_for(0.5, wall_timeout=120.0)
        assert not got["contact"] and node.contact.supervisor.contacts == 0  # contact-free
        assert got["torque"] and got["torque"][-1].name[0] == "joint1"
        n_before = len(loop.probe.recording.commands)
        model = node.controller.model
        force = 30.0 * push_direction(model, loop.probe.recording.q[-1], "link4")
        push(loop, "link4", tuple(force))
        assert loop.spin_until(lambda: sim.pushes == 1, 10.0)
        t_push = loop.sim_time  # (lockstep: the push acts from the next step on)
        assert loop.run_for(1.0, wall_timeout=180.0)
        starts = [e for e in got["contact"] if e["state"] == "start"]
        print(f"contact events: {got['contact']}")
        assert starts and starts[0]["latched"] and starts[0]["reaction"] == "hold"
        latched = node.contact.supervisor.latched
        assert latched is not None and latched.since - t_push < 0.03  # within 30 ms
        assert starts[0]["link"] == "link4"  # isolated to the pushed link
        # ~/external_torque against the truth J^T F at its peak, in the push's last 20 ms
        # (0.1 s, wrench_duration; the observer's lag e^(-K_O t) <= 2 % after 4 / K_O)
        t = np.array(loop.probe.recording.t)
        stamps = {round(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, 6): np.array(
            m.effort) for m in got["torque"]}
        window = np.flatnonzero((t >= t_push + 4.0 / GAIN) & (t < t_push + 0.1))
        truth = true_torques(model, np.array(loop.probe.recording.q)[window], "link4", force)
        k = int(np.argmax(np.abs(truth).max(axis=1)))
        r = stamps[round(float(t[window[k]]), 6)]
        error = np.abs(r - truth[k]).max() / np.abs(truth[k]).max()
        print(f"at the peak: r {r.round(2)}, J^T F {truth[k].round(2)}: {100 * error:.1f} %")
        assert error <= 0.10
        # ~/external_wrench: the force at link4's centre of mass, within 10 % of 30 N
        wrenches = {round(w.header.stamp.sec + 1e-9 * w.header.stamp.nanosec, 6): w
                    for w in got["wrench"] if w.header.frame_id == "link4"}
        w = wrenches[round(float(t[window[k]]), 6)]
        f = np.array([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z])
        print(f"estimated force {f.round(2)} N, pushed {force.round(2)} N: "
              f"|error| {np.linalg.norm(f - force):.2f} N")
        assert np.linalg.norm(f - force) <= 0.10 * 30.0
        # hold: every command step within the slew limit, the arm stopped within 0.2 s of
        # the contact and kept still
        commands = np.array(loop.probe.recording.commands[n_before - 1:])
        assert np.abs(np.diff(commands, axis=0)).max() <= RATE * 1e-3 * (1 + 1e-6)
        qd = np.array(loop.probe.recording.qd)
        speeds = [float(np.abs(qd[t > latched.since + d]).max()) for d in (0.0, 0.2, 0.5)]
        print(f"speed after the contact, from 0 / 0.2 / 0.5 s on: {speeds} rad/s")
        assert speeds[2] < speeds[1] < speeds[0] and speeds[2] < 0.5 * speeds[0]  # damped
        # diagnostics: the contact status warns while latched
        statuses = [s for a in loop.probe.recording.diagnostics for s in a.status
                    if s.name.endswith("contact")]
        assert statuses and statuses[-1].level == DiagnosticStatus.WARN
        assert "link4" in statuses[-1].message
        assert statuses[-1].name.startswith("/left/rnea_controller")
        # re-arm
        client = loop.probe.create_client(Trigger, "rnea_controller/rearm_contact")
        assert loop.spin_until(client.service_is_ready, 10.0)
        future = client.call_async(Trigger.Request())
        assert loop.spin_until(future.done, 10.0)
        assert future.result().success and "cleared" in future.result().message
        assert node.contact.supervisor.latched is None
        assert loop.run_for(0.2)
        assert not loop.controller.contact.supervisor.latched
        assert sum(node.controller.rejected.values()) == 0
        # pushed again, latched again; re-armed by the parameter this time
        push(loop, "link4", tuple(force))
        assert loop.spin_until(lambda: sim.pushes == 2, 10.0)
        assert loop.run_for(0.3, wall_timeout=120.0)
        latched = node.contact.supervisor.latched
        assert latched is not None and latched.link == "link4"
        rearm_by_parameter(loop)
        assert loop.spin_until(lambda: got["contact"][-1]["state"] == "rearmed", 10.0)


@pytest.mark.parametrize("value", [[float("nan")], [1e12], [0.0]])
def test_threshold_attack_refused_at_run_time(value: list[float]) -> None:
    with ClosedLoop(CONTROLLER, SIMULATOR) as loop:
        assert loop.run_for(0.05)
        (result,) = loop.set_controller_parameters({"contact.thresholds": value})
        assert not result.successful and "contact.thresholds" in result.reason
        assert loop.controller is not None
        assert loop.controller.get_parameter("contact.thresholds").value == THRESHOLDS
        (ok,) = loop.set_controller_parameters({"contact.thresholds": [4.0]})
        assert ok.successful
        assert float(loop.controller.contact.supervisor.monitor.settings.thresholds[0]) == 4.0


PRESS = [0.0, 0.3, 0.0, -2.0, 0.0, 2.2, 0.8]  # flange 0.1 m below the table's top


def test_table_contact_detected_and_hold_brakes_the_arm() -> None:
    controller = {**CONTROLLER, "mode": "inverse_dynamics"}
    with ClosedLoop(controller, SIMULATOR) as loop:
        got = listen(loop.probe)
        node = loop.controller
        assert node is not None and node.contact is not None and loop.run_for(0.1)
        ctl = node.controller
        loop.probe.send_trajectory(ctl.reference_names, np.array([0.0, 1.0, 10.0]),
                                   np.array([START, PRESS, PRESS]))
        assert loop.spin_until(lambda: ctl.reference.trajectory is not None, 5.0)
        n_before = len(loop.probe.recording.commands)
        sim = loop.simulator
        assert sim is not None
        touched = []  # sim times [s] with the arm on the table (10 ms resolution)
        for _ in range(200):
            assert loop.run_for(0.01, wall_timeout=30.0)
            if any(world == "world/table" for _, world in sim.sim.touching()):
                touched.append(loop.sim_time)
        latched = node.contact.supervisor.latched
        print(f"contact events: {got['contact'][:2]}")
        assert latched is not None, "driven into the table: no contact detected"
        t = np.array(loop.probe.recording.t)
        q = np.array(loop.probe.recording.q)
        k = int(np.searchsorted(t, latched.since))
        _, p = rc.body_poses(ctl.model, q[k])
        print(f"link7 origin height at the onset {p[-1][2]:.3f} m, "
              "table top 0.40 m")
        qd = np.array(loop.probe.recording.qd)
        print(f"first on the table at {touched[0] if touched else None} s")
        assert touched and abs(latched.since - touched[0]) < 0.03  # the table, not noise
        first = min(latched.since, touched[0])  # (touched: 10 ms resolution)
        after = [float(np.abs(qd[t > first + d]).max()) for d in (0.0, 0.2)]
        print(f"contact at {latched.since:.3f} s on '{latched.link}'; speed from 0 / 0.2 s "
              f"after the first contact on: {after} rad/s")
        # stopped within 0.2 s of the first contact: every joint below 0.01 rad/s from
        # then on (hold, contact.hold_damping 20 N m s/rad capped at M_jj / (4 T))
        assert after[1] < 0.01
        commands = np.array(loop.probe.recording.commands[n_before - 1:])
        assert np.abs(np.diff(commands, axis=0)).max() <= RATE * 1e-3 * (1 + 1e-6)


@pytest.mark.parametrize(("extra", "named"), [
    ({"urdf_path": "package://rnea_ros/urdf/five_bar.urdf"}, "closed-loop robot"),
    ({"urdf_path": "package://rnea_ros/urdf/five_bar.urdf", "loops.parallel": "delta"},
     "parallel")])
def test_a_family_without_contacts_refuses_enable_at_start(extra: dict, named: str) -> None:
    with ClosedLoop(None, None) as loop:
        with pytest.raises(RneaError, match=f"'contact.enable' is not supported on a {named}"):
            ControllerNode(context=loop.context,
                           parameter_overrides=overrides({**CONTROLLER, **extra}))


def test_the_observer_keeps_the_models_friction_without_compensation() -> None:
    """The controller's ``model`` drops friction unless ``friction_compensation``; the
    contact observer must not (a robot's friction is not a contact): moving at 0.5 rad/s
    against viscous friction 0.3 N m s/rad, with the torque that overcomes it, r ~ 0."""
    from rnea_ros.control.config import controller_config, default_values
    from rnea_ros.control.controller import TorqueController
    from rnea_ros.nodes.contact_ports import supervisor_for
    from rnea_ros.samples import load_robot

    model = load_robot("arm7").replace(viscous=np.full(7, 0.3))
    values = {**default_values(), "contact.enable": True, "contact.reaction": "none",
              "contact.thresholds": [0.5]}
    assert values["friction_compensation"] is False
    ctl = TorqueController(model, controller_config(values, model))
    sup = supervisor_for(ctl)
    assert np.allclose(sup.model.viscous, 0.3)
    qd = np.full(7, 0.5)
    q0 = np.array(START)
    for k in range(200):  # rnea with the friction: the torque a friction-free plant needs
        t = 1e-3 * k
        q = q0 + qd * t
        tau = rc.rnea(model, q, qd, np.zeros(7))
        step = sup.observe(t, q, qd, tau)
    print(f"|r| max {np.abs(sup.monitor.r).max():.2e} N m")
    # (dropping the friction: r = 0.3 x 0.5 = 0.15 N m; the positions here are not
    # integrated dynamics, so the discrete observer leaves a few mN m)
    assert np.abs(sup.monitor.r).max() < 0.03 and step.contact is None
