"""The clock rule (issue 35, items 1 and 7), without ROS: ``/clock`` is the plant's
time only; the slew step is bounded by the steady clock. Every combination of the
rate limiter's array and joint-state inputs and the controller with ``/clock``
jumping back (2 s, 500 s), forward (+1000 s) or stopping while inputs keep coming:
the output never freezes longer than ``clock_stall_timeout`` (or the clock-reset
confirmation), never moves faster than the rate limit in steady time, and the
event is counted and reported.

Inputs come every millisecond of steady time; the steady clock is given to every
call (lockstep: no test here depends on the machine's speed)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from rnea_ros.control.clock_rule import SHOWN, ClockRule
from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.controller_status import controller_status
from rnea_ros.control.effort_limiter import EffortLimiter
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import defaults, load_table

DT = 1e-3  # [s] steady time between inputs
RATE = 100.0  # [N m/s]: 0.1 N m a millisecond
STALL = 1.0  # [s] clock_stall_timeout's default
JUMP_AT = 1.0  # [s] of steady time
START = 3600.0  # [s] the plant clock at steady time 0
URDF = "package://rnea_ros/urdf/arm7.urdf"


# The plant clock (/clock) as a function of steady time.
CLOCKS: dict[str, Callable[[float], float]] = {
    "back 2 s": lambda s: START + s - (2.0 if s >= JUMP_AT else 0.0),
    "back 500 s": lambda s: START + s - (500.0 if s >= JUMP_AT else 0.0),
    "forward 1000 s": lambda s: START + s + (1000.0 if s >= JUMP_AT else 0.0),
    "stopped": lambda s: START + min(s, JUMP_AT),
}
COUNTER = {"back 2 s": "jumps_back", "back 500 s": "jumps_back",
           "forward 1000 s": "jumps_forward", "stopped": "stalls"}


def target(k: int) -> float:
    """The input [N m]: 50 from the second input, -50 from the jump (the output must
    move after it: the issue's frozen limiter stayed at the old command)."""
    return 0.0 if k == 0 else (50.0 if k * DT < JUMP_AT else -50.0)


def limiter() -> EffortLimiter:
    values = {**defaults(load_table("rate_limiter")), "joints": ["a"],
              "effort_rate_limits": [RATE]}
    return EffortLimiter.from_parameters(values)


def run_limiter(kind: str, clock: str, seconds: float = 3.5) -> tuple[EffortLimiter, np.ndarray]:
    """Outputs (one per input) of a limiter fed every ``DT`` of steady time. Joint
    states (``kind``) are stamped with the plant clock (``joint_state``: a source on
    the simulation's time, whose stamps jump with it) or the sender's own steady clock
    (``joint_state, sender's stamps``: stamps that go on while /clock jumps or stops)."""
    lim, outputs = limiter(), []
    for k in range(round(seconds / DT)):
        steady = k * DT
        plant = CLOCKS[clock](steady)
        tau = np.array([target(k)])
        if kind == "array":
            out = lim.array(tau, plant, steady)
        else:
            stamp = plant if kind == "joint_state" else START + steady
            out = lim.joint_state(["a"], tau, stamp, plant, steady)
        assert out is not None
        outputs.append(out[0])
    return lim, np.array(outputs)


def longest_hold(outputs: np.ndarray) -> float:
    """The longest steady time [s] the output stood still while off its target."""
    longest = run = 0
    for k in range(1, len(outputs)):
        moving_needed = abs(outputs[k - 1] - target(k)) > 1e-9
        run = run + 1 if moving_needed and outputs[k] == outputs[k - 1] else 0
        longest = max(longest, run)
    return longest * DT


# (states stamped by a stopped clock repeat their stamp: limited on the bounded clock,
# as an array input, issue 35 -- before, held for ever)
LIMITER_CASES = [(kind, clock) for kind in ("array", "joint_state", "joint_state, sender's stamps")
                 for clock in CLOCKS]


@pytest.mark.parametrize(("kind", "clock"), LIMITER_CASES)
def test_limiter_never_freezes_nor_steps_on_a_clock_jump(kind: str, clock: str) -> None:
    lim, out = run_limiter(kind, clock)
    steps = np.abs(np.diff(out))
    assert steps.max() <= RATE * DT + 1e-9, (steps.max(), int(np.argmax(steps)))  # item 7
    # item 1: never frozen (stopped: held at most clock_stall_timeout; a stamp jump:
    # at most the clock-reset confirmation, clock_reset.count - 1 inputs)
    confirm = (lim.reset_count - 1) * DT if kind == "joint_state" else 0.0
    bound = STALL + 2 * DT if clock == "stopped" else confirm + 1e-9
    assert longest_hold(out) <= bound, longest_hold(out)
    assert out[-1] == pytest.approx(-50.0)  # reached the new input
    assert getattr(lim.clock, COUNTER[clock]) == 1
    level, message, values = lim.status(0, 10.0, now=JUMP_AT + 2.0,
                                        received=CLOCKS[clock](3.5))
    assert level == "warn" and "/clock" in message, message
    assert values["/clock " + COUNTER[clock].replace("_", " ")] == "1"


def test_limiter_status_clears_after_a_jump() -> None:
    lim, _ = run_limiter("array", "back 2 s")
    assert lim.status(0, 10.0, now=JUMP_AT + SHOWN + 0.1, received=0.0)[0] == "ok"


def test_clock_rule_follows_a_slower_plant_and_is_the_steady_clock_off_sim_time() -> None:
    """Identities: off simulated time (plant = steady) the bounded clock is the steady
    clock; a plant at half speed, or at 5x (a lockstep simulation faster than real time),
    is followed (limited in the plant's time); one at 20x, beyond clock_max_speed (10),
    is limited on the steady clock, counted; a coarse /clock (10 Hz, Gazebo classic)
    holds between its ticks and loses nothing."""
    same, slow, fast, faster, coarse = (ClockRule(1.0, STALL, 10.0) for _ in range(5))
    for k in range(2001):
        s = k * DT
        assert same.tick(s, s) == pytest.approx(s)
        assert slow.tick(0.5 * s, s) == pytest.approx(0.5 * s)
        assert fast.tick(5.0 * s, s) == pytest.approx(5.0 * s)
        assert faster.tick(20.0 * s, s) == pytest.approx(s)
        assert coarse.tick(math.floor(s * 10.0) / 10.0, s) == pytest.approx(
            math.floor(s * 10.0) / 10.0)
    assert faster.too_fast == 2000 and faster.fastest == pytest.approx(20.0)
    assert not any(r.jumps_back + r.jumps_forward + r.stalls + r.too_fast
                   for r in (same, slow, fast, coarse))


def test_clock_rule_stall_runs_on_steady_time_without_counting_it_twice() -> None:
    rule = ClockRule(1.0, STALL, 10.0)
    assert rule.tick(10.0, 0.0) == 10.0  # starts at the plant's time
    assert rule.tick(10.0, 0.9) == 10.0 and not rule.event  # a coarse clock: held
    b = rule.tick(10.0, 1.5)  # stalled: the steady time since the previous event
    assert b == pytest.approx(10.6) and rule.stalls == 1 and "stopped" in rule.event
    assert rule.stalled_at(10.0, 1.6)
    assert rule.tick(10.0, 1.6) == pytest.approx(10.7) and not rule.event  # counted once
    # /clock resumes: its 0.05 s in the 0.1 s of steady time since the previous event
    # (the stalled steady time is not counted again)
    assert rule.tick(10.05, 1.7) == pytest.approx(10.75) and "runs again" in rule.event
    assert not rule.stalled_at(10.05, 1.8)
    # having advanced 2 s more in 0.1 s: a forward jump, the steady 0.1 s counts
    assert rule.tick(12.05, 1.8) == pytest.approx(10.85) and "forward" in rule.event


@pytest.mark.parametrize(("threshold", "stall", "speed"), [
    (0.0, 1.0, 10.0), (1.0, -1.0, 10.0), (1.0, math.inf, 10.0), (1.0, 1.0, 0.5)])
def test_clock_rule_refuses_bad_settings(threshold: float, stall: float, speed: float) -> None:
    with pytest.raises(ValueError, match="stall_timeout"):
        ClockRule(threshold, stall, speed)


@pytest.mark.parametrize(("name", "value"), [
    ("clock_stall_timeout", 0.0), ("clock_stall_timeout", 1e9), ("clock_stall_timeout", math.nan),
    ("clock_max_speed", 0.5), ("clock_max_speed", 1e9)])
def test_bad_clock_rule_parameters_are_named(name: str, value: float) -> None:
    """No value disables the rule: a stall timeout of 1e9 s would let a stopped /clock
    freeze the output, a speed of 1e9 would let a jump through."""
    values = {**defaults(load_table("rate_limiter")), "joints": ["a"], name: value}
    with pytest.raises(ParameterError, match=f"parameter '{name}'"):
        EffortLimiter.from_parameters(values)
    controller = {**default_values(), "urdf_path": URDF, name: value}
    with pytest.raises(ParameterError, match=f"parameter '{name}'"):
        controller_config(controller, load_model(controller))


def test_the_clock_rule_parameters_reach_the_controller() -> None:
    """Each value lands in its own field (none of the others moves)."""
    values = {**default_values(), "urdf_path": URDF, "clock_stall_timeout": 0.3,
              "clock_max_speed": 7.0}
    config = controller_config(values, load_model(values))
    assert (config.clock_stall_timeout, config.clock_max_speed) == (0.3, 7.0)
    assert config.time_scaling.min_speed == default_values()["time_scaling.min_speed"]
    ctl = TorqueController(load_model(values), config)
    ctl.use_plant_clock(lambda: 0.0)
    assert ctl.plant_clock is not None
    assert (ctl.plant_clock.stall_timeout, ctl.plant_clock.max_speed) == (0.3, 7.0)


# ----------------------------------------------------------------- the controller
CONTROLLER_RATE = 1000.0  # N m/s, the default


def swinging_pose(model, s: float) -> np.ndarray:
    """The measured pose at steady time ``s`` [s]: joint 2 swinging 0.8 rad in 2 s (an
    arm moved by hand while the simulator's /clock stands still)."""
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
    q[1] += 0.8 * math.sin(math.pi * s / 2.0)
    return q


@pytest.mark.parametrize("clock", CLOCKS)
def test_controller_follows_the_states_whatever_clock(clock: str) -> None:
    """Item 7: on simulated time the states keep coming (stamps advancing) while
    /clock jumps or stops; gravity compensation follows the pose (old main: frozen at
    the old pose's gravity, 31 N m off after 2 s), every step within 1000 N m/s of
    steady time, the event counted and on the status."""
    values = default_values()
    values.update(urdf_path=URDF)
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    plant = [START]
    ctl.use_plant_clock(lambda: plant[0])
    names, zeros = model.joint_names, [0.0] * model.nv
    commands, worst_late = [], 0.0
    for k in range(round(3.0 / DT)):
        s = k * DT
        plant[0] = CLOCKS[clock](s)
        q = swinging_pose(model, s)
        result = ctl.joint_state(names, q, zeros, START + s, now=s)
        assert result.command is not None, (k, result)
        commands.append(result.command.copy())
        if s > JUMP_AT + STALL + 0.05:  # past any hold: tracking g(q) within the slew lag
            worst_late = max(worst_late, float(np.abs(result.command
                                                      - gravity_torques(model, q)).max()))
    steps = np.abs(np.diff(np.array(commands), axis=0)).max()
    assert steps <= CONTROLLER_RATE * DT + 1e-9, steps
    assert worst_late < 0.5, worst_late  # N m
    assert ctl.plant_clock is not None and getattr(ctl.plant_clock, COUNTER[clock]) == 1
    status = controller_status(ctl, {"rejected": 0, "mimic": 0, "passive": 0}, 10.0, 1000.0,
                               3000, ctl.compute_us, math.inf, now=JUMP_AT + 2.0)
    assert status.level == "warn" and "/clock" in status.message, status.message
    assert status.values["/clock " + COUNTER[clock].replace("_", " ")] == "1"
