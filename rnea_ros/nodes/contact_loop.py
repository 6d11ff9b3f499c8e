"""Contact safety in closed loop over DDS (issue 38): arm7 on the MuJoCo engine tracks a
sinusoid in ``inverse_dynamics`` with contact monitoring on (``contact.enable``,
``reaction: hold``), in lockstep. The thresholds are calibrated in the run itself: the
worst ``|r_j|`` of ``~/external_torque`` over a contact-free stretch of the same motion
times :data:`MARGIN` (:func:`rnea_ros.control.contact.propose_thresholds`, never below
:data:`FLOOR`), set at run time; the tracking goes on contact-free, then
``~/apply_wrench`` pushes :data:`FORCE` N on :data:`LINK` (at its centre of mass, the
direction of the largest moment about its own joint) for the simulator's
``wrench_duration`` (0.1 s). Used by the demo ("[contact]") and
``test/nodes/test_contact_loop.py``.

What it measures (:class:`ContactOutcome`): false contacts before the push, the
detection delay, the isolated link, the estimated joint torques against the true
``J^T F`` at their peak and the estimated force against the pushed one, the largest
command step against the slew limit, and how still the ``hold`` reaction keeps the arm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

import rnea_ros.core as rc
from rnea_ros.control.contact import propose_thresholds
from rnea_ros.control.trajectory import cosine_motion
from rnea_ros.nodes.errors import LockstepError
from rnea_ros.nodes.harness import ARM7_GAINS

URDF = "package://rnea_ros/urdf/arm7.urdf"
START = [0.0, 0.1, 0.0, -2.0, 0.0, 2.2, 0.8]
LINK, FORCE = "link4", 30.0  # [N]
AMPLITUDE, OMEGA = 0.15, np.pi / 2  # [rad], [rad/s]: the tracked sinusoid (0.25 Hz)
MARGIN, FLOOR = 2.0, 0.1  # calibration: worst |r_j| x MARGIN, at least FLOOR [N m]
CALIBRATE, QUIET, AFTER = 3.0, 1.0, 1.0  # [s]: calibration, contact-free check, after the push
STILL = 0.5  # [s] after the push began (0.4 s after it ended): the arm should be still
SETTLE = 0.1  # [s] skipped at the start of the calibration (the observer's start)
GAIN = 50.0  # [1/s] contact.observer_gain (the default)
RATE = 1000.0  # [N m/s] effort_rate_limits (the default)
DAMPING = 0.5  # [N m s/rad] the simulated joints' viscous friction, not in the model
WATCHDOG = 10.0  # [s] lockstep on a loaded machine: see identification_loop.WATCHDOG


@dataclass(frozen=True)
class ContactOutcome:
    """The numbers of one :func:`contact_loop` run (times [s], torques [N m], forces [N])."""

    thresholds: list[float]  # calibrated contact.thresholds
    false_contacts: int  # contacts before the push (calibration and contact-free check)
    detected: bool
    delay: float  # detection onset - push start
    link: str  # the isolated link
    torque_error: float  # max_j |r_j - (J^T F)_j| / max_j |(J^T F)_j| at the peak
    force: list[float]  # the estimated force at the peak (world axes)
    pushed: list[float]  # the pushed force (world axes)
    force_error: float  # |f_est - f| at the peak
    max_step: float  # the largest command step [N m] (slew limit RATE * 1 ms)
    speed_before: float  # max |qd| over the push [rad/s]
    speed_after: float  # max |qd| from STILL after the push began on [rad/s]


def push_direction(model: rc.RobotModel, q: np.ndarray, link: str) -> np.ndarray:
    """The unit force (world) at ``link``'s centre of mass with the largest moment about
    its own joint axis."""
    body = model.body_names.index(link)
    R, _ = rc.body_poses(model, q)
    d = np.cross(R[body] @ model.axis[body], R[body] @ model.com[body])
    return np.asarray(d / np.linalg.norm(d), dtype=np.float64)


def true_torques(model: rc.RobotModel, q: np.ndarray, link: str, force: np.ndarray
                 ) -> np.ndarray:
    """``J^T F`` (N, nv) of ``force`` (world) held at ``link``'s centre of mass (MuJoCo's
    ``xfrc_applied``) at the poses ``q`` (N, nq)."""
    body = model.body_names.index(link)
    out = np.empty((len(q), model.nv))
    for k, qk in enumerate(q):
        R, _ = rc.body_poses(model, qk)
        J = rc.frame_jacobian(model, qk, link, "LOCAL_WORLD_ALIGNED")
        out[k] = J.T @ np.r_[force, np.cross(R[body] @ model.com[body], force)]
    return out


def listen(probe: Any) -> dict[str, list[Any]]:
    """Subscribe ``probe`` (a node) to the controller's contact topics; the lists fill
    as messages arrive: ``torque`` (JointState, the observer's residual), ``wrench``
    (WrenchStamped) and ``contact`` (the events, decoded JSON)."""
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    got: dict[str, list[Any]] = {"torque": [], "wrench": [], "contact": []}
    probe.create_subscription(JointState, "rnea_controller/external_torque",
                              got["torque"].append, 100)
    probe.create_subscription(WrenchStamped, "rnea_controller/external_wrench",
                              got["wrench"].append, 100)
    probe.create_subscription(String, "rnea_controller/contact",
                              lambda m: got["contact"].append(json.loads(m.data)), 10)
    return got


def push(loop: Any, link: str, force: tuple[float, float, float]) -> None:
    """Publish one wrench ``force`` [N] (world) at ``link``'s centre of mass on the
    simulator's ``~/apply_wrench`` of a :class:`~rnea_ros.nodes.harness.ClosedLoop`, once
    the simulator has discovered the publisher; :class:`LockstepError` when the loop has
    no simulator or it does not discover the publisher within 10 s."""
    from geometry_msgs.msg import WrenchStamped

    publisher = loop.probe.create_publisher(WrenchStamped, "rnea_simulator/apply_wrench", 10)
    sim = loop.simulator_node()
    if not loop.spin_until(lambda: sim.wrench_sub.get_publisher_count() >= 1, 10.0):
        raise LockstepError("the simulator did not discover the wrench publisher in 10 s")
    msg = WrenchStamped()
    msg.header.frame_id = link
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = force
    publisher.publish(msg)


def contact_loop(namespace: str = "contact") -> ContactOutcome:
    """The run of the module docstring."""
    from geometry_msgs.msg import WrenchStamped

    from rnea_ros.nodes.harness import ClosedLoop

    controller = {"urdf_path": URDF, "watchdog_timeout": WATCHDOG, **ARM7_GAINS,
                  "mode": "inverse_dynamics", "contact.enable": True,
                  "contact.thresholds": [1000.0], "contact.reaction": "hold"}
    simulator = {"urdf_path": URDF, "engine": "mujoco", "integrator": "rk4",
                 "initial_positions": START, "damping": [DAMPING] * 7}
    with ClosedLoop(controller, simulator, namespace=namespace) as loop:
        node, sim, probe = loop.controller, loop.simulator, loop.probe
        assert node is not None and sim is not None and node.contact is not None
        got = listen(probe)
        publisher = probe.create_publisher(WrenchStamped, "rnea_simulator/apply_wrench", 10)
        with loop.held():
            loop.spin_until(lambda: sim.wrench_sub.get_publisher_count() >= 1, 10.0)
        total = CALIBRATE + QUIET + AFTER + 1.0
        T = np.arange(0.0, total, 0.01)
        model = node.controller.model
        start = loop.send_trajectory_held(model.joint_names, T,
                                          *cosine_motion(np.array(START), AMPLITUDE, OMEGA, T))
        loop.run_for(CALIBRATE, wall_timeout=60 + 20 * CALIBRATE)
        r = np.array([m.effort for m in got["torque"]
                      if _stamp(m) > start + SETTLE])  # contact-free, the same motion
        thresholds = propose_thresholds(r, MARGIN, floor=FLOOR)
        (result,) = loop.set_controller_parameters({"contact.thresholds": thresholds.tolist()})
        assert result.successful, result.reason
        loop.run_for(QUIET, wall_timeout=60 + 20 * QUIET)
        false_contacts = node.contact.supervisor.contacts
        n_commands = len(probe.recording.commands)
        force = FORCE * push_direction(model, probe.recording.q[-1], LINK)
        msg = WrenchStamped()
        msg.header.frame_id = LINK
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(x) for x in force)
        publisher.publish(msg)
        loop.spin_until(lambda: sim.pushes == 1, 10.0)
        t_push = loop.sim_time  # lockstep: the push acts from here for 0.1 s
        loop.run_for(AFTER, wall_timeout=60 + 20 * AFTER)
        return _outcome(loop, got, model, force, t_push, thresholds, false_contacts,
                        n_commands)


def _stamp(msg: object) -> float:
    stamp = msg.header.stamp  # type: ignore[attr-defined]
    return round(float(stamp.sec + 1e-9 * stamp.nanosec), 6)


def _outcome(loop, got, model, force, t_push, thresholds, false_contacts,  # type: ignore[no-untyped-def]
             n_commands) -> ContactOutcome:
    """The numbers of :class:`ContactOutcome` from the recording."""
    rec = loop.probe.recording
    t, q, qd = np.array(rec.t), np.array(rec.q), np.array(rec.qd)
    latched = loop.controller.contact.supervisor.latched
    window = np.flatnonzero((t >= t_push + 4.0 / GAIN) & (t < t_push + 0.1))
    truth = true_torques(model, q[window], LINK, force)
    k = int(np.argmax(np.abs(truth).max(axis=1)))
    at = round(float(t[window[k]]), 6)
    r = {_stamp(m): np.array(m.effort) for m in got["torque"]}.get(at, np.full(model.nv, np.nan))
    wrenches = {_stamp(w): w.wrench.force for w in got["wrench"]}
    f = wrenches.get(at)
    estimate = np.array([f.x, f.y, f.z]) if f is not None else np.full(3, np.nan)
    commands = np.array(rec.commands[n_commands - 1:])
    pushing = (t >= t_push) & (t < t_push + 0.1)
    return ContactOutcome(
        thresholds=[float(x) for x in thresholds], false_contacts=false_contacts,
        detected=latched is not None,
        delay=float(latched.since - t_push) if latched is not None else float("nan"),
        link=latched.link if latched is not None else "",
        torque_error=float(np.abs(r - truth[k]).max() / np.abs(truth[k]).max()),
        force=estimate.tolist(), pushed=force.tolist(),
        force_error=float(np.linalg.norm(estimate - force)),
        max_step=float(np.abs(np.diff(commands, axis=0)).max()),
        speed_before=float(np.abs(qd[pushing]).max()),
        speed_after=float(np.abs(qd[t >= t_push + STILL]).max()))


__all__ = ["ContactOutcome", "contact_loop", "push_direction", "true_torques"]
