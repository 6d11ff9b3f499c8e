"""Joint-state intake, free of ROS: every check of one message and its merge into
the controller's state, in one compiled kernel (:func:`intake`), and the watch on
the stamps' clock that tells a single out-of-order or future-dated message from
a clock reset (see :mod:`rnea_ros.control.controller` for the rules).

The checks run compiled because the node runs them at 1 kHz on cold caches,
where each Python operation costs several times its warm-loop time; Python
only turns a status into its rejection message.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.kernels import FastCall, jit, jit_entry

Array = NDArray[np.float64]

MERGED, NON_FINITE, BACKWARDS, INCOMPLETE, TOO_OLD, FUTURE, OUT_OF_RANGE = 0, 1, 2, 3, 4, 5, 6
DUPLICATE = 7  # a joint's stamp repeated: not a new sample (issue 35)
# Rejected before the merge (control/command.py's output codes are 20-22).
LENGTH_MISMATCH, BAD_STAMP, NO_MODEL_JOINT, DUPLICATE_NAMES, MISSING_VELOCITY = 10, 11, 12, 13, 14
MAX_STATE = 1e6  # |position| [rad or m] and |velocity| [rad/s or m/s] beyond: out_of_range
_CACHE_NAMES = 4096  # name tuples larger than this (in characters) are not cached
_NO_VELOCITY = np.zeros(0)


@jit
def merge_state(q: Array, qd: Array, stamps: Array, position: Array, velocity: Array,
                has_velocity: bool, msg_idx: NDArray[np.int64], model_idx: NDArray[np.int64],
                stamp: float, window: float) -> int:
    """Validate a message and merge it into ``q, qd, stamps`` (model order).

    Nothing is written unless every position/velocity is finite (``NON_FINITE``),
    at most ``MAX_STATE`` in magnitude (``OUT_OF_RANGE``), no joint's stamp goes
    backwards (``BACKWARDS``) and none repeats (``DUPLICATE``: a stamp equal to the
    joint's last one is no new sample -- a frozen sender clock, a message sent twice
    -- and a stream of them must be a silence to the watchdog). After the merge:
    ``INCOMPLETE`` while some joint was never received, ``TOO_OLD`` when the
    oldest joint sample is more than ``window`` before ``stamp``, else ``MERGED``.
    """
    for k in range(model_idx.shape[0]):
        if not np.isfinite(position[msg_idx[k]]):
            return NON_FINITE
        if has_velocity and not np.isfinite(velocity[msg_idx[k]]):
            return NON_FINITE
    for k in range(model_idx.shape[0]):
        if abs(position[msg_idx[k]]) > MAX_STATE:
            return OUT_OF_RANGE
        if has_velocity and abs(velocity[msg_idx[k]]) > MAX_STATE:
            return OUT_OF_RANGE
        if stamps[model_idx[k]] > stamp:
            return BACKWARDS
        if stamps[model_idx[k]] == stamp:
            return DUPLICATE
    for k in range(model_idx.shape[0]):
        i = model_idx[k]
        q[i] = position[msg_idx[k]]
        qd[i] = velocity[msg_idx[k]] if has_velocity else 0.0
        stamps[i] = stamp
    oldest = np.inf
    for i in range(stamps.shape[0]):
        if not np.isfinite(stamps[i]):
            return INCOMPLETE
        oldest = min(oldest, stamps[i])
    return TOO_OLD if stamp - oldest > window else MERGED


@jit
def intake(state: Array, position: Array, velocity: Array, n_names: int,
           idx: NDArray[np.int64], screen: int, need_velocity: bool, stamp: float,
           now: float, newest: float, newest_wall: float, threshold: float,
           window: float) -> int:
    """Check one message and merge it into ``state`` (>= 3, n) = ``q, qd, stamps``
    rows (:func:`merge_state`); its status.

    In this order, the first that applies: ``position``/``velocity`` do not match
    the ``n_names`` names in length (``LENGTH_MISMATCH``; ``velocity`` may be
    empty), ``stamp`` is not finite or negative (``BAD_STAMP``: before the epoch, no
    clock gives it, though ``builtin_interfaces/Time.sec`` is an int32), the name
    map's ``screen``
    (``NO_MODEL_JOINT``, ``DUPLICATE_NAMES``, else 0), no velocities while
    ``need_velocity`` (``MISSING_VELOCITY``), ``stamp`` ahead of the ``newest``
    accepted one by more than the steady time since it was accepted
    (``now - newest_wall``) plus ``threshold`` (``FUTURE``; see :class:`ClockWatch`),
    then :func:`merge_state` with ``idx`` (2, k) = the message and model indices.
    Nothing is written unless the merge is reached.
    """
    n_velocity = len(velocity)
    if len(position) != n_names or (n_velocity != 0 and n_velocity != n_names):
        return LENGTH_MISMATCH
    if not np.isfinite(stamp) or stamp < 0.0:
        return BAD_STAMP
    if screen != 0:
        return screen
    if need_velocity and n_velocity == 0:
        return MISSING_VELOCITY
    if stamp - newest > max(now - newest_wall, 0.0) + threshold:
        return FUTURE
    return merge_state(state[0], state[1], state[2], position, velocity, n_velocity > 0,
                       idx[0], idx[1], stamp, window)


@jit_entry
def intake_entry(state: Array, window: float, threshold: float, need_velocity: bool,
                 position: Array, velocity: Array, n_names: int, idx: NDArray[np.int64],
                 screen: int, stamp: float, now: float, newest: float,
                 newest_wall: float) -> int:
    """:func:`intake` as a per-call entry point, the arguments that stay with a
    configuration first (the controller binds them once)."""
    return intake(state, position, velocity, n_names, idx, screen, need_velocity, stamp, now,
                  newest, newest_wall, threshold, window)


@jit_entry
def merge_entry(state: Array, position: Array, velocity: Array, has_velocity: bool,
                idx: NDArray[np.int64], stamp: float, window: float) -> int:
    """:func:`merge_state` alone (after a clock reset: the message was checked)."""
    return merge_state(state[0], state[1], state[2], position, velocity, has_velocity,
                       idx[0], idx[1], stamp, window)


intake_fast = FastCall(intake_entry)
merge_fast = FastCall(merge_entry)


def as_buffer(values: Sequence[float]) -> array[float]:
    """``values`` as ``array('d')``, the type rclpy gives a message's float64 arrays:
    those pass as they are (callers on the 1 kHz path test that themselves), and
    the compiled kernels take them without a numpy view (``np.frombuffer`` costs
    more than the kernel's own unboxing); anything else is converted as numpy
    converts it to float64 (a copy)."""
    if type(values) is array and values.typecode == "d":
        return values
    return array("d", np.ascontiguousarray(values, dtype=np.float64).tobytes())


class ClockWatch:
    """The newest accepted stamp and the streak of backwards/future-dated ones.

    A stamp is **future-dated** when it is ahead of the newest accepted one by
    more than the steady time elapsed since plus ``threshold`` (checked by
    :func:`intake`, with ``newest`` and ``newest_wall``); a run of ``count``
    rejected stamps (backwards or future-dated) that agree with each other --
    strictly increasing, each within ``threshold`` of the previous -- is a clock
    reset.
    """

    def __init__(self) -> None:
        self.newest = -math.inf  # newest accepted stamp [s]
        self.newest_wall = -math.inf  # steady time it was accepted [s]
        self.streak = 0  # consecutive rejected stamps that agree, the last of them
        self.streak_stamp = -math.inf
        self.resets = 0
        self.last_jump = 0.0  # [s], new clock minus old

    def future(self, stamp: float, now: float, threshold: float) -> bool:
        """``stamp`` is future-dated (the rule :func:`intake` applies compiled; the IMU's
        intake calls this)."""
        return stamp - self.newest > max(now - self.newest_wall, 0.0) + threshold

    def accept(self, stamp: float, now: float) -> None:
        if stamp >= self.newest:
            self.newest, self.newest_wall = stamp, now

    def confirm(self, stamp: float, threshold: float, count: int) -> bool:
        """Count a rejected stamp; True once ``count`` of them in a row agree."""
        agree = self.streak > 0 and 0.0 < stamp - self.streak_stamp <= threshold
        self.streak = self.streak + 1 if agree else 1
        self.streak_stamp = stamp
        return self.streak >= count

    def resync(self, stamp: float) -> float:
        """Take ``stamp`` as the newest on the new clock; returns the jump [s]."""
        jump = stamp - self.newest
        self.newest, self.streak = stamp, 0
        self.resets += 1
        self.last_jump = jump
        return jump
