"""Compiled kernels of the platform + legs dynamics (Khalil 2010 §5, eq. 59-66).

One sample: platform pose, twist and acceleration in; per leg the inverse
geometric model (closed form) and the joint rates from its Jacobian (eq. 63-64);
the legs' inverse dynamics ``Gamma_i`` by our RNEA, one pass over all legs as
one forest model (:func:`~rnea_ros.core.dynamics._rnea_jit.rnea_row`); the
legs' dynamics carried to the platform (``J_vi^T J_i^-T Gamma_i``, eq. 66) and
the active forces ``Gamma = J_p^T [F_p + sum ...]`` (eq. 66) by one small linear
solve with ``J_p^-1`` (eq. 60, 62). Allocation-free per call: tuples and stack
scratch (see :mod:`rnea_ros.core._compile`); FMA-compiled like the batch RNEA.

Data layout and the leg kernels: :mod:`._parallel_legs`.

Platform coordinates, base frame: ``x = [p, qx, qy, qz, qw]`` (origin,
unit quaternion), ``xd = [v, w]`` (velocity of the origin, angular velocity),
``xdd = [a, dw]`` (``a = dv/dt``); translating platform: ``x = p``, ``xd = v``,
``xdd = a``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import add3, cross, dot3, mat3, mtv, mv, scale3, sub3, vec3
from rnea_ros.core._compile import inline, jit_entry_fma, jit_fma, scratch, tree_vector
from rnea_ros.core._layout import RW_COLS, RW_P, RW_R
from rnea_ros.core.coupling._parallel_legs import (
    BAD_QUATERNION,
    G_ACTIVE,
    G_ATTACH,
    KIND_RUU,
    KIND_UPS,
    LEG_SINGULAR,
    LIMIT,
    NOT_FINITE,
    OK,
    PL_H,
    PL_IO,
    PL_MASS,
    PL_R0,
    PLATFORM_SINGULAR,
    STATUS_LEG,
    UNKNOWN_KIND,
    jacobian_column,
    leg_bias,
    leg_frames,
    leg_values,
    solve_in_place,
    unit_quaternion_matrix,
    within_limits,
)
from rnea_ros.core.dynamics._rnea_jit import joint_transform_cs, rnea_posed
from rnea_ros.core.errors import ParallelRobotError

Array = NDArray[np.float64]
# The per-sample kernel is one function: its leg, RNEA and solve steps inlined (IR
# level, with its FMA flags); the entries call it (compiled once, not inlined).
_rnea_posed, _joint_transform_cs = inline(rnea_posed), inline(joint_transform_cs)
_leg_frames, _leg_bias = inline(leg_frames), inline(leg_bias)
_solve_in_place = inline(solve_in_place)

BATCH_SAMPLE = 4096  # batch status: status + BATCH_SAMPLE * sample
MAX_LEGS = 6
_Q_COLS = 3 * MAX_LEGS
_J_COLS = 12  # per leg: the rows of J_i^-1 and P_i
_M_COLS = 7
LEG_OUT = 9  # per-leg output row: q, qd, qdd
JINV_OUT = 6  # per-leg row of J_p^-1


# ------------------------------------------------------------ one sample
@inline  # into platform_rows, the one compiled loop every entry calls
def platform_id(fp: Array, gm: Array, pl: Array, kind_: int, x: Array, xd: Array,
                xdd: Array, g: Array, tau: Array, work: Array, Q: Array, QD: Array,
                QDD: Array, TAU: Array, J: Array, A: Array, legs_out: Array, jinv_out: Array
                ) -> int:
    """Active forces ``tau`` (m,) of one sample (eq. 66); the status code (``OK``...).

    ``fp`` (3m, 30) packs the legs (leg ``i`` in rows ``3i..3i+2``, each its own
    chain from the base). Scratch: ``work`` (3m, 30), ``Q, QD, QDD, TAU`` (1, >= 3m),
    ``J`` (m, 12), ``A`` (6, 7). Unless ``legs_out`` has no rows (a run-time test,
    so one compiled kernel serves every entry), also each leg's ``[q, qd, qdd]``
    into ``legs_out`` (m, 9) and the rows of ``J_p^-1`` (eq. 60, 62: ``[u_i, P_i x u_i]``
    with ``u_i = J_i^-T e_active``) into ``jinv_out`` (m, 6).
    """
    m = gm.shape[0]
    want = legs_out.shape[0] > 0
    p = (x[0], x[1], x[2])
    if kind_ == KIND_UPS:
        ok, R = unit_quaternion_matrix(x[3], x[4], x[5], x[6])
        if not ok:
            return BAD_QUATERNION * STATUS_LEG
        v, w = (xd[0], xd[1], xd[2]), (xd[3], xd[4], xd[5])
        a, dw = (xdd[0], xdd[1], xdd[2]), (xdd[3], xdd[4], xdd[5])
        nv = 6
    elif kind_ == KIND_RUU:
        R = mat3(pl, 0, PL_R0)
        v, a = (xd[0], xd[1], xd[2]), (xdd[0], xdd[1], xdd[2])
        w = dw = (0.0, 0.0, 0.0)
        nv = 3
    else:
        raise ParallelRobotError(UNKNOWN_KIND)
    # Legs: inverse geometric model, rates from J_i (eq. 63-64), into Q, QD, QDD.
    for i in range(m):
        o = 3 * i
        r = mv(R, vec3(gm, i, G_ATTACH))  # P_i (eq. 65)
        B = add3(p, r)
        vB = add3(v, cross(w, r))  # v_i = J_vi V_p (eq. 64)
        aB = add3(a, add3(cross(dw, r), cross(w, cross(w, r))))
        reason, qs, cs, ss, o0, o1, o2, z0, z1, z2 = _leg_frames(kind_, gm, i, B)
        if reason != OK:
            return int(reason) * STATUS_LEG + i
        if not (within_limits(gm, i, 0, qs[0], cs[0], ss[0])
                and within_limits(gm, i, 1, qs[1], cs[1], ss[1])
                and within_limits(gm, i, 2, qs[2], cs[2], ss[2])):
            return LIMIT * STATUS_LEG + i
        for j in range(3):  # the RNEA's poses, from the closed form's cosines and sines
            Rj, pj = _joint_transform_cs(fp, o + j, qs[j], cs[j], ss[j])
            for c in range(9):
                work[o + j, RW_R + c] = Rj[c]
            work[o + j, RW_P], work[o + j, RW_P + 1], work[o + j, RW_P + 2] = pj
        c0 = jacobian_column(fp, o, o0, z0, B)
        c1 = jacobian_column(fp, o + 1, o1, z1, B)
        c2 = jacobian_column(fp, o + 2, o2, z2, B)
        r0, r1, r2 = cross(c1, c2), cross(c2, c0), cross(c0, c1)  # rows of det(J) J^-1
        det = dot3(c0, r0)  # |det| > 1e-9 |c0| |c1| |c2|, squared (no sqrt):
        if not det * det > 1e-18 * (dot3(c0, c0) * dot3(c1, c1) * dot3(c2, c2)):
            return LEG_SINGULAR * STATUS_LEG + i
        r0, r1, r2 = scale3(r0, 1.0 / det), scale3(r1, 1.0 / det), scale3(r2, 1.0 / det)
        qd0, qd1, qd2 = dot3(r0, vB), dot3(r1, vB), dot3(r2, vB)  # qd_i = J_i^-1 v_i
        acc = sub3(aB, _leg_bias(fp, o, o0, o1, o2, z0, z1, z2, B, qd0, qd1, qd2))
        if want:
            Q[0, o], Q[0, o + 1], Q[0, o + 2] = leg_values(kind_, qs, cs, ss)
        QD[0, o], QD[0, o + 1], QD[0, o + 2] = qd0, qd1, qd2
        QDD[0, o], QDD[0, o + 1], QDD[0, o + 2] = dot3(r0, acc), dot3(r1, acc), dot3(r2, acc)
        for k in range(3):
            J[i, k], J[i, 3 + k], J[i, 6 + k], J[i, 9 + k] = r0[k], r1[k], r2[k], r[k]
    # Every leg's inverse dynamics Gamma_i by our RNEA, in one pass over the legs.
    _rnea_posed(fp, QD, QDD, 0, g, True, TAU, work, 0)
    # Platform: Newton-Euler (eq. 9), base frame, about its origin; gravity as -g.
    ag = (a[0] - g[0], a[1] - g[1], a[2] - g[2])
    mass = pl[0, PL_MASS]
    h = mv(R, vec3(pl, 0, PL_H))
    Io = mat3(pl, 0, PL_IO)
    Iw = mv(R, mv(Io, mtv(R, w)))
    f = add3(scale3(ag, mass), add3(cross(dw, h), cross(w, cross(w, h))))
    n = add3(add3(mv(R, mv(Io, mtv(R, dw))), cross(w, Iw)), cross(h, ag))
    for i in range(m):
        o = 3 * i
        r0, r1, r2, r = vec3(J, i, 0), vec3(J, i, 3), vec3(J, i, 6), vec3(J, i, 9)
        # The leg's dynamics as a force at its end: J_i^-T Gamma_i (eq. 66).
        fi = add3(add3(scale3(r0, TAU[0, o]), scale3(r1, TAU[0, o + 1])),
                  scale3(r2, TAU[0, o + 2]))
        f = add3(f, fi)
        n = add3(n, cross(r, fi))
        act = int(gm[i, G_ACTIVE])
        u = r0 if act == 0 else (r1 if act == 1 else r2)  # J_i^-T e_active
        ru = cross(r, u)
        A[0, i], A[1, i], A[2, i] = u
        if nv == 6:
            A[3, i], A[4, i], A[5, i] = ru
        if want:
            for k in range(3):
                legs_out[i, k] = Q[0, o + k]
                legs_out[i, 3 + k] = QD[0, o + k]
                legs_out[i, 6 + k] = QDD[0, o + k]
                jinv_out[i, k] = u[k]
                jinv_out[i, 3 + k] = ru[k]
    A[0, nv], A[1, nv], A[2, nv] = f
    if nv == 6:
        A[3, nv], A[4, nv], A[5, nv] = n
    # (J_p^-1)^T Gamma = F_p + sum J_vi^T J_i^-T Gamma_i  (eq. 66).
    # The size as a constant, so that the elimination is unrolled (280 -> 180 ns for 6).
    solved = _solve_in_place(A, 6) if nv == 6 else _solve_in_place(A, 3)
    if not solved:
        return PLATFORM_SINGULAR * STATUS_LEG
    total = 0.0
    for i in range(m):
        tau[i] = A[i, nv]
        total += tau[i]
    if not np.isfinite(total):
        return NOT_FINITE * STATUS_LEG
    return OK


@jit_entry_fma
def inverse_dynamics_call(fp: Array, gm: Array, pl: Array, kind_: int, x: Array,
                          xd: Array, xdd: Array, g: Array, tau: Array, legs_out: Array,
                          jinv_out: Array) -> int:
    """The per-call entry of :func:`platform_id` (lengths checked here); ``legs_out``
    (m, 9) and ``jinv_out`` (m, 6) as there, or with no rows (the hot path). One entry
    for both: each entry re-optimises the kernel's inlined body when it is compiled."""
    m = gm.shape[0]
    if kind_ == KIND_UPS:
        nx, nv = 7, 6
    elif kind_ == KIND_RUU:
        nx, nv = 3, 3
    else:
        raise ParallelRobotError(UNKNOWN_KIND)
    if (x.shape[0] != nx or xd.shape[0] != nv or xdd.shape[0] != nv or g.shape[0] != 3
            or tau.shape[0] != m or m != nv or fp.shape[0] != 3 * m
            or legs_out.shape[0] != jinv_out.shape[0]
            or (legs_out.shape[0] != 0 and legs_out.shape[0] != m)):
        return NOT_FINITE * STATUS_LEG + STATUS_LEG - 1
    work = scratch(3 * m, RW_COLS)
    Q, QD = scratch(1, _Q_COLS), scratch(1, _Q_COLS)
    QDD, TAU = scratch(1, _Q_COLS), scratch(1, _Q_COLS)
    J = scratch(m, _J_COLS)
    A = scratch(6, _M_COLS)
    X, XD, XDD = scratch(1, 7), scratch(1, 6), scratch(1, 6)  # writable copies: one
    for c in range(nx):  # specialisation of platform_rows for read-only inputs too
        X[0, c] = x[c]
    for c in range(nv):
        XD[0, c], XDD[0, c] = xd[c], xdd[c]
    status: int = platform_rows(fp, gm, pl, kind_, X, XD, XDD, g, tau.reshape((1, m)), work, Q,
                                QD, QDD, TAU, J, A, legs_out, jinv_out, tree_vector(nx),
                                tree_vector(nv), tree_vector(nv), tree_vector(m))
    return status


@jit_fma
def _buffers(m: int) -> tuple[Array, Array, Array, Array, Array, Array, Array]:
    """Heap scratch for the analysis and batch kernels (see :func:`platform_id`)."""
    return (np.empty((3 * m, RW_COLS)), np.empty((1, 3 * m)), np.empty((1, 3 * m)),
            np.empty((1, 3 * m)), np.empty((1, 3 * m)), np.empty((m, _J_COLS)),
            np.empty((6, _M_COLS)))


@jit_fma
def platform_rows(fp: Array, gm: Array, pl: Array, kind_: int, X: Array, XD: Array,
                  XDD: Array, g: Array, tau: Array, work: Array, Q: Array, QD: Array,
                  QDD: Array, TAU: Array, J: Array, A: Array, legs_out: Array,
                  jinv_out: Array, x: Array, xd: Array, xdd: Array, out: Array) -> int:
    """:func:`platform_id` (inlined) over the rows of ``X, XD, XDD`` into the rows of
    ``tau``; the first failure's status plus ``BATCH_SAMPLE * sample``, else ``OK``.
    Every entry calls it (a per-call entry on one row), so the batch equals the calls
    bit for bit, and the kernel's arguments are taken once per batch, not per sample.
    Scratch as :func:`platform_id`'s, and ``x, xd, xdd, out`` (nx,), (nv,), (nv,), (m,):
    each sample is copied into them (cheaper than per-sample views)."""
    for k in range(X.shape[0]):
        for c in range(x.shape[0]):
            x[c] = X[k, c]
        for c in range(xd.shape[0]):
            xd[c], xdd[c] = XD[k, c], XDD[k, c]
        status: int = platform_id(fp, gm, pl, kind_, x, xd, xdd, g, out, work, Q, QD, QDD,
                                  TAU, J, A, legs_out, jinv_out)
        if status != OK:
            return status + BATCH_SAMPLE * k
        for c in range(out.shape[0]):
            tau[k, c] = out[c]
    return OK


@jit_fma
def inverse_dynamics_rows(fp: Array, gm: Array, pl: Array, kind_: int, X: Array,
                          XD: Array, XDD: Array, g: Array, tau: Array) -> int:
    """:func:`platform_rows` with heap scratch."""
    work, Q, QD, QDD, TAU, J, A = _buffers(gm.shape[0])
    status: int = platform_rows(fp, gm, pl, kind_, X, XD, XDD, g, tau, work, Q, QD, QDD, TAU,
                                J, A, np.empty((0, LEG_OUT)), np.empty((0, JINV_OUT)),
                                np.empty(X.shape[1]), np.empty(XD.shape[1]),
                                np.empty(XDD.shape[1]), np.empty(tau.shape[1]))
    return status


@inline  # into forward_dynamics_rows: one compiled caller of platform_rows, not two
def platform_fd(fp: Array, gm: Array, pl: Array, kind_: int, x: Array, xd: Array,
                tau: Array, g: Array, g0: Array, xdd: Array, H: Array) -> int:
    """Platform acceleration ``xdd`` from the active forces ``tau`` (eq. 58, 66 inverted):
    ``Gamma = A_x(x) xdd + h(x, xd)``; ``h`` by one inverse dynamics at ``xdd = 0``,
    column ``k`` of ``A_x`` by one at zero velocity and gravity ``g0`` (zeros, of
    ``g``'s type) with ``xdd = e_k`` (Khalil §3.3.1's column-by-column construction),
    then one solve. ``H`` (nv, nv + 1) is scratch.
    """
    nv, nx, m = tau.shape[0], x.shape[0], gm.shape[0]
    work, Q, QD, QDD, TAU, J, A = _buffers(m)
    no_legs, no_jinv = np.empty((0, LEG_OUT)), np.empty((0, JINV_OUT))
    xb, xdb, xddb, out = np.empty(nx), np.empty(nv), np.empty(nv), np.empty(m)
    X, XD, ZERO = np.empty((1, nx)), np.empty((1, nv)), np.zeros((1, nv))
    UNIT, COL = np.zeros((1, nv)), np.empty((1, nv))
    for c in range(nx):
        X[0, c] = x[c]
    for c in range(nv):
        XD[0, c] = xd[c]
    status = platform_rows(fp, gm, pl, kind_, X, XD, UNIT, g, COL, work, Q, QD, QDD, TAU, J,
                           A, no_legs, no_jinv, xb, xdb, xddb, out)
    if status != OK:
        return status
    for r in range(nv):
        H[r, nv] = tau[r] - COL[0, r]
    for k in range(nv):
        UNIT[0, k] = 1.0
        status = platform_rows(fp, gm, pl, kind_, X, ZERO, UNIT, g0, COL, work, Q, QD, QDD,
                               TAU, J, A, no_legs, no_jinv, xb, xdb, xddb, out)
        UNIT[0, k] = 0.0
        if status != OK:
            return status
        for r in range(nv):
            H[r, k] = COL[0, r]
    if not solve_in_place(H, nv):
        return PLATFORM_SINGULAR * STATUS_LEG
    for r in range(nv):
        xdd[r] = H[r, nv]
    return OK


@jit_fma
def forward_dynamics_rows(fp: Array, gm: Array, pl: Array, kind_: int, X: Array,
                          XD: Array, TAU: Array, g: Array, g0: Array, XDD: Array) -> int:
    """:func:`platform_fd` over rows (``g0``: zero gravity, of ``g``'s type); status as
    :func:`platform_rows`."""
    nv = TAU.shape[1]
    H = np.empty((nv, nv + 1))
    for k in range(X.shape[0]):
        status: int = platform_fd(fp, gm, pl, kind_, X[k], XD[k], TAU[k], g, g0, XDD[k], H)
        if status != OK:
            return status + BATCH_SAMPLE * k
    return OK
