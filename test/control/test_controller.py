"""TorqueController logic without ROS: merging, rejection, watchdog, saturation,
trajectory replacement, configuration validation."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea
from rnea_ros.core.errors import ParameterError, RneaError, StateError

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q = np.array([0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3])


def make(**changes):
    values = default_values()
    values.update(urdf_path=URDF, **changes)
    model = load_model(values)
    return TorqueController(model, controller_config(values, model)), model


def test_gravity_mode_commands_g_of_q_in_the_joints_order() -> None:
    joints = ["joint7", "joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
    ctl, model = make(joints=joints)
    names = ["gripper", *reversed(model.joint_names)]  # extra joint, any order
    result = ctl.joint_state(names, [9.0, *Q[::-1]], [], stamp=1.0, now=0.0)
    expected = gravity_torques(model, Q)[[6, 0, 1, 2, 3, 4, 5]]
    assert result.reason is None and np.allclose(result.command, expected, atol=1e-12)


def test_partial_messages_are_merged_and_counted_until_complete() -> None:
    ctl, model = make()
    names = list(model.joint_names)
    first = ctl.joint_state(names[:4], Q[:4], [0.0] * 4, stamp=1.0, now=0.0)
    assert first.command is None and first.reason == "missing_joints"
    assert "joint5" in first.message
    second = ctl.joint_state(names[4:], Q[4:], [0.0] * 3, stamp=1.001, now=0.0)
    assert np.allclose(second.command, gravity_torques(model, Q))
    # A merged sample older than watchdog_timeout is not combined.
    stale = ctl.joint_state(names[4:], Q[4:], [0.0] * 3, stamp=1.5, now=0.1)
    assert stale.command is None and stale.reason is None


@pytest.mark.parametrize(("position", "velocity", "stamp", "reason"), [
    ([0.0] * 6, [], 1.0, "length_mismatch"),
    ([0.0] * 7, [0.0] * 3, 1.0, "length_mismatch"),
    ([0.0, np.nan, 0, 0, 0, 0, 0], [], 1.0, "non_finite"),
    ([0.0] * 7, [0, 0, np.inf, 0, 0, 0, 0], 1.0, "non_finite"),
    ([0.0] * 7, [], 0.5, "time_backwards"),
    ([0.0] * 7, [], float("nan"), "bad_stamp"),  # (not finite: no clock gives it)
    ([0.0] * 7, [], -1.0, "bad_stamp"),  # (before the epoch)
])
def test_bad_messages_are_rejected_counted_and_leave_the_state(position, velocity, stamp,
                                                               reason) -> None:
    ctl, model = make()
    names = list(model.joint_names)
    good = ctl.joint_state(names, Q, [0.0] * 7, stamp=0.9, now=0.0)
    result = ctl.joint_state(names, position, velocity, stamp=stamp, now=0.0)
    assert result.command is None and result.reason == reason
    assert ctl.rejected[reason] == 1
    again = ctl.joint_state(names, Q, [0.0] * 7, stamp=1.0, now=0.0)
    assert np.allclose(again.command, good.command)
    if reason == "non_finite":
        assert "joint2" in result.message or "joint3" in result.message


def test_inverse_dynamics_mode_needs_velocities() -> None:
    ctl, model = make(mode="inverse_dynamics")
    result = ctl.joint_state(model.joint_names, Q, [], stamp=1.0, now=0.0)
    assert result.reason == "missing_velocity"


def test_saturation_is_applied_and_counted() -> None:
    ctl, model = make(effort_limits=[1.0] * 7)
    result = ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=1.0, now=0.0)
    g = gravity_torques(model, Q)
    assert np.allclose(result.command, np.clip(g, -1, 1))
    assert ctl.saturated == int(np.sum(np.abs(g) > 1.0)) > 0


@pytest.mark.parametrize("behavior", ["hold", "zero"])
def test_watchdog_fires_on_silence(behavior: str) -> None:
    ctl, model = make(stale_behavior=behavior, watchdog_timeout=0.1, watchdog_grace=0.0)
    assert ctl.watchdog(now=100.0) is None  # nothing before the first state
    ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=1.0, now=10.0)
    assert ctl.watchdog(now=10.05) is None and not ctl.stale
    command = ctl.watchdog(now=10.2)
    assert ctl.stale and ctl.stale_events == 1
    expected = gravity_torques(model, Q) if behavior == "hold" else np.zeros(7)
    assert np.allclose(command, expected)
    ctl.watchdog(now=10.3)
    assert ctl.stale_events == 1
    ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=1.2, now=10.4)
    assert not ctl.stale


def switch_jump(dt: float) -> tuple[float, float]:
    """Torque change across a mid-motion trajectory replacement, and at the switch
    instant the difference between old and new feedforward (kp = kd = 0)."""
    ctl, model = make(mode="inverse_dynamics", kp=[0.0], kd=[0.0])
    names = list(model.joint_names)
    ctl.joint_state(names, Q, [0.0] * 7, stamp=0.0, now=0.0)
    ctl.trajectory(names, np.array([1.0, 2.0]), np.vstack([Q + 0.2, Q - 0.1]), None, None,
                   start=0.0)
    t_switch = 0.7
    previous = None
    steps = round(1.5 / dt)
    for k in range(1, steps):
        t = k * dt
        if previous is not None and abs(t - dt - t_switch) < dt / 2:
            old = ctl.reference.trajectory
            ctl.trajectory(names, np.array([0.5]), np.vstack([Q - 0.3]), None, None, start=t)
            t_last = t - dt
            at_switch = np.abs(rnea(ctl.model, *ctl.reference.trajectory.sample(t_last))
                               - rnea(ctl.model, *old.sample(t_last))).max()
            before = previous
        q_ref, qd_ref, qdd_ref = ctl.reference.trajectory.sample(t)
        result = ctl.joint_state(names, q_ref, qd_ref, stamp=t, now=t)
        assert np.allclose(result.command, rnea(ctl.model, q_ref, qd_ref, qdd_ref), atol=1e-9)
        if previous is not None and abs(t - 2 * dt - t_switch) < dt / 2:
            jump = float(np.abs(result.command - before).max())
        previous = result.command
    assert np.allclose(previous, gravity_torques(ctl.model, Q - 0.3), atol=1e-9)
    return jump, float(at_switch)


def test_trajectory_replacement_has_no_torque_jump() -> None:
    jump_coarse, at_switch = switch_jump(1e-3)
    jump_fine, _ = switch_jump(1e-4)
    assert at_switch < 1e-9  # the new reference starts exactly where the old one was
    assert jump_fine < jump_coarse / 5  # a change that shrinks with the step: no jump


def test_trajectory_must_name_every_commanded_joint() -> None:
    ctl, model = make(mode="inverse_dynamics")
    with pytest.raises(StateError, match="lacks commanded joints 'joint7'"):
        ctl.trajectory(list(model.joint_names[:6]), np.array([1.0]), np.zeros((1, 6)), None,
                       None, start=0.0)


@pytest.mark.parametrize(("changes", "message"), [
    ({"mode": "torque"}, "parameter 'mode' is 'torque'; valid: 'gravity', 'inverse_dynamics'"),
    ({"kp": [1.0, 2.0]}, "parameter 'kp' has 2 values; give 1 or 7"),
    ({"kd": [-1.0]}, "parameter 'kd' must be >= 0"),
    ({"joints": ["joint1", "elbow"]}, "parameter 'joints': 'elbow' not in the model"),
    ({"effort_limits": [1.0, -1.0]}, "parameter 'effort_limits' needs 7 positive values"),
    ({"watchdog_timeout": 0.0}, "parameter 'watchdog_timeout' must be > 0"),
    ({"stale_behavior": "brake"}, "parameter 'stale_behavior' is 'brake'"),
    ({"gravity": [0.0, 9.81]}, "parameter 'gravity' needs 3 values"),
    ({"payload.link": "hand", "payload.mass": 1.0}, "payload link 'hand' is not a link"),
    ({"payload.link": "flange", "payload.mass": -1.0}, "mass -1 kg is negative"),
])
def test_invalid_parameters_name_the_parameter(changes, message: str) -> None:
    values = default_values()
    values.update(urdf_path=URDF, **changes)
    model = load_model(values)
    with pytest.raises(RneaError, match=message):
        TorqueController(model, controller_config(values, model))


def test_model_source_is_required() -> None:
    with pytest.raises(ParameterError, match=r"'robot_description' .* or 'urdf_path'"):
        load_model(default_values())


def test_payload_changes_the_gravity_torque() -> None:
    ctl, model = make()
    plain = ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=1.0, now=0.0).command
    values = default_values()
    values.update({"urdf_path": URDF, "payload.link": "flange", "payload.mass": 2.0})
    ctl.configure(controller_config(values, model))
    loaded = ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=1.1, now=0.1).command
    assert np.abs(loaded - plain).max() > 1.0


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("trajectory", [False, True])
def test_entering_a_mode_without_a_reference_holds_the_pose_at_the_switch(
        fused: bool, trajectory: bool) -> None:
    """Issue 22 §3: inverse_dynamics, gravity, inverse_dynamics again, the arm moved
    0.9 rad in gravity mode: the PD holds the pose at the (second) switch, bumpless --
    ``g(q)`` at rest -- not the first pose ever measured (old main: -69 N m on joint 2
    where g is -41). A trajectory sent before the switch is not resumed either."""
    values = default_values()
    values.update(urdf_path=URDF, mode="inverse_dynamics", **{"slew_limit.enable": False})
    model = load_model(values)
    inverse_dynamics = controller_config(values, model)
    gravity = controller_config({**values, "mode": "gravity"}, model)
    ctl = TorqueController(model, inverse_dynamics)
    if not fused:
        ctl._inverse_dynamics_command = None
    names, zeros = model.joint_names, [0.0] * 7
    ctl.joint_state(names, Q, zeros, stamp=1.0, now=1.0)
    if trajectory:  # finished long before the arm is moved
        ctl.trajectory(names, np.array([0.0, 0.1]), np.array([Q, Q]), None, None, 1.0)
    ctl.configure(gravity)
    moved = Q + np.array([0.0, 0.9, 0.0, 0.0, 0.0, 0.0, 0.0])
    for k in range(1, 11):  # moved by hand in gravity mode
        ctl.joint_state(names, Q + (moved - Q) * k / 10, zeros, stamp=1.0 + k, now=1.0 + k)
    ctl.configure(inverse_dynamics)
    if not fused:
        ctl._inverse_dynamics_command = None
    for k in range(12, 15):
        command = ctl.joint_state(names, moved, zeros, stamp=float(k), now=float(k)).command
        assert np.allclose(command, gravity_torques(model, moved), atol=1e-9), \
            (command, gravity_torques(model, moved))


def test_the_watchdog_holds_the_last_command_through_one_missed_period() -> None:
    """Issue 22 §8: a 100-200 ms scheduling hiccup (another process starting on a
    shared machine) must not trip the stale behaviour; a real silence still does, at
    timeout + grace (defaults 0.1 + 0.1 s). Old main: stale at 0.15 s."""
    ctl, model = make(mode="inverse_dynamics", watchdog_timeout=0.1)  # grace: the default
    names, zeros = model.joint_names, [0.0] * 7
    last = ctl.joint_state(names, Q, zeros, stamp=1.0, now=10.0).command.copy()
    # a 150 ms hiccup: nothing new is output (the last command stays), then the
    # queued states are taken
    assert ctl.watchdog(now=10.15) is None and not ctl.stale and ctl.watchdog_late == 1
    again = ctl.joint_state(names, Q, zeros, stamp=1.001, now=10.151).command
    assert np.allclose(again, last) and not ctl.stale and ctl.stale_events == 0
    # a real silence: the stale behaviour (gravity hold) past 0.2 s
    assert ctl.watchdog(now=10.151 + 0.2) is None and not ctl.stale
    hold = ctl.watchdog(now=10.151 + 0.2 + 1e-3)
    assert ctl.stale and ctl.stale_events == 1 and ctl.watchdog_late == 2
    assert hold is not None and ctl.config.watchdog_grace == 0.1
    with pytest.raises(ParameterError, match="watchdog_grace"):
        make(watchdog_grace=-0.1)


def test_a_stall_of_this_process_longer_than_timeout_and_grace_does_not_trip_it() -> None:
    """Issue 35 §9: the process kept off the CPU (or in a long callback) for 0.5 s, longer
    than timeout + grace (0.1 + 0.1 s): the watchdog's overdue firing comes before the
    states queued meanwhile. That first look at the silence holds the last command; the
    queued state is then taken: no stale behaviour, no ERROR. A real silence still acts
    at the next look (a node's next firing: 20 ms later). Old main: stale at the first
    look, the ERROR cleared by the queued state 0.00 s later (5 of ~45 healthy launches
    logged it)."""
    ctl, model = make(mode="inverse_dynamics", watchdog_timeout=0.1)  # grace: the default
    names, zeros = model.joint_names, [0.0] * 7
    last = ctl.joint_state(names, Q, zeros, stamp=1.0, now=10.0).command.copy()
    assert ctl.watchdog(now=10.5) is None and not ctl.stale and ctl.watchdog_late == 1
    again = ctl.joint_state(names, Q, zeros, stamp=1.001, now=10.501).command
    assert np.allclose(again, last) and not ctl.stale and ctl.stale_events == 0
    # a real silence after a stall: the first look holds, the next one acts
    assert ctl.watchdog(now=11.0) is None and not ctl.stale and ctl.watchdog_late == 2
    hold = ctl.watchdog(now=11.02)
    assert ctl.stale and ctl.stale_events == 1 and hold is not None
    assert np.allclose(hold, gravity_torques(model, Q))
    # without a grace (a real-time machine) the first look past the timeout acts
    rt, _ = make(mode="inverse_dynamics", watchdog_timeout=0.1, watchdog_grace=0.0)
    rt.joint_state(names, Q, zeros, stamp=1.0, now=10.0)
    assert rt.watchdog(now=10.5) is not None and rt.stale
