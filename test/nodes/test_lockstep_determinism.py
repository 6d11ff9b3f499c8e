"""Closed loops in lockstep give the same numbers on any schedule (issue 35 §10-11).

The harness's loop (:class:`rnea_ros.nodes.harness.ClosedLoop`) runs simulator,
controller and probe in one process: simulated time advances only when the controller has
answered a state. Two things let the schedule in: a trajectory sent into the running loop
started at whichever state the controller had seen when it arrived, and a stall of the
process longer than the watchdog's timeout + grace (a loaded machine: 2 of 2,104 tests,
1 ``make demo`` in 3 at load 4-6) made the watchdog's overdue firing -- taken before the
queued state -- publish its stale command, which stepped the simulator once more: two
states went round the loop from then on (the demo's elastic arm: 6.36 rad of error).

Here the same scenario runs undisturbed and with the process stalled (short sleeps, and
six of 0.35 s between executor callbacks): every state, command and ~/efforts stamp must
agree exactly. The watchdog is set longer than the stalls there: its first look after a
stall only holds (test_controller.py), but a second stall right after that look -- a
loaded machine -- can let the next look act before the queued state. When it acts, its
commands now step nothing (the simulator's ``lockstep_answers``, the harness's default):
the last test holds the loop until the shipped watchdog has acted.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np
import pytest

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ARM7_GAINS, ClosedLoop, track_sinusoid
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = 0.5 * (MODEL.lower_limit + MODEL.upper_limit) + 0.2
# A watchdog longer than the stalls (module docstring).
CONTROLLER = {"urdf_path": URDF, "mode": "inverse_dynamics", "watchdog_timeout": 2.0,
              "watchdog_grace": 0.1, "publish_effort_state": True, **ARM7_GAINS}
LONG_STALL = 0.35  # s, longer than the shipped watchdog's 0.1 + 0.1 s
LONG_AT = range(150, 906, 151)  # the executor callbacks before which it comes


def stall(loop: ClosedLoop, seed: int) -> list[float]:
    """Make the loop's executor stall: 0-3 ms before one callback in 50, and
    :data:`LONG_STALL` before the 150th, 301st, ... 905th (a step takes about five:
    each place in the loop, a state or a command queued, when the watchdog's timer
    becomes overdue); returns the stalls [s]."""
    spin_once, rng, calls, stalls = loop.executor.spin_once, random.Random(seed), [0], []

    def stalled(timeout_sec: float | None = None) -> None:
        calls[0] += 1
        pause = LONG_STALL if calls[0] in LONG_AT else \
            rng.uniform(0.0, 0.003) if rng.random() < 0.02 else 0.0
        if pause:
            stalls.append(pause)
            time.sleep(pause)
        spin_once(timeout_sec=timeout_sec)
    loop.executor.spin_once = stalled  # type: ignore[method-assign]
    return stalls


def scenario(seed: int | None, controller: dict[str, Any] = CONTROLLER,
             hold: float = 0.0) -> dict[str, Any]:
    """Hold 0.2 s, then track a cosine for 0.4 s; what the probe recorded. ``hold`` > 0:
    after the 0.2 s the loop is held (:meth:`ClosedLoop.held`) until the controller's
    watchdog has acted and published ``hold`` ~/efforts more (its stale commands, which
    reach the simulator), and at least ``hold`` s of wall time."""
    with ClosedLoop(controller, {"urdf_path": URDF, "initial_positions": Q0.tolist()}) as loop:
        stalls = stall(loop, seed) if seed is not None else []
        assert loop.run_for(0.2)
        c = loop.controller.controller if loop.controller else None
        assert c is not None
        rec = loop.probe.recording
        if hold:
            with loop.held():
                began, seen = time.monotonic(), len(rec.efforts)
                assert loop.spin_until(lambda: c.stale_events >= 1
                                       and len(rec.efforts) >= seen + hold
                                       and time.monotonic() - began >= hold, 60.0)
        _, error, start = track_sinusoid(loop, Q0, 0.2, np.pi, 0.4)
        with loop.held():  # the answer to the last state
            end = loop.sim_time
            assert loop.spin_until(lambda: bool(loop.probe.recording.efforts) and
                                   loop.probe.recording.efforts[-1][0] >= end - 1e-9, 10.0)
        return {"t": np.array(rec.t), "q": np.array(rec.q), "qd": np.array(rec.qd),
                "effort_t": np.array([t for t, _ in rec.efforts]),
                "effort": np.array([e for _, e in rec.efforts]), "start": start,
                "error": error, "stale": c.stale_events, "stalls": stalls}


def answers(run: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The first ~/efforts of each stamp (the answer to that state: a watchdog's command
    carries the stamp of the state answered before it), stamps and efforts."""
    _, first = np.unique(run["effort_t"], return_index=True)
    return run["effort_t"][first], run["effort"][first]


def test_a_stalled_process_gives_the_same_loop_to_the_last_bit() -> None:
    calm = scenario(None)
    busy = scenario(seed=35)
    assert busy["stalls"].count(LONG_STALL) == len(LONG_AT) and len(busy["stalls"]) > 8
    print(f"stalls {len(busy['stalls'])}, {sum(busy['stalls']):.3f} s; tracking max error "
          f"{np.abs(calm['error']).max():.2e} rad")
    assert calm["stale"] == busy["stale"] == 0  # the watchdog never acted
    assert busy["start"] == calm["start"]  # the trajectory started at the same state
    # Each state once, 1 ms apart, and each answered once (~/efforts: its stamp).
    for run in (calm, busy):
        np.testing.assert_allclose(np.diff(run["t"]), 1e-3, atol=1e-6)
        np.testing.assert_array_equal(run["effort_t"], run["t"])
    for key in ("t", "q", "qd", "effort_t", "effort", "error"):
        np.testing.assert_array_equal(busy[key], calm[key], err_msg=key)


# The shipped watchdog (0.1 s + 0.1 s grace), far shorter than the hold below.
SHORT_WATCHDOG = {**CONTROLLER, "watchdog_timeout": 0.1, "watchdog_grace": 0.1}


@pytest.mark.parametrize("slew", [False, True])
def test_a_watchdog_acting_on_a_held_loop_steps_nothing(slew: bool) -> None:
    """The demo's elastic phase, one run in five beside two busy loops (issue 35 §11): the
    loop held past the watchdog's timeout + grace, so the watchdog acted, and each of its
    stale commands stepped the simulator once more (1.34e-3 rad against 9.38e-7). On
    stamped answers (``lockstep_answers``, the harness's default) they step nothing: each
    state is stepped and answered once. Without the slew limiter the loop is the same to
    the last bit. With it, the commands after the watchdog's are limited from its hold
    on the command clock (the wall time since it, as on a robot), so only the states up to
    the hold are the same bits."""
    controller = {**SHORT_WATCHDOG, "slew_limit.enable": slew}
    calm = scenario(None, controller)
    held = scenario(None, controller, hold=5)
    assert held["stale"] >= 1  # the watchdog acted, its commands went out
    assert len(held["effort_t"]) >= len(calm["effort_t"]) + 5
    assert held["start"] == calm["start"]
    np.testing.assert_array_equal(held["t"], calm["t"])  # each state once: no extra step
    np.testing.assert_array_equal(answers(held)[0], held["t"])  # and answered once
    before = held["t"] <= held["start"] + 1e-9  # the states up to the hold
    for key in ("q", "qd"):
        np.testing.assert_array_equal(held[key][before], calm[key][before], err_msg=key)
    if not slew:
        for key in ("q", "qd", "error"):
            np.testing.assert_array_equal(held[key], calm[key], err_msg=key)
        np.testing.assert_array_equal(answers(held)[1], answers(calm)[1])
