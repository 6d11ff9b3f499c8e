"""Compiled kernels of the closed-loop algorithms (Khalil 2010 §2.2 and §4).

Everything here works on arrays only: the tree's packed model ``fp`` (see
:mod:`rnea_ros.core._jit`), the packed loops ``lp`` (one row per loop, columns
``L_*`` below, built by :class:`~rnea_ros.core.coupling.loops.ClosedLoopModel`)
and ``perm`` (n,), the tree joints reordered as ``[active..., passive...]``.

**Cut-joint constraint.** Loop ``l`` joins frame 1 (on body ``b1``, Khalil's
``R_k`` at ``q_k = 0``) to frame 2 (on body ``b2``, Khalil's ``R_{k+B}``). Its
relative twist ``V_rel`` -- the body twist of frame 2 relative to frame 1,
``[v; w]`` in frame 2 at frame 2's origin -- must lie in the cut joint's
motion subspace; the blocked components are the rows ``ROWS[type]`` of
``[v_x, v_y, v_z, w_x, w_y, w_z]``: spherical ``v`` (3 rows), revolute
``v, w_x, w_y`` (5), prismatic ``v_x, v_y, w`` (5), weld all six. These rows
of ``V_rel = K qd`` are the loop's part of eq. 4 (``J_k qd_b1 = J_{k+B} qd_b2``
written for the blocked directions only: they are the screw equality ``0V_k =
0V_{k+B}`` projected where the cut joint transmits force).

* Position (eq. 3, ``^{k+B}T_j ... ^iT_k = I`` with the cut variable
  eliminated): :func:`residual` gives rows whose derivative is ``K qd`` at a
  closed configuration (``R2^T (p2 - p1)``; ``sin(angle) * axis`` of
  ``R1^T R2``; for a revolute cut the misalignment of ``z1`` seen from frame 2).
* Velocity: ``K = [K_a K_p]``, ``K_a qd_a + K_p qd_p = 0`` so
  ``qd_p = -K_p^+ K_a qd_a`` and ``G = dq_tr/dq_a = [1; -K_p^+ K_a]`` (eq. 56).
* Acceleration: ``d/dt (K qd) = K qdd + gamma = 0``; with the frames'
  spatial accelerations ``A1, A2`` at ``qdd = 0`` (bias) and ``X`` the motion
  transform frame 1 -> frame 2, ``gamma`` is the blocked rows of
  ``A2 - X A1 - V2 x V_rel`` (the last term from ``d/dt X = -V2 x X``).
* Inverse dynamics (eq. 55, 57): ``tau_tree = [tau_a; 0] + K^T lam``, so
  ``lam = K_p^{+T} tau_p`` and ``tau_a = tau_tree_a - K_a^T lam = G^T tau_tree``.
  ``lam`` is the wrench ``[f; n]`` exerted on link 2 by link 1 through the cut
  joint, in frame 2 at its origin (its blocked rows; the minimum-norm one when
  the constraints are redundant, e.g. a revolute cut in a planar loop).

``K_p`` (m, p) is factored by Householder QR (m >= p; redundant rows are
allowed: a planar loop's out-of-plane rows are zero), its column rank checked.
A per-call entry takes its work array from the stack (``_jit.scratch``) and
carves it up (:func:`views`); everything else is tuples.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numpy.typing import NDArray

from rnea_ros.core._jit import (
    F_AXIS,
    PRISMATIC,
    Mat,
    Motion,
    Vec,
    add3,
    cross,
    inertia_times,
    jit,
    jit_entry,
    joint_transform,
    kind,
    mat3,
    mcross,
    mm,
    mtv,
    mv,
    parent,
    put3,
    put9,
    scale3,
    scratch,
    sub3,
    to_child,
    vec3,
)
from rnea_ros.core.dynamics.rnea import backward_pass

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Packed loop columns.
L_BODY1, L_BODY2, L_TYPE, L_ROW, L_NROWS = 0, 1, 2, 3, 4
L_R1, L_P1, L_R2, L_P2 = 5, 14, 17, 26
L_SUPPORT = 29  # n columns: +1 joint moves body 2 only, -1 body 1 only, 0 both or neither
L_COLS = 29

SPHERICAL, REVOLUTE, PRISMATIC_CUT, WELD, PLANAR_REVOLUTE = 0, 1, 2, 3, 4
# Blocked components of [v; w] per cut-joint type. PLANAR_REVOLUTE: a revolute cut whose
# loop is planar (every loop joint revolute about an axis parallel to the cut's, or
# prismatic normal to it, a property the motion preserves): v_z, w_x, w_y vanish
# identically, the in-plane rows v_x, v_y remain.
ROWS = ((0, 1, 2), (0, 1, 2, 3, 4), (0, 1, 3, 4, 5), (0, 1, 2, 3, 4, 5), (0, 1))

# Newton status codes.
CLOSED, NOT_CONVERGED, SINGULAR, REVERSED = 0, 1, 2, 3
SINGULAR_RATIO = 1e-5  # min |R_kk| / |column k| of K_p below which K_p is singular: passive
# velocities amplified 1e5 times; at a fold, Newton's best closure leaves ~sqrt(eps) ~ 1e-6
POLISHED = 1e-15  # a residual within tol but above this gets one more Newton step

_W_R, _W_P = 0, 9  # pose columns of the (n, 12) pose array and of RNEA's work array
_W_W, _W_V, _W_DW, _W_A, _W_N, _W_F = 12, 15, 18, 21, 24, 27  # RNEA's work (dynamics.rnea)
_ZERO = (0.0, 0.0, 0.0)


# ------------------------------------------------------------------ geometry
@jit
def body_poses(fp: Array, q: Array, P: Array) -> None:
    """World poses of the bodies into ``P`` (n, 12): rotation (row-major), origin."""
    for i in range(q.shape[0]):
        Rl, pl = joint_transform(fp, i, q[i])
        par = parent(fp, i)
        if par < 0:
            put9(P, i, _W_R, Rl)
            put3(P, i, _W_P, pl)
        else:
            Rp = mat3(P, par, _W_R)
            put9(P, i, _W_R, mm(Rp, Rl))
            put3(P, i, _W_P, add3(vec3(P, par, _W_P), mv(Rp, pl)))


@jit
def frame_pose(lp: Array, P: Array, l: int, side: int) -> tuple[Mat, Vec]:
    """World pose of loop ``l``'s frame ``side`` (0: frame 1, 1: frame 2)."""
    b = int(lp[l, L_BODY1 + side])
    Rf = mat3(lp, l, L_R1 if side == 0 else L_R2)
    pf = vec3(lp, l, L_P1 if side == 0 else L_P2)
    if b < 0:
        return Rf, pf
    Rb = mat3(P, b, _W_R)
    return mm(Rb, Rf), add3(vec3(P, b, _W_P), mv(Rb, pf))


@jit
def relative_pose(lp: Array, P: Array, l: int) -> tuple[Mat, Vec, Mat, Vec]:
    """``(R_rel, p_rel, R2, p2)``: frame 2 in frame 1, and frame 2 in the world."""
    R1, p1 = frame_pose(lp, P, l, 0)
    R2, p2 = frame_pose(lp, P, l, 1)
    Rrel = (R1[0] * R2[0] + R1[3] * R2[3] + R1[6] * R2[6],
            R1[0] * R2[1] + R1[3] * R2[4] + R1[6] * R2[7],
            R1[0] * R2[2] + R1[3] * R2[5] + R1[6] * R2[8],
            R1[1] * R2[0] + R1[4] * R2[3] + R1[7] * R2[6],
            R1[1] * R2[1] + R1[4] * R2[4] + R1[7] * R2[7],
            R1[1] * R2[2] + R1[4] * R2[5] + R1[7] * R2[8],
            R1[2] * R2[0] + R1[5] * R2[3] + R1[8] * R2[6],
            R1[2] * R2[1] + R1[5] * R2[4] + R1[8] * R2[7],
            R1[2] * R2[2] + R1[5] * R2[5] + R1[8] * R2[8])
    return Rrel, mtv(R1, sub3(p2, p1)), R2, p2


@jit
def loop_poses(lp: Array, P: Array, F: Array) -> None:
    """Per loop into ``F`` (B, 24): ``R_rel, p_rel`` (frame 2 in frame 1) and ``R2, p2``
    (frame 2 in the world), computed once per configuration."""
    for l in range(lp.shape[0]):
        Rr, pr, R2, p2 = relative_pose(lp, P, l)
        put9(F, l, 0, Rr)
        put3(F, l, 9, pr)
        put9(F, l, 12, R2)
        put3(F, l, 21, p2)


@jit
def residual(lp: Array, F: Array, e: Array) -> int:
    """Constraint residual (eq. 3) into ``e`` (m,); returns the loop with the largest |row|.

    Rows: ``d = R2^T (p2 - p1)``; ``s = sin(angle) * axis`` of ``R_rel`` (half
    the skew part); revolute: ``(R_rel[2,1], -R_rel[2,0])``, the misalignment
    of ``z1`` seen from frame 2 (``(w_x, w_y)`` to first order).
    """
    worst, big = 0, -1.0
    for l in range(lp.shape[0]):
        Rr, pr = mat3(F, l, 0), vec3(F, l, 9)
        d = mtv(Rr, pr)  # R2^T (p2 - p1) = R_rel^T R1^T (p2 - p1)
        s = (0.5 * (Rr[7] - Rr[5]), 0.5 * (Rr[2] - Rr[6]), 0.5 * (Rr[3] - Rr[1]))
        t = int(lp[l, L_TYPE])
        if t == REVOLUTE or t == PLANAR_REVOLUTE:
            six = (d[0], d[1], d[2], Rr[7], -Rr[6], 0.0)
        else:
            six = (d[0], d[1], d[2], s[0], s[1], s[2])
        r0 = int(lp[l, L_ROW])
        for r in range(int(lp[l, L_NROWS])):
            x = six[_component(t, r)]
            e[r0 + r] = x
            if abs(x) > big or not x == x:
                big = abs(x) if x == x else np.inf
                worst = l
    return worst


@jit
def _component(t: int, r: int) -> int:
    """Component of ``[v; w]`` (0..5) of row ``r`` of a cut joint of type ``t``."""
    if t == PRISMATIC_CUT:
        return r if r < 2 else r + 1  # v_x, v_y, w
    return r  # spherical v; revolute v, w_x, w_y; weld v, w; planar revolute v_x, v_y


@jit
def reversed_loop(lp: Array, F: Array) -> int:
    """A closed loop whose cut joint closed upside down (revolute/prismatic axis
    reversed, weld/prismatic turned by more than 90 degrees), else -1."""
    for l in range(lp.shape[0]):
        t = int(lp[l, L_TYPE])
        Rr = mat3(F, l, 0)
        if (t == REVOLUTE or t == PLANAR_REVOLUTE) and Rr[8] < 0.0:
            return l
        if (t == PRISMATIC_CUT or t == WELD) and Rr[0] + Rr[4] + Rr[8] < 1.0:
            return l
    return -1


@jit
def constraint_jacobian(fp: Array, lp: Array, P: Array, F: Array, K: Array) -> None:
    """``K`` (m, n): blocked rows of ``V_rel`` per unit joint velocity (eq. 4).

    Joint ``j`` moving body 2's branch (sign +1) or body 1's (-1) moves the
    point at frame 2's origin with ``u x (p2 - o_j)`` and turns it with ``u``
    (revolute), or moves it with ``u`` (prismatic); both in frame 2 axes.
    """
    n = K.shape[1]
    for l in range(lp.shape[0]):
        R2, p2 = mat3(F, l, 12), vec3(F, l, 21)
        t = int(lp[l, L_TYPE])
        r0 = int(lp[l, L_ROW])
        nr = int(lp[l, L_NROWS])
        for j in range(n):
            sgn = lp[l, L_SUPPORT + j]
            if sgn == 0.0:
                for r in range(nr):
                    K[r0 + r, j] = 0.0
                continue
            u = mv(mat3(P, j, _W_R), vec3(fp, j, F_AXIS))
            if kind(fp, j) == PRISMATIC:
                w, v = _ZERO, u
            else:
                w, v = u, cross(u, sub3(p2, vec3(P, j, _W_P)))
            wl, vl = mtv(R2, w), mtv(R2, v)
            six = (vl[0], vl[1], vl[2], wl[0], wl[1], wl[2])
            for r in range(nr):
                K[r0 + r, j] = sgn * six[_component(t, r)]


# --------------------------------------------------------------- QR of K_p
@jit
def qr_factor(A: Array, rows: int, cols: int, rdiag: Array, tau: Array) -> float:
    """Householder QR of ``A[:rows, :cols]`` in place (reflectors below the diagonal,
    ``R``'s strict upper part above it, its diagonal in ``rdiag``, scales in ``tau``).

    Returns ``min_k |R_kk| / |A[:, k]|`` (0: rank deficient): how far the columns
    are from dependent, whatever their units.
    """
    smallest = np.inf
    for k in range(cols):
        s = 0.0
        for i in range(rows):
            s += A[i, k] * A[i, k]
        tau[k] = math.sqrt(s)  # column norm, until the reflector's scale replaces it
    for k in range(cols):
        norm2 = 0.0
        for i in range(k, rows):
            norm2 += A[i, k] * A[i, k]
        norm = math.sqrt(norm2)
        if norm == 0.0:
            rdiag[k] = 0.0
            tau[k] = 0.0
            smallest = 0.0
            continue
        smallest = min(smallest, norm / tau[k])
        alpha = -norm if A[k, k] >= 0.0 else norm
        v0 = A[k, k] - alpha
        A[k, k] = v0
        tk = -1.0 / (alpha * v0)  # 2 / v^T v, v^T v = -2 alpha v0
        tau[k] = tk
        rdiag[k] = alpha
        for j in range(k + 1, cols):
            dot = 0.0
            for i in range(k, rows):
                dot += A[i, k] * A[i, j]
            dot *= tk
            for i in range(k, rows):
                A[i, j] -= dot * A[i, k]
    return smallest


@jit
def qr_solve(A: Array, rows: int, cols: int, rdiag: Array, tau: Array, b: Array,
             x: Array) -> None:
    """Least squares ``min |A x - b|`` with the factors of :func:`qr_factor`;
    ``b`` (rows,) is overwritten by ``Q^T b``."""
    for k in range(cols):
        if tau[k] == 0.0:
            continue
        dot = 0.0
        for i in range(k, rows):
            dot += A[i, k] * b[i]
        dot *= tau[k]
        for i in range(k, rows):
            b[i] -= dot * A[i, k]
    for k in range(cols - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, cols):
            s -= A[k, j] * x[j]
        x[k] = s / rdiag[k]


@jit
def qr_transpose_solve(A: Array, rows: int, cols: int, rdiag: Array, tau: Array,
                       y: Array, z: Array) -> None:
    """``z = A^{+T} y`` (rows,): ``R^T w = y``, then ``z = Q [w; 0]`` (minimum norm)."""
    for k in range(cols):
        s = y[k]
        for j in range(k):
            s -= A[j, k] * z[j]
        z[k] = s / rdiag[k]
    for i in range(cols, rows):
        z[i] = 0.0
    for k in range(cols - 1, -1, -1):
        if tau[k] == 0.0:
            continue
        dot = 0.0
        for i in range(k, rows):
            dot += A[i, k] * z[i]
        dot *= tau[k]
        for i in range(k, rows):
            z[i] -= dot * A[i, k]


@jit
def factor_passive(K: Array, perm: IntArray, na: int, A: Array, rdiag: Array,
                   tau: Array) -> float:
    """Copy ``K_p`` (columns ``perm[na:]``) into ``A`` and factor it; the rank measure."""
    m = K.shape[0]
    p = perm.shape[0] - na
    for c in range(p):
        j = perm[na + c]
        for r in range(m):
            A[r, c] = K[r, j]
    return qr_factor(A, m, p, rdiag, tau)


@jit
def solve_passive(K: Array, perm: IntArray, na: int, xa: Array, extra: Array, use_extra: bool,
                  A: Array, rdiag: Array, tau: Array, b: Array, xp: Array) -> None:
    """``xp = -K_p^+ (K_a xa + extra)``: passive rates from active ones (eq. 4)."""
    m = K.shape[0]
    for r in range(m):
        s = extra[r] if use_extra else 0.0
        for c in range(na):
            s += K[r, perm[c]] * xa[c]
        b[r] = s
    qr_solve(A, m, perm.shape[0] - na, rdiag, tau, b, xp)
    for c in range(xp.shape[0]):
        xp[c] = -xp[c]


# ----------------------------------------------------------------- passes
@jit
def pose_pass(fp: Array, q: Array, work: Array, P: Array) -> None:
    """Joint transforms into ``work[:, 0:12]`` (RNEA's layout, read by :func:`motion_pass`
    and ``rnea.backward_pass``) and world poses into ``P`` (n, 12): one sin/cos per joint."""
    for i in range(q.shape[0]):
        Rl, pl = joint_transform(fp, i, q[i])
        put9(work, i, _W_R, Rl)
        put3(work, i, _W_P, pl)
        par = parent(fp, i)
        if par < 0:
            put9(P, i, _W_R, Rl)
            put3(P, i, _W_P, pl)
        else:
            Rp = mat3(P, par, _W_R)
            put9(P, i, _W_R, mm(Rp, Rl))
            put3(P, i, _W_P, add3(vec3(P, par, _W_P), mv(Rp, pl)))


@jit
def motion_pass(fp: Array, qd: Array, qdd: Array, a0: Vec, work: Array) -> None:
    """RNEA's forward pass (``rnea.forward_pass``) on the transforms already in ``work``:
    body velocities, accelerations and forces, the base at rest accelerating by ``a0``."""
    for i in range(qd.shape[0]):
        R = mat3(work, i, _W_R)
        p = vec3(work, i, _W_P)
        par = parent(fp, i)
        if par < 0:
            w_p, v_p, dw_p, a_p = _ZERO, _ZERO, _ZERO, a0
        else:
            w_p, v_p = vec3(work, par, _W_W), vec3(work, par, _W_V)
            dw_p, a_p = vec3(work, par, _W_DW), vec3(work, par, _W_A)
        w = mtv(R, w_p)
        v = mtv(R, add3(v_p, cross(w_p, p)))
        dw = mtv(R, dw_p)
        a = mtv(R, add3(a_p, cross(dw_p, p)))
        u = vec3(fp, i, F_AXIS)
        s = scale3(u, qd[i])
        if kind(fp, i) != PRISMATIC:
            w = add3(w, s)
            dw = add3(dw, add3(scale3(u, qdd[i]), cross(w, s)))
            a = add3(a, cross(v, s))
        else:
            v = add3(v, s)
            a = add3(a, add3(scale3(u, qdd[i]), cross(w, s)))
        n1, f1 = inertia_times(fp, i, dw, a)
        n2, f2 = inertia_times(fp, i, w, v)
        put3(work, i, _W_W, w)
        put3(work, i, _W_V, v)
        put3(work, i, _W_DW, dw)
        put3(work, i, _W_A, a)
        put3(work, i, _W_N, add3(n1, add3(cross(w, n2), cross(v, f2))))
        put3(work, i, _W_F, add3(f1, cross(w, f2)))


@jit
def add_accelerations(fp: Array, dqdd: Array, work: Array, D: Array) -> None:
    """Add joint accelerations ``dqdd`` (n,) to the pass in ``work``: the forward pass is
    affine in ``qdd``, so each body's acceleration grows by ``X dA_parent + S dqdd`` and
    its force by ``I dA`` (``D`` (n, 6) holds the ``dA``)."""
    for i in range(dqdd.shape[0]):
        R = mat3(work, i, _W_R)
        p = vec3(work, i, _W_P)
        par = parent(fp, i)
        if par < 0:
            ddw, da = _ZERO, _ZERO
        else:
            ddw_p, da_p = vec3(D, par, 0), vec3(D, par, 3)
            ddw = mtv(R, ddw_p)
            da = mtv(R, add3(da_p, cross(ddw_p, p)))
        x = dqdd[i]
        if x != 0.0:
            if kind(fp, i) != PRISMATIC:
                ddw = add3(ddw, scale3(vec3(fp, i, F_AXIS), x))
            else:
                da = add3(da, scale3(vec3(fp, i, F_AXIS), x))
        put3(D, i, 0, ddw)
        put3(D, i, 3, da)
        n1, f1 = inertia_times(fp, i, ddw, da)
        put3(work, i, _W_N, add3(vec3(work, i, _W_N), n1))
        put3(work, i, _W_F, add3(vec3(work, i, _W_F), f1))


@jit
def frame_motion(lp: Array, work: Array, l: int, side: int, col: int, base: Vec) -> Motion:
    """Body motion ``(w, v)`` at work columns ``col`` (velocity or acceleration) moved
    to loop ``l``'s frame ``side``: ``(R_f^T w, R_f^T (v + w x p_f))``; a frame on the
    base moves with the base's ``(0, base)``."""
    b = int(lp[l, L_BODY1 + side])
    Rf = mat3(lp, l, L_R1 if side == 0 else L_R2)
    if b < 0:
        return _ZERO, mtv(Rf, base)
    pf = vec3(lp, l, L_P1 if side == 0 else L_P2)
    w, v = vec3(work, b, col), vec3(work, b, col + 3)
    return mtv(Rf, w), mtv(Rf, add3(v, cross(w, pf)))


@jit
def relative_acceleration(lp: Array, F: Array, work: Array, a0: Vec, r: Array) -> None:
    """``r`` (m,) = ``K qdd + Kdot qd`` at the pass in ``work``: the blocked rows of
    ``A2 - X A1 - V2 x V_rel`` (the base's acceleration ``a0``, e.g. gravity, moves both
    frames alike and cancels)."""
    for l in range(lp.shape[0]):
        Rr, pr = mat3(F, l, 0), vec3(F, l, 9)
        V1 = frame_motion(lp, work, l, 0, _W_W, _ZERO)
        A1 = frame_motion(lp, work, l, 0, _W_DW, a0)
        V2 = frame_motion(lp, work, l, 1, _W_W, _ZERO)
        A2 = frame_motion(lp, work, l, 1, _W_DW, a0)
        XV1 = to_child(Rr, pr, V1)
        XA1 = to_child(Rr, pr, A1)
        Vrel = (sub3(V2[0], XV1[0]), sub3(V2[1], XV1[1]))
        c = mcross(V2, Vrel)
        g_w = sub3(sub3(A2[0], XA1[0]), c[0])
        g_v = sub3(sub3(A2[1], XA1[1]), c[1])
        six = (g_v[0], g_v[1], g_v[2], g_w[0], g_w[1], g_w[2])
        t = int(lp[l, L_TYPE])
        r0 = int(lp[l, L_ROW])
        for k in range(int(lp[l, L_NROWS])):
            r[r0 + k] = six[_component(t, k)]


# --------------------------------------------------------------- Newton
@jit
def newton(fp: Array, lp: Array, perm: IntArray, na: int, q: Array, tol: float,
           max_iter: int, max_step: float) -> tuple[int, int, int, float, float]:
    """Close the loops by moving the passive joints of ``q`` (in place): damped Newton
    (Levenberg-Marquardt, ``mu = |e|^2``) on the residual of eq. 3 with ``K_p``;
    once within ``tol``, one more step polishes the solution to rounding level.

    Returns ``(status, iterations, worst loop, max |e|, rank measure of K_p)``;
    status ``CLOSED``, ``NOT_CONVERGED``, ``SINGULAR`` (closed, but ``K_p`` is
    rank deficient there) or ``REVERSED`` (closed with a cut axis reversed).
    """
    n = q.shape[0]
    m = int(lp[lp.shape[0] - 1, L_ROW] + lp[lp.shape[0] - 1, L_NROWS])
    p = n - na
    P = np.empty((n, 12))
    F = np.empty((lp.shape[0], 24))
    e = np.empty(m)
    K = np.empty((m, n))
    A = np.empty((m + p, p))
    rdiag = np.empty(p)
    tau = np.empty(p)
    b = np.empty(m + p)
    dx = np.empty(p)
    err = np.inf
    worst = 0
    polished = False
    for it in range(max_iter + 1):
        body_poses(fp, q, P)
        loop_poses(lp, P, F)
        worst = residual(lp, F, e)
        err = 0.0
        for r in range(m):
            err = max(err, abs(e[r]))
        if not err < np.inf:
            return NOT_CONVERGED, it, worst, err, 0.0
        constraint_jacobian(fp, lp, P, F, K)
        if err <= tol and (polished or err <= POLISHED or it == max_iter):
            rank = factor_passive(K, perm, na, A, rdiag, tau)
            if rank < SINGULAR_RATIO:
                return SINGULAR, it, worst, err, rank
            flip = reversed_loop(lp, F)
            if flip >= 0:
                return REVERSED, it, flip, err, rank
            return CLOSED, it, worst, err, rank
        if it == max_iter:
            break
        polished = err <= tol  # one more step from within tol: quadratic convergence
        for c in range(p):  # [K_p; sqrt(mu) 1] dx = [e; 0]
            j = perm[na + c]
            for r in range(m):
                A[r, c] = K[r, j]
            for r in range(p):
                A[m + r, c] = err if r == c else 0.0  # sqrt(mu) = |e|_inf
            dx[c] = 0.0
        for r in range(m):
            b[r] = e[r]
        for r in range(p):
            b[m + r] = 0.0
        qr_factor(A, m + p, p, rdiag, tau)
        qr_solve(A, m + p, p, rdiag, tau, b, dx)
        big = 0.0
        for c in range(p):
            big = max(big, abs(dx[c]))
        shrink = max_step / big if big > max_step else 1.0
        for c in range(p):
            q[perm[na + c]] -= shrink * dx[c]
    body_poses(fp, q, P)
    loop_poses(lp, P, F)
    worst = residual(lp, F, e)
    constraint_jacobian(fp, lp, P, F, K)
    rank = factor_passive(K, perm, na, A, rdiag, tau)
    return NOT_CONVERGED, max_iter, worst, err, rank


@jit_entry
def newton_call(fp: Array, lp: Array, perm: IntArray, na: int, q: Array, tol: float,
                max_iter: int, max_step: float, info: Array) -> int:
    """Entry point of :func:`newton`: ``info`` (4,) gets iterations, worst loop,
    residual and rank measure; returns the status."""
    status, it, worst, err, rank = newton(fp, lp, perm, na, q, tol, max_iter, max_step)
    info[0] = it
    info[1] = worst
    info[2] = err
    info[3] = rank
    return status


# ------------------------------------------------------------ kinematics
WS_COLS = 32  # columns of the per-call scratch (a compile-time constant for _jit.scratch)


@intrinsic
def _carve(typingctx: Any, buf: Any, offset: Any, rows: Any, cols: Any) -> Any:
    """A C-contiguous ``(rows, cols)`` float64 view of ``buf``'s data from element
    ``offset`` on: the array struct filled in directly (no reshape checks, no
    meminfo: valid while ``buf`` is, like :func:`~rnea_ros.core._jit.scratch`)."""
    if not isinstance(buf, types.Array) or buf.dtype != types.float64 or buf.layout != "C":
        return None
    aryty = types.Array(types.float64, 2, "C")

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        src = make_array(signature.args[0])(context, builder, args[0])  # type: ignore[no-untyped-call]
        intp = context.get_value_type(types.intp)
        off, nrows, ncols = (context.cast(builder, args[k], signature.args[k], types.intp)
                             for k in (1, 2, 3))
        eight = ir.Constant(intp, 8)
        ary = make_array(aryty)(context, builder)  # type: ignore[no-untyped-call]
        populate_array(  # type: ignore[no-untyped-call]
            ary, data=builder.gep(src.data, [off]), shape=[nrows, ncols],
            strides=[builder.mul(ncols, eight), eight], itemsize=eight, meminfo=None)
        return ary._getvalue()

    return aryty(buf, offset, rows, cols), codegen


@jit
def workspace_rows(n: int, m: int, p: int, loops: int) -> int:
    """Rows of the ``(rows, WS_COLS)`` scratch :func:`views` and :func:`state_views`
    carve up."""
    size = 52 * n + m * n + m * p + 2 * m + 4 * p + 24 * loops  # views + state_views
    return (size + WS_COLS - 1) // WS_COLS


@jit
def views(buf: Array, n: int, m: int, p: int, loops: int
          ) -> tuple[Array, Array, Array, Array, Array, Array, Array, Array, Array, Array,
                     Array, Array]:
    """``(work (n, 30), P (n, 12), D (n, 6), F (B, 24), K (m, n), A (m, p), b (m,), rdiag,
    tau, xp (p,), tree, extra (n,))`` carved from the scratch ``buf`` (valid while it is)."""
    o = 48 * n + 24 * loops
    K = _carve(buf, o, m, n)
    o += m * n
    A = _carve(buf, o, m, p)
    o += m * p
    vectors = _carve(buf, o, 1, m + 4 * p + 2 * n)[0]
    b = vectors[0:m]
    rdiag = vectors[m:m + p]
    tau = vectors[m + p:m + 2 * p]
    xp = vectors[m + 2 * p:m + 3 * p]
    o = m + 4 * p
    return (_carve(buf, 0, n, 30), _carve(buf, 30 * n, n, 12), _carve(buf, 42 * n, n, 6),
            _carve(buf, 48 * n, loops, 24), K, A, b, rdiag, tau, xp, vectors[o:o + n],
            vectors[o + n:o + 2 * n])


@jit
def state_views(buf: Array, n: int, m: int, p: int, loops: int) -> tuple[Array, Array, Array]:
    """``(qd, qdd (n,), lam (m,))`` after :func:`views`' arrays in ``buf``."""
    o = 48 * n + 24 * loops + m * n + m * p + m + 4 * p + 2 * n
    v = _carve(buf, o, 1, 2 * n + m)[0]
    return v[0:n], v[n:2 * n], v[2 * n:2 * n + m]


@jit
def closed_state(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                 a0: Vec, closure_tol: float, want_acc: bool, qd: Array, qdd: Array,
                 buf: Array) -> float:
    """The consistent tree state at a closed ``q``: ``qd`` from eq. 4, ``qdd`` from its
    derivative (if ``want_acc``). Leaves in ``buf`` (:func:`views`) the poses, ``K``,
    ``K_p``'s QR and RNEA's forward pass at ``qdd = [qdd_a; 0]`` with base acceleration
    ``a0``. Returns the rank measure (below :data:`SINGULAR_RATIO`: singular, rates not
    computed) or ``-1 - l`` if loop ``l``'s error exceeds ``closure_tol`` (``K`` filled)."""
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    m = int(lp[lp.shape[0] - 1, L_ROW] + lp[lp.shape[0] - 1, L_NROWS])
    work, P, _, F, K, A, b, rdiag, tau, xp, _, _ = views(buf, n, m, p, lp.shape[0])
    pose_pass(fp, q, work, P)
    loop_poses(lp, P, F)
    constraint_jacobian(fp, lp, P, F, K)
    worst = residual(lp, F, b)
    for r in range(m):
        if not abs(b[r]) <= closure_tol:
            return -1.0 - worst
    rank = factor_passive(K, perm, na, A, rdiag, tau)
    if rank < SINGULAR_RATIO:
        return rank
    solve_passive(K, perm, na, qda, b, False, A, rdiag, tau, b, xp)
    for c in range(na):
        qd[perm[c]] = qda[c]
        qdd[perm[c]] = qdda[c]
    for c in range(p):
        qd[perm[na + c]] = xp[c]
        qdd[perm[na + c]] = 0.0
    if want_acc:
        motion_pass(fp, qd, qdd, a0, work)
        relative_acceleration(lp, F, work, a0, b)  # K_a qdd_a + gamma
        qr_solve(A, m, p, rdiag, tau, b, xp)
        for c in range(p):
            qdd[perm[na + c]] = -xp[c]
    return rank


@jit
def inverse_dynamics(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                     g: Array, closure_tol: float, tau_a: Array, qd: Array, qdd: Array,
                     lam: Array, buf: Array) -> float:
    """``tau_a = G^T tau_tree(q, qd, qdd)`` (eq. 55/57) and the cut wrenches ``lam`` (m,).

    One pose pass, one forward pass at ``qdd = [qdd_a; 0]`` (with gravity), the passive
    accelerations added by :func:`add_accelerations`, RNEA's backward pass. Armature
    and friction of every tree joint are included (Khalil eq. 31: the passive joints'
    too, projected by ``G^T``). ``qd``, ``qdd`` (n,) receive the consistent tree
    rates. Returns the rank measure of ``K_p`` (below :data:`SINGULAR_RATIO`: nothing
    computed), ``-1 - l`` if ``q`` does not close loop ``l``, or NaN for a
    non-finite result.
    """
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    m = lam.shape[0]
    a0 = (-g[0], -g[1], -g[2])
    rank = closed_state(fp, lp, perm, q, qda, qdda, a0, closure_tol, True, qd, qdd, buf)
    if rank < SINGULAR_RATIO:
        return rank
    work, _, D, _, K, A, _, rdiag, tau, xp, tree, extra = views(buf, n, m, p, lp.shape[0])
    for j in range(n):
        extra[j] = 0.0
    for c in range(p):
        extra[perm[na + c]] = qdd[perm[na + c]]
    add_accelerations(fp, extra, work, D)
    ok = backward_pass(fp, qd, qdd, True, tree, work)
    for c in range(p):
        xp[c] = tree[perm[na + c]]
    qr_transpose_solve(A, m, p, rdiag, tau, xp, lam)
    total = 0.0
    for c in range(na):
        j = perm[c]
        s = tree[j]
        for r in range(m):
            s -= K[r, j] * lam[r]
        tau_a[c] = s
        total += s
    if not (ok and np.isfinite(total)):
        return np.nan
    return rank


@jit_entry
def inverse_dynamics_call(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array,
                          qdda: Array, g: Array, closure_tol: float, tau_a: Array, qd: Array,
                          qdd: Array, lam: Array) -> float:
    """The per-call entry of :func:`inverse_dynamics` (lengths checked: NaN if wrong);
    its work array is on the stack."""
    n = fp.shape[0]
    na = tau_a.shape[0]
    m = lam.shape[0]
    if (q.shape[0] != n or qda.shape[0] != na or qdda.shape[0] != na or qd.shape[0] != n
            or qdd.shape[0] != n or g.shape[0] != 3 or perm.shape[0] != n or na >= n):
        return np.nan
    buf = scratch(workspace_rows(n, m, n - na, lp.shape[0]), WS_COLS)
    return inverse_dynamics(fp, lp, perm, q, qda, qdda, g, closure_tol, tau_a, qd, qdd, lam,
                            buf)


@jit_entry
def loop_rnea_call(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                   g: Array, closure_tol: float, tau_a: Array) -> float:
    """The 1 kHz entry: :func:`inverse_dynamics` with ``tau_a`` the only output (the tree
    rates and wrenches stay in the stack scratch); NaN for wrong lengths."""
    n = fp.shape[0]
    na = tau_a.shape[0]
    if (q.shape[0] != n or qda.shape[0] != na or qdda.shape[0] != na or g.shape[0] != 3
            or perm.shape[0] != n or na >= n):
        return np.nan
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    buf = scratch(workspace_rows(n, m, n - na, loops), WS_COLS)
    qd, qdd, lam = state_views(buf, n, m, n - na, loops)
    return inverse_dynamics(fp, lp, perm, q, qda, qdda, g, closure_tol, tau_a, qd, qdd, lam,
                            buf)


@jit
def inverse_dynamics_rows(fp: Array, lp: Array, perm: IntArray, Q: Array, QDA: Array,
                          QDDA: Array, g: Array, closure_tol: float, TAU: Array, LAM: Array
                          ) -> tuple[int, float]:
    """:func:`inverse_dynamics` over the rows of ``Q`` (N, n), one work array; returns
    ``(k, code)``: the first failing row (-1: none) and its code (see above)."""
    n = Q.shape[1]
    na = QDA.shape[1]
    qd = np.empty(n)
    qdd = np.empty(n)
    buf = np.empty((workspace_rows(n, LAM.shape[1], n - na, lp.shape[0]), WS_COLS))
    for k in range(Q.shape[0]):
        rank = inverse_dynamics(fp, lp, perm, Q[k], QDA[k], QDDA[k], g, closure_tol, TAU[k],
                                qd, qdd, LAM[k], buf)
        if not rank >= SINGULAR_RATIO:
            return k, rank
    return -1, 1.0


@jit
def kinematics_call(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                    want_acc: bool, closure_tol: float, qd: Array, qdd: Array, K: Array,
                    G: Array, want_g: bool) -> float:
    """Entry for the analysis functions: ``qd``, ``qdd`` (n,), ``K`` (m, n) and, if
    ``want_g``, ``G`` (n, na) = dq_tr/dq_a (eq. 56). Returns the code of
    :func:`closed_state`."""
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    m = K.shape[0]
    buf = np.empty((workspace_rows(n, m, p, lp.shape[0]), WS_COLS))
    rank = closed_state(fp, lp, perm, q, qda, qdda, _ZERO, closure_tol, want_acc, qd, qdd,
                        buf)
    _, _, _, _, Kw, A, b, rdiag, tau, xp, _, _ = views(buf, n, m, p, lp.shape[0])
    for r in range(m):
        for j in range(n):
            K[r, j] = Kw[r, j]
    if rank < SINGULAR_RATIO or not want_g:
        return rank
    unit = np.zeros(na)
    for c in range(na):
        unit[c] = 1.0
        solve_passive(Kw, perm, na, unit, b, False, A, rdiag, tau, b, xp)
        unit[c] = 0.0
        for r in range(na):
            G[perm[r], c] = 1.0 if r == c else 0.0
        for r in range(p):
            G[perm[na + r], c] = xp[r]
    return rank


@jit
def residual_call(fp: Array, lp: Array, q: Array, e: Array) -> int:
    """Entry: the residual (m,) of eq. 3 at ``q``; returns the worst loop."""
    P = np.empty((q.shape[0], 12))
    F = np.empty((lp.shape[0], 24))
    body_poses(fp, q, P)
    loop_poses(lp, P, F)
    return residual(lp, F, e)


__all__ = [
    "CLOSED",
    "L_COLS",
    "NOT_CONVERGED",
    "REVERSED",
    "ROWS",
    "SINGULAR",
    "SINGULAR_RATIO",
    "inverse_dynamics_call",
    "inverse_dynamics_rows",
    "kinematics_call",
    "loop_rnea_call",
    "newton_call",
    "residual_call",
]
