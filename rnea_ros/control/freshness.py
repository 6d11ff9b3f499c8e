"""When joint states are fresh, free of ROS: how often the watchdog looks, and whether
their stamps keep pace with the receiver's clock (issue 35).

**The watchdog's look period** (:func:`watchdog_period`). The controller's watchdog
(:meth:`~rnea_ros.control.controller.TorqueController.watchdog`) is a timer on the
steady clock. With ``T`` = ``watchdog_timeout``, ``G`` = ``watchdog_grace`` and
``P`` the timer's period, a look first sees a silence at most ``P`` after ``T``; with
a grace that look only holds (a stall of the process: states may be queued) and the
stale behaviour comes at the first look past ``T + G`` after it. So the reaction,
from the last valid state to the stale command, is at most
``max(T + 2P, T + G + P)``, i.e. ``T + G + P`` when ``P <= G`` or ``G = 0``. Hence
``P = min(20 ms, T/4, G if G > 0)``, never below ``MIN_PERIOD`` (the smallest
``T/4`` the safety bounds allow). The node recreates its timer whenever a runtime
change of either parameter changes ``P`` (a timer fixed at start-up kept 20 ms
after ``watchdog_timeout`` was lowered to 4 ms: a 24 ms reaction).

**The pace of the stamps** (:class:`StampPace`). A stamp equal to the last one is
rejected by the controller (``duplicate_stamp``); a sender whose stamps *advance*,
but much slower than time (a stuck driver re-sending its last state with the stamp
+1 us each cycle, a bag replayed at 1/100 speed with the receiver off ``/clock``),
would otherwise feed the watchdog with stale data for ever. The reference is the
plant's clock as the receiver reads it: the steady clock, or on ``use_sim_time``
``/clock`` itself -- so a simulation runs at any real-time factor, lockstep included,
its stamps keeping pace with the ``/clock`` it publishes, and a ``/clock`` standing
still (a paused simulation, a lockstep loop held) is no evidence against the stamps
(the clock rule's bounded clock moves on the steady clock then, and would take the
first state after a long pause for a stale one); the reference's advance is also capped
by the bounded clock's, so a ``/clock`` jumping forward is none either. With ``ds``
the advance of the newest stamp and ``dr`` the reference's advance since the
previous advancing message, a deficit

    D <- clip(D + rho * min(dr, C) - ds, 0, 2 * tol),   C = min(T, tol / (2 rho))

is kept (a one-sided CUSUM): healthy stamps (``ds ~ dr``) keep it at 0, whatever
their jitter; stamps advancing at a fraction ``k < rho`` of the clock grow it by
``(rho - k)`` per second. A state is rejected (``slow_stamps``) while ``D > tol``: the
watchdog then acts, ``tol / (rho - k) + T + G + P`` after the stream turned slow
(0.42 s with the defaults for a stream of stamps frozen but for microseconds: 0.2 s
of stale states accepted, at most 0.2 s behind), for messages at least every ``C``
(0.1 s with the defaults). A sparser stream, every ``p > C``, counts ``C`` a message:
its stamps are slow below ``rho C / p`` of the clock, frozen ones rejected at their
third message (a silence longer than ``T`` is the watchdog's).

**Late deliveries.** A state stamped when it was sent and delivered late by ``d``
(either process descheduled: a stall) comes after a gap ``dr ~ d``, its stamp a few
ms on: it adds ``rho * min(d, C) - ds < tol / 2``, taken back by the messages after it
(the next state stamped after the stall jumps ahead; a queue drained in order after
the stall comes in a burst, each ``ds`` on and ``dr ~ 0``). So any delivery schedule
of a healthy stream with at most two stalled deliveries in a row -- two stalls of any
length close together, a queue drained in order between them -- stays at or below
``tol`` and is accepted. The cap ``C`` is what makes that hold for any ``T``: capped at
``T`` alone (issue 35), a ``watchdog_timeout`` of 0.5 s let one state delivered 0.21 s
late add ``rho * 0.21 > tol`` and be rejected. Three states in a row each delivered
after a stall, stamped within ms of each other, cannot be told from a sender whose
stamps froze while it sends every stall's length, and are rejected. (The controller
node takes the newest queued state after a stall, :mod:`rnea_ros.nodes.shedding`, so
a stall of its own never leaves it an in-order backlog.) A gap in the messages counts
at most ``C`` (a longer silence is the watchdog's, not the stamps' fault); the cap
``2 tol`` bounds the recovery to ``tol / (1 - rho)`` of healthy stamps (a stamp
jumping ahead clears it at once; a clock reset of the stamps re-anchors it and keeps
it).
``rho`` = ``stamp_pace.min_ratio``, ``tol`` = ``stamp_pace.tolerance`` (their bounds and
reasons: the parameter table).
"""

from __future__ import annotations

import math

from rnea_ros.parameter_errors import ParameterError

MAX_PERIOD = 0.02  # [s] the watchdog's longest look period
MIN_PERIOD = 2.5e-4  # [s] the shortest: watchdog_timeout's safety minimum (1 ms) / 4


def watchdog_period(timeout: float, grace: float) -> float:
    """The watchdog timer's period [s] for ``timeout`` and ``grace`` [s] (module
    docstring): the reaction is then at most ``timeout + grace + period``."""
    period = min(MAX_PERIOD, timeout / 4.0)
    if grace > 0.0:
        period = min(period, grace)
    return max(period, MIN_PERIOD)


class StampPace:
    """Whether joint-state stamps advance at least ``min_ratio`` times as fast as the
    receiver's clock (module docstring). ``min_ratio`` in (0, 1), ``tolerance`` [s]
    and ``gap`` [s] (``watchdog_timeout``) > 0; the longest gap counted is
    :attr:`cap` = ``min(gap, tolerance / (2 min_ratio))``."""

    def __init__(self, min_ratio: float, tolerance: float, gap: float) -> None:
        self.configure(min_ratio, tolerance, gap)
        self.stamp = math.nan  # the newest stamp seen [s]
        self.reference = math.nan  # the plant's clock then [s]
        self.bounded = math.nan  # the clock rule's bounded clock then [s]
        self.deficit = 0.0  # D [s]
        self.worst = 0.0  # the slowest pace of a rejection, stamp / clock advance

    def configure(self, min_ratio: float, tolerance: float, gap: float) -> None:
        """New settings (a runtime change); the stream's state is kept."""
        if not (0.0 < min_ratio < 1.0 and tolerance > 0.0 and gap > 0.0):
            raise ParameterError(
                f"stamp pace: min_ratio {min_ratio} ('stamp_pace.min_ratio') must be in "
                f"(0, 1), tolerance {tolerance} ('stamp_pace.tolerance') and gap {gap} "
                "('watchdog_timeout') > 0 s")
        self.ratio, self.tolerance, self.gap = float(min_ratio), float(tolerance), float(gap)
        # C: one stalled delivery adds < tol / 2, two in a row stay <= tol (docstring)
        self.cap = min(self.gap, 0.5 * self.tolerance / self.ratio)

    def reset(self, stamp: float, reference: float, bounded: float) -> None:
        """The stream's clock was reset: the state stamped ``stamp`` [s] (on the new
        clock), received at ``reference`` (``bounded``) [s], is the new anchor. The
        deficit stays (a stream slow before the reset is slow after it until it keeps
        pace: clock resets cannot launder stale stamps)."""
        self.stamp, self.reference, self.bounded = stamp, reference, bounded

    def slow(self, stamp: float, reference: float, bounded: float | None = None) -> bool:
        """Whether a state stamped ``stamp`` [s], received at ``reference`` [s] on the
        plant's clock (``/clock`` as read; ``bounded``: the clock rule's bounded clock
        then, whose advance caps the reference's: a ``/clock`` jumping forward is no
        evidence against the stamps either), is behind the pace (reject it). A stamp
        not newer than the newest (a duplicate, a stamp going back, a second
        sender's) leaves the state alone, and is not judged here: other checks do (a
        pace kept on the newest stamp judges the stream of the freshest sender; a clock
        reset of the stamps, :meth:`reset`)."""
        if not (math.isfinite(stamp) and math.isfinite(reference)):
            return False  # (non-finite stamps are another check's)
        bounded = reference if bounded is None else bounded
        if self.stamp != self.stamp:  # (nan) the first state
            self.stamp, self.reference, self.bounded = stamp, reference, bounded
            return False
        ds = stamp - self.stamp
        if ds <= 0.0:
            return False
        dr = min(max(min(reference - self.reference, bounded - self.bounded), 0.0),
                 self.cap)
        self.deficit = min(max(self.deficit + self.ratio * dr - ds, 0.0),
                           2.0 * self.tolerance)
        self.stamp, self.reference, self.bounded = stamp, reference, bounded
        if self.deficit > self.tolerance:
            if dr > 0.0:
                self.worst = ds / dr
            return True
        return False

    def message(self) -> str:
        """Why the last state was rejected."""
        return (f"joint-state stamps advance at {self.worst:.3g} of the receiver's clock "
                f"(below 'stamp_pace.min_ratio' = {self.ratio:g} for more than "
                f"'stamp_pace.tolerance' = {self.tolerance:g} s): stale data")


__all__ = ["MAX_PERIOD", "MIN_PERIOD", "StampPace", "watchdog_period"]
