"""Numba kernel of :mod:`rnea_ros.control.contact.detection` (the face: thresholds,
hysteresis, isolation): :func:`detect_rows`, the detector's state machine over samples."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# The detector's state (6,): in contact (0/1), since when the pending transition's
# condition holds (nan: it does not), the isolated coordinate (-1: none), its depth,
# the contact's start time, the largest |r| seen in it.
S_IN, S_SINCE, S_JOINT, S_DEPTH, S_START, S_PEAK, S_SIZE = 0, 1, 2, 3, 4, 5, 6
TIME_TOLERANCE = 1e-9  # [s] rounding of sample times (0.105 - 0.1 < 0.005 in binary)


@jit
def detect_step(t: float, r: Array, th: Array, release: float, min_duration: float,
                depth: IntArray, state: Array) -> bool:
    """Advance ``state`` by one sample (time ``t``, residual ``r`` and thresholds ``th``,
    (nv,) each); whether in contact after it. Onset: some ``|r_j| > th_j`` for
    ``min_duration`` [s] (continuously); release: every ``|r_j| < release th_j`` for
    ``min_duration``. In contact, the coordinate isolated (``state[S_JOINT]``) is the
    deepest (``depth``: ancestors of its joint's body) with ``|r| > th``, the deepest of
    the contact so far (a residual crossing zero does not move the contact towards the
    base)."""
    above, below = False, True
    deepest, deepest_depth = -1, -1
    peak = 0.0
    for j in range(r.shape[0]):
        x = abs(r[j])
        peak = max(peak, x)
        if x > th[j]:
            above = True
            if depth[j] > deepest_depth:
                deepest, deepest_depth = j, depth[j]
        if x >= release * th[j]:
            below = False
    inside = state[S_IN] > 0.5
    condition = below if inside else above
    if not condition:
        state[S_SINCE] = math.nan
    else:
        if math.isnan(state[S_SINCE]):
            state[S_SINCE] = t
        if t - state[S_SINCE] >= min_duration - TIME_TOLERANCE:
            if not inside:
                state[S_START] = state[S_SINCE]
                state[S_JOINT], state[S_DEPTH], state[S_PEAK] = -1.0, -1.0, 0.0
            state[S_IN] = 0.0 if inside else 1.0
            state[S_SINCE] = math.nan
    if state[S_IN] < 0.5:
        return False
    if deepest >= 0 and deepest_depth > state[S_DEPTH]:
        state[S_JOINT], state[S_DEPTH] = float(deepest), float(deepest_depth)
    state[S_PEAK] = max(state[S_PEAK], peak)
    return True


@jit
def detect_rows(t: Array, R: Array, TH: Array, release: float, min_duration: float,
                depth: IntArray, state: Array, flag: Array, joint: IntArray, start: Array) -> None:
    """:func:`detect_step` over the samples: ``flag[k]`` 1 while in contact, ``joint[k]``
    the isolated velocity coordinate (-1 out of contact), ``start[k]`` the time the
    contact's onset condition began (nan out of contact)."""
    for k in range(R.shape[0]):
        if detect_step(t[k], R[k], TH[k], release, min_duration, depth, state):
            flag[k] = 1.0
            joint[k] = int(state[S_JOINT])
            start[k] = state[S_START]
        else:
            flag[k] = 0.0
            joint[k] = -1
            start[k] = math.nan


def new_state() -> Array:
    """A detector out of contact."""
    s = np.zeros(S_SIZE)
    s[S_SINCE], s[S_JOINT], s[S_DEPTH] = math.nan, -1.0, -1.0
    return s


__all__ = ["S_IN", "S_JOINT", "S_PEAK", "S_SIZE", "S_START", "detect_rows", "detect_step",
           "new_state"]
