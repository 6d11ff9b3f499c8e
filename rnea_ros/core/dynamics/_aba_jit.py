"""Numba kernels of :mod:`rnea_ros.core.dynamics.aba` (the face: Featherstone Table 7.1 /
Khalil eq. 32-52, checks and dispatch): :func:`aba_pass`, the three recursions over
the bodies' poses ``(R, p)`` (structured SE(3) operations, as Pinocchio's: no 6x6
Plucker matrix), articulated inertias ``IA`` (n, 36) and the per-body vectors (n, 32),
a free-flyer root solved as one 6-DoF joint; entries :func:`aba_call` (per call, stack
scratch), :func:`aba_rows` (batch), :func:`aba_tree_rows` / :func:`aba_tree_call` (the
kernel tree of multi-DoF joints, :mod:`rnea_ros.core.expansion`). All compiled with
fused multiply-adds (:func:`~rnea_ros.core._compile.jit_fma`: ~5-9 % less time per
call, results moved by rounding only).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    coulomb_sign,
    cross,
    inertia_times,
    joint_transform,
    mat3,
    mm,
    mtv,
    put3,
    put9,
    rotate_symmetric,
    scale3,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import jit_entry_fma, jit_fma, scratch, tree_scratch, tree_vector
from rnea_ros.core._expansion_jit import add_corr, expand_motion, expand_q, joint_corr
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_BAND,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_R,
    F_VISCOUS,
    FREE_FLYER,
    INNER,
    K_IV,
    K_KIND,
    K_NQ,
    K_NV,
    N_FLOATS,
    OWN,
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
def _cross_columns(p: Vec, M: Mat) -> Mat:
    """``[p]x M`` (row-major 3x3): each column ``p x M[:, j]``."""
    return (p[1] * M[6] - p[2] * M[3], p[1] * M[7] - p[2] * M[4], p[1] * M[8] - p[2] * M[5],
            p[2] * M[0] - p[0] * M[6], p[2] * M[1] - p[0] * M[7], p[2] * M[2] - p[0] * M[8],
            p[0] * M[3] - p[1] * M[0], p[0] * M[4] - p[1] * M[1], p[0] * M[5] - p[1] * M[2])


@jit_fma
def _transpose(M: Mat) -> Mat:
    return (M[0], M[3], M[6], M[1], M[4], M[7], M[2], M[5], M[8])


@jit_fma
def _articulated_to_parent(W: Array, R: Mat, p: Vec, IA: Array, par: int) -> None:
    """``IA[par] += X^T Ia X`` for the symmetric ``Ia = W[:, 0:6] = [[A, B], [B^T, C]]``
    (angular, linear blocks) and ``X`` the motion transform of the pose ``(R, p)``, on
    the 3x3 blocks as Pinocchio's ``SE3actOn`` (no 6x6 ``X``): with ``A' = R A R^T``,
    ``B' = R B R^T``, ``C' = R C R^T`` and ``P = [p]x``, the parent's blocks are
    ``C'``, ``B'' = B' + P C'`` and ``A' - B' P + P B''^T`` (~200 products, not ~270)."""
    A = (W[0, 0], W[0, 1], W[0, 2], W[1, 0], W[1, 1], W[1, 2], W[2, 0], W[2, 1], W[2, 2])
    B = (W[0, 3], W[0, 4], W[0, 5], W[1, 3], W[1, 4], W[1, 5], W[2, 3], W[2, 4], W[2, 5])
    C = (W[3, 3], W[3, 4], W[3, 5], W[4, 3], W[4, 4], W[4, 5], W[5, 3], W[5, 4], W[5, 5])
    A1 = rotate_symmetric(R, A)
    C1 = rotate_symmetric(R, C)
    B1 = mm(mm(R, B), _transpose(R))
    T = _cross_columns(p, C1)  # P C'
    B2 = (B1[0] + T[0], B1[1] + T[1], B1[2] + T[2], B1[3] + T[3], B1[4] + T[4],
          B1[5] + T[5], B1[6] + T[6], B1[7] + T[7], B1[8] + T[8])
    Y = _cross_columns(p, _transpose(B1))  # P B'^T = -(B' P)^T
    Z = _cross_columns(p, _transpose(B2))  # P B''^T
    for r in range(3):
        for c in range(3):
            if c >= r:
                a = A1[3 * r + c] + Y[3 * c + r] + Z[3 * r + c]
                IA[par, 6 * r + c] += a
                if c != r:
                    IA[par, 6 * c + r] += a
                IA[par, 6 * (3 + r) + 3 + c] += C1[3 * r + c]
                if c != r:
                    IA[par, 6 * (3 + c) + 3 + r] += C1[3 * r + c]
            b = B2[3 * r + c]
            IA[par, 6 * r + 3 + c] += b
            IA[par, 6 * (3 + c) + r] += b


@jit_fma
def _body_bias(fp: Array, i: int, w: Vec, v: Vec, c_w: Vec, c_v: Vec, fext: Array,
               use_fext: bool, vecs: Array, IA: Array) -> None:
    """Pass 1's per-body output: ``v = (w, v)``, the bias acceleration ``c``, the bias
    force ``pA = v x* I v - f_ext`` and ``IA[i] = I_i`` (Featherstone Table 7.1)."""
    n2, f2 = inertia_times(fp, i, w, v)
    pn = add3(cross(w, n2), cross(v, f2))
    pf = cross(w, f2)
    for k in range(3):
        vecs[i, k], vecs[i, 3 + k] = w[k], v[k]
        vecs[i, 6 + k], vecs[i, 9 + k] = c_w[k], c_v[k]
        vecs[i, 12 + k] = pn[k] - (fext[i, 3 + k] if use_fext else 0.0)
        vecs[i, 15 + k] = pf[k] - (fext[i, k] if use_fext else 0.0)
    body_inertia(fp, i, IA[i].reshape((6, 6)))  # IA[i]: a row-major 6x6


@jit_fma
def free_root_ok(fp: Array, km: Array) -> bool:
    """Whether kernel rows 0-5 are a free-flyer root without drive (armature, friction)
    whose velocity is ``v[0:6]``: :func:`aba_pass` may then solve them as one 6-DoF joint
    (the kernel tree lays a free-flyer out as prismatic x, y, z and revolute x, y, z
    rows on one frame, row 5 carrying the body, :mod:`rnea_ros.core.model.kernel_tree`)."""
    if fp.shape[0] < 6 or int(km[0, K_KIND]) != FREE_FLYER or int(km[0, K_IV]) != 0:
        return False
    if parent(fp, 0) >= 0:
        return False
    for k in range(6):
        if fp[k, F_ARMATURE] != 0.0 or fp[k, F_COULOMB] != 0.0 or fp[k, F_VISCOUS] != 0.0:
            return False
    return True


@jit_fma
def _solve_spd6(W: Array) -> bool:
    """Solve ``W[:, 0:6] x = W[:, 12]`` in place (``x`` into ``W[:, 12]``) for a symmetric
    positive definite 6x6, by ``L D L^T`` (its lower triangle is overwritten); False if a
    pivot is not positive (a singular articulated inertia)."""
    for j in range(6):
        d = W[j, j]
        for k in range(j):
            d -= W[j, k] * W[j, k] * W[k, k]
        if not d > 0.0:
            return False
        W[j, j] = d
        for r in range(j + 1, 6):
            acc = W[r, j]
            for k in range(j):
                acc -= W[r, k] * W[j, k] * W[k, k]
            W[r, j] = acc / d
    for r in range(6):  # L y = b
        acc = W[r, 12]
        for k in range(r):
            acc -= W[r, k] * W[k, 12]
        W[r, 12] = acc
    for r in range(5, -1, -1):  # D L^T x = y
        acc = W[r, 12] / W[r, r]
        for k in range(r + 1, 6):
            acc -= W[k, r] * W[k, 12]
        W[r, 12] = acc
    return True


@jit_fma
def aba_pass(fp: Array, q: Array, qd: Array, tau: Array, g: Array,
             fext: Array, use_fext: bool, qdd: Array, X: Array, IA: Array, vecs: Array,
             W: Array, r0: int) -> bool:
    """One ABA evaluation into ``qdd``. Scratch, written before read: ``X`` (n, 12),
    each body's pose ``(R, p)`` in its parent (its motion transform, never built as a
    6x6), ``IA`` (n, 36) (row-major 6x6 per body), ``W`` (6, 13), ``vecs`` (n, 32):
    ``v`` 0:6, ``c`` 6:12, ``pA`` 12:18, ``U`` 18:24, ``D`` 24, ``u`` 25, ``a`` 26:32.

    ``r0 = 6`` (:func:`free_root_ok`): rows 0-5 are a free-flyer root, solved as one 6-DoF
    joint, as Pinocchio's ``JointModelFreeFlyer`` (``S = 1``: the root body's
    acceleration is ``IA^-1 (tau - pA)``, no articulated inertia to move through five
    massless rows); ``qdd[0:6]`` then gets the root's real spatial acceleration
    ``[dv; dw]`` in its frame (not kernel accelerations: no ``corr`` to add). ``r0 = 0``:
    every row is a joint (an int, not a flag: one compiled specialisation for all callers)."""
    n = q.shape[0]
    lo = 6 if r0 > 0 else 0
    if lo > 0:  # the root body (row 5): twist v[0:6] = [v; w] in its frame, no bias
        zero = (0.0, 0.0, 0.0)
        _body_bias(fp, 5, (qd[3], qd[4], qd[5]), (qd[0], qd[1], qd[2]), zero, zero, fext,
                   use_fext, vecs, IA)
    for i in range(lo, n):  # pass 1: velocities, bias accelerations and forces
        R, p = joint_transform(fp, i, q[i])
        put9(X, i, 0, R)
        put3(X, i, 9, p)
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
        _body_bias(fp, i, w, v, c_w, c_v, fext, use_fext, vecs, IA)
    for i in range(n - 1, lo - 1, -1):  # pass 2: articulated inertias and bias forces
        off = 3 if kind(fp, i) == PRISMATIC else 0
        u = vec3(fp, i, F_AXIS)
        for r in range(6):  # U = IA S
            vecs[i, 18 + r] = (IA[i, 6 * r + off] * u[0] + IA[i, 6 * r + off + 1] * u[1]
                               + IA[i, 6 * r + off + 2] * u[2])
        D = vecs[i, 18 + off] * u[0] + vecs[i, 19 + off] * u[1] + vecs[i, 20 + off] * u[2]
        D += fp[i, F_ARMATURE]
        drive = (tau[i] - fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND])
                 - fp[i, F_VISCOUS] * qd[i])
        uu = drive - (vecs[i, 12 + off] * u[0] + vecs[i, 13 + off] * u[1]
                      + vecs[i, 14 + off] * u[2])
        vecs[i, 24] = D
        vecs[i, 25] = uu
        par = parent(fp, i)
        if par < 0:
            continue
        Dinv = 1.0 / D  # one division, not 42
        for r in range(6):
            Ur = vecs[i, 18 + r] * Dinv
            for c in range(6):
                W[r, c] = IA[i, 6 * r + c] - Ur * vecs[i, 18 + c]
        for r in range(6):  # pa = pA + Ia c + U u / D
            acc = vecs[i, 12 + r] + vecs[i, 18 + r] * (uu * Dinv)
            for c in range(6):
                acc += W[r, c] * vecs[i, 6 + c]
            W[r, 12] = acc
        R, p = mat3(X, i, 0), vec3(X, i, 9)
        fn, ff = to_parent(R, p, ((W[0, 12], W[1, 12], W[2, 12]),
                                  (W[3, 12], W[4, 12], W[5, 12])))  # pA_par += X^T pa
        for k in range(3):
            vecs[par, 12 + k] += fn[k]
            vecs[par, 15 + k] += ff[k]
        _articulated_to_parent(W, R, p, IA, par)  # IA_par += X^T Ia X
    total = 0.0
    if lo > 0:  # the root: IA a = tau - pA, tau = [force; torque] -> (n, f) order
        for r in range(6):
            for c in range(6):
                W[r, c] = IA[5, 6 * r + c]
            W[r, 12] = tau[r + 3 if r < 3 else r - 3] - vecs[5, 12 + r]
        if not _solve_spd6(W):
            return False
        gr = mtv(mat3(fp, 0, F_R), (g[0], g[1], g[2]))  # gravity in the root's frame
        for k in range(3):  # the fictitious acceleration (children's), the real one
            vecs[5, 26 + k] = W[k, 12]
            vecs[5, 29 + k] = W[3 + k, 12]
            qdd[3 + k] = W[k, 12]
            qdd[k] = W[3 + k, 12] + gr[k]
            total += qdd[k] + qdd[3 + k]
    for i in range(lo, n):  # pass 3: accelerations a = X a_par + c + S qdd
        par = parent(fp, i)
        if par < 0:
            a_p = ((0.0, 0.0, 0.0), (-g[0], -g[1], -g[2]))
        else:
            a_p = (vec3(vecs, par, 26), vec3(vecs, par, 29))
        aw, al = to_child(mat3(X, i, 0), vec3(X, i, 9), a_p)
        for k in range(3):
            vecs[i, 26 + k] = aw[k] + vecs[i, 6 + k]
            vecs[i, 29 + k] = al[k] + vecs[i, 9 + k]
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
    X, IA = scratch(n, 12), scratch(n, 36)
    vecs, W = scratch(n, _V_COLS), scratch(6, 13)
    return aba_pass(fp, q, qd, tau, g, fext, use_fext, qdd, X, IA, vecs, W, 0)


@jit_fma
def aba_rows(fp: Array, Q: Array, QD: Array, TAU: Array, g: Array,
             fext: Array, use_fext: bool, QDD: Array) -> bool:
    n = Q.shape[1]
    X, IA = np.empty((n, 12)), np.empty((n, 36))
    vecs, W = np.empty((n, _V_COLS)), np.empty((6, 13))
    ok = True
    for k in range(Q.shape[0]):
        ok = aba_pass(fp, Q[k], QD[k], TAU[k], g, fext, use_fext, QDD[k], X, IA, vecs,
                      W, 0) and ok
    return ok


@jit_fma
def _tree_drive(fp: Array, km: Array, qd: Array, tk: Array, ck: Array) -> None:
    """``tk -= Ia corr(qd)`` on the multi-DoF rows (``ck`` gets ``corr``), so that a
    sub-joint's armature acts on ``a`` rather than on ``a - corr``."""
    ck[:] = 0.0
    for k in range(km.shape[0]):
        kind_k = int(km[k, K_KIND])
        if kind_k != OWN and kind_k != INNER:  # an anchor: joint_corr names every kind
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
    X, IA = np.empty((nk, 12)), np.empty((nk, 36))
    vecs, W = np.empty((nk, _V_COLS)), np.empty((6, 13))
    r0 = 6 if free_root_ok(fp, km) else 0
    ok = True
    for s in range(Q.shape[0]):
        if not expand_q(fp, km, Q[s], fpx, qk):
            return False
        expand_motion(km, QD[s], vk)
        expand_motion(km, TAU[s], tk)
        _tree_drive(fp, km, QD[s], tk, ck)
        ok = aba_pass(fpx, qk, vk, tk, g, fk, use_fext, ak, X, IA, vecs, W, r0) and ok
        add_corr(km, QD[s], ak, QDD[s])
        if r0 > 0:
            QDD[s, 0:6] = ak[0:6]
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
    X, IA = tree_scratch(nk, 12), tree_scratch(nk, 36)
    vecs, W = tree_scratch(nk, _V_COLS), tree_scratch(6, 13)
    r0 = 6 if free_root_ok(fp, km) else 0
    ok = aba_pass(fpx, qk, vk, tk, g, fk, use_fext, ak, X, IA, vecs, W, r0)
    add_corr(km, qd, ak, qdd)
    if r0 > 0:  # the root's acceleration is the real one already
        for k in range(6):
            qdd[k] = ak[k]
    return 1 if ok else 0
