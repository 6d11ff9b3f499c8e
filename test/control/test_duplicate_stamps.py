"""Issue 35: joint states whose stamps stop advancing must not freeze the command.

The controller rejects a state whose stamp repeats a joint's last one
(``duplicate_stamp``): a stream of them is a silence, so the watchdog acts
(timeout + grace) and ``/diagnostics`` says why; the stamps advancing again
recover. The rate limiter, whose joint-state input is a command stream, limits a
repeated stamp on the bounded clock alone (as an array input): its output tracks
at the rate limit, the duplicates counted and reported. On old main both held the
last command for ever (the slew step, the stamp interval, was 0), with no report.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.controller_status import ControllerReport
from rnea_ros.control.effort_limiter import EffortLimiter
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.parameters import defaults, load_table

DT = 1e-3  # [s] between states, steady time
FROZEN_AT = 0.5  # [s] the sender's clock stops here
START = 100.0  # [s] the sender's stamps at steady time 0
URDF = "package://rnea_ros/urdf/arm7.urdf"


def pose(s: float) -> np.ndarray:
    """The measured pose at steady time ``s`` [s]: joint 2 swinging (the robot moves)."""
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
    q[1] += 0.8 * math.sin(math.pi * s / 2.0)
    return q


def stamp(s: float) -> float:
    """The sender's stamp at steady time ``s``: its clock froze at ``FROZEN_AT``."""
    return START + min(s, FROZEN_AT)


def make(**changes: object) -> TorqueController:
    values = {**default_values(), "urdf_path": URDF, **changes}
    model = load_model(values)
    return TorqueController(model, controller_config(values, model))


def run(ctl: TorqueController, start: float, end: float, stamps, report: ControllerReport,
        ) -> tuple[list[np.ndarray], list[str | None]]:
    """Feed states every ``DT`` of steady time in [start, end) and look at the watchdog
    every 20 ms (the node's timer); the outputs published and the results' reasons."""
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    published, reasons = [], []
    for k in range(round(start / DT), round(end / DT)):
        s = k * DT
        result = ctl.joint_state(names, pose(s), zeros, stamps(s), now=s)
        reasons.append(result.reason)
        if result.command is not None:
            published.append(result.command.copy())
        if k % 20 == 0:
            stale = ctl.watchdog(now=s)
            if stale is not None:
                published.append(stale.copy())
            report.statuses(ctl, received=k + 1, now=s)
    return published, reasons


def test_controller_rejects_repeated_stamps_and_the_watchdog_acts() -> None:
    ctl = make()
    config = ctl.config
    report = ControllerReport(window=1.0, now=0.0)
    run(ctl, 0.0, FROZEN_AT + DT, stamp, report)
    assert ctl.rejected["duplicate_stamp"] == 0 and not ctl.stale
    accepted = ctl.accepted
    # The sender's clock is frozen while the robot keeps moving: every state repeats.
    silence = config.watchdog_timeout + config.watchdog_grace
    _, reasons = run(ctl, FROZEN_AT + DT, FROZEN_AT + silence + 0.2, stamp, report)
    assert set(reasons) == {"duplicate_stamp"}
    assert ctl.rejected["duplicate_stamp"] == len(reasons) and ctl.accepted == accepted
    assert ctl.stale and ctl.stale_events == 1  # not a frozen command: the stale behaviour
    now = FROZEN_AT + silence + 0.2
    (status,) = report.statuses(ctl, received=10_000, now=now)
    assert status.level == "error"
    assert status.message == "watchdog: joint-state stamps stopped advancing"
    assert status.values["rejected: duplicate_stamp"] == str(len(reasons))
    # The stamps advance again: accepted, tracking g(q) (within the slew lag), status clears.
    restart = now
    published, reasons = run(ctl, restart, restart + 0.5,
                             lambda s: START + FROZEN_AT + (s - restart) + DT, report)
    assert set(reasons) == {None} and not ctl.stale
    late = pose(restart + 0.5 - DT)
    assert np.abs(published[-1] - gravity_torques(ctl.base_model, late)).max() < 0.5


@pytest.mark.parametrize("mode", ["gravity", "inverse_dynamics"])  # fused paths both
def test_a_duplicate_is_rejected_with_a_message_and_leaves_the_state(mode: str) -> None:
    ctl = make(mode=mode)
    names, zeros = ctl.base_model.joint_names, [0.0] * 7
    first = ctl.joint_state(names, pose(0.0), zeros, START, now=0.0)
    assert first.command is not None
    held = first.command.copy()
    again = ctl.joint_state(names, pose(1.0), zeros, START, now=DT)
    assert again.command is None and again.reason == "duplicate_stamp"
    assert "repeats the last one" in again.message and f"{START:.6f}" in again.message
    assert np.array_equal(ctl._q, pose(0.0))  # the merged state is untouched
    # The next stamp is merged and moves the command (no frozen slew step).
    moved = ctl.joint_state(names, pose(1.0), zeros, START + DT, now=2 * DT)
    assert moved.command is not None and not np.array_equal(moved.command, held)


def test_joints_of_two_senders_at_one_stamp_are_not_duplicates() -> None:
    """Two publishers (arm 1-4, wrist 5-7) stamping the same control cycle: each joint's
    stamp advances, so neither is a duplicate."""
    ctl = make()
    names = ctl.base_model.joint_names
    for k in range(5):
        q = pose(k * DT)
        for part in (slice(0, 4), slice(4, 7)):
            result = ctl.joint_state(names[part], q[part], [0.0] * len(q[part]),
                                     START + k * DT, now=k * DT)
            assert result.reason in (None, "missing_joints"), result
    assert ctl.rejected["duplicate_stamp"] == 0


def test_a_looped_bag_is_still_a_clock_reset() -> None:
    """The clock reset's re-synchronisation merges the message at its own stamp: not
    a duplicate of the shifted stamps."""
    ctl = make()
    names, zeros = ctl.base_model.joint_names, [0.0] * 7
    for k in range(20):
        assert ctl.joint_state(names, pose(k * DT), zeros, START + k * DT,
                               now=k * DT).command is not None
    results = [ctl.joint_state(names, pose(k * DT), zeros, 1.0 + k * DT, now=(20 + k) * DT)
               for k in range(10)]
    assert ctl.clock_resets == 1 and results[-1].command is not None
    assert ctl.rejected["duplicate_stamp"] == 0


# ----------------------------------------------------------------- the rate limiter
RATE = 100.0  # [N m/s]


def limiter() -> EffortLimiter:
    values = {**defaults(load_table("rate_limiter")), "joints": ["a"],
              "effort_rate_limits": [RATE]}
    return EffortLimiter.from_parameters(values)


@pytest.mark.parametrize("sim_time", [False, True])
def test_limiter_tracks_through_repeated_stamps(sim_time: bool) -> None:
    """Stamps frozen at the first input, the effort asked steps 0 -> 50 N m: the output
    climbs at the rate limit in the receiver's time (old main: held at 0 for ever)."""
    lim, outputs = limiter(), []
    for k in range(1000):
        s = k * DT
        received = 5000.0 + s if sim_time else s  # /clock running, or the steady clock
        out = lim.joint_state(["a"], [0.0 if k == 0 else 50.0], START, received, s)
        assert out is not None
        outputs.append(out[0])
    steps = np.diff(outputs)
    assert steps.max() <= RATE * DT + 1e-9  # never over-rate
    assert outputs[-1] == pytest.approx(50.0)  # reached after 0.5 s at 100 N m/s
    assert outputs[100] == pytest.approx(RATE * 100 * DT)  # tracking from the start
    assert lim.duplicate_stamps == 999 and lim.slew.bad_dt == 0 and not lim.rejected
    level, message, values = lim.status(0, 10.0, now=1.0, received=received)
    assert level == "warn" and "stamps not advancing" in message, message
    assert values["duplicate stamps"] == "999"
    later = 7.0 + (5000.0 if sim_time else 0.0)  # the receiver's clock 7 s later
    assert lim.status(0, 10.0, now=7.0, received=later)[0] == "ok"  # clears
    # Stamps advancing again are limited on them as before (no reset, no hold).
    out = lim.joint_state(["a"], [40.0], START + DT, received + DT, 1.0)
    assert out is not None and out[0] == pytest.approx(50.0 - RATE * DT)
    assert lim.duplicate_stamps == 999 and lim.clock_resets == 0


@pytest.mark.parametrize("mode", ["gravity", "inverse_dynamics"])
def test_an_identical_resend_is_counted_quietly_and_is_still_a_silence(mode: str) -> None:
    """A simulator braking until its first command resends its t = 0 state: the same
    sample, not a frozen clock with a moving robot. It is counted (resent), not a
    rejection to warn about (the demo's MuJoCo step printed one WARN per start; the
    hold tests count no rejection); a stream of resends still leaves the watchdog to
    act."""
    ctl = make(mode=mode)
    names, zeros = ctl.base_model.joint_names, [0.0] * 7
    assert ctl.joint_state(names, pose(0.0), zeros, START, now=0.0).command is not None
    silence = ctl.config.watchdog_timeout + ctl.config.watchdog_grace
    steps = round((silence + 0.1) / DT)
    stale = None
    for k in range(1, steps):
        again = ctl.joint_state(names, pose(0.0), zeros, START, now=k * DT)
        assert again.command is None and again.reason is None and not again.message
        if k % 20 == 0:
            stale = ctl.watchdog(now=k * DT) if stale is None else stale
    assert ctl.resent == steps - 1 and not ctl.rejected and ctl.accepted == 1
    assert stale is not None and ctl.stale  # no new sample: the watchdog acted
    moved = ctl.joint_state(names, pose(0.0), zeros, START + DT, now=steps * DT)
    assert moved.reason is None and moved.command is not None and not ctl.stale
