"""Numba kernels of :mod:`rnea_ros.core.dynamics.coriolis` (the face: the equations, checks
and dispatch): :func:`coriolis_product_pass`, ``C(q, qd) x`` in one RNEA-like sweep
(Featherstone-style tuple algebra), and :func:`coriolis_tree_pass` on the kernel tree.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Motion,
    fcross,
    joint_motion,
    joint_transform,
    madd,
    mcross,
    mget,
    minertia,
    mput,
    mscale,
    put3,
    put9,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._expansion_jit import (
    expand_motion,
    expand_q,
    gather,
    pair_cross,
    sub_count,
)
from rnea_ros.core._layout import (
    INNER,
    K_KIND,
    OWN,
    parent,
)
from rnea_ros.core.dynamics._rnea_jit import rnea_pass

Array = NDArray[np.float64]


# Work columns: pose (R 9, p 3), v, w, a (6 each), force (6).
_R, _P, _V, _WX, _A, _F, _COLS = 0, 9, 12, 18, 24, 30, 36


@jit
def coriolis_product_pass(fp: Array, q: Array, qd: Array, x: Array, out: Array) -> bool:
    n = q.shape[0]
    work = np.zeros((n, _COLS))
    zero: Motion = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    for i in range(n):
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, _R, R)
        put3(work, i, _P, p)
        par = parent(fp, i)
        v, w, a = zero, zero, zero
        if par >= 0:
            v = to_child(R, p, mget(work, par, _V))
            w = to_child(R, p, mget(work, par, _WX))
            a = to_child(R, p, mget(work, par, _A))
        v = madd(v, joint_motion(fp, i, qd[i]))
        w = madd(w, joint_motion(fp, i, x[i]))
        a = madd(a, mcross(v, joint_motion(fp, i, x[i])))
        Iw, Iv = minertia(fp, i, w), minertia(fp, i, v)
        B = madd(madd(fcross(v, Iw), mscale(minertia(fp, i, mcross(v, w)), -1.0)),
                 fcross(w, Iv))
        mput(work, i, _V, v)
        mput(work, i, _WX, w)
        mput(work, i, _A, a)
        mput(work, i, _F, madd(minertia(fp, i, a), mscale(B, 0.5)))
    total = 0.0
    for i in range(n - 1, -1, -1):
        f = mget(work, i, _F)
        S = joint_motion(fp, i, 1.0)
        out[i] = (S[0][0] * f[0][0] + S[0][1] * f[0][1] + S[0][2] * f[0][2]
                  + S[1][0] * f[1][0] + S[1][1] * f[1][1] + S[1][2] * f[1][2])
        total += out[i]
        par = parent(fp, i)
        if par >= 0:
            R = (work[i, 0], work[i, 1], work[i, 2], work[i, 3], work[i, 4], work[i, 5],
                 work[i, 6], work[i, 7], work[i, 8])
            mput(work, par, _F, madd(mget(work, par, _F), to_parent(R, vec3(work, i, _P), f)))
    return bool(np.isfinite(total))


@jit
def coriolis_tree_pass(fp: Array, km: Array, q: Array, qd: Array, x: Array, out: Array) -> bool:
    """``G^T (C_k x_k + M_k delta)`` on the kernel tree (see the module docstring)."""
    nk = fp.shape[0]
    fpx = fp.copy()
    qk, vk, xk = np.empty(nk), np.empty(nk), np.empty(nk)
    if not expand_q(fp, km, q, fpx, qk):
        return False
    expand_motion(km, qd, vk)
    expand_motion(km, x, xk)
    ck = np.empty(nk)
    ok = coriolis_product_pass(fpx, qk, vk, xk, ck)
    delta = np.zeros(nk)
    for k in range(nk):
        kind_k = int(km[k, K_KIND])
        if kind_k != OWN and kind_k != INNER:  # an anchor: sub_count names every kind
            pair_cross(fpx, k, sub_count(kind_k), xk, vk, delta)
    for k in range(nk):
        delta[k] = -delta[k]  # d = sum_{j>k} (S_j v_j) x (S_k x_k) = -P(x, v)
    td = np.empty(nk)
    zero3 = (0.0, 0.0, 0.0)
    rnea_pass(fpx, qk, np.zeros(nk), delta, (zero3, zero3, zero3, zero3), np.zeros((0, 6)),
              False, False, td, np.empty((nk, 30)))
    for k in range(nk):
        ck[k] += td[k]
    return bool(np.isfinite(gather(fp, km, ck, qd, qd, False, out))) and ok
