"""Issue 35: joint states whose stamps advance much slower than time are stale
(``rnea_ros.control.freshness``, docs/nodes.md "Stamps that advance too slowly").

A stuck driver re-sending its last state with the stamp +1 us a cycle, or a bag
replayed at 1/100 speed to a controller off ``/clock``, kept the controller
commanding from stale data and fed its watchdog for ever (on old main: every state
accepted, no watchdog action). Now such states are rejected (``slow_stamps``) within
``tolerance / (min_ratio - pace)`` of steady time and the watchdog acts after
``timeout + grace`` more; healthy streams -- jittered, clock drift, late deliveries,
simulated time at any real-time factor the clock rule follows, lockstep -- never
are. All on explicit clocks: no result depends on the machine's schedule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.controller_status import ControllerReport
from rnea_ros.control.freshness import StampPace, watchdog_period
from rnea_ros.core.dynamics.rnea import gravity_torques

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
START = 100.0  # [s] the sender's stamp at steady time 0
DT = 1e-3  # [s] between states
LOOK = 0.02  # [s] the node's watchdog period with the defaults
RATIO, TOL = 0.5, 0.1  # the table's stamp_pace defaults
TIMEOUT = GRACE = 0.1  # the table's watchdog defaults


def make(**changes: object) -> TorqueController:
    values = {**default_values(), "urdf_path": URDF, "stale_behavior": "zero", **changes}
    model = load_model(values)
    return TorqueController(model, controller_config(values, model))


def drive(ctl: TorqueController, stamps, end: float, start: float = 0.0):
    """States every ``DT`` of steady time in [start, end), stamped ``stamps(s)``, the
    pose moving; the watchdog looked at every ``LOOK``. Returns (steady time of the
    first ``slow_stamps`` rejection, steady time of the first stale command) [s]
    (nan: none)."""
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    first_slow = first_stale = math.nan
    for k in range(round(start / DT), round(end / DT)):
        s = k * DT
        q = Q0.copy()
        q[1] += 0.5 * math.sin(s)
        result = ctl.joint_state(names, q, zeros, stamps(s), now=s)
        if result.reason == "slow_stamps" and math.isnan(first_slow):
            first_slow = s
        if k % round(LOOK / DT) == 0 and ctl.watchdog(now=s) is not None \
                and math.isnan(first_stale):
            first_stale = s
    return first_slow, first_stale


@pytest.mark.parametrize(("label", "pace"), [
    ("stuck driver, +1 us a 1 kHz cycle", 1e-3),
    ("replay at 1/100 speed", 0.01),
    ("replay at 1/20 speed", 0.05),
])
def test_slow_stamps_are_rejected_and_the_watchdog_acts_within_the_bound(label, pace) -> None:
    """Healthy for 1 s, then the stamps advance at ``pace`` of time: rejected within
    tol / (ratio - pace) (+ one state), the watchdog's stale command within timeout +
    grace + two looks of that, and /diagnostics says why. On old main every state was
    accepted and the watchdog never acted."""
    ctl = make()
    turn = 1.0
    first_slow, first_stale = drive(
        ctl, lambda s: START + (s if s < turn else turn + pace * (s - turn)), 4.0)
    bound = TOL / (RATIO - pace) + DT
    assert first_slow - turn <= bound, (label, first_slow)
    assert first_slow - turn >= TOL / RATIO - DT  # (not a state before the tolerance)
    assert first_stale - first_slow <= TIMEOUT + GRACE + LOOK + DT, (label, first_stale)
    assert ctl.stale and ctl.rejected["slow_stamps"] > 0
    status = ControllerReport(10.0, now=0.0).statuses(ctl, 0, now=4.0)[0]
    assert status.level == "error"
    assert status.message == "watchdog: joint-state stamps advancing too slowly"
    assert "below 'stamp_pace.min_ratio' = 0.5" in ctl.stamp_pace.message()


def test_stamps_keeping_pace_again_recover() -> None:
    """After a slow stretch the stamps run at 1x again: accepted within tol / (1 -
    ratio) (the deficit's cap, 2 tol), the watchdog's stale state cleared; a stamp
    jumping ahead (a driver restarted on the real time) clears it at once."""
    ctl = make()
    frozen = START + 1.0

    def stamps(s: float) -> float:
        if s < 1.0:
            return START + s
        if s < 3.0:
            return frozen + 1e-3 * (s - 1.0)
        return frozen + 2e-3 + (s - 3.0)

    drive(ctl, stamps, 3.0)
    assert ctl.stale
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    accepted_at = math.nan
    for k in range(3000, 4000):
        s = k * DT
        if ctl.joint_state(names, Q0, zeros, stamps(s), now=s).command is not None:
            accepted_at = s
            break
    assert accepted_at - 3.0 <= TOL / (1 - RATIO) + 2 * DT
    assert not ctl.stale
    drive(ctl, stamps, 6.0, start=4.0)  # (stamps at 1x: never stale again)
    assert not ctl.stale and ctl.stale_events == 1
    ctl2 = make()
    drive(ctl2, stamps, 3.0)
    assert ctl2.stale
    jump = ctl2.joint_state(names, Q0, zeros, START + 2.5, now=3.0)  # ahead: a fresh clock
    assert jump.command is not None and not ctl2.stale


def jittered_stream(seed: int, seconds: float, drift: float = 0.0):
    """A healthy 1 kHz sender on a busy machine: each state stamped when sampled, on a
    clock ``drift`` fast, delivered 0.1-3 ms later, with stalls of the sender (the
    states of 0.35 s delivered together after it) and of the receiver (its queue shed
    to the newest); yields (steady receipt time, stamp), receipts in order."""
    rng = np.random.default_rng(seed)
    t = 0.0
    out = []
    while t < seconds:
        if rng.random() < 0.002:  # a stall of the sender: its samples arrive late, bunched
            released = t + 0.35
            while t < released:
                out.append((released + rng.uniform(0, 1e-3), START + t * (1 + drift)))
                t += DT
        elif rng.random() < 0.002:  # a stall of the receiver: only the newest is taken
            t += 0.35
            out.append((t + 1e-3, START + t * (1 + drift)))
        else:
            out.append((t + rng.uniform(1e-4, 3e-3), START + t * (1 + drift)))
        t += DT * rng.uniform(0.5, 1.5)
    out.sort()
    return out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("drift", [0.0, -5e-4, 5e-4])
def test_healthy_jittered_streams_are_never_slow(seed: int, drift: float) -> None:
    """Delivery jitter, 0.35 s stalls of either end, +-500 ppm between the sender's
    clock and the steady one (NTP's slew limit): never a slow_stamps rejection."""
    pace = StampPace(RATIO, TOL, TIMEOUT)
    stream = jittered_stream(seed, 20.0, drift)
    assert not any(pace.slow(stamp, received) for received, stamp in stream)
    assert pace.deficit <= TOL / 2


@pytest.mark.parametrize("factor", [0.01, 0.1, 1.0, 10.0, 100.0])
def test_simulated_time_at_any_real_time_factor_is_never_slow(factor: float) -> None:
    """use_sim_time (the controller's plant clock is /clock): the stamps are /clock's; a
    simulation at 1/100 to 100 x real time, lockstep (a step whenever the controller
    answered, at irregular steady intervals), /clock read up to two steps behind the
    state (a separate topic), and held for 5 s of steady time every 2000 steps (a paused
    simulation, the harness's held loop: /clock still, no states): never slow. (The
    clock rule's bounded clock, which moves on the steady clock once /clock stood still
    for clock_stall_timeout, would take the first state after a hold for a stale one.)"""
    rng = np.random.default_rng(7)
    ctl = make(watchdog_timeout=10.0)
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    plant = [START]
    ctl.use_plant_clock(lambda: plant[0])
    steady, sim = 0.0, START
    for k in range(6000):
        steady += rng.uniform(0.2, 3.0) * DT / factor  # irregular lockstep steps
        if k % 2000 == 1999:  # held 5 s; the simulator resends its last state every 0.5 s
            for _ in range(10):
                steady += 0.5
                ctl.joint_state(names, Q0, zeros, sim, now=steady)
        sim += DT
        plant[0] = max(plant[0], sim - DT * rng.integers(0, 3))  # /clock as last received
        ctl.joint_state(names, Q0, zeros, sim, now=steady)
    assert ctl.rejected["slow_stamps"] == 0 and ctl.accepted == 6000, dict(ctl.rejected)
    assert ctl.resent == 30


@pytest.mark.parametrize("jump", [1000.0, -2.0, -500.0])
def test_a_clock_jump_is_no_evidence_against_the_stamps(jump: float) -> None:
    """use_sim_time: /clock jumps (forward 1000 s, back 2 s or 500 s) while the states'
    stamps run on at 1x of it and the steady clock: never slow (the reference's advance
    is capped by the clock rule's bounded clock)."""
    ctl = make(watchdog_timeout=10.0)
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    plant = [START]
    ctl.use_plant_clock(lambda: plant[0])
    for k in range(3000):
        plant[0] = START + k * DT + (jump if k >= 1000 else 0.0)
        ctl.joint_state(names, Q0, zeros, START + k * DT, now=k * DT)
    assert ctl.rejected["slow_stamps"] == 0 and ctl.accepted == 3000, dict(ctl.rejected)


def test_slow_stamps_on_simulated_time_are_caught() -> None:
    """use_sim_time and /clock running at 1x, while the states' stamps advance at 1/100
    (a stuck driver on a live simulation): rejected within tol / (ratio - 0.01)."""
    pace = StampPace(RATIO, TOL, TIMEOUT)
    caught = math.nan
    for k in range(5000):
        s = k * DT
        if pace.slow(START + 0.01 * s, START + s):  # /clock at 1x
            caught = s
            break
    assert caught <= TOL / (RATIO - 0.01) + DT


def test_a_silence_counts_one_timeout_at_most() -> None:
    """A sender silent for 10 s whose next stamp is 1 ms on (its clock paused with it):
    a silence is the watchdog's; the deficit grows by ratio x timeout only."""
    pace = StampPace(RATIO, TOL, TIMEOUT)
    assert not pace.slow(START, 0.0)
    assert not pace.slow(START + DT, 10.0)
    assert pace.deficit == pytest.approx(RATIO * TIMEOUT - DT)


def test_clock_reset_of_the_stamps_re_anchors_the_pace() -> None:
    """A clock reset re-synchronised by the controller (five agreeing stamps 50 s back)
    re-anchors the stream: states on the new clock are judged anew, not rejected for
    being behind the old one, a slow stream on the new clock is caught, and a slow
    stream stays slow through a reset."""
    ctl = make()
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    s = 0.0
    for _ in range(500):
        assert ctl.joint_state(names, Q0, zeros, START + s, now=s).reason is None
        s += DT
    for k in range(2000):  # the sender's clock reset 50 s back, then running at 1x
        ctl.joint_state(names, Q0, zeros, START - 50.0 + k * DT, now=s)
        s += DT
    assert ctl.clock_resets == 1 and ctl.rejected["slow_stamps"] == 0
    slow_from = s
    first_slow, _ = drive(ctl, lambda x: START - 48.0 + 1e-3 * (x - slow_from), s + 2.0,
                          start=s)
    assert first_slow - slow_from <= TOL / (RATIO - 1e-3) + DT
    # Slow, then a clock reset of the stamps (back 10 s), then slow on: the reset
    # re-anchors the pace but keeps its deficit -- no reset launders stale stamps.
    s += 2.0
    slow = ctl.rejected["slow_stamps"]
    reasons = [ctl.joint_state(names, Q0, zeros, START - 60.0 + k * 1e-6, now=s + k * DT).reason
               for k in range(50)]
    assert ctl.clock_resets == 2 and reasons[:4] == ["time_backwards"] * 4
    assert reasons[4] is None  # the reset itself, merged
    assert set(reasons[5:]) == {"slow_stamps"}, reasons
    assert ctl.rejected["slow_stamps"] == slow + 45


def test_runtime_settings_and_refusals() -> None:
    """The settings follow a runtime change (the table's bounds refuse what would turn the
    check off: min_ratio 0, tolerance 1e9); the class refuses nonsense with the values."""
    ctl = make()
    values = {**default_values(), "urdf_path": URDF, "stamp_pace.min_ratio": 0.3,
              "stamp_pace.tolerance": 0.2, "watchdog_timeout": 0.05}
    ctl.configure(controller_config(values, ctl.base_model))
    pace = ctl.stamp_pace
    assert (pace.ratio, pace.tolerance, pace.gap) == (0.3, 0.2, 0.05)
    for name, bad in (("stamp_pace.min_ratio", 0.0), ("stamp_pace.min_ratio", 0.01),
                      ("stamp_pace.min_ratio", 1.0), ("stamp_pace.tolerance", 1e9),
                      ("stamp_pace.tolerance", 0.0)):
        with pytest.raises(Exception, match=name.replace(".", r"\.")):
            controller_config({**values, name: bad}, ctl.base_model)
    with pytest.raises(ValueError, match="min_ratio 0"):
        StampPace(0.0, 0.1, 0.1)


@pytest.mark.parametrize("timeout", [0.001, 0.004, 0.01, 0.08, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("grace", [0.0, 0.0005, 0.003, 0.1, 1.0])
def test_watchdog_reaction_within_timeout_grace_and_one_period(timeout, grace) -> None:
    """For accepted values of watchdog_timeout and watchdog_grace (their safety bounds
    included), looks every watchdog_period(T, G) at any phase react to a silence within
    T + G + P, P <= min(T/4, 20 ms) and <= G when G >= 0.25 ms (the first look past the
    timeout holds: a stall of the process; the next acts)."""
    period = watchdog_period(timeout, grace)
    assert 2.5e-4 <= period <= min(0.02, max(timeout / 4, 2.5e-4))
    if grace >= 2.5e-4:
        assert period <= grace
    ctl = make(watchdog_timeout=timeout, watchdog_grace=grace)
    names, zeros = ctl.base_model.joint_names, [0.0] * ctl.base_model.nv
    for phase in np.linspace(0.0, period, 7, endpoint=False):
        last = 1000.0 + phase
        ctl.joint_state(names, Q0, zeros, START + last, now=last)
        look = math.ceil(last / period) * period
        while ctl.watchdog(now=look) is None:
            look += period
            assert look - last < 30.0
        reaction = look - last
        assert timeout + grace < reaction <= timeout + grace + period + 1e-9, (phase, reaction)
        assert np.allclose(ctl.hold_torque(), gravity_torques(ctl.full_model, Q0))
        ctl.stale = False
