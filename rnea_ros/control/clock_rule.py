"""The clock rule of every node, free of ROS: ``/clock`` is the plant's time only;
safety intervals are bounded by the steady clock.

On simulated time (``use_sim_time``) a node reads two clocks: the **plant clock**
(``/clock``: a simulator's, a bag's, Gazebo's) and the **steady clock** (the
machine's monotonic time, which nothing outside the process can move). The plant
clock may jump back (a simulator reset, a bag played in a loop), jump forward, or
stop while inputs keep arriving (a paused or crashed simulator, a bag at its end
with a second source). A protection timed on it alone then freezes (a time step
that stays negative or zero) or lets a step through (a time step of 1000 s).

:class:`ClockRule` turns the two readings taken at each event into one **bounded
clock** ``b`` [s], monotonic, that the slew limiters time their steps with. With
``pd`` the plant time and ``sd >= 0`` the steady time since ``b`` last advanced
(or the plant last moved):

* ``0 < pd <= max_speed * sd``: ``b += pd`` -- the plant's time, for a plant up to
  ``max_speed`` times faster than real time (a lockstep or fast simulation is
  limited in its own time: the same torques whatever the machine's speed);
* ``pd > max_speed * sd``: ``b += sd`` -- the steady clock (a ``/clock`` jumping
  ``+1000 s`` gains the steady ``sd``, and is reported: a **forward jump** when
  ``pd > sd + threshold``, else counted as too fast);
* ``pd < 0``: a **backward jump**, reported; ``b += sd`` (the steady time since
  the previous event: the output keeps moving at the rate limit);
* ``pd == 0``: the plant has not moved (a coarse ``/clock``, e.g. Gazebo's at
  10 Hz or a bag's at 40 Hz): ``b`` holds, for at most ``stall_timeout`` of steady
  time since the plant last moved; beyond, the clock has **stalled**: reported
  once, and ``b`` advances by the steady time since the previous event until the
  plant moves again (the steady time so spent is not counted twice when it does).

So a step is never larger than the rate limit times ``max_speed`` times the steady
time elapsed (and never larger than the rate limit times the steady time elapsed
once ``/clock`` jumped or ran faster than that), and a command is never held longer
than ``stall_timeout`` by the plant clock. Off
simulated time the node passes the steady clock as the plant's: ``b`` is then the
steady clock itself (``b`` starts at the first plant reading). Events are counted
and kept for ``/diagnostics`` (:meth:`ClockRule.values`; :meth:`ClockRule.status`
warns while the clock is stalled and for ``SHOWN`` seconds after a jump).
"""

from __future__ import annotations

import math

from rnea_ros.parameter_errors import ParameterError

SHOWN = 5.0  # [s] of steady time a status warns after a /clock jump


class ClockRule:
    """The bounded clock of a node (see the module docstring).

    ``threshold`` [s]: a plant step ahead of the steady one by more than this is a
    forward jump (the nodes' ``clock_reset.threshold``); ``stall_timeout`` [s]: the
    steady time the plant clock may stand still before it is stalled (the nodes'
    ``clock_stall_timeout``); ``max_speed``: the fastest plant clock followed, in
    multiples of the steady clock (``clock_max_speed``). Finite, > 0 and
    ``max_speed >= 1`` (:class:`~rnea_ros.parameter_errors.ParameterError` otherwise;
    the nodes' parameter tables refuse them first).
    """

    def __init__(self, threshold: float, stall_timeout: float, max_speed: float) -> None:
        if not (math.isfinite(threshold) and threshold > 0.0
                and math.isfinite(stall_timeout) and stall_timeout > 0.0
                and math.isfinite(max_speed) and max_speed >= 1.0):
            raise ParameterError(f"clock rule: parameters 'clock_reset.threshold' ({threshold}) "
                                 f"and 'clock_stall_timeout' ({stall_timeout}) must be finite "
                                 f"and > 0 s, 'clock_max_speed' ({max_speed}) finite and >= 1")
        self.threshold, self.stall_timeout = float(threshold), float(stall_timeout)
        self.max_speed = float(max_speed)
        self.too_fast = 0  # plant steps beyond max_speed that were not jumps
        self.fastest = 0.0  # the largest plant / steady step ratio seen
        self.bounded = math.nan  # b [s], from the first plant reading on
        self.plant = math.nan  # plant time when b last advanced or the plant moved [s]
        self.steady = math.nan  # steady time then [s]
        self.previous = math.nan  # steady time of the previous event [s]
        self.stalled = False
        self.jumps_back = self.jumps_forward = self.stalls = 0
        self.last_jump = 0.0  # [s], plant minus steady step of the last jump
        self.last_jump_steady = -math.inf  # steady time of the last jump [s]
        self.event = ""  # what the last call found ("" : nothing)

    def tick(self, plant: float, steady: float) -> float:
        """The bounded clock [s] at an event read at ``plant`` (``/clock``) and
        ``steady`` [s]; sets :attr:`event` when the plant clock jumped or stalled."""
        self.event = ""
        if math.isnan(self.plant) or not math.isfinite(plant):
            if math.isnan(self.plant):  # the first reading: b starts at the plant's time
                self.bounded = plant if math.isfinite(plant) else steady
            self.plant, self.steady, self.previous = plant, steady, steady
            return self.bounded
        pd = plant - self.plant
        sd = max(steady - self.steady, 0.0)
        since = max(steady - self.previous, 0.0)
        self.previous = max(self.previous, steady)
        if pd == 0.0:
            if not self.stalled:
                if sd <= self.stall_timeout:
                    return self.bounded
                self.stalled, self.stalls = True, self.stalls + 1
                self.event = (f"/clock stopped: no simulated time for {sd:.3f} s of steady "
                              "time; limiting on the steady clock")
            self.steady = max(self.steady, steady)  # (stalled: the steady time is spent)
            self.bounded += since
            return self.bounded
        if pd < 0.0:
            self.jumps_back += 1
            self._jump(pd - since, steady, "back")
            self.bounded += since
        else:
            if sd > 0.0:
                self.fastest = max(self.fastest, pd / sd)
            if pd > sd + self.threshold:
                self.jumps_forward += 1
                self._jump(pd - sd, steady, "forward")
            elif pd > self.max_speed * sd:
                self.too_fast += 1
            elif self.stalled:
                self.event = "/clock runs again"
            self.bounded += pd if pd <= self.max_speed * sd else sd
        self.stalled = False
        self.plant, self.steady = plant, steady
        return self.bounded

    def _jump(self, jump: float, steady: float, direction: str) -> None:
        self.last_jump, self.last_jump_steady = jump, steady
        self.event = (f"/clock jumped {direction} by {jump:+.6f} s; limiting on the "
                      "steady clock")

    def stalled_at(self, plant: float, steady: float) -> bool:
        """Whether the plant clock reads ``plant`` still, ``stall_timeout`` after it last
        moved (a query between events, for ``/diagnostics``; changes nothing)."""
        return plant == self.plant and (self.stalled
                                        or steady - self.steady > self.stall_timeout)

    def status(self, stalled: bool, steady: float) -> tuple[str, str]:
        """('ok' | 'warn', message) of the plant clock at steady time ``steady``."""
        if stalled:
            return "warn", "/clock stopped: limiting on the steady clock"
        if steady - self.last_jump_steady < SHOWN:
            return "warn", f"/clock jumped by {self.last_jump:+.3f} s"
        return "ok", ""

    def values(self, stalled: bool) -> dict[str, str]:
        """Key-values for ``/diagnostics``."""
        return {"/clock": "stopped" if stalled else "running",
                "/clock jumps back": str(self.jumps_back),
                "/clock jumps forward": str(self.jumps_forward),
                "/clock stalls": str(self.stalls),
                f"/clock steps faster than {self.max_speed:g}x": str(self.too_fast),
                "/clock fastest [x steady]": f"{self.fastest:.2f}",
                "last /clock jump [s]": f"{self.last_jump:+.6f}"}


__all__ = ["SHOWN", "ClockRule"]
