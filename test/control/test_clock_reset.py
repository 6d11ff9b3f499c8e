"""Clock resets and future-dated stamps (issue 16, section 2), without ROS: a
simulator reset, a bag played in a loop, a zero stamp then simulated time, a
clock that jumps forward; single out-of-order or future-dated messages stay
rejected; every output stays within the torque-rate limit."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.errors import ParameterError

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q = np.array([0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3])
RATE = 1000.0  # N m/s, the default effort_rate_limits


def make(**changes):
    values = default_values()
    values.update(urdf_path=URDF, **changes)
    model = load_model(values)
    return TorqueController(model, controller_config(values, model)), model


def stream(ctl, model, stamps, walls, q=Q):
    """Feed states; returns the results."""
    return [ctl.joint_state(model.joint_names, q, [0.0] * 7, stamp=float(s), now=float(w))
            for s, w in zip(stamps, walls, strict=True)]


@pytest.mark.parametrize(("jump", "label"), [
    (-3600.0, "1-hour backwards jump"),
    (-0.3, "small backwards jump (sim reset to 0.2 s)"),
    (-1.7e9, "wall-clock stamp then simulated time"),
    (+3600.0, "1-hour forward jump"),
])
def test_clock_reset_resynchronises_after_count_messages(jump: float, label: str) -> None:
    ctl, model = make()
    count = ctl.config.clock_reset.count
    # (stamps before the epoch are bad_stamp: the 1-hour jump back starts an hour in)
    t0 = {-1.7e9: 1.7e9, -3600.0: 3600.5}.get(jump, 0.5)
    before = stream(ctl, model, t0 + np.arange(100) * 1e-3, 10 + np.arange(100) * 1e-3)
    assert all(r.command is not None for r in before)
    after_stamps = t0 + 0.1 + jump + np.arange(200) * 1e-3
    after = stream(ctl, model, after_stamps, 10.1 + np.arange(200) * 1e-3)
    reasons = [r.reason for r in after[:count - 1]]
    assert reasons == ["time_backwards" if jump < 0 else "time_future"] * (count - 1), label
    assert after[count - 1].command is not None and "clock reset" in after[count - 1].event
    assert all(r.command is not None and r.reason is None for r in after[count - 1:]), label
    assert ctl.clock_resets == 1
    assert ctl.last_clock_jump == pytest.approx(after_stamps[count - 1] - (t0 + 0.099))
    assert np.allclose(after[-1].command, gravity_torques(ctl.model, Q))  # the arm is held
    assert not ctl.stale and ctl.watchdog(now=10.1 + 0.199) is None


def test_bag_played_in_a_loop_resets_every_lap() -> None:
    ctl, model = make()
    lap = np.arange(300) * 1e-3
    wall = 0.0
    for k in range(3):
        results = stream(ctl, model, 5.0 + lap, wall + lap)
        wall += 0.3
        fresh = sum(r.command is not None for r in results)
        assert fresh == 300 - (0 if k == 0 else ctl.config.clock_reset.count - 1)
    assert ctl.clock_resets == 2


@pytest.mark.parametrize("offset", [-0.5, -3600.0, +3600.0, +5.0])
def test_single_out_of_order_or_future_message_is_rejected_without_reset(offset) -> None:
    ctl, model = make()
    t0 = 3602.0  # [s] (an hour in: an hour back is still after the epoch, not bad_stamp)
    stamps = t0 + np.arange(50) * 1e-3
    stream(ctl, model, stamps, stamps)
    bad_q = Q + 1.0
    rogue = ctl.joint_state(model.joint_names, bad_q, [0.0] * 7, stamp=t0 + 0.049 + offset,
                            now=t0 + 0.0495)
    assert rogue.command is None
    assert rogue.reason == ("time_backwards" if offset < 0 else "time_future")
    after = stream(ctl, model, t0 + 0.05 + np.arange(50) * 1e-3,
                   t0 + 0.05 + np.arange(50) * 1e-3)
    assert all(r.command is not None for r in after) and ctl.clock_resets == 0
    assert np.allclose(after[-1].command, gravity_torques(ctl.model, Q))  # rogue not merged
    # Repeated copies of one old message are not a new clock either.
    for _ in range(10):
        assert ctl.joint_state(model.joint_names, bad_q, [0.0] * 7, stamp=t0 - 1.0,
                               now=t0 + 0.1).reason == "time_backwards"
    assert ctl.clock_resets == 0


def test_forward_gap_with_matching_wall_time_is_not_future() -> None:
    ctl, model = make()
    stream(ctl, model, [1.0, 1.001], [1.0, 1.001])
    # 60 s of silence (states stopped), then the stream resumes: not future-dated.
    result = ctl.joint_state(model.joint_names, Q, [0.0] * 7, stamp=61.0, now=61.0)
    assert result.command is not None and ctl.clock_resets == 0


def test_reset_shifts_the_reference_trajectory_and_limits_the_rate() -> None:
    ctl, model = make(mode="inverse_dynamics", kp=[100.0], kd=[20.0])
    names = list(model.joint_names)
    ctl.joint_state(names, Q, [0.0] * 7, stamp=100.0, now=0.0)
    ctl.trajectory(names, np.array([1.0, 2.0]), np.vstack([Q + 0.3, Q + 0.3]), None, None,
                   start=100.0)
    outputs, times = [], []
    for k in range(1, 1500):  # through the trajectory, with a reset to t = 0 at 0.5 s
        t = 100.0 + k * 1e-3 if k < 500 else (k - 500) * 1e-3
        q_ref = ctl.reference.trajectory.sample(t)[0] if ctl.reference.trajectory else Q
        result = ctl.joint_state(names, q_ref, [0.0] * 7, stamp=t, now=k * 1e-3)
        if result.command is not None:
            outputs.append(result.command)
            times.append(k * 1e-3)
    assert ctl.clock_resets == 1
    # The reference continued (shifted by the jump): it still ends at Q + 0.3.
    assert np.allclose(ctl.reference.trajectory.sample(ctl.last_state_time)[0], Q + 0.3)
    steps = np.abs(np.diff(np.array(outputs), axis=0))
    assert np.all(steps <= RATE * np.diff(times)[:, None] + 1e-9)


def test_watchdog_and_resumption_respect_the_rate_limit() -> None:
    ctl, model = make(stale_behavior="zero", watchdog_timeout=0.05)
    names = list(model.joint_names)
    out, walls = [], []
    for k in range(100):
        r = ctl.joint_state(names, Q, [0.0] * 7, stamp=k * 1e-3, now=k * 1e-3)
        out.append(r.command)
        walls.append(k * 1e-3)
    for k in range(1, 20):  # 20 ms watchdog ticks: ramp to zero, not a step
        now = 0.099 + 0.05 + k * 0.02
        command = ctl.watchdog(now=now)
        if command is not None:
            out.append(command)
            walls.append(now)
    assert ctl.stale and np.allclose(out[-1], 0.0)
    r = ctl.joint_state(names, Q, [0.0] * 7, stamp=0.6, now=walls[-1] + 0.001)  # resumes
    out.append(r.command)
    walls.append(walls[-1] + 0.001)
    steps = np.abs(np.diff(np.array(out), axis=0))
    assert np.all(steps <= RATE * np.diff(walls)[:, None] + 1e-9)
    assert np.abs(out[-1]).max() <= RATE * 0.001 + 1e-9  # ramping back up from zero


def test_mode_switch_is_rate_limited() -> None:
    ctl, model = make()
    names = list(model.joint_names)
    first = ctl.joint_state(names, Q, [0.0] * 7, stamp=1.0, now=1.0).command
    values = default_values()
    values.update(urdf_path=URDF, mode="inverse_dynamics", kp=[5000.0])
    ctl.trajectory(names, np.array([0.001]), np.vstack([Q + 1.0]), None, None, start=1.0)
    ctl.configure(controller_config(values, ctl.base_model))
    ctl.trajectory(names, np.array([0.001]), np.vstack([Q + 1.0]), None, None, start=1.0)
    second = ctl.joint_state(names, Q, [0.0] * 7, stamp=1.001, now=1.001).command
    assert np.abs(second - first).max() == pytest.approx(RATE * 1e-3)


def test_duplicate_joint_names_are_rejected() -> None:
    ctl, model = make()
    names = [*model.joint_names, "joint3"]
    result = ctl.joint_state(names, [*Q, 9.0], [0.0] * 8, stamp=1.0, now=1.0)
    assert result.reason == "duplicate_names" and "'joint3'" in result.message
    assert ctl.rejected["duplicate_names"] == 1 and ctl.accepted == 0
    # Duplicates of joints that are not ours are not our business.
    other = ctl.joint_state([*model.joint_names, "x", "x"], [*Q, 0, 0], [0.0] * 9, stamp=1.0,
                            now=1.0)
    assert other.command is not None


@pytest.mark.parametrize(("changes", "message"), [
    ({"clock_reset.threshold": 0.0}, "'clock_reset.threshold' must be > 0"),
    ({"clock_reset.threshold": float("nan")}, "'clock_reset.threshold' must be > 0"),
    ({"clock_reset.count": 1}, "'clock_reset.count' must be >= 2"),
])
def test_clock_reset_parameters_are_validated(changes, message) -> None:
    with pytest.raises(ParameterError, match=message):
        make(**changes)
