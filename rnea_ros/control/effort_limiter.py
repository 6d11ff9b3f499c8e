"""The standalone torque-rate limiter's logic (``rnea_ros.nodes.rate_limiter``), free
of ROS: efforts in (an array, or a joint state's efforts picked by name), clipped to
``effort_limits`` then slew-limited (:class:`~rnea_ros.control.rate_limit.SlewLimiter`:
``|tau_k - tau_{k-1}| <= effort_rate_limits * dt``); bad inputs rejected and counted;
backwards or future-dated stamps held, until ``clock_reset.count`` of them in a row
agree: a clock reset, re-synchronised. Times: stamps, the receiver's clock [s]
(``received``: ``/clock`` on simulated time, the plant's time) and a steady clock
(``now``). The slew step is timed on the clock rule's bounded clock
(:class:`~rnea_ros.control.clock_rule.ClockRule`): the receiver's clock, never more
than ``clock_max_speed`` times faster than the steady one, and moving on the steady
one when ``/clock`` jumps or stops -- a ``/clock`` jump neither freezes the output nor
lets a step through. A joint state whose stamp repeats the previous output's (a
sender whose clock froze, a message sent twice) carries no time: its step is the
bounded clock's alone, as for an array input -- the output tracks at the rate limit
instead of freezing -- and it is counted (:attr:`duplicate_stamps`) and reported.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.clock_rule import SHOWN, ClockRule
from rnea_ros.control.config import per_joint
from rnea_ros.control.rate_limit import SlewLimiter, positive_limits
from rnea_ros.core.errors import options
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import ParameterSet, ParameterSpec, load_table, parameter_set

Array = NDArray[np.float64]
# The node's parameters: rnea_ros/params/rate_limiter.yaml (ranges, choices, safety bounds).
RATE_LIMITER_PARAMETERS: dict[str, ParameterSpec] = load_table("rate_limiter")
INPUT_TYPES = RATE_LIMITER_PARAMETERS["input_type"].choices


class EffortLimiter:
    """Clip and slew-limit an effort stream for ``joints`` (see the module docstring).

    ``rates`` and ``limits`` (n,) [N m/s or N/s, N m or N] (``inf``: no clipping);
    ``threshold`` [s] and ``reset_count`` the clock-reset test's, ``stall_timeout`` [s]
    and ``max_speed`` the clock rule's (:attr:`clock`). :meth:`array` and
    :meth:`joint_state` return the command to publish, or None with the rejection
    counted in :attr:`rejected` (its message in :attr:`message`); :attr:`event` says
    when a call re-synchronised the stamps' clock or found ``/clock`` jumped or stopped.
    """

    def __init__(self, joints: Sequence[str], rates: Array, limits: Array,
                 threshold: float = 1.0, reset_count: int = 5,
                 stall_timeout: float = 1.0, max_speed: float = 10.0) -> None:
        self.joints = list(joints)
        self.slew = SlewLimiter(rates)
        self.limits = np.asarray(limits, dtype=np.float64)
        self.threshold, self.reset_count = float(threshold), int(reset_count)
        self.rejected: Counter[str] = Counter()
        self.message = ""  # the last rejection's
        self.event = ""  # a clock reset, set by the call that found it
        self.last_output_wall = -math.inf  # steady time of the last output
        self.last_moved_wall = -math.inf  # ... of the last one not held (its stamp: last_time)
        self.streak, self.streak_stamp = 0, -math.inf
        self.clock_resets = 0
        self.duplicate_stamps = 0  # joint states that repeated the last output's stamp
        self.last_duplicate_wall = -math.inf  # steady time of the last of them [s]
        self.clock = ClockRule(threshold, stall_timeout, max_speed)
        # The node's parameters by the table's dotted names (from_parameters); here the
        # defaults, with the arguments above taking precedence.
        self.config: ParameterSet = parameter_set(RATE_LIMITER_PARAMETERS, {})
        self.joint_set = set(self.joints)
        self.index_cache: dict[tuple[str, ...], NDArray[np.int64]] = {}
        self.warm_up()

    def warm_up(self) -> None:
        """Run a throw-away :class:`SlewLimiter` of the same rates through a first, a
        limited and a held command, so that the slew kernels are compiled (or loaded
        from numba's cache) when the limiter is built, not on its first limited input
        (issue 35: 1.0 s without output on a cold cache, 0.2 s warm)."""
        slew = SlewLimiter(self.slew.rate)
        zero = np.zeros(len(self.joints))
        slew(zero, 0.0, 0.0)
        slew(zero + 1e9, 1.0, 1.0)  # limited
        slew(zero, 1.0, 1.0)  # no time passed: held

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any] | ParameterSet) -> EffortLimiter:
        """From the node's parameters (``rnea_ros/params/rate_limiter.yaml``), values by
        dotted name or the :class:`~rnea_ros.parameters.ParameterSet` built from them:
        ranges, choices, safety bounds and distinct joints checked by the table, then
        what the table cannot say (at least one joint, one limit or one per joint);
        :class:`ParameterError` naming the parameter. The set is kept as
        :attr:`config` (``config.input_type``, ``config.clock_reset.count``: the
        table's names), what the node reads."""
        p = values if isinstance(values, ParameterSet) else \
            parameter_set(RATE_LIMITER_PARAMETERS, values)
        flat = p.dotted()
        joints = [j for j in p.joints if j]
        if not joints:
            raise ParameterError("parameter 'joints' must name the joints of the output array")
        n = len(joints)
        rates = positive_limits(per_joint(flat, "effort_rate_limits", n, -math.inf),
                                "effort_rate_limits")
        if list(p.effort_limits) == [0.0]:
            limits = np.full(n, np.inf)
        else:
            limits = positive_limits(per_joint(flat, "effort_limits", n, -math.inf),
                                     "effort_limits")
        limiter = cls(joints, rates, limits, p.clock_reset.threshold, p.clock_reset.count,
                      p.clock_stall_timeout, p.clock_max_speed)
        limiter.config = p
        return limiter

    def reject(self, reason: str, detail: str = "") -> None:
        """Count a rejected input under ``reason``; :attr:`message` says it."""
        self.rejected[reason] += 1
        self.message = f"rejected effort input ({reason}{': ' if detail else ''}{detail})"

    def array(self, tau: Array, received: float, now: float | None = None) -> Array | None:
        """An array input ``tau`` (n,) received at ``received`` on the receiver's clock
        (``/clock`` on simulated time) and steady time ``now`` (default
        ``time.monotonic()``), limited on the bounded clock; None: rejected."""
        now = time.monotonic() if now is None else now
        bounded = self.clock.tick(received, now)
        self.event = self.clock.event
        return self.limit(tau, bounded, bounded, now)

    def joint_state(self, names: Sequence[str], efforts: Sequence[float], stamp: float,
                    received: float, now: float | None = None) -> Array | None:
        """A joint state's ``efforts`` picked by ``names`` into the joints' order, limited
        at its ``stamp`` (:meth:`on_stamp`) received at ``received`` on the receiver's
        clock and steady time ``now``: the step is the stamp interval, never more than
        the bounded clock's (:attr:`clock`); a stamp equal to the last output's is the
        bounded clock's step alone (counted in :attr:`duplicate_stamps`); None: rejected
        (lengths differ, a joint named twice, a joint missing)."""
        now = time.monotonic() if now is None else now
        bounded = self.clock.tick(received, now)
        self.event = clock_event = self.clock.event
        if len(efforts) != len(names):
            self.reject("length_mismatch")
            return None
        key = tuple(names)
        index = self.index_cache.get(key)
        if index is None:
            position = {name: k for k, name in enumerate(key)}
            ours = [n for n in key if n in self.joint_set]
            if len(ours) != len(set(ours)):
                self.reject("duplicate_names")  # which value wins would be undefined
                return None
            missing = [j for j in self.joints if j not in position]
            if missing:
                self.reject("missing_joints", f"lacks joints {options(missing)}")
                return None
            index = np.array([position[j] for j in self.joints], dtype=np.int64)
            if len(self.index_cache) < 16 and sum(map(len, key)) <= 4096:
                self.index_cache[key] = index
        duplicate = stamp == self.slew.last_time and self.slew.previous is not None
        t = self.on_stamp(stamp, now)
        self.event = "; ".join(e for e in (clock_event, self.event) if e)
        if not duplicate:
            return self.limit(np.asarray(efforts, dtype=np.float64)[index], t, bounded, now)
        # No time in the stamps: the step is the bounded clock's since the last output
        # (bounded_dt(inf, receipt_dt)); the stamp stays the last one for the next input.
        self.duplicate_stamps += 1
        self.last_duplicate_wall = now
        out = self.limit(np.asarray(efforts, dtype=np.float64)[index], math.inf, bounded, now)
        self.slew.last_time = stamp
        return out

    def on_stamp(self, t: float, now: float) -> float:
        """The time to limit on: ``t``, or NaN (hold the previous command, counted as a
        bad time step) for a backwards or future-dated stamp -- until
        ``clock_reset.count`` of them in a row agree: a clock reset, re-synchronised
        (the time step is then the steady time since the last output; :attr:`event`)."""
        self.event = ""
        last = self.slew.last_time
        if self.slew.previous is None or not math.isfinite(last):
            return t
        d, wall = t - last, max(now - self.last_output_wall, 0.0)
        if 0.0 <= d <= max(now - self.last_moved_wall, 0.0) + self.threshold:
            self.streak = 0
            return t
        agree = self.streak > 0 and 0.0 < t - self.streak_stamp <= self.threshold
        self.streak, self.streak_stamp = (self.streak + 1 if agree else 1), t
        if self.streak < self.reset_count:
            return math.nan
        self.streak = 0
        self.clock_resets += 1
        self.slew.last_time = t - wall
        self.event = f"clock reset: effort stamps jumped by {d:+.6f} s"
        return t

    def limit(self, tau: Array, t: float, received: float,
              now: float | None = None) -> Array | None:
        """Clip, then slew-limit ``tau`` (n,) at time ``t`` received at ``received``
        (``now``: the steady clock, default ``time.monotonic()``); None: rejected (wrong
        length, non-finite)."""
        if tau.shape != (len(self.joints),):
            self.reject("length_mismatch")
            return None
        if not np.isfinite(tau).all():
            self.reject("non_finite")
            return None
        held = self.slew.bad_dt
        out = self.slew(np.minimum(np.maximum(tau, -self.limits), self.limits), t, received)
        self.last_output_wall = time.monotonic() if now is None else now
        if self.slew.bad_dt == held:  # the steady time of the slew's last time
            self.last_moved_wall = self.last_output_wall
        return out

    def status(self, recent: int, window: float, now: float = -math.inf,
               received: float = math.nan) -> tuple[str, str, dict[str, str]]:
        """('ok' | 'warn', message, key-values) for ``/diagnostics`` at steady time
        ``now``, the receiver's clock reading ``received``: WARN while inputs were
        rejected (``recent`` of them in the last ``window`` s), while ``/clock`` is
        stopped, or after it jumped (:meth:`ClockRule.status`), and for ``SHOWN`` s
        after a duplicate stamp; totals as values."""
        span = f"last {window:g} s"
        stalled = self.clock.stalled_at(received, now)
        values = {"rate limited": str(self.slew.limited), "bad dt": str(self.slew.bad_dt),
                  "clock resets": str(self.clock_resets), f"rejected ({span})": str(recent),
                  "duplicate stamps": str(self.duplicate_stamps),
                  **self.clock.values(stalled),
                  **{f"rejected: {k}": str(v) for k, v in sorted(self.rejected.items())}}
        if recent:
            return "warn", f"rejecting some inputs ({recent} in the {span})", values
        level, message = self.clock.status(stalled, now)
        if not message and now - self.last_duplicate_wall < SHOWN:
            level, message = "warn", ("effort stamps not advancing: limiting on the "
                                      "receiver's clock")
        return level, message or "limiting", values


__all__ = ["INPUT_TYPES", "EffortLimiter"]
