"""Numba kernels of :mod:`rnea_ros.core.dynamics.crba` (the face: the composite-rigid-body
algorithm, checks and dispatch): :func:`crba_pass` over the composite-inertia work array
``CW_*`` (:mod:`rnea_ros.core._layout`), :func:`composite_to_parent` (shared with the
floating-base kernels), entries :func:`crba_call`, :func:`crba_rows`, :func:`crba_tree_rows`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    add3,
    cross,
    dot3,
    joint_transform,
    mat3,
    mv,
    put3,
    put9,
    rotate_symmetric,
    scale3,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._expansion_jit import expand_q
from rnea_ros.core._layout import (
    CW_COLS,
    CW_H,
    CW_IO,
    CW_M,
    CW_P,
    CW_R,
    F_ARMATURE,
    F_AXIS,
    F_H,
    F_IO,
    F_MASS,
    K_IV,
    K_MULT,
    PRISMATIC,
    kind,
    parent,
)

Array = NDArray[np.float64]


@jit
def composite_to_parent(work: Array, i: int, par: int) -> None:
    """Add composite body ``i``'s inertia, moved into frame ``par``, to body ``par``'s.

    With ``(R, p)`` the pose of ``i`` in ``par``, ``hr = R h``:
    ``m' = m``, ``h' = hr + m p``,
    ``I_o' = R I_o R^T - m [p]x^2 - [p]x [hr]x - [hr]x [p]x``.
    """
    R = mat3(work, i, CW_R)
    p = vec3(work, i, CW_P)
    m = work[i, CW_M]
    hr = mv(R, vec3(work, i, CW_H))
    work[par, CW_M] += m
    put3(work, par, CW_H, add3(vec3(work, par, CW_H), add3(hr, scale3(p, m))))
    pp = dot3(p, p)
    ph = dot3(p, hr)
    rir = rotate_symmetric(R, mat3(work, i, CW_IO))  # R I_o R^T: 45 products, not 729
    for r in range(3):
        for c in range(3):
            # -m [p]x^2 = m (|p|^2 1 - p p^T); -([p]x[hr]x + [hr]x[p]x) = 2 p.hr 1 - hr p^T - p hr^T
            eye = 1.0 if r == c else 0.0
            shift = m * (pp * eye - p[r] * p[c]) + 2.0 * ph * eye - hr[r] * p[c] - p[r] * hr[c]
            work[par, CW_IO + 3 * r + c] += rir[3 * r + c] + shift


@jit
def crba_pass(fp: Array, q: Array, M: Array, work: Array) -> bool:
    """Fill ``M`` (n, n) at ``q``; ``work`` is (n, 25). Returns whether ``M`` is finite."""
    n = q.shape[0]
    for i in range(n):
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, CW_R, R)
        put3(work, i, CW_P, p)
        work[i, CW_M] = fp[i, F_MASS]
        put3(work, i, CW_H, vec3(fp, i, F_H))
        xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
        put9(work, i, CW_IO, (xx, xy, xz, xy, yy, yz, xz, yz, zz))
    total = 0.0
    for i in range(n - 1, -1, -1):
        u = vec3(fp, i, F_AXIS)
        m = work[i, CW_M]
        h = vec3(work, i, CW_H)
        # F = I^C_i S_i, the force that accelerates the subtree at unit qdd_i.
        if kind(fp, i) == PRISMATIC:
            nf, ff = cross(h, u), scale3(u, m)
            M[i, i] = dot3(u, ff) + fp[i, F_ARMATURE]
        else:
            Io = mat3(work, i, CW_IO)
            nf, ff = mv(Io, u), cross(u, h)  # -h x u
            M[i, i] = dot3(u, nf) + fp[i, F_ARMATURE]
        total += M[i, i]
        j = i
        while parent(fp, j) >= 0:  # F_j = X_j^T F, up to the root
            R = mat3(work, j, CW_R)
            ff = mv(R, ff)
            nf = add3(mv(R, nf), cross(vec3(work, j, CW_P), ff))
            j = parent(fp, j)
            uj = vec3(fp, j, F_AXIS)
            M[i, j] = dot3(uj, ff) if kind(fp, j) == PRISMATIC else dot3(uj, nf)
            M[j, i] = M[i, j]
            total += M[i, j]
        par = parent(fp, i)
        if par >= 0:
            composite_to_parent(work, i, par)
    return bool(np.isfinite(total))


@jit
def crba_call(fp: Array, q: Array, M: Array) -> bool:
    M[:, :] = 0.0
    return crba_pass(fp, q, M, np.empty((q.shape[0], CW_COLS)))


@jit
def crba_rows(fp: Array, Q: Array, M: Array) -> bool:
    work = np.empty((Q.shape[1], CW_COLS))
    M[:, :, :] = 0.0
    ok = True
    for k in range(Q.shape[0]):
        ok = crba_pass(fp, Q[k], M[k], work) and ok
    return ok


@jit
def crba_tree_rows(fp: Array, km: Array, Q: Array, M: Array) -> bool:
    """``M[s] = G^T M_k(Q[s]) G`` for every sample; False: a quaternion off the unit
    sphere or a non-finite matrix."""
    nk = fp.shape[0]
    fpx = fp.copy()
    qk = np.empty(nk)
    Mk = np.empty((nk, nk))
    work = np.empty((nk, CW_COLS))
    ok = True
    for s in range(Q.shape[0]):
        if not expand_q(fp, km, Q[s], fpx, qk):
            return False
        Mk[:, :] = 0.0
        ok = crba_pass(fpx, qk, Mk, work) and ok
        M[s, :, :] = 0.0
        for a in range(nk):
            ia, ma = int(km[a, K_IV]), km[a, K_MULT]
            for b in range(nk):
                M[s, ia, int(km[b, K_IV])] += ma * km[b, K_MULT] * Mk[a, b]
    return ok
