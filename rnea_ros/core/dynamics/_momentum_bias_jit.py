"""Numba kernels of :mod:`rnea_ros.core.dynamics.momentum_bias` (the face: the
derivation, checks and dispatch): :func:`momentum_pass`, ``p = M(q) qd`` and
``beta = g(q) - C(q, qd)^T qd`` in one forward and one backward sweep
(tuple spatial algebra, body coordinates), :func:`momentum_rows` over a batch,
and :func:`momentum_tree_rows` on the kernel tree (multi-DoF and mimic joints).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Motion,
    joint_motion,
    joint_transform,
    madd,
    mcross,
    mget,
    minertia,
    mput,
    put3,
    put9,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import jit, jit_entry
from rnea_ros.core._expansion_jit import expand_motion, expand_q, gather, sub_count
from rnea_ros.core._layout import (
    F_ARMATURE,
    INNER,
    K_KIND,
    OWN,
    parent,
)

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Work columns: pose (R 9, p 3), velocity v (6), gravity acceleration a (6),
# composite momentum h (6), composite gravity force f (6).
_R, _P, _V, _A, _H, _F, _COLS = 0, 9, 12, 18, 24, 30, 36


@jit
def _pair(x: Motion, y: Motion) -> float:
    """``x . y`` of a motion and a force (both ``(angular, linear)``)."""
    return (x[0][0] * y[0][0] + x[0][1] * y[0][1] + x[0][2] * y[0][2]
            + x[1][0] * y[1][0] + x[1][1] * y[1][1] + x[1][2] * y[1][2])


@jit
def momentum_pass(fp: Array, q: Array, qd: Array, g: Array, last: IntArray,
                  p_out: Array, beta_out: Array, work: Array) -> float:
    """``p_out = S_i . h_i + Ia_i qd_i`` and ``beta_out = S_i . f_i - (v_l x S_i) . h_i``
    per row ``i`` (see the face); ``last[i]`` is the row whose velocity ``v_l`` enters
    ``dS_i`` (a multi-DoF joint's body; an empty ``last`` means every row's own).
    ``work`` (n, 36). Returns ``sum(p) + sum(beta)`` (finite iff both are)."""
    n = fp.shape[0]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):
        R, pos = joint_transform(fp, i, q[i])
        put9(work, i, _R, R)
        put3(work, i, _P, pos)
        par = parent(fp, i)
        if par < 0:
            v: Motion = (zero, zero)
            a: Motion = to_child(R, pos, (zero, (-g[0], -g[1], -g[2])))
        else:
            v = to_child(R, pos, mget(work, par, _V))
            a = to_child(R, pos, mget(work, par, _A))
        v = madd(v, joint_motion(fp, i, qd[i]))
        mput(work, i, _V, v)
        mput(work, i, _A, a)
        mput(work, i, _H, minertia(fp, i, v))
        mput(work, i, _F, minertia(fp, i, a))
    total = 0.0
    for i in range(n - 1, -1, -1):
        h, f = mget(work, i, _H), mget(work, i, _F)
        S = joint_motion(fp, i, 1.0)
        vl = mget(work, i if last.shape[0] == 0 else last[i], _V)
        p_out[i] = _pair(S, h) + fp[i, F_ARMATURE] * qd[i]
        beta_out[i] = _pair(S, f) - _pair(mcross(vl, S), h)
        total += p_out[i] + beta_out[i]
        par = parent(fp, i)
        if par >= 0:
            R = (work[i, 0], work[i, 1], work[i, 2], work[i, 3], work[i, 4], work[i, 5],
                 work[i, 6], work[i, 7], work[i, 8])
            pos = vec3(work, i, _P)
            mput(work, par, _H, madd(mget(work, par, _H), to_parent(R, pos, h)))
            mput(work, par, _F, madd(mget(work, par, _F), to_parent(R, pos, f)))
    return total


_NO_ROWS = np.zeros(0, dtype=np.int64)


@jit_entry
def momentum_call(fp: Array, q: Array, qd: Array, g: Array, p_out: Array,
                  beta_out: Array) -> bool:
    """:func:`momentum_pass` on a model of 1-DoF joints (one row per coordinate)."""
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or p_out.shape[0] != n or beta_out.shape[0] != n:
        return False
    work = np.empty((n, _COLS))
    return bool(np.isfinite(momentum_pass(fp, q, qd, g, np.zeros(0, dtype=np.int64),
                                          p_out, beta_out, work)))


@jit
def momentum_rows(fp: Array, Q: Array, QD: Array, g: Array, P: Array, B: Array) -> bool:
    """:func:`momentum_pass` on every sample (rows of ``Q, QD, P, B``)."""
    work = np.empty((fp.shape[0], _COLS))
    none = np.zeros(0, dtype=np.int64)
    total = 0.0
    for k in range(Q.shape[0]):
        total += momentum_pass(fp, Q[k], QD[k], g, none, P[k], B[k], work)
    return bool(np.isfinite(total))


@jit
def last_rows(km: Array) -> IntArray:
    """Per kernel row, the row of its joint's body: a multi-DoF joint's sub-rows all
    map to its last sub-row (whose velocity is the joint body's), others to themselves."""
    nk = km.shape[0]
    out = np.arange(nk)
    for k in range(nk):
        kind = int(km[k, K_KIND])
        if kind != OWN and kind != INNER:  # an anchor: sub_count names every kind
            count = sub_count(kind)
            for j in range(count):
                out[k + j] = k + count - 1
    return out


@jit
def momentum_tree_rows(fp: Array, km: Array, Q: Array, QD: Array, g: Array, P: Array,
                       B: Array) -> bool:
    """:func:`momentum_pass` on the kernel tree for every sample, folded back by
    ``G^T`` (:func:`~rnea_ros.core._expansion_jit.gather`, no drive terms: the
    armature is in ``p`` per kernel row already, friction is not in ``p`` or ``beta``)."""
    nk = fp.shape[0]
    fpx = fp.copy()
    qk, vk = np.empty(nk), np.empty(nk)
    pk, bk = np.empty(nk), np.empty(nk)
    work = np.empty((nk, _COLS))
    last = last_rows(km)
    ok = True
    for s in range(Q.shape[0]):
        ok = expand_q(fp, km, Q[s], fpx, qk) and ok
        expand_motion(km, QD[s], vk)
        momentum_pass(fpx, qk, vk, g, last, pk, bk, work)
        t1 = gather(fp, km, pk, QD[s], QD[s], False, P[s])
        t2 = gather(fp, km, bk, QD[s], QD[s], False, B[s])
        ok = ok and bool(np.isfinite(t1 + t2))
    return ok


__all__ = ["last_rows", "momentum_call", "momentum_pass", "momentum_rows",
           "momentum_tree_rows"]
