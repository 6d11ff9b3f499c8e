"""Numba kernel of :mod:`rnea_ros.control.contact.observer` (the face: the observer's
equations and their discrete form): :func:`observer_rows`, the exact-discretised
momentum-observer recursion over a batch of samples."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit

Array = NDArray[np.float64]


@jit
def observer_rows(t: Array, P: Array, U: Array, gains: Array, r0: Array, R: Array) -> int:
    """``R[0] = r0``; for ``k >= 0``, with ``T = t[k+1] - t[k]``, ``a = exp(-K T)``:

        R[k+1] = a R[k] + (1 - a) / T * (P[k+1] - P[k] - T U[k])

    ``U[k]`` (nv,) the torque balance of the period ``[t_k, t_{k+1})`` (held torque
    minus the trapezoid of ``beta + tau_f``, see the face). Returns the first ``k``
    whose period is not positive or whose result is not finite (``R`` from ``k + 1``
    on then undefined), ``-1`` if none."""
    n, nv = P.shape
    for j in range(nv):
        R[0, j] = r0[j]
    for k in range(n - 1):
        T = t[k + 1] - t[k]
        if not T > 0.0:
            return k
        total = 0.0
        for j in range(nv):
            a = math.exp(-gains[j] * T)
            x = a * R[k, j] + (1.0 - a) / T * (P[k + 1, j] - P[k, j] - T * U[k, j])
            R[k + 1, j] = x
            total += x
        if not math.isfinite(total):
            return k
    return -1


__all__ = ["observer_rows"]
