"""Savitzky-Golay derivatives of a uniformly sampled segment.

A centred window of ``window`` seconds and polynomial ``order`` (>= 3 for the
jerk): no lag inside the data; the first and last half-window are fitted
one-sidedly (``mode="interp"``). Noise gain: a white noise of deviation ``s``
on ``q`` gives about ``s * c_k / (W dt)^k`` on the k-th derivative.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.signal import savgol_filter

Array = NDArray[np.float64]


def window_samples(window: float, dt: float, order: int) -> int:
    """An odd number of samples covering ``window`` seconds, at least ``order + 2``."""
    w = max(round(window / dt) | 1, order + 2)
    return w if w % 2 else w + 1


def derivatives(q: Array, dt: float, window: int, order: int) -> list[Array]:
    """First, second and third time derivatives of ``q`` (samples, joints).

    The window shrinks to the segment's length (odd); a derivative the
    polynomial cannot carry (order below it, or too few samples) is zero.
    """
    w = min(window, len(q) if len(q) % 2 else len(q) - 1)
    order = min(order, w - 1)
    result = []
    for k in (1, 2, 3):
        if w > order and order >= k:
            result.append(savgol_filter(q, w, order, deriv=k, delta=dt, axis=0, mode="interp"))
        else:
            result.append(np.zeros_like(q))
    return result
