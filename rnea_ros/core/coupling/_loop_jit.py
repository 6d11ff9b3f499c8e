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
Work arrays are allocated per call; everything else is tuples.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._jit import (
    F_AXIS,
    PRISMATIC,
    Mat,
    Motion,
    Vec,
    add3,
    cross,
    fixed_base,
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
    sub3,
    to_child,
    vec3,
)
from rnea_ros.core.dynamics.rnea import forward_pass, rnea_pass

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Packed loop columns.
L_BODY1, L_BODY2, L_TYPE, L_ROW, L_NROWS = 0, 1, 2, 3, 4
L_R1, L_P1, L_R2, L_P2 = 5, 14, 17, 26
L_SUPPORT = 29  # n columns: +1 joint moves body 2 only, -1 body 1 only, 0 both or neither
L_COLS = 29

SPHERICAL, REVOLUTE, PRISMATIC_CUT, WELD = 0, 1, 2, 3
# Blocked components of [v; w] per cut-joint type.
ROWS = ((0, 1, 2), (0, 1, 2, 3, 4), (0, 1, 3, 4, 5), (0, 1, 2, 3, 4, 5))
ROW_CODES = np.array([[0, 1, 2, -1, -1, -1], [0, 1, 2, 3, 4, -1], [0, 1, 3, 4, 5, -1],
                      [0, 1, 2, 3, 4, 5]], dtype=np.int64)

# Newton status codes.
CLOSED, NOT_CONVERGED, SINGULAR, REVERSED = 0, 1, 2, 3
SINGULAR_RATIO = 1e-5  # min |R_kk| / |column k| of K_p below which K_p is singular: passive
# velocities amplified 1e5 times; at a fold, Newton's best closure leaves ~sqrt(eps) ~ 1e-6
POLISHED = 1e-15  # a residual within tol but above this gets one more Newton step

_W_R, _W_P = 0, 9  # pose columns of the (n, 12) pose array
_W_W, _W_V, _W_DW, _W_A = 12, 15, 18, 21  # rnea work columns (see dynamics.rnea)
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
def residual(lp: Array, P: Array, e: Array) -> int:
    """Constraint residual (eq. 3) into ``e`` (m,); returns the loop with the largest |row|.

    Rows: ``d = R2^T (p2 - p1)``; ``s = sin(angle) * axis`` of ``R_rel`` (half
    the skew part); revolute: ``(R_rel[2,1], -R_rel[2,0])``, the misalignment
    of ``z1`` seen from frame 2 (``(w_x, w_y)`` to first order).
    """
    worst, big = 0, -1.0
    for l in range(lp.shape[0]):
        Rr, pr, _, _ = relative_pose(lp, P, l)
        d = mtv(Rr, pr)  # R2^T (p2 - p1) = R_rel^T R1^T (p2 - p1)
        s = (0.5 * (Rr[7] - Rr[5]), 0.5 * (Rr[2] - Rr[6]), 0.5 * (Rr[3] - Rr[1]))
        t = int(lp[l, L_TYPE])
        if t == REVOLUTE:
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
    if t == SPHERICAL or t == WELD:
        return r
    if t == REVOLUTE:
        return r  # v, w_x, w_y
    return r if r < 2 else r + 1  # prismatic: v_x, v_y, w


@jit
def reversed_loop(lp: Array, P: Array) -> int:
    """A closed loop whose cut joint closed upside down (revolute/prismatic axis
    reversed, weld/prismatic turned by more than 90 degrees), else -1."""
    for l in range(lp.shape[0]):
        t = int(lp[l, L_TYPE])
        Rr, _, _, _ = relative_pose(lp, P, l)
        if t == REVOLUTE and Rr[8] < 0.0:
            return l
        if (t == PRISMATIC_CUT or t == WELD) and Rr[0] + Rr[4] + Rr[8] < 1.0:
            return l
    return -1


@jit
def constraint_jacobian(fp: Array, lp: Array, P: Array, K: Array) -> None:
    """``K`` (m, n): blocked rows of ``V_rel`` per unit joint velocity (eq. 4).

    Joint ``j`` moving body 2's branch (sign +1) or body 1's (-1) moves the
    point at frame 2's origin with ``u x (p2 - o_j)`` and turns it with ``u``
    (revolute), or moves it with ``u`` (prismatic); both in frame 2 axes.
    """
    n = K.shape[1]
    for l in range(lp.shape[0]):
        R2, p2 = frame_pose(lp, P, l, 1)
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


# ----------------------------------------------------------- acceleration
@jit
def frame_motion(lp: Array, work: Array, l: int, side: int, col: int) -> Motion:
    """Body motion ``(w, v)`` at work columns ``col`` (velocity or acceleration) moved
    to loop ``l``'s frame ``side``: ``(R_f^T w, R_f^T (v + w x p_f))``."""
    b = int(lp[l, L_BODY1 + side])
    if b < 0:
        return _ZERO, _ZERO
    Rf = mat3(lp, l, L_R1 if side == 0 else L_R2)
    pf = vec3(lp, l, L_P1 if side == 0 else L_P2)
    w, v = vec3(work, b, col), vec3(work, b, col + 3)
    return mtv(Rf, w), mtv(Rf, add3(v, cross(w, pf)))


@jit
def loop_bias(lp: Array, P: Array, work: Array, gamma: Array) -> None:
    """``gamma`` (m,) = Kdot qd: the blocked rows of ``A2 - X A1 - V2 x V_rel`` with the
    bodies' velocities and ``qdd = 0`` accelerations (no gravity) in ``work``."""
    for l in range(lp.shape[0]):
        Rr, pr, _, _ = relative_pose(lp, P, l)
        V1 = frame_motion(lp, work, l, 0, _W_W)
        A1 = frame_motion(lp, work, l, 0, _W_DW)
        V2 = frame_motion(lp, work, l, 1, _W_W)
        A2 = frame_motion(lp, work, l, 1, _W_DW)
        XV1 = to_child(Rr, pr, V1)
        XA1 = to_child(Rr, pr, A1)
        Vrel = (sub3(V2[0], XV1[0]), sub3(V2[1], XV1[1]))
        c = mcross(V2, Vrel)
        g_w = sub3(sub3(A2[0], XA1[0]), c[0])
        g_v = sub3(sub3(A2[1], XA1[1]), c[1])
        six = (g_v[0], g_v[1], g_v[2], g_w[0], g_w[1], g_w[2])
        t = int(lp[l, L_TYPE])
        r0 = int(lp[l, L_ROW])
        for r in range(int(lp[l, L_NROWS])):
            gamma[r0 + r] = six[_component(t, r)]


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
        worst = residual(lp, P, e)
        err = 0.0
        for r in range(m):
            err = max(err, abs(e[r]))
        if not err < np.inf:
            return NOT_CONVERGED, it, worst, err, 0.0
        constraint_jacobian(fp, lp, P, K)
        if err <= tol and (polished or err <= POLISHED or it == max_iter):
            rank = factor_passive(K, perm, na, A, rdiag, tau)
            if rank < SINGULAR_RATIO:
                return SINGULAR, it, worst, err, rank
            flip = reversed_loop(lp, P)
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
    worst = residual(lp, P, e)
    constraint_jacobian(fp, lp, P, K)
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
@jit
def kinematics(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
               want_acc: bool, closure_tol: float, qd: Array, qdd: Array, K: Array, A: Array,
               rdiag: Array, tau: Array, b: Array, work: Array) -> float:
    """Passive rates at a closed ``q``: ``qd`` (eq. 4), ``qdd`` (its derivative) if
    ``want_acc``; ``K`` and ``K_p``'s QR stay in their arrays. Returns the rank measure
    (below :data:`SINGULAR_RATIO`: singular, ``qd``/``qdd`` not computed), or
    ``-1 - l`` if loop ``l``'s constraint error exceeds ``closure_tol`` (``K`` is
    filled in every case)."""
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    P = work[:, 0:12]
    body_poses(fp, q, P)
    constraint_jacobian(fp, lp, P, K)
    worst = residual(lp, P, b)
    for r in range(K.shape[0]):
        if not abs(b[r]) <= closure_tol:
            return -1.0 - worst
    rank = factor_passive(K, perm, na, A, rdiag, tau)
    if rank < SINGULAR_RATIO:
        return rank
    xp = np.empty(p)
    solve_passive(K, perm, na, qda, b, False, A, rdiag, tau, b, xp)
    for c in range(na):
        qd[perm[c]] = qda[c]
    for c in range(p):
        qd[perm[na + c]] = xp[c]
    if want_acc:
        m = K.shape[0]
        rnea_work = np.empty((n, 30))
        zero = np.zeros(n)
        zero3 = np.zeros(3)
        forward_pass(fp, q, qd, zero, fixed_base(zero3), rnea_work[:0], False, rnea_work)
        gamma = np.empty(m)
        loop_bias(lp, P, rnea_work, gamma)
        solve_passive(K, perm, na, qdda, gamma, True, A, rdiag, tau, b, xp)
        for c in range(na):
            qdd[perm[c]] = qdda[c]
        for c in range(p):
            qdd[perm[na + c]] = xp[c]
    return rank


@jit
def inverse_dynamics(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                     g: Array, closure_tol: float, tau_a: Array, qd: Array, qdd: Array,
                     lam: Array) -> float:
    """``tau_a = G^T tau_tree(q, qd, qdd)`` (eq. 55/57) and the cut wrenches ``lam`` (m,).

    Armature and friction of every tree joint are included (Khalil eq. 31: the
    passive joints' too, projected by ``G^T``). ``qd``, ``qdd`` (n,) receive the
    consistent tree rates. Returns the rank measure of ``K_p`` (below
    :data:`SINGULAR_RATIO`: nothing computed), ``-1 - l`` if ``q`` does not close
    loop ``l``, or NaN for a non-finite result.
    """
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    m = lam.shape[0]
    K = np.empty((m, n))
    A = np.empty((m, p))
    rdiag = np.empty(p)
    tau = np.empty(p)
    b = np.empty(m)
    work = np.empty((n, 30))
    rank = kinematics(fp, lp, perm, q, qda, qdda, True, closure_tol, qd, qdd, K, A, rdiag, tau,
                      b, work)
    if rank < SINGULAR_RATIO:
        return rank
    tree = np.empty(n)
    ok = rnea_pass(fp, q, qd, qdd, fixed_base(g), work[:0], False, True, tree, work)
    tp = np.empty(p)
    for c in range(p):
        tp[c] = tree[perm[na + c]]
    qr_transpose_solve(A, m, p, rdiag, tau, tp, lam)
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
    """The per-call entry of :func:`inverse_dynamics` (lengths checked: NaN if wrong)."""
    n = fp.shape[0]
    na = tau_a.shape[0]
    if (q.shape[0] != n or qda.shape[0] != na or qdda.shape[0] != na or qd.shape[0] != n
            or qdd.shape[0] != n or g.shape[0] != 3 or perm.shape[0] != n):
        return np.nan
    return inverse_dynamics(fp, lp, perm, q, qda, qdda, g, closure_tol, tau_a, qd, qdd, lam)


@jit
def inverse_dynamics_rows(fp: Array, lp: Array, perm: IntArray, Q: Array, QDA: Array,
                          QDDA: Array, g: Array, closure_tol: float, TAU: Array, LAM: Array
                          ) -> tuple[int, float]:
    """:func:`inverse_dynamics` over the rows of ``Q`` (N, n); returns ``(k, rank)``:
    the first failing row (-1: none) and its rank measure (NaN: not finite)."""
    n = Q.shape[1]
    qd = np.empty(n)
    qdd = np.empty(n)
    for k in range(Q.shape[0]):
        rank = inverse_dynamics(fp, lp, perm, Q[k], QDA[k], QDDA[k], g, closure_tol, TAU[k],
                                qd, qdd, LAM[k])
        if not rank >= SINGULAR_RATIO:
            return k, rank
    return -1, 1.0


@jit
def kinematics_call(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, qdda: Array,
                    want_acc: bool, closure_tol: float, qd: Array, qdd: Array, K: Array, G: Array,
                    want_g: bool) -> float:
    """Entry for the analysis functions: ``qd``, ``qdd`` (n,), ``K`` (m, n) and, if
    ``want_g``, ``G`` (n, na) = dq_tr/dq_a (eq. 56). Returns the rank measure."""
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    m = K.shape[0]
    A = np.empty((m, p))
    rdiag = np.empty(p)
    tau = np.empty(p)
    b = np.empty(m)
    work = np.empty((n, 30))
    rank = kinematics(fp, lp, perm, q, qda, qdda, want_acc, closure_tol, qd, qdd, K, A, rdiag,
                      tau, b, work)
    if rank < SINGULAR_RATIO or not want_g:
        return rank
    unit = np.zeros(na)
    xp = np.empty(p)
    for c in range(na):
        unit[c] = 1.0
        solve_passive(K, perm, na, unit, b, False, A, rdiag, tau, b, xp)
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
    body_poses(fp, q, P)
    return residual(lp, P, e)


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
    "newton_call",
    "residual_call",
]
