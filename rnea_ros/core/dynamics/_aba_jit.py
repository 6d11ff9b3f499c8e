"""Numba kernels of :mod:`rnea_ros.core.dynamics.aba` (the face: Featherstone Table 7.1 /
Khalil eq. 32-52, checks and dispatch): :func:`aba_pass`, the three recursions over
6x6 Plucker transforms ``X`` and articulated inertias ``IA`` (n, 36) and the per-body
vectors (n, 32); entries :func:`aba_call` (per call, stack scratch), :func:`aba_rows`
(batch), :func:`aba_tree_rows` / :func:`aba_tree_call` (the kernel tree of multi-DoF
joints, :mod:`rnea_ros.core.expansion`). All compiled with fused multiply-adds
(:func:`~rnea_ros.core._compile.jit_fma`: ~5-9 % less time per call, results moved
by rounding only).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    add3,
    cross,
    inertia_times,
    joint_transform,
    mtv,
    scale3,
    sign,
    vec3,
)
from rnea_ros.core._compile import jit_entry_fma, jit_fma, scratch, tree_scratch, tree_vector
from rnea_ros.core._expansion_jit import add_corr, expand_motion, expand_q, joint_corr
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_VISCOUS,
    FREE_FLYER,
    K_IV,
    K_KIND,
    K_NQ,
    K_NV,
    N_FLOATS,
    PRISMATIC,
    kind,
    parent,
)

Array = NDArray[np.float64]


@jit_fma
def plucker(R: tuple[float, ...], p: tuple[float, float, float], X: Array) -> None:
    """Fill ``X`` (6, 6), the motion transform parent -> child (the elastic kernels')."""
    P = ((0.0, -p[2], p[1]), (p[2], 0.0, -p[0]), (-p[1], p[0], 0.0))  # [p]x
    for r in range(3):
        for c in range(3):
            E = R[3 * c + r]
            X[r, c] = E
            X[3 + r, 3 + c] = E
            X[r, 3 + c] = 0.0
            X[3 + r, c] = -(R[r] * P[0][c] + R[3 + r] * P[1][c] + R[6 + r] * P[2][c])


@jit_fma
def body_inertia(fp: Array, i: int, I6: Array) -> None:
    """Fill ``I6`` (6, 6) with body ``i``'s spatial inertia at its origin (ABA's, on a
    row of its (n, 36) array, and the elastic kernels')."""
    m = fp[i, F_MASS]
    hx, hy, hz = fp[i, F_H], fp[i, F_H + 1], fp[i, F_H + 2]
    xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
    Io = ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))
    H = ((0.0, -hz, hy), (hz, 0.0, -hx), (-hy, hx, 0.0))  # [h]x
    for r in range(3):
        for c in range(3):
            I6[r, c] = Io[r][c]
            I6[r, 3 + c] = H[r][c]
            I6[3 + r, c] = -H[r][c]
            I6[3 + r, 3 + c] = m if r == c else 0.0


@jit_fma
def _plucker_row(R: tuple[float, ...], p: tuple[float, float, float], X: Array, i: int
                 ) -> None:
    """Fill ``X[i]`` (36,: a row-major 6x6), the motion transform parent -> child.

    ``X = [[E, 0], [-E [p]x, E]]`` with ``E = R^T``.
    """
    P = ((0.0, -p[2], p[1]), (p[2], 0.0, -p[0]), (-p[1], p[0], 0.0))  # [p]x
    for r in range(3):
        for c in range(3):
            E = R[3 * c + r]
            X[i, 6 * r + c] = E
            X[i, 6 * (3 + r) + 3 + c] = E
            X[i, 6 * r + 3 + c] = 0.0
            X[i, 6 * (3 + r) + c] = -(R[r] * P[0][c] + R[3 + r] * P[1][c] + R[6 + r] * P[2][c])



@jit_fma
def _congruence_add(W: Array, X: Array, i: int, IA: Array, par: int) -> None:
    """``IA[par] += X_i^T Ia X_i`` for the symmetric ``Ia = W[:, 0:6]`` (``W[:, 6:12]``
    holds ``T = Ia X_i``), using ``X_i = [[E, 0], [B, E]]``'s zero block: about 300
    multiply-adds instead of the 1296 of four nested loops."""
    for r in range(6):
        for c in range(3):
            t0 = 0.0
            t1 = 0.0
            for k in range(3):
                e = X[i, 6 * k + c]  # E[k, c]
                t0 += W[r, k] * e + W[r, 3 + k] * X[i, 6 * (3 + k) + c]  # (Ia X)[r, c]
                t1 += W[r, 3 + k] * e  # (Ia X)[r, 3 + c]
            W[r, 6 + c] = t0
            W[r, 9 + c] = t1
    for r in range(6):
        for c in range(r, 6):
            acc = 0.0
            if r < 3:
                for k in range(3):
                    acc += X[i, 6 * k + r] * W[k, 6 + c] + X[i, 6 * (3 + k) + r] * W[3 + k, 6 + c]
            else:
                for k in range(3):
                    acc += X[i, 6 * (3 + k) + r] * W[3 + k, 6 + c]
            IA[par, 6 * r + c] += acc
            if c != r:
                IA[par, 6 * c + r] += acc


@jit_fma
def aba_pass(fp: Array, q: Array, qd: Array, tau: Array, g: Array,
             fext: Array, use_fext: bool, qdd: Array, X: Array, IA: Array, vecs: Array,
             W: Array) -> bool:
    """One ABA evaluation into ``qdd``. Scratch, written before read: ``X, IA`` (n, 36)
    (row-major 6x6 per body), ``W`` (6, 13), ``vecs`` (n, 32): ``v`` 0:6, ``c`` 6:12,
    ``pA`` 12:18, ``U`` 18:24, ``D`` 24, ``u`` 25, ``a`` 26:32."""
    n = q.shape[0]
    for i in range(n):  # pass 1: velocities, bias accelerations and forces
        R, p = joint_transform(fp, i, q[i])
        _plucker_row(R, p, X, i)
        par = parent(fp, i)
        if par < 0:
            w_p, v_p = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        else:
            w_p, v_p = vec3(vecs, par, 0), vec3(vecs, par, 3)
        w = mtv(R, w_p)
        v = mtv(R, add3(v_p, cross(w_p, p)))
        u = vec3(fp, i, F_AXIS)
        s = scale3(u, qd[i])
        if kind(fp, i) == PRISMATIC:
            v = add3(v, s)
            c_w, c_v = (0.0, 0.0, 0.0), cross(w, s)
        else:
            w = add3(w, s)
            c_w, c_v = cross(w, s), cross(v, s)
        n2, f2 = inertia_times(fp, i, w, v)
        pn = add3(cross(w, n2), cross(v, f2))
        pf = cross(w, f2)
        for k in range(3):
            vecs[i, k], vecs[i, 3 + k] = w[k], v[k]
            vecs[i, 6 + k], vecs[i, 9 + k] = c_w[k], c_v[k]
            vecs[i, 12 + k] = pn[k] - (fext[i, 3 + k] if use_fext else 0.0)
            vecs[i, 15 + k] = pf[k] - (fext[i, k] if use_fext else 0.0)
        body_inertia(fp, i, IA[i].reshape((6, 6)))  # IA[i]: a row-major 6x6
    for i in range(n - 1, -1, -1):  # pass 2: articulated inertias and bias forces
        off = 3 if kind(fp, i) == PRISMATIC else 0
        u = vec3(fp, i, F_AXIS)
        for r in range(6):  # U = IA S
            vecs[i, 18 + r] = (IA[i, 6 * r + off] * u[0] + IA[i, 6 * r + off + 1] * u[1]
                               + IA[i, 6 * r + off + 2] * u[2])
        D = vecs[i, 18 + off] * u[0] + vecs[i, 19 + off] * u[1] + vecs[i, 20 + off] * u[2]
        D += fp[i, F_ARMATURE]
        drive = tau[i] - fp[i, F_COULOMB] * sign(qd[i]) - fp[i, F_VISCOUS] * qd[i]
        uu = drive - (vecs[i, 12 + off] * u[0] + vecs[i, 13 + off] * u[1]
                      + vecs[i, 14 + off] * u[2])
        vecs[i, 24] = D
        vecs[i, 25] = uu
        par = parent(fp, i)
        if par < 0:
            continue
        for r in range(6):
            for c in range(6):
                W[r, c] = IA[i, 6 * r + c] - vecs[i, 18 + r] * vecs[i, 18 + c] / D
        for r in range(6):  # pa = pA + Ia c + U u / D
            acc = vecs[i, 12 + r] + vecs[i, 18 + r] * uu / D
            for c in range(6):
                acc += W[r, c] * vecs[i, 6 + c]
            W[r, 12] = acc
        for r in range(6):  # pA_par += X^T pa
            acc = 0.0
            for k in range(6):
                acc += X[i, 6 * k + r] * W[k, 12]
            vecs[par, 12 + r] += acc
        _congruence_add(W, X, i, IA, par)  # IA_par += X^T Ia X
    total = 0.0
    for i in range(n):  # pass 3: accelerations a = X a_par + c + S qdd
        par = parent(fp, i)
        for r in range(6):
            acc = vecs[i, 6 + r]
            for c in range(6):
                if par < 0:
                    ap = -g[c - 3] if c >= 3 else 0.0
                else:
                    ap = vecs[par, 26 + c]
                acc += X[i, 6 * r + c] * ap
            vecs[i, 26 + r] = acc
        off = 3 if kind(fp, i) == PRISMATIC else 0
        u = vec3(fp, i, F_AXIS)
        Ua = 0.0
        for r in range(6):
            Ua += vecs[i, 18 + r] * vecs[i, 26 + r]
        qdd[i] = (vecs[i, 25] - Ua) / vecs[i, 24]
        for k in range(3):
            vecs[i, 26 + off + k] += u[k] * qdd[i]
        total += qdd[i]
    return bool(np.isfinite(total))


_V_COLS = 32


@jit_entry_fma
def aba_call(fp: Array, q: Array, qd: Array, tau: Array, g: Array, fext: Array,
             use_fext: bool, qdd: Array) -> bool:
    """The per-call entry (stack scratch); False: a wrong length or a non-finite result."""
    n = fp.shape[0]
    if (q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n
            or g.shape[0] != 3 or (use_fext and fext.shape[0] != n)):
        return False
    X, IA = scratch(n, 36), scratch(n, 36)
    vecs, W = scratch(n, _V_COLS), scratch(6, 13)
    return aba_pass(fp, q, qd, tau, g, fext, use_fext, qdd, X, IA, vecs, W)


@jit_fma
def aba_rows(fp: Array, Q: Array, QD: Array, TAU: Array, g: Array,
             fext: Array, use_fext: bool, QDD: Array) -> bool:
    n = Q.shape[1]
    X, IA = np.empty((n, 36)), np.empty((n, 36))
    vecs, W = np.empty((n, _V_COLS)), np.empty((6, 13))
    ok = True
    for k in range(Q.shape[0]):
        ok = aba_pass(fp, Q[k], QD[k], TAU[k], g, fext, use_fext, QDD[k], X, IA, vecs,
                      W) and ok
    return ok


@jit_fma
def _tree_drive(fp: Array, km: Array, qd: Array, tk: Array, ck: Array) -> None:
    """``tk -= Ia corr(qd)`` on the multi-DoF rows (``ck`` gets ``corr``), so that a
    sub-joint's armature acts on ``a`` rather than on ``a - corr``."""
    ck[:] = 0.0
    for k in range(km.shape[0]):
        kind_k = int(km[k, K_KIND])
        if kind_k >= FREE_FLYER:
            joint_corr(kind_k, qd, int(km[k, K_IV]), ck, k)
    for k in range(km.shape[0]):
        tk[k] -= fp[k, F_ARMATURE] * ck[k]


@jit_fma
def aba_tree_rows(fp: Array, km: Array, body_row: NDArray[np.int64], Q: Array, QD: Array,
                  TAU: Array, g: Array, fext: Array, use_fext: bool, QDD: Array) -> bool:
    """:func:`aba_pass` on the kernel tree of a model without mimic joints, per sample."""
    nk = fp.shape[0]
    fpx = fp.copy()
    qk, vk, tk, ak, ck = np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk)
    fk = np.zeros((nk, 6))
    if use_fext:
        for b in range(body_row.shape[0]):
            fk[int(body_row[b]), :] = fext[b, :]
    X, IA = np.empty((nk, 36)), np.empty((nk, 36))
    vecs, W = np.empty((nk, _V_COLS)), np.empty((6, 13))
    ok = True
    for s in range(Q.shape[0]):
        if not expand_q(fp, km, Q[s], fpx, qk):
            return False
        expand_motion(km, QD[s], vk)
        expand_motion(km, TAU[s], tk)
        _tree_drive(fp, km, QD[s], tk, ck)
        ok = aba_pass(fpx, qk, vk, tk, g, fk, use_fext, ak, X, IA, vecs, W) and ok
        add_corr(km, QD[s], ak, QDD[s])
    return ok


@jit_entry_fma
def aba_tree_call(fp: Array, km: Array, body_row: NDArray[np.int64], q: Array, qd: Array,
                  tau: Array, g: Array, fext: Array, use_fext: bool, qdd: Array) -> int:
    """The per-call kernel-tree entry (stack scratch). Returns 1, or 0 for a wrong
    length or a non-finite result, -1 for a quaternion off the unit sphere."""
    nk, nv = fp.shape[0], km[0, K_NV]
    if (q.shape[0] != km[0, K_NQ] or qd.shape[0] != nv or tau.shape[0] != nv
            or qdd.shape[0] != nv or g.shape[0] != 3
            or (use_fext and fext.shape[0] != body_row.shape[0])):
        return 0
    fpx = tree_scratch(nk, N_FLOATS)
    for i in range(nk):
        for c in range(N_FLOATS):
            fpx[i, c] = fp[i, c]
    qk, vk, tk, ak = tree_vector(nk), tree_vector(nk), tree_vector(nk), tree_vector(nk)
    if not expand_q(fp, km, q, fpx, qk):
        return -1
    expand_motion(km, qd, vk)
    expand_motion(km, tau, tk)
    _tree_drive(fp, km, qd, tk, ak)
    fk = fext
    if use_fext:
        fk = tree_scratch(nk, 6)
        fk[:, :] = 0.0
        for b in range(body_row.shape[0]):
            for c in range(6):
                fk[int(body_row[b]), c] = fext[b, c]
    X, IA = tree_scratch(nk, 36), tree_scratch(nk, 36)
    vecs, W = tree_scratch(nk, _V_COLS), tree_scratch(6, 13)
    ok = aba_pass(fpx, qk, vk, tk, g, fk, use_fext, ak, X, IA, vecs, W)
    add_corr(km, qd, ak, qdd)
    return 1 if ok else 0
