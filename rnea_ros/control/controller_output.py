"""The controller's output side, for
:class:`~rnea_ros.control.controller.TorqueController` (a mixin of its state, free of
ROS): the compiled output path's bookkeeping (saturation, slew limiting, non-finite
torques), the watchdog and its stale command, the compute-time statistics.

Rate limit: every output (state-driven, watchdog, after a mode switch or a
clock reset) goes through the slew limiter. The limit protects the hardware in
the hardware's time, so a sender's stamps cannot loosen it: between consecutive
state-driven commands the time step is the smaller of the stamp difference and
the time between the two messages' receipts on the node's clock (the steady
``now`` of :meth:`TorqueController.joint_state`; on simulated time
(:meth:`TorqueController.use_plant_clock`) ``/clock`` as the clock rule bounds it:
never more than ``clock_max_speed`` times faster than the steady clock, moving on
the steady clock when ``/clock`` jumps or stops, :mod:`rnea_ros.control.clock_rule`);
else the steady-clock time since the previous output. Joint states are judged
fresh on the steady clock (the watchdog): a stopped ``/clock`` while states keep
arriving is reported, and the commands keep following the states. A stamp dated
ahead (e.g.
+0.9 s, inside the clock-reset threshold) or a stream whose stamps run faster
than real time (a bag played at ``--rate 10``) then moves the command no faster
than ``effort_rate_limits`` in the receiver's time. A held command (no time has
passed) keeps the previous output's times.

Watchdog: when no message was accepted for ``watchdog_timeout`` (measured on
a steady clock), the last command is held (nothing new is output) for
``watchdog_grace`` more -- a scheduling hiccup of a non-real-time machine, or of
this process, whose states then wait in the queue: counted in
:attr:`TorqueController.watchdog_late` -- then :meth:`TorqueController.watchdog`
returns the stale command: ``hold`` = gravity compensation at the last valid
pose, ``zero`` = zeros. With a grace, the look that first sees the silence past
the timeout only holds, even past timeout + grace: a stall of this process
longer than both (a loaded machine; issue 35: healthy launches logged the
watchdog's ERROR, cleared 0-0.13 s later) ends with the watchdog's overdue
firing, taken before the states that waited; the next look acts.
"""

from __future__ import annotations

import math
import time
from collections import Counter, deque
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.command import BAD_TORQUE, HELD
from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.rate_limit import SlewLimiter
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]
_asc, _f64 = np.ascontiguousarray, np.float64


class CommandOutput:
    """The output and the watchdog of
    :class:`~rnea_ros.control.controller.TorqueController` (see the module docstring).
    A mixin: the attributes below are the controller's."""

    config: ControllerConfig
    model: RobotModel
    full_model: RobotModel
    slew: SlewLimiter | None
    rejected: Counter[str]
    _q: Array
    _finish: Callable[..., tuple[int, int, int]]
    _has_output: bool
    _output_stamp: float
    _output_wall: float
    _output_received: float
    _received: float
    _late_wall: float | None
    last_valid_wall: float | None
    saturated: int
    stale: bool
    stale_events: int
    watchdog_late: int
    compute_us: deque[float]

    @property
    def reference_names(self) -> tuple[str, ...]:
        """The joints of the reference, in state order (the controller's)."""
        raise NotImplementedError

    def _count_output(self, status: int, clipped: int, limited: int, stamp: float,
                      now: float) -> None:
        """Book an output of the compiled path (:func:`~rnea_ros.control.command.finish`)
        at ``stamp`` (NaN: a watchdog output) and steady time ``now``; a held command
        keeps the previous output's times (it is the previous command)."""
        if status == HELD:  # no time has passed: the previous command was repeated
            assert self.slew is not None
            self.slew.bad_dt += 1
            return
        self._output_stamp, self._output_wall = stamp, now
        self._output_received = math.nan if math.isnan(stamp) else self._received
        if status == BAD_TORQUE:  # never published: the previous command or zeros were
            self.rejected["non_finite_torque"] += 1
        else:
            self.saturated += clipped
            self._has_output = True
            if self.slew is not None:
                self.slew.limited += limited

    def _output(self, tau: Array, now: float, stamp: float, out: Array) -> Array:
        """The command from model-order torques ``tau``, into ``out``: commanded joints,
        saturated, slew-limited (``stamp`` NaN: a watchdog output) on the command clock
        (:func:`~rnea_ros.control.command.output_dt`)."""
        status, clipped, limited = self._finish(
            _asc(tau, _f64), self.slew is not None and self._has_output, stamp, now,
            self._output_stamp, self._output_wall, self._received - self._output_received, out)
        self._count_output(status, clipped, limited, stamp, now)
        return out

    def watchdog(self, now: float | None = None, out: Array | None = None) -> Array | None:
        """The stale command (into ``out``, default a new array) when joint states
        stopped for ``watchdog_timeout`` + ``watchdog_grace``, else None (between the
        two the last command is held: counted once in :attr:`watchdog_late`). With a
        grace, the look that first sees a silence past the timeout never acts, however
        long it is: after a stall of this process (a loaded machine) that look comes
        first, with the states sent meanwhile still queued; the executor takes them
        before the next look (a healthy node's next firing, 20 ms later at most, acts on
        a real silence)."""
        now = time.monotonic() if now is None else now
        config = self.config
        if self.last_valid_wall is None or now - self.last_valid_wall <= \
                config.watchdog_timeout:
            return None
        if self._late_wall != self.last_valid_wall:  # the first look at this silence
            self._late_wall = self.last_valid_wall
            self.watchdog_late += 1
            if config.watchdog_grace > 0:  # (a stall of this process: states may be queued)
                return None
        if now - self.last_valid_wall <= config.watchdog_timeout + config.watchdog_grace:
            return None
        if not self.stale:
            self.stale = True
            self.stale_events += 1
        if out is None:
            out = np.empty(len(self.config.joints))
        return self._output(self.stale_torque(), now, math.nan, out)

    def stale_torque(self) -> Array:
        """The stale behaviour's torques (model order): ``hold`` = gravity compensation
        at the last valid pose (fixed base, the model's gravity), ``zero``."""
        if self.config.stale_behavior == "zero":
            return np.zeros(len(self.reference_names))
        return self.hold_torque()

    def hold_torque(self) -> Array:
        """The watchdog's ``hold``: gravity compensation at the last valid pose."""
        return gravity_torques(self.full_model, self._q[:self.model.nv])

    # ------------------------------------------------------------- statistics
    def compute_percentiles(self) -> tuple[float, float]:
        """(p50, p99) of the recent compute times [us] (0 when none)."""
        if not self.compute_us:
            return 0.0, 0.0
        p50, p99 = np.percentile(np.fromiter(self.compute_us, float), [50, 99])
        return float(p50), float(p99)


__all__ = ["CommandOutput"]
