"""The joint-state intake's outcomes other than a plain command, for
:class:`~rnea_ros.control.controller.TorqueController` (a mixin of its state, free of
ROS): :class:`Result` and :class:`RejectedState`; rejections worded and counted
(:func:`~rnea_ros.control.message_map.rejection`), a resend of the merged sample
counted apart; clock resets detected and re-synchronised; mimic followers checked.

Clock resets (a simulator reset, a bag played in a loop, a zero stamp followed
by simulated time): a stamp older than a joint's last one is ``time_backwards``,
one ahead of the newest accepted stamp by more than the wall time elapsed since
plus ``clock_reset.threshold`` is ``time_future``; both are rejected. When
``clock_reset.count`` consecutive messages are rejected so and agree with each
other (strictly increasing stamps, each within the threshold of the previous
one), the clock was reset: the merged stamps, the reference trajectory and the
time scaling are shifted onto the new clock (the motion continues), the message
is merged, :attr:`TorqueController.clock_resets` counts it and
:attr:`Result.event` says so. A single out-of-order or future-dated message
never gets that far.

Mimic joints (URDF ``<mimic>``, :mod:`rnea_ros.mimic`): a follower is not a
coordinate of the model, so it is neither required in the joint states nor
merged nor commanded. When a message carries a follower *and* its leader and
``mimic.check`` is on, the follower's position is compared with
``multiplier * q_leader + offset``: a deviation beyond ``mimic.tolerance`` (or
a non-finite follower) is counted (:attr:`TorqueController.mimic_mismatches`,
the worst one kept for the diagnostics) and said in :attr:`Result.warning`;
the message is still accepted and the command is unaffected.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.clock_rule import ClockRule
from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.freshness import StampPace
from rnea_ros.control.joint_state import (
    BACKWARDS,
    DUPLICATE,
    NON_FINITE,
    OUT_OF_RANGE,
    ClockWatch,
    merge_fast,
)
from rnea_ros.control.laws import Reference
from rnea_ros.control.message_map import Followers, mimic_mismatch, mimic_warning, rejection
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


class RejectedState(Exception):  # noqa: N818 -- control flow, not an error
    """Raised by :meth:`TorqueController._compute` for a merged state it cannot use
    (e.g. closed loops that do not close there): the message is rejected under
    ``reason`` and no command is produced."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


@dataclass(frozen=True, slots=True)
class Result:
    """Outcome of one joint-state message: a command (commanded-joint order), or a
    rejection (``reason`` key and a message naming the problem), or neither (not ready).
    Immutable: the controller returns the same one for every plain command written
    into the same ``out`` array (one allocation less per message)."""

    command: Array | None = None
    reason: str | None = None
    message: str = ""
    event: str = ""  # e.g. a clock reset (the message was accepted)
    warning: str = ""  # e.g. a mimic follower off its coupling (the message was accepted)


class IntakeOutcomes:
    """What :class:`~rnea_ros.control.controller.TorqueController` does with a message
    that is not a plain command (see the module docstring). A mixin: the attributes
    below are the controller's."""

    config: ControllerConfig
    base_model: RobotModel
    state_names: tuple[str, ...]
    clock: ClockWatch
    reference: Reference
    rejected: Counter[str]
    _state: Array
    _q: Array
    _qd: Array
    _stamp: Array
    _output_stamp: float
    receipt_clock: Callable[[], float] | None
    plant_clock: ClockRule | None
    resent: int
    ignored: int
    mimic_checks: int
    mimic_mismatches: int
    mimic_worst: tuple[str, float]
    last_state_time: float | None
    stamp_pace: StampPace | None
    _plant: float
    _received: float

    def _reject(self, reason: str, message: str) -> Result:
        self.rejected[reason] += 1
        return Result(reason=reason, message=message)

    def use_plant_clock(self, read: Callable[[], float]) -> None:
        """Time the receipts on the plant's clock ``read()`` [s] (a node on simulated
        time: ``/clock``) under the clock rule (:class:`ClockRule`: ``clock_reset.threshold``,
        ``clock_stall_timeout`` and ``clock_max_speed``)."""
        self.receipt_clock = read
        self.plant_clock = ClockRule(self.config.clock_reset.threshold,
                                     self.config.clock_stall_timeout,
                                     self.config.clock_max_speed)

    def _check_followers(self, rows: Followers, p: array[float]) -> str:
        """Compare the followers of an accepted message with their leaders (see the
        module docstring); returns the warning text ("" when all agree)."""
        self.mimic_checks += 1
        tolerance = self.config.mimic.tolerance
        bad, worst = mimic_mismatch(rows, p, tolerance)
        if not bad:
            return ""
        self.mimic_mismatches += 1
        if not abs(worst) <= abs(self.mimic_worst[1]):
            self.mimic_worst = (bad, worst)
        return mimic_warning(self.base_model, bad, worst, tolerance)

    def _rejection(self, status: int, names: Sequence[str], p: array[float], v: array[float],
                   idx: NDArray[np.int64], duplicates: tuple[str, ...], stamp: float,
                   now: float) -> Result:
        """The result of a message the intake did not merge (``status``, worded by
        :func:`~rnea_ros.control.message_map.rejection`)."""
        clock = self.clock
        if status == DUPLICATE and self._resends_merged(p, v, idx):
            # The sample already merged, sent again (a simulator braking until its first
            # command, a publisher repeating its last message): not a rejection, counted in
            # resent; not accepted either, so a stream of them is a silence the watchdog
            # acts on.
            self.resent += 1
            return Result()
        if status == OUT_OF_RANGE or status == NON_FINITE:
            clock.streak = 0  # a clock that agrees, but a bad state
        last = float(self._stamp[idx[1]].max()) if status == BACKWARDS else math.nan
        found = rejection(status, self.config.mode, names, self.state_names, p, v, idx,
                          duplicates, stamp, last, clock.newest, now - clock.newest_wall)
        if found is None:
            self.ignored += 1  # nothing for us (e.g. another robot's joints): not an error
            return Result()
        return self._reject(*found)

    def _resends_merged(self, p: array[float], v: array[float],
                        idx: NDArray[np.int64]) -> bool:
        """Whether the message's values equal, bit for bit, those merged for its joints."""
        k, i = idx[0], idx[1]
        same = np.array_equal(np.asarray(p)[k], self._q[i])
        return bool(same and (len(v) == 0 or np.array_equal(np.asarray(v)[k], self._qd[i])))

    def _merge(self, p: array[float], v: array[float], idx: NDArray[np.int64],
               stamp: float) -> int:
        """The merge alone (after a clock reset: the intake checked the message)."""
        return int(merge_fast.call(self._state, p, v, len(v) > 0, idx, stamp,
                                   self.config.watchdog_timeout))

    def _resync(self, stamp: float) -> str:
        """Move the merged stamps, the reference and the time scaling onto the new
        clock (the newest sample at ``stamp``); returns the event text."""
        jump = self.clock.resync(stamp)
        if self.stamp_pace is not None:
            self.stamp_pace.reset(stamp, self._plant, self._received)
        known = np.isfinite(self._stamp)
        # newest + (stamp - newest) can round a few ulps past stamp, which the merge of
        # the message at stamp would take for a stamp going backwards: clamped.
        # Just below it, not at it: at it, the merge would take the message for a duplicate.
        self._stamp[known] = np.minimum(self._stamp[known] + jump, np.nextafter(stamp, -np.inf))
        self._output_stamp = math.nan  # the next rate-limit step: on the steady clock
        reference = self.reference
        if reference.trajectory is not None:
            reference.trajectory = dataclasses.replace(reference.trajectory,
                                                       times=reference.trajectory.times + jump)
        scaling = reference.scaling
        if scaling is not None:
            if scaling.t_prev is not None:
                scaling.t_prev += jump
            scaling.last_update += jump
        if self.last_state_time is not None:
            self.last_state_time += jump
        return (f"clock reset: joint-state stamps jumped by {jump:+.6f} s; "
                "re-synchronised on the new clock")

    # ------------------------------------------------------------- statistics
    @property
    def clock_resets(self) -> int:
        """Clock resets detected (see the module docstring)."""
        return self.clock.resets

    @property
    def last_clock_jump(self) -> float:
        """The last reset's jump [s], new clock minus old."""
        return self.clock.last_jump


__all__ = ["IntakeOutcomes", "RejectedState", "Result"]
