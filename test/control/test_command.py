"""The compiled command path (rnea_ros.control.command): the output kernel's rules,
and gravity mode's fused step against the general pipeline (merge, stages,
saturation and slew as separate steps) on a random stream of good and bad states."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from rnea_ros.control.command import BAD_TORQUE, HELD, OUTPUT, finish_fast
from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.core.dynamics.rnea import gravity_torques

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q = np.array([0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3])
INDEX = np.array([6, 0, 1, 2], dtype=np.int64)


def make(**changes):
    values = default_values()
    values.update(urdf_path=URDF, **changes)
    model = load_model(values)
    return TorqueController(model, controller_config(values, model)), model


def finish(tau, last, slew, dt, limits=(5.0, 1.0, 50.0, 50.0), rates=(100.0,) * 4):
    bounds = np.array([limits, rates], dtype=np.float64)
    out = np.full(4, 7.0)
    status = finish_fast.call(INDEX, bounds, last, np.asarray(tau, dtype=np.float64), slew,
                              1.0 + dt, 1.0 + dt, 1.0, 1.0, dt, out)  # dt from the output clock
    return status, out


def test_finish_clips_then_slews_and_keeps_the_command() -> None:
    tau = np.array([-3.0, 2.0, 0.0, 0.0, 0.0, 0.0, 9.0])  # commanded: tau[6], tau[0..2]
    last = np.zeros(4)
    status, out = finish(tau, last, False, 0.0)
    assert status == (OUTPUT, 2, 0)  # 9 -> 5 and -3 -> -1: clipped, no slew without a previous
    assert np.array_equal(out, [5.0, -1.0, 2.0, 0.0]) and np.array_equal(last, out)
    status, out = finish(tau + 1.0, last, True, 1e-3)  # within 100 N m/s * 1 ms = 0.1 N m
    assert status == (OUTPUT, 2, 2)  # still clipped: 10 -> 5, -2 -> -1; 2 -> 3 and 0 -> 1 slewed
    assert np.allclose(out, [5.0, -1.0, 2.1, 0.1]) and np.array_equal(last, out)


@pytest.mark.parametrize("dt", [0.0, -1e-3, np.nan, np.inf])
def test_finish_holds_when_no_time_has_passed(dt: float) -> None:
    last = np.array([1.0, 2.0, 3.0, 4.0])
    status, out = finish(np.zeros(7), last, True, dt)
    assert status == (HELD, 0, 0) and np.array_equal(out, [1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(last, [1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("slew", [True, False])
def test_finish_never_outputs_a_non_finite_torque(slew: bool) -> None:
    last = np.array([1.0, 2.0, 3.0, 4.0])
    tau = np.zeros(7)
    tau[1] = np.nan
    status, out = finish(tau, last, slew, 1e-3)
    assert status == (BAD_TORQUE, 0, 0)
    assert np.array_equal(out, last if slew else np.zeros(4))
    assert np.array_equal(last, [1.0, 2.0, 3.0, 4.0])  # not written
    tau[1], tau[3] = 0.0, np.inf  # a joint that is not commanded does not matter
    assert finish(tau, last, slew, 1e-3)[0][0] == OUTPUT


def counters(ctl: TorqueController) -> tuple:
    slew, clock = ctl.slew, ctl.clock
    return (ctl.accepted, ctl.ignored, ctl.commands, ctl.saturated, dict(ctl.rejected),
            clock.newest, clock.newest_wall, clock.streak, ctl._has_output,
            None if slew is None else (slew.limited, slew.bad_dt), ctl.clock_resets,
            ctl.stale, ctl.stale_events, ctl.last_valid_wall, ctl.last_state_time,
            *(None if np.isnan(t) else t for t in (ctl._output_stamp, ctl._output_wall,
                                                   ctl._output_received)))


def bad_stream(model, rng: np.random.Generator, count: int):
    """``count`` joint states (names, position, velocity, stamp, now) mixing good ones
    with every kind the controller rejects, holds or re-synchronises on."""
    names = list(model.joint_names)
    stamp, now = 5000.0, 0.0  # (its clock resets go 50 s back, ~27 times: stay > 0)
    q = Q.copy()
    for k in range(count):
        now += 1e-3
        stamp += 1e-3
        q += rng.normal(0.0, 0.05, 7)  # fast enough to hit the slew limit at times
        kind = rng.integers(0, 16)
        order = rng.permutation(7)
        msg_names = [names[i] for i in order]
        position, velocity = list(q[order]), list(rng.normal(0.0, 1.0, 7))
        msg_stamp = stamp
        if kind == 1:  # a subset, and a joint of another robot
            msg_names = [*msg_names[:3], "gripper"]
            position, velocity = [*position[:3], 1.0], [*velocity[:3], 0.0]
        elif kind == 2:
            position[rng.integers(0, 7)] = np.nan
        elif kind == 3:
            velocity[rng.integers(0, 7)] = 2e6
        elif kind == 4:
            msg_stamp = stamp - 0.5  # out of order
        elif kind == 5:
            msg_stamp = stamp = stamp - 1e-3  # the same stamp again: no time has passed
        elif kind == 6:
            msg_stamp = stamp + 100.0  # future-dated
        elif kind == 7:
            velocity = []  # gravity mode needs none
        elif kind == 8:
            msg_names[1] = msg_names[0]
        elif kind == 9:
            position = position[:-1]
        elif kind == 10:
            msg_names = ["other1", "other2"]
            position, velocity = [0.0, 0.0], [0.0, 0.0]
        elif kind == 11 and k % 7 == 0:  # a clock reset: five agreeing backwards stamps
            stamp -= 50.0
            for _ in range(5):
                now += 1e-3
                stamp += 1e-3
                yield msg_names, list(q[order]), [0.0] * 7, stamp, now
            continue
        elif kind == 12:
            now += 0.2  # silence: the watchdog's first look holds (issue 35 item 9) ...
            yield None, None, None, None, now
            now += 0.02  # ... its next acts
            yield None, None, None, None, now
        elif kind == 13:  # dated 0.5 s ahead (received 1 ms later): the receipt bound acts
            msg_stamp = stamp = stamp + 0.5
        yield msg_names, position, velocity, msg_stamp, now


def compare(fused: TorqueController, general: TorqueController, model, count: int,
            trajectory_every: int = 0) -> int:
    """Feed both controllers the same bad stream (and, every ``trajectory_every``
    states, the same new trajectory); every result, output and counter must be the
    same. Returns the number of outputs."""
    rng = np.random.default_rng(16)
    outputs = 0
    for k, (names, position, velocity, stamp, now) in enumerate(bad_stream(model, rng, count)):
        if trajectory_every and k % trajectory_every == trajectory_every // 2 and names:
            times = np.array([0.0, 0.2, 0.5])
            positions = Q + np.array([[0.0] * 7, [0.1] * 7, [-0.05] * 7]) * rng.uniform(0, 1)
            for ctl in (fused, general):
                ctl.trajectory(list(model.joint_names), times, positions, None, None, stamp)
        if names is None:
            a, b = fused.watchdog(now), general.watchdog(now)
        else:
            ra = fused.joint_state(names, position, velocity, stamp, now)
            rb = general.joint_state(names, array("d", position), velocity, stamp, now)
            assert (ra.reason, ra.message, ra.event) == (rb.reason, rb.message, rb.event)
            a, b = ra.command, rb.command
        assert (a is None) == (b is None)
        if a is not None:
            assert np.array_equal(a, b), (a, b)
            outputs += 1
        assert counters(fused) == counters(general)
    assert np.array_equal(fused._state[:3], general._state[:3])  # q, qd, stamps
    # Every path was taken.
    assert outputs > count // 3 and fused.clock_resets > 3 and fused.stale_events > 10
    assert set(fused.rejected) >= {"non_finite", "out_of_range", "time_backwards",
                                   "time_future", "duplicate_names", "length_mismatch"}
    if fused.slew is not None:
        assert fused.slew.limited > 0 and fused.slew.bad_dt > 0
    return outputs


@pytest.mark.parametrize("changes", [
    {},
    {"effort_limits": [40.0, 60.0, 5.0, 30.0, 3.0, 3.0, 1.0], "watchdog_timeout": 0.05},
    {"slew_limit.enable": False, "stale_behavior": "zero"},
    {"joints": ["joint7", "joint2", "joint5"], "effort_rate_limits": [20.0]},
])
def test_fused_gravity_step_equals_the_general_pipeline(changes: dict) -> None:
    fused, model = make(**changes)
    general, _ = make(**changes)
    general._gravity_command = None  # intake, then the GravityCompensation stage, _output
    assert fused._gravity_command is not None
    compare(fused, general, model, 3000)
    assert fused.saturated > 0 or "effort_limits" not in changes


@pytest.mark.parametrize("changes", [
    {"kp": [30.0], "kd": [5.0]},
    {"kp": [30.0], "kd": [5.0], "time_scaling.enable": True, "effort_rate_limits": [300.0]},
    {"friction_compensation": True, "joints": ["joint7", "joint2", "joint5"],
     "effort_limits": [2.0, 30.0, 3.0]},
])
def test_fused_inverse_dynamics_equals_the_general_pipeline(changes: dict) -> None:
    fused, model = make(mode="inverse_dynamics", **changes)
    general, _ = make(mode="inverse_dynamics", **changes)
    general._inverse_dynamics_command = None  # the Reference and InverseDynamicsPD stages
    assert fused._inverse_dynamics_command is not None
    compare(fused, general, model, 1500, trajectory_every=300)
    assert fused.reference.trajectory is not None
    assert (fused.reference.scaling is not None) == ("time_scaling.enable" in changes)


@pytest.mark.parametrize("mode", ["gravity", "inverse_dynamics"])
def test_a_message_is_rejected_for_its_first_problem_in_order(mode: str) -> None:
    """length, stamp, names (none of the model's, or one twice), velocities, future
    stamp, then the state itself: the first problem found is the reason."""
    ctl, model = make(mode=mode)
    names = list(model.joint_names)
    ctl.joint_state(names, Q, [0.0] * 7, stamp=1.0, now=1.0)
    twice = [names[0], *names[:6]]
    nan_q = [np.nan, *Q[1:]]
    cases = [
        (twice, nan_q[:6], [], np.nan, "length_mismatch"),
        (twice, nan_q, [], np.inf, "bad_stamp"),  # a stamp that is not finite
        (twice, nan_q, [], -1e-9, "bad_stamp"),  # negative: before the epoch
        (["a", "b"], [0.0, np.nan], [], 99.0, None),  # ignored: not an error
        (twice, nan_q, [], 99.0, "duplicate_names"),
        (names, nan_q, [], 99.0, "missing_velocity" if mode != "gravity" else "time_future"),
        (names, nan_q, [0.0] * 7, 99.0, "time_future"),
        (names, nan_q, [0.0] * 7, 0.5, "non_finite"),  # backwards too: the state comes first
        (names, [2e6, *Q[1:]], [0.0] * 7, 0.5, "out_of_range"),
        (names, Q, [0.0] * 7, 0.5, "time_backwards"),
    ]
    for msg_names, position, velocity, stamp, reason in cases:
        result = ctl.joint_state(msg_names, position, velocity, stamp=stamp, now=1.001)
        assert result.reason == reason and result.command is None, (reason, result)
    assert ctl.ignored == 1 and ctl.accepted == 1


@pytest.mark.parametrize("mode", ["gravity", "inverse_dynamics"])
def test_clock_reset_merges_the_message_that_confirms_it(mode: str) -> None:
    """A simulator reset from t = 3600.2 s to 0: 3600.2 + (0.005 - 3600.2) rounds past
    0.005, the re-synchronised stamps must not make that message look older."""
    ctl, model = make(mode=mode)
    names = list(model.joint_names)
    for k in range(201):
        ctl.joint_state(names, Q, [0.0] * 7, stamp=3600.0 + k * 1e-3, now=k * 1e-3)
    assert 3600.2 + (0.005 - 3600.2) > 0.005
    count = ctl.config.clock_reset.count
    q = Q + 0.01
    results = [ctl.joint_state(names, q, [0.0] * 7, stamp=k * 1e-3, now=0.2 + k * 1e-3)
               for k in range(1, count + 1)]
    assert [r.reason for r in results] == ["time_backwards"] * (count - 1) + [None]
    assert "clock reset" in results[-1].event and results[-1].command is not None
    assert np.array_equal(ctl._q, q) and np.all(ctl._stamp == count * 1e-3)


def test_command_lands_in_the_callers_array() -> None:
    ctl, model = make()
    out = np.zeros(7)
    result = ctl.joint_state(list(model.joint_names), array("d", Q), array("d", [0.0] * 7),
                             stamp=1.0, now=0.0, out=out)
    assert result.command is out and np.allclose(out, gravity_torques(model, Q), atol=1e-12)
    assert ctl.watchdog(now=1.0, out=out) is None  # the first look at a silence holds
    stale = ctl.watchdog(now=1.02, out=out)
    assert stale is out and np.allclose(out, gravity_torques(model, Q), atol=1e-12)


def seam_controllers():
    """(name, controller) whose computation the fused steps do not cover."""
    from rnea_ros.control.closed_loop import ClosedLoopController
    from rnea_ros.samples import load_loop_robot

    for mode in ("gravity", "inverse_dynamics"):
        ctl, model = make(mode=mode, **{"imu.topic": "imu"})
        yield f"imu-{mode}", ctl
        values = default_values()
        values.update(urdf_path="package://rnea_ros/urdf/arm7_gripper.urdf", mode=mode)
        gripper = load_model(values)
        assert gripper.expanded and gripper.mimic_joints
        yield f"mimic-{mode}", TorqueController(gripper, controller_config(values, gripper))
        loops = load_loop_robot("five_bar")
        values = {**default_values(), "mode": mode}
        yield f"loops-{mode}", ClosedLoopController(
            loops, controller_config(values, loops.tree, loops=loops))
        values = default_values()
        values.update(urdf_path=URDF, mode=mode, **{"oracle.enable": True})
        model = load_model(values)

        def oracle(model, config):
            return lambda step: np.zeros(model.nv)

        ctl = TorqueController(model, controller_config(values, model), oracle)
        assert ctl.oracle is not None
        yield f"oracle-{mode}", ctl


def test_the_fused_steps_are_left_to_what_they_cover() -> None:
    """A moving base (IMU), mimic followers, closed loops and the live oracle need the
    stage pipeline: their controllers must not take the fused gravity or
    inverse-dynamics step (it knows none of them), while a plain arm does."""
    for mode in ("gravity", "inverse_dynamics"):
        plain, _ = make(mode=mode)
        fused = plain._gravity_command if mode == "gravity" else \
            plain._inverse_dynamics_command
        assert fused is not None, mode
    for name, ctl in seam_controllers():
        assert ctl._gravity_command is None and ctl._inverse_dynamics_command is None, name


def test_a_mimic_gripper_is_computed_by_the_general_path() -> None:
    """arm7_gripper in gravity mode: the command is the mimic model's g(q) (the follower's
    torque mapped onto its leader), and a follower off its coupling is a warning."""
    values = default_values()
    values.update(urdf_path="package://rnea_ros/urdf/arm7_gripper.urdf",
                  **{"slew_limit.enable": False})
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    q = np.array([*Q, 0.015])
    names = [*model.joint_names, "finger_joint2"]
    result = ctl.joint_state(names, [*q, -0.015], [0.0] * 9, stamp=1.0, now=0.0)
    assert result.warning == "" and ctl.mimic_checks == 1
    expected = gravity_torques(model, q)
    index = ctl.config.command_index
    assert result.command is not None
    assert np.allclose(result.command, np.clip(expected[index], -ctl.config.effort_limits,
                                               ctl.config.effort_limits), atol=1e-12)
    result = ctl.joint_state(names, [*q, 0.0], [0.0] * 9, stamp=1.001, now=0.001)
    assert "finger_joint2" in result.warning and result.command is not None
    assert ctl.mimic_mismatches == 1
