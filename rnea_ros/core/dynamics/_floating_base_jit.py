"""Numba kernels of :mod:`rnea_ros.core.dynamics.floating_base` (the face: Khalil 2010 §7.2,
checks and dispatch): :func:`free_floating_pass` (eq. 89-98: twists, composite inertias
and the bias wrenches ``beta^c`` towards the base, the base acceleration, then the
joint torques) on a work array whose first 25 columns are CRBA's ``CW_*`` layout
(:mod:`rnea_ros.core._layout`), so that :func:`~._crba_jit.composite_to_parent`
(eq. 95) applies as is; the entry :func:`free_floating_call` runs it on the kernel tree,
and :func:`free_floating_rows` runs that entry over a batch in one compiled call; a
free-flyer root over 1-DoF joints takes :func:`free_floating_free_call` (per call) and
:func:`free_floating_free_rows` (batch), twins of those two. The pass and the entry
are compiled with fused multiply-adds (:func:`~rnea_ros.core._compile.jit_fma`: ~7-9 %
less time per call, results moved by rounding only).
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
    dot3,
    joint_transform,
    mat3,
    mm,
    mtv,
    mv,
    put3,
    put9,
    quaternion_matrix,
    scale3,
    sub3,
    vec3,
)
from rnea_ros.core._compile import (
    jit,
    jit_entry_fma,
    jit_fma,
    tree_scratch,
    tree_vector,
)
from rnea_ros.core._expansion_jit import expand_state, gather
from rnea_ros.core._layout import (
    CW_H,
    CW_IO,
    CW_M,
    CW_P,
    CW_R,
    F_ARMATURE,
    F_AXIS,
    F_BAND,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_R,
    F_VISCOUS,
    K_NQ,
    K_NV,
    N_FLOATS,
    PRISMATIC,
    kind,
    parent,
)
from rnea_ros.core.dynamics._crba_jit import composite_to_parent as _composite_to_parent
from rnea_ros.core.model.joints import UNIT_TOLERANCE

Array = NDArray[np.float64]


# Work columns per body (row n: the base). The first 25 are crba's layout, so that
# crba's composite transform (eq. 95) applies as is.
_W_W, _W_V = 25, 28  # twist (w, v)
_W_ZW, _W_ZA = 31, 34  # zeta (eq. 89)
_W_BN, _W_BF = 37, 40  # beta^c (n, f) (eq. 90, 96)
_W_DW, _W_A = 43, 46  # acceleration (dw, a) (eq. 98)
_W_COLS = 49
# Base row of the kernel's ``base`` argument: m, h (3), I_o (xx yy zz xy xz yz),
# w0, v0, g0 (gravity in the base frame), base wrench (n, f): 25 floats.
B_M, B_H, B_IO, B_W, B_V, B_G, B_N, B_F = 0, 1, 4, 10, 13, 16, 19, 22


# ------------------------------------------------------------------ kernel
@jit_fma
def _composite_times(work: Array, i: int, w: Vec, v: Vec) -> tuple[Vec, Vec]:
    """Composite inertia ``I^c_i`` (m, h, I_o in ``work``) times the motion ``(w, v)``:
    the force ``(I_o w + h x v, m v - h x w)``."""
    m = work[i, CW_M]
    h = vec3(work, i, CW_H)
    return add3(mv(mat3(work, i, CW_IO), w), cross(h, v)), sub3(scale3(v, m), cross(h, w))


@jit_fma
def _rigid_solve(m: float, h: Vec, Io: Mat, n: Vec, f: Vec) -> tuple[bool, Vec, Vec]:
    """Solve ``I (dw, a) = (n, f)`` for a rigid-body inertia ``(m, h, I_o)``.

    With ``c = h / m`` and ``I_c = I_o - m (|c|^2 1 - c c^T)`` (about the COM):
    ``dw = I_c^-1 (n - c x f)``, ``a = f / m + c x dw``. False if not invertible.
    """
    if not m > 0.0:
        return False, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    c = scale3(h, 1.0 / m)
    cc = dot3(c, c)
    A = (Io[0] - m * (cc - c[0] * c[0]), Io[1] + m * c[0] * c[1], Io[2] + m * c[0] * c[2],
         Io[3] + m * c[1] * c[0], Io[4] - m * (cc - c[1] * c[1]), Io[5] + m * c[1] * c[2],
         Io[6] + m * c[2] * c[0], Io[7] + m * c[2] * c[1], Io[8] - m * (cc - c[2] * c[2]))
    # Inverse by cofactors (A symmetric positive definite for a physical body).
    c00 = A[4] * A[8] - A[5] * A[7]
    c01 = A[5] * A[6] - A[3] * A[8]
    c02 = A[3] * A[7] - A[4] * A[6]
    det = A[0] * c00 + A[1] * c01 + A[2] * c02
    scale = max(abs(A[0]), abs(A[4]), abs(A[8]))
    if not det > 1e-14 * scale * scale * scale:
        return False, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    inv = (c00, A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
           c01, A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
           c02, A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3])
    r = sub3(n, cross(c, f))
    dw = scale3(mv(inv, r), 1.0 / det)
    return True, dw, add3(scale3(f, 1.0 / m), cross(c, dw))


@jit_fma
def free_floating_pass(fp: Array, base: Array, q: Array, qd: Array, qdd: Array,
                       fext: Array, use_fext: bool, drive: bool, tau: Array, a0: Array,
                       work: Array, r0: int) -> bool:
    """Khalil 2010 §7.2 (eq. 89-100) into ``tau`` (n,) and ``a0`` (6,) ``(dw, a)``.

    The tree is rows ``r0..n-1`` of ``fp`` (1-DoF rows); a row whose parent is
    below ``r0`` hangs from the base (``r0 = 0``: a fixed-base tree, parent -1;
    ``r0 = 6``: a free-flyer model's kernel tree, whose first six rows are the
    root's sub-joints). ``base`` (1, 25) holds the base inertia, twist, gravity and
    wrench (``_B_*``); ``work`` is (n + 1, 49). ``tau[i]`` is written for the tree's
    rows only. Returns False when the robot's composite inertia is singular or a
    result is not finite.
    """
    n = q.shape[0]
    b = n  # the base's row
    # i) forward: twists, zeta (eq. 89), beta (eq. 90); composites start as the bodies.
    w0, v0 = vec3(base, 0, B_W), vec3(base, 0, B_V)
    put3(work, b, _W_W, w0)
    put3(work, b, _W_V, v0)
    m0 = base[0, B_M]
    h0 = vec3(base, 0, B_H)
    xx, yy, zz, xy, xz, yz = base[0, B_IO:B_IO + 6]
    work[b, CW_M] = m0
    put3(work, b, CW_H, h0)
    put9(work, b, CW_IO, (xx, xy, xz, xy, yy, yz, xz, yz, zz))
    n0, f0 = _composite_times(work, b, w0, v0)
    put3(work, b, _W_BN, sub3(vec3(base, 0, B_N), add3(cross(w0, n0), cross(v0, f0))))
    put3(work, b, _W_BF, sub3(vec3(base, 0, B_F), cross(w0, f0)))
    for i in range(r0, n):
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, CW_R, R)
        put3(work, i, CW_P, p)
        par = parent(fp, i)
        if par < r0:
            par = b
        w_p, v_p = vec3(work, par, _W_W), vec3(work, par, _W_V)
        w = mtv(R, w_p)
        v = mtv(R, add3(v_p, cross(w_p, p)))
        u = vec3(fp, i, F_AXIS)
        s = scale3(u, qd[i])
        if kind(fp, i) != PRISMATIC:
            w = add3(w, s)
            zw = add3(scale3(u, qdd[i]), cross(w, s))
            za = cross(v, s)
        else:
            v = add3(v, s)
            zw = (0.0, 0.0, 0.0)
            za = add3(scale3(u, qdd[i]), cross(w, s))
        put3(work, i, _W_W, w)
        put3(work, i, _W_V, v)
        put3(work, i, _W_ZW, zw)
        put3(work, i, _W_ZA, za)
        work[i, CW_M] = fp[i, F_MASS]
        put3(work, i, CW_H, vec3(fp, i, F_H))
        xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
        put9(work, i, CW_IO, (xx, xy, xz, xy, yy, yz, xz, yz, zz))
        ni, fi = _composite_times(work, i, w, v)  # I v
        bn = sub3((0.0, 0.0, 0.0), add3(cross(w, ni), cross(v, fi)))  # -(v x* I v)
        bf = sub3((0.0, 0.0, 0.0), cross(w, fi))
        if use_fext:
            bf = add3(bf, vec3(fext, i, 0))
            bn = add3(bn, vec3(fext, i, 3))
        put3(work, i, _W_BN, bn)
        put3(work, i, _W_BF, bf)
    # ii) backward: beta^c (eq. 96) with the subtree's final I^c, then I^c (eq. 95).
    for i in range(n - 1, r0 - 1, -1):
        par = parent(fp, i)
        if par < r0:
            par = b
        zn, zf = _composite_times(work, i, vec3(work, i, _W_ZW), vec3(work, i, _W_ZA))
        dn = sub3(vec3(work, i, _W_BN), zn)
        df = sub3(vec3(work, i, _W_BF), zf)
        R = mat3(work, i, CW_R)
        Rf = mv(R, df)
        Rn = add3(mv(R, dn), cross(vec3(work, i, CW_P), Rf))
        put3(work, par, _W_BN, add3(vec3(work, par, _W_BN), Rn))
        put3(work, par, _W_BF, add3(vec3(work, par, _W_BF), Rf))
        _composite_to_parent(work, i, par)
    # Eq. 97: the base's (fictitious) acceleration from f_0 = 0.
    ok, dw0, acc0 = _rigid_solve(work[b, CW_M], vec3(work, b, CW_H), mat3(work, b, CW_IO),
                                 vec3(work, b, _W_BN), vec3(work, b, _W_BF))
    if not ok:
        return False
    put3(work, b, _W_DW, dw0)
    put3(work, b, _W_A, acc0)
    # iii) forward: accelerations (eq. 98), wrenches (eq. 99), torques (eq. 100).
    total = 0.0
    for i in range(r0, n):
        par = parent(fp, i)
        if par < r0:
            par = b
        R = mat3(work, i, CW_R)
        p = vec3(work, i, CW_P)
        dw_p, a_p = vec3(work, par, _W_DW), vec3(work, par, _W_A)
        dw = add3(mtv(R, dw_p), vec3(work, i, _W_ZW))
        a = add3(mtv(R, add3(a_p, cross(dw_p, p))), vec3(work, i, _W_ZA))
        put3(work, i, _W_DW, dw)
        put3(work, i, _W_A, a)
        nf, ff = _composite_times(work, i, dw, a)
        nf = sub3(nf, vec3(work, i, _W_BN))
        ff = sub3(ff, vec3(work, i, _W_BF))
        u = vec3(fp, i, F_AXIS)
        t = dot3(u, ff) if kind(fp, i) == PRISMATIC else dot3(u, nf)
        if drive:
            t += (fp[i, F_ARMATURE] * qdd[i] + fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND])
                  + fp[i, F_VISCOUS] * qd[i])
        tau[i] = t
        total += t
    g0 = vec3(base, 0, B_G)
    a_real = add3(acc0, g0)  # undo the fictitious -g
    for k in range(3):
        a0[k] = dw0[k]
        a0[3 + k] = a_real[k]
        total += a0[k] + a0[3 + k]
    return bool(np.isfinite(total))


@jit_fma
def _root_as_base(fpx: Array, r0: int, v: Array, g: Array, base: Array) -> None:
    """Fill ``base`` (1, 25) from a free-flyer model's root: the inertia of its body
    (kernel row ``r0 - 1``), its twist ``v[:6] = [v; w]`` and gravity in its frame,
    ``R^T g`` with ``R`` its world rotation (row 0's placement at ``q``)."""
    k = r0 - 1
    base[0, B_M] = fpx[k, F_MASS]
    for c in range(3):
        base[0, B_H + c] = fpx[k, F_H + c]
        base[0, B_V + c] = v[c]
        base[0, B_W + c] = v[3 + c]
        base[0, B_N + c] = 0.0
        base[0, B_F + c] = 0.0
    for c in range(6):
        base[0, B_IO + c] = fpx[k, F_IO + c]
    put3(base, 0, B_G, mtv(mat3(fpx, 0, F_R), (g[0], g[1], g[2])))


@jit_entry_fma
def free_floating_call(fp: Array, km: Array, body_row: NDArray[np.int64], r0: int, off: int,
                       q: Array, v: Array, a: Array, g: Array, base: Array, fext: Array,
                       use_fext: bool, tau: Array, acc: Array) -> int:
    """Khalil §7.2 on the kernel tree (any joints, mimic followers too): expand the
    state (:func:`~rnea_ros.core._expansion_jit.expand_state`), run
    :func:`free_floating_pass` on rows ``r0..``, fold the torques back
    (``tau = G^T tau_k`` + armature and friction at the user's ``v, a``: eq. 100).

    ``r0 = off = 0``: a fixed-base tree on the base described by ``base``;
    ``r0 > 0, off = 6``: a free-flyer model, whose root (rows ``< r0``, coordinates
    ``< off``) is the base (:func:`_root_as_base`, gravity ``g``; a wrench on the
    root body goes to the base row). ``a`` and ``tau`` (nv - off,) are the
    accelerations and torques of the coordinates from ``off`` on; ``acc`` (6,) gets
    the base acceleration ``[dv; dw]``. ``fext`` (nbodies, 6) is applied on each
    body's kernel row ``body_row``. Returns 1, 0 for a singular inertia or a
    non-finite result, -1 for a quaternion off the unit sphere, -2 for a wrong length.
    """
    nk, nv = fp.shape[0], int(km[0, K_NV])
    if (q.shape[0] != km[0, K_NQ] or v.shape[0] != nv or a.shape[0] + off != nv
            or tau.shape[0] + off != nv or (use_fext and fext.shape[0] != body_row.shape[0])):
        return -2
    fpx = tree_scratch(nk, N_FLOATS)
    for i in range(nk):
        for c in range(N_FLOATS):
            fpx[i, c] = fp[i, c]
    a_all, tau_all, a0 = tree_vector(nv), tree_vector(nv), tree_vector(6)
    for i in range(nv):
        a_all[i] = a[i - off] if i >= off else 0.0
    qk, vk, ak, tk = tree_vector(nk), tree_vector(nk), tree_vector(nk), tree_vector(nk)
    if not expand_state(fp, km, q, v, a_all, fpx, qk, vk, ak):
        return -1
    if r0 > 0:
        _root_as_base(fpx, r0, v, g, base)
    fk = fext
    if use_fext:
        fk = tree_scratch(nk, 6)
        fk[:, :] = 0.0
        for bdy in range(body_row.shape[0]):
            k = int(body_row[bdy])
            for c in range(3):
                if k >= r0:
                    fk[k, c] = fext[bdy, c]
                    fk[k, 3 + c] = fext[bdy, 3 + c]
                else:  # the root body is the base: [force, torque] -> (n, f) columns
                    base[0, B_F + c] += fext[bdy, c]
                    base[0, B_N + c] += fext[bdy, 3 + c]
    work = tree_scratch(nk + 1, _W_COLS)
    ok = free_floating_pass(fpx, base, qk, vk, ak, fk, use_fext, False, tk, a0, work, r0)
    for k in range(r0):
        tk[k] = 0.0
    total = gather(fp, km, tk, v, a_all, True, tau_all)
    for i in range(off, nv):
        tau[i - off] = tau_all[i]
    for c in range(3):
        acc[c] = a0[3 + c]
        acc[3 + c] = a0[c]
    return 1 if ok and np.isfinite(total) else 0


@jit
def free_floating_rows(fp: Array, km: Array, body_row: NDArray[np.int64], r0: int, Q: Array,
                       V: Array, A: Array, g: Array, TAU: Array, ACC: Array) -> int:
    """:func:`free_floating_call` on a free-flyer model (``off = 6``, no external
    wrench) for each sample ``s``: ``Q[s]`` (nq,), ``V[s]`` (nv,), ``A[s]`` (nv - 6,)
    give ``TAU[s]`` (nv - 6,) and ``ACC[s]`` (6,). One compiled call for the batch,
    the GIL released. Returns -1 when every sample succeeded, else the index of the
    first one that did not (the face reruns it per call to name the cause)."""
    base, no_fext = np.empty((1, 25)), np.zeros((0, 6))
    for s in range(Q.shape[0]):
        if free_floating_call(fp, km, body_row, r0, 6, Q[s], V[s], A[s], g, base, no_fext,
                              False, TAU[s], ACC[s]) != 1:
            return s
    return -1


@jit
def _free_base(fp: Array, q: Array, v: Array, g: Array, base: Array) -> bool:
    """:func:`_root_as_base` for a free-flyer root on rows 0-5 (the layout of
    ``rnea_expanded.free_root``), from ``q[3:7]`` without the kernel tree's copy:
    ``R = R0 R(quaternion)``; False for a quaternion off the unit sphere."""
    x, y, z, w = q[3], q[4], q[5], q[6]
    if abs(np.sqrt(x * x + y * y + z * z + w * w) - 1.0) > UNIT_TOLERANCE:
        return False
    R = mm(mat3(fp, 0, F_R), quaternion_matrix(x, y, z, w))
    base[0, B_M] = fp[5, F_MASS]
    for c in range(3):
        base[0, B_H + c] = fp[5, F_H + c]
        base[0, B_V + c] = v[c]
        base[0, B_W + c] = v[3 + c]
        base[0, B_N + c] = 0.0
        base[0, B_F + c] = 0.0
    for c in range(6):
        base[0, B_IO + c] = fp[5, F_IO + c]
    put3(base, 0, B_G, mtv(R, (g[0], g[1], g[2])))
    return True


@jit_fma
def _free_sample(fp: Array, q: Array, v: Array, a: Array, g: Array, tau: Array, acc: Array,
                 base: Array, qk: Array, vk: Array, ak: Array, tk: Array, a0: Array,
                 work: Array) -> int:
    """One sample of a free-flyer root over 1-DoF joints (the layout of
    ``rnea_expanded.free_root``: row ``i >= 6`` at ``q[i + 1]``, ``v[i]``, ``a[i - 6]``),
    no external wrench: :func:`free_floating_pass` on the given buffers, without copying
    the kernel tree, expanding or gathering (the pass is not inlined at IR level with its
    helpers, as it was for the batch: ~15 % faster, but its cold compile took 13 s more).
    ``tau`` (nk - 6,), ``acc`` (6,) ``[dv; dw]``. Returns 1, 0 for a singular inertia or
    a non-finite result, -1 for a quaternion off the unit sphere."""
    nk = fp.shape[0]
    if not _free_base(fp, q, v, g, base):
        return -1
    for i in range(6, nk):
        qk[i], vk[i], ak[i] = q[i + 1], v[i], a[i - 6]
    # ``work`` stands in for the unread external wrenches (use_fext False)
    if not free_floating_pass(fp, base, qk, vk, ak, work, False, True, tk, a0, work, 6):
        return 0
    for i in range(6, nk):
        tau[i - 6] = tk[i]
    for c in range(3):
        acc[c] = a0[3 + c]
        acc[3 + c] = a0[c]
    return 1


@jit_entry_fma
def free_floating_free_call(fp: Array, q: Array, v: Array, a: Array, g: Array, tau: Array,
                            acc: Array) -> int:
    """The per-call entry for a free-flyer root over 1-DoF joints without external
    wrenches (:func:`_free_sample` on stack scratch). Its twin: :func:`free_floating_call`
    (equal to rounding, test/core/dynamics/test_floating_base_batch.py). Returns 1, 0 for
    a singular inertia or a non-finite result, -1 for a quaternion off the unit sphere,
    -2 for a wrong length."""
    nk = fp.shape[0]
    if (q.shape[0] != nk + 1 or v.shape[0] != nk or a.shape[0] != nk - 6
            or tau.shape[0] != nk - 6 or acc.shape[0] != 6 or g.shape[0] != 3):
        return -2
    base, a0 = tree_scratch(1, 25), tree_vector(6)
    qk, vk, ak, tk = tree_vector(nk), tree_vector(nk), tree_vector(nk), tree_vector(nk)
    work = tree_scratch(nk + 1, _W_COLS)
    return _free_sample(fp, q, v, a, g, tau, acc, base, qk, vk, ak, tk, a0, work)


@jit_fma
def free_floating_free_rows(fp: Array, Q: Array, V: Array, A: Array, g: Array, TAU: Array,
                            ACC: Array) -> int:
    """:func:`free_floating_rows` for a free-flyer root over 1-DoF joints:
    :func:`_free_sample` per sample on reused buffers (as :func:`free_floating_free_call`).
    Its twin: :func:`free_floating_rows` (equal to rounding,
    test/core/dynamics/test_floating_base_batch.py). Returns -1, or the first sample that
    failed."""
    nk = fp.shape[0]
    base = np.empty((1, 25))
    qk, vk, ak, tk = np.zeros(nk), np.zeros(nk), np.zeros(nk), np.zeros(nk)
    a0, work = np.empty(6), np.empty((nk + 1, _W_COLS))
    for s in range(Q.shape[0]):
        if _free_sample(fp, Q[s], V[s], A[s], g, TAU[s], ACC[s], base, qk, vk, ak, tk, a0,
                        work) != 1:
            return s
    return -1


__all__ = ["B_F", "B_G", "B_H", "B_IO", "B_M", "B_N", "B_V", "B_W", "free_floating_call",
           "free_floating_free_call", "free_floating_free_rows", "free_floating_pass",
           "free_floating_rows"]
