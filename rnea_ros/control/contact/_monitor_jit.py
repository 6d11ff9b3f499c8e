"""Numba kernel of :mod:`rnea_ros.control.contact.monitor` (the face: what a node calls per
state): :func:`monitor_call`, the observer's update (eq. (5) of
:mod:`~rnea_ros.control.contact.observer`) and the detector's step
(:func:`~rnea_ros.control.contact._detection_jit.detect_step`) fused in one compiled
call on a model of 1-DoF joints (``p``, ``beta`` by
:func:`~rnea_ros.core.dynamics._momentum_bias_jit.momentum_pass`). Few arguments
(numba unboxes each one at every call): the settings in one vector, the state in
another."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.contact._detection_jit import S_SIZE, S_START, detect_step
from rnea_ros.core._algebra import coulomb_sign
from rnea_ros.core._compile import jit_entry, scratch, tree_vector
from rnea_ros.core._layout import F_COULOMB, F_VISCOUS
from rnea_ros.core.dynamics._momentum_bias_jit import _COLS, momentum_pass

Array = NDArray[np.float64]

# params (4 + 5 nv): release, min_duration, max_gap, the Coulomb band [rad/s or m/s], then
# per coordinate K_O, thresholds, velocity, acceleration coefficients, depth.
P_RELEASE, P_MIN_DURATION, P_MAX_GAP, P_BAND, P_VECTORS = 0, 1, 2, 3, 4
# state (4 + 4 nv + S_SIZE): last time (nan: none), restarts, in contact (0/1), onset
# time; r; p, beta + tau_f, tau of the last sample; the detector's state.
X_T, X_RESTARTS, X_IN, X_START, X_R = 0, 1, 2, 3, 4
OK, BAD_INPUT, NOT_INCREASING = 0, 1, 2
_NONE = np.zeros(0, dtype=np.int64)


def params_size(nv: int) -> int:
    return P_VECTORS + 5 * nv


def state_size(nv: int) -> int:
    return X_R + 4 * nv + S_SIZE


@jit_entry
def monitor_call(fp: Array, g: Array, t: float, q: Array, qd: Array, qdd: Array, tau: Array,
                 params: Array, state: Array) -> int:
    """One state: ``r`` updated from ``(t, q, qd)`` and the torque held since the last
    state, ``tau`` kept for the next, then the detector's step. ``state`` is left
    unchanged unless the result is ``OK``."""
    n = fp.shape[0]
    if (q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n
            or params.shape[0] != P_VECTORS + 5 * n or state.shape[0] != X_R + 4 * n + S_SIZE
            or not math.isfinite(t)):
        return BAD_INPUT
    s = 0.0
    for j in range(n):
        s += qdd[j] + tau[j]
    if not math.isfinite(s):
        return BAD_INPUT
    work = scratch(n, _COLS)
    p, w, th = tree_vector(n), tree_vector(n), tree_vector(n)  # p, beta + tau_f, thresholds
    if not math.isfinite(momentum_pass(fp, q, qd, g, _NONE, p, w, work)):
        return BAD_INPUT
    last = state[X_T]
    T = t - last
    if not math.isnan(last) and not T > 0.0:
        return NOT_INCREASING
    gains = params[P_VECTORS:P_VECTORS + n]
    r = state[X_R:X_R + n]
    pp = state[X_R + n:X_R + 2 * n]
    wp = state[X_R + 2 * n:X_R + 3 * n]
    tp = state[X_R + 3 * n:X_R + 4 * n]
    restart = math.isnan(last) or T > params[P_MAX_GAP]
    band = params[P_BAND]
    if restart and not math.isnan(last):
        state[X_RESTARTS] += 1.0
    for j in range(n):
        v = qd[j]
        # observer.friction's law, the core's: clip(v / band, -1, 1), sign at band 0
        w[j] += fp[j, F_COULOMB] * coulomb_sign(v, band) + fp[j, F_VISCOUS] * v
        if restart:
            r[j] = 0.0
        else:
            a = math.exp(-gains[j] * T)
            r[j] = a * r[j] + (1.0 - a) / T * (p[j] - pp[j] - T * (tp[j] - 0.5 * (wp[j] + w[j])))
        pp[j], wp[j], tp[j] = p[j], w[j], tau[j]
        th[j] = (params[P_VECTORS + n + j] + params[P_VECTORS + 2 * n + j] * abs(v)
                 + params[P_VECTORS + 3 * n + j] * abs(qdd[j]))
    state[X_T] = t
    depth = params[P_VECTORS + 4 * n:P_VECTORS + 5 * n].astype(np.int64)
    det = state[X_R + 4 * n:]
    inside = detect_step(t, r, th, params[P_RELEASE], params[P_MIN_DURATION], depth, det)
    state[X_IN] = 1.0 if inside else 0.0
    state[X_START] = det[S_START] if inside else math.nan
    return OK


__all__ = ["BAD_INPUT", "NOT_INCREASING", "OK", "monitor_call", "params_size", "state_size"]
