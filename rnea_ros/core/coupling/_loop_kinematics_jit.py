"""Compiled kernels of closed-loop kinematics (Khalil 2010 §2.2, §4): Newton on the
geometric constraint (eq. 3) with continuation, and the consistent tree rates from the
kinematic constraint (eq. 4) and its time derivative. Layout and geometry:
:mod:`._loop_jit`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Motion,
    Vec,
    add3,
    body_force,
    child_motion,
    cross,
    joint_transform,
    mat3,
    mtv,
    put3,
    put9,
    sub3,
    vec3,
)
from rnea_ros.core._compile import inline, jit, jit_entry, scratch
from rnea_ros.core._layout import parent
from rnea_ros.core.coupling._loop_jit import (
    BUDGET,
    CLOSED,
    L_BODY1,
    L_IDENTITY,
    L_NROWS,
    L_P1,
    L_P2,
    L_R1,
    L_R2,
    L_ROW,
    L_TYPE,
    NOT_CONVERGED,
    PAUSED,
    PLANAR_REVOLUTE,
    POLISHED,
    PRISMATIC_CUT,
    REVERSED,
    REVOLUTE,
    SINGULAR,
    SINGULAR_RATIO,
    SPHERICAL,
    UNKNOWN_CUT,
    W_A,
    W_DW,
    W_F,
    W_N,
    W_P,
    W_R,
    W_V,
    W_W,
    WELD,
    WS_COLS,
    ZERO,
    body_poses,
    carve,
    component,
    constraint_jacobian,
    factor_passive,
    loop_poses,
    put_world_pose,
    qr_factor,
    qr_solve,
    residual,
    reversed_loop,
    solve_passive,
    views,
    workspace_rows,
)
from rnea_ros.core.errors import LoopError

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


# ----------------------------------------------------------------- passes
@jit
def pose_pass(fp: Array, q: Array, work: Array, P: Array) -> None:
    """Joint transforms into ``work[:, 0:12]`` (RNEA's layout, read by :func:`motion_pass`
    and ``rnea.backward_pass``) and world poses into ``P`` (n, 12): one sin/cos per joint."""
    for i in range(q.shape[0]):
        Rl, pl = joint_transform(fp, i, q[i])
        put9(work, i, W_R, Rl)
        put3(work, i, W_P, pl)
        put_world_pose(fp, P, i, Rl, pl)


@jit
def motion_pass(fp: Array, qd: Array, qdd: Array, a0: Vec, work: Array) -> None:
    """RNEA's forward pass (``rnea.forward_pass``) on the transforms already in ``work``:
    body velocities, accelerations and forces, the base at rest accelerating by ``a0``."""
    for i in range(qd.shape[0]):
        R = mat3(work, i, W_R)
        p = vec3(work, i, W_P)
        par = parent(fp, i)
        if par < 0:
            w_p, v_p, dw_p, a_p = ZERO, ZERO, ZERO, a0
        else:
            w_p, v_p = vec3(work, par, W_W), vec3(work, par, W_V)
            dw_p, a_p = vec3(work, par, W_DW), vec3(work, par, W_A)
        w, v, dw, a = child_motion(fp, i, R, p, w_p, v_p, dw_p, a_p, qd[i], qdd[i])
        nb, fb = body_force(fp, i, w, v, dw, a)
        put3(work, i, W_W, w)
        put3(work, i, W_V, v)
        put3(work, i, W_DW, dw)
        put3(work, i, W_A, a)
        put3(work, i, W_N, nb)
        put3(work, i, W_F, fb)


@inline  # four per loop in every acceleration: called, they were ~8 % of the batch (perf)
def frame_motion(lp: Array, work: Array, l: int, side: int, col: int, base: Vec) -> Motion:
    """Body motion ``(w, v)`` at work columns ``col`` (velocity or acceleration) moved
    to loop ``l``'s frame ``side``: ``(R_f^T w, R_f^T (v + w x p_f))``; a frame on the
    base moves with the base's ``(0, base)``."""
    b = int(lp[l, L_BODY1 + side])
    Rf = mat3(lp, l, L_R1 if side == 0 else L_R2)
    if b < 0:
        return ZERO, mtv(Rf, base)
    pf = vec3(lp, l, L_P1 if side == 0 else L_P2)
    w, v = vec3(work, b, col), vec3(work, b, col + 3)
    vf = add3(v, cross(w, pf))
    if lp[l, L_IDENTITY + side] != 0.0:  # R_f = I: no rotation
        return w, vf
    return mtv(Rf, w), mtv(Rf, vf)


@jit
def relative_acceleration(lp: Array, F: Array, work: Array, a0: Vec, r: Array) -> None:
    """``r`` (m,) = ``K qdd + Kdot qd`` at the pass in ``work``, whose ``qd`` satisfies
    eq. 4 (``K qd = 0``): the blocked rows of ``A2 - X A1 - V2 x V_rel`` (the base's
    acceleration ``a0``, e.g. gravity, moves both frames alike and cancels).

    At such a ``qd`` the blocked components of ``V_rel`` vanish, so only its free ones
    enter ``V2 x V_rel``: ``w_z`` for a revolute cut (a planar loop's ``v_z, w_x, w_y``
    vanish identically too), ``w`` for a spherical one, ``v_z`` for a prismatic one,
    none for a weld (each type's ``free`` in :mod:`.cut_kinds`). A planar loop needs
    only the linear rows. An unknown type code raises ``LoopError``."""
    for l in range(lp.shape[0]):
        Rr, pr = mat3(F, l, 0), vec3(F, l, 9)
        t = int(lp[l, L_TYPE])
        r0 = int(lp[l, L_ROW])
        w2, v2 = frame_motion(lp, work, l, 1, W_W, ZERO)
        if t == PRISMATIC_CUT:  # V_rel = (0, (0, 0, v_z)): V2 x V_rel = (0, w2 x v_rel)
            w1, v1 = frame_motion(lp, work, l, 0, W_W, ZERO)
            x = add3(v1, cross(w1, pr))
            vz = v2[2] - (Rr[2] * x[0] + Rr[5] * x[1] + Rr[8] * x[2])
            c_w, c_v = ZERO, (w2[1] * vz, -w2[0] * vz, 0.0)
        elif t == SPHERICAL:  # V_rel = (w_rel, 0): V2 x V_rel = (w2 x w_rel, v2 x w_rel)
            w1, _ = frame_motion(lp, work, l, 0, W_W, ZERO)
            wr = sub3(w2, mtv(Rr, w1))
            c_w, c_v = cross(w2, wr), cross(v2, wr)
        elif t == WELD:
            c_w, c_v = ZERO, ZERO
        elif t == REVOLUTE or t == PLANAR_REVOLUTE:  # V_rel = ((0, 0, w_z), 0)
            w1, _ = frame_motion(lp, work, l, 0, W_W, ZERO)
            wz = w2[2] - (Rr[2] * w1[0] + Rr[5] * w1[1] + Rr[8] * w1[2])
            c_w, c_v = (w2[1] * wz, -w2[0] * wz, 0.0), (v2[1] * wz, -v2[0] * wz, 0.0)
        else:
            raise LoopError(UNKNOWN_CUT)
        dw1, a1 = frame_motion(lp, work, l, 0, W_DW, a0)
        dw2, a2 = frame_motion(lp, work, l, 1, W_DW, a0)
        g_v = sub3(sub3(a2, mtv(Rr, add3(a1, cross(dw1, pr)))), c_v)
        if t == PLANAR_REVOLUTE:
            r[r0], r[r0 + 1] = g_v[0], g_v[1]
            continue
        g_w = sub3(sub3(dw2, mtv(Rr, dw1)), c_w)
        six = (g_v[0], g_v[1], g_v[2], g_w[0], g_w[1], g_w[2])
        for k in range(int(lp[l, L_NROWS])):
            r[r0 + k] = six[component(t, k)]


# --------------------------------------------------------------- Newton
@jit
def newton(fp: Array, lp: Array, perm: IntArray, na: int, q: Array, tol: float,
           max_iter: int, max_step: float, buf: Array) -> tuple[int, int, int, float, float]:
    """Close the loops by moving the passive joints of ``q`` (in place): damped Newton
    (Levenberg-Marquardt, ``mu = |e|^2``) on the residual of eq. 3 with ``K_p``;
    once within ``tol``, one more step polishes the solution to rounding level.
    ``buf`` is a work array of :func:`newton_rows` rows.

    Returns ``(status, iterations, worst loop, max |e|, rank measure of K_p)``;
    status ``CLOSED``, ``NOT_CONVERGED``, ``SINGULAR`` (closed, but ``K_p`` is
    rank deficient there) or ``REVERSED`` (closed with a cut axis reversed).
    """
    n = q.shape[0]
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    p = n - na
    P = carve(buf, 0, n, 12)
    F = carve(buf, 12 * n, loops, 24)
    o = 12 * n + 24 * loops
    K = carve(buf, o, m, n)
    o += m * n
    A = carve(buf, o, m + p, p)
    o += (m + p) * p
    v = carve(buf, o, 1, 2 * m + 4 * p)[0]
    e, b = v[0:m], v[m:2 * m + p]
    rdiag, tau, dx = v[2 * m + p:2 * m + 2 * p], v[2 * m + 2 * p:2 * m + 3 * p], \
        v[2 * m + 3 * p:2 * m + 4 * p]
    err = np.inf
    worst = 0
    polished = False
    for it in range(max_iter + 1):
        body_poses(fp, q, P)
        loop_poses(lp, P, F)
        worst = residual(lp, F, e)
        err = 0.0
        for r in range(m):
            if not abs(e[r]) <= err:  # NaN propagates (max() would drop it)
                err = abs(e[r])
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
    rank = factor_passive(K, perm, na, A, rdiag, tau)
    return NOT_CONVERGED, max_iter, worst, err, rank


@jit
def newton_rows(n: int, m: int, p: int, loops: int) -> int:
    """Rows of the ``(rows, WS_COLS)`` work array of :func:`newton`."""
    size = 12 * n + 24 * loops + m * n + (m + p) * p + 2 * m + 4 * p
    return (size + WS_COLS - 1) // WS_COLS


@jit_entry
def solve_call(fp: Array, lp: Array, perm: IntArray, qa: Array, q0: Array, q: Array,
               tol: float, max_iter: int, max_step: float, active_step: float,
               refinements: IntArray, period: Array, budget: int, chunk: int,
               progress: Array, info: Array) -> int:
    """Newton from ``q0`` with the actives at ``qa``, into ``q``: one solve when the
    actives move by at most ``active_step``, else continuation (the actives walk from
    ``q0``'s to ``qa``, each solve warm-started by the previous one, so the passive
    joints follow ``q0``'s assembly mode); when a step fails, the rest of the walk,
    from the last closed step, is walked ``refinements`` times finer.
    ``info`` (4,): iterations, worst loop, residual, rank measure.

    An active with ``period[c] > 0`` (a continuous joint, ``2 pi``) is an angle modulo
    the period: it goes to the representative of ``qa[c]`` nearest ``q0``'s (``qa[c]``
    itself when within half a period), which ``q`` then holds.

    Work is counted in Newton iterations (Jacobian evaluations, ``it + 1`` per solve);
    a step starts only if a whole solve (``max_iter + 1``) fits in what is left of
    ``budget`` (else ``BUDGET``, no solution) and, after the first step of this call,
    in what is left of ``chunk`` (else ``PAUSED``: call again with the same ``q`` and
    ``progress`` (4,) = [refinement level, next step, iterations spent, fraction of
    the walk where the level started], zeros for a new solve). Returns the status of
    the last solve (NOT_CONVERGED also for wrong lengths)."""
    n = fp.shape[0]
    na = qa.shape[0]
    if q0.shape[0] != n or q.shape[0] != n or perm.shape[0] != n or na >= n or \
            period.shape[0] != na or progress.shape[0] != 4:
        return NOT_CONVERGED
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    buf = scratch(newton_rows(n, m, n - na, loops), WS_COLS)
    target = np.empty(na)
    move = 0.0
    for c in range(na):
        j = perm[c]
        target[c] = qa[c]
        if period[c] > 0.0 and not abs(qa[c] - q0[j]) <= 0.5 * period[c]:
            target[c] = qa[c] - period[c] * math.floor((qa[c] - q0[j]) / period[c] + 0.5)
        if not abs(target[c] - q0[j]) <= move:  # NaN propagates
            move = abs(target[c] - q0[j])
    if not move < np.inf:
        return NOT_CONVERGED
    first = min(move / active_step, 1e12)  # steps of the whole walk, unrefined
    level, step, spent, base = int(progress[0]), int(progress[1]), int(progress[2]), \
        progress[3]
    if level == 0 and step == 0:  # a new solve
        for j in range(n):
            q[j] = q0[j]
    q_ok = np.empty(n)
    status = NOT_CONVERGED
    here = 0
    for k in range(level, refinements.shape[0] + 1):
        scale = 1.0 if k == 0 else float(refinements[k - 1])
        steps = max(1, math.ceil((1.0 - base) * first * scale))
        s = step if step > 0 else 1
        step = 0
        progress[0], progress[3] = k, base
        while s <= steps:
            if spent + max_iter + 1 > budget or (here > 0 and here + max_iter + 1 > chunk):
                progress[1], progress[2] = s, spent
                return BUDGET if spent + max_iter + 1 > budget else PAUSED
            for j in range(n):
                q_ok[j] = q[j]
            f = base + (1.0 - base) * s / steps
            for c in range(na):
                j = perm[c]
                q[j] = target[c] if s == steps else q0[j] + f * (target[c] - q0[j])
            status, it, worst, err, rank = newton(fp, lp, perm, na, q, tol, max_iter,
                                                  max_step, buf)
            spent += it + 1
            here += it + 1
            info[0] = it
            info[1] = worst
            info[2] = err
            info[3] = rank
            if status != CLOSED:
                break
            s += 1
        if status == CLOSED or status == SINGULAR:
            break
        base += (1.0 - base) * (s - 1) / steps  # refine from the last closed step
        for j in range(n):
            q[j] = q_ok[j]
    progress[1], progress[2] = 0, spent
    return status


# ------------------------------------------------------------ rates
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
    rank = closed_state(fp, lp, perm, q, qda, qdda, ZERO, closure_tol, want_acc, qd, qdd,
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
def jacobian_call(fp: Array, lp: Array, q: Array, K: Array) -> None:
    """Entry: ``K`` (m, n) of eq. 4 at ``q``, closed or not: the poses and
    :func:`~._loop_jit.constraint_jacobian` alone (:func:`kinematics_call` would also
    compile the rates' kernels, seconds on a cold cache, for a model's mobility check)."""
    P = np.empty((q.shape[0], 12))
    F = np.empty((lp.shape[0], 24))
    body_poses(fp, q, P)
    loop_poses(lp, P, F)
    constraint_jacobian(fp, lp, P, F, K)


@jit
def residual_call(fp: Array, lp: Array, q: Array, e: Array) -> int:
    """Entry: the residual (m,) of eq. 3 at ``q``; returns the worst loop."""
    P = np.empty((q.shape[0], 12))
    F = np.empty((lp.shape[0], 24))
    body_poses(fp, q, P)
    loop_poses(lp, P, F)
    return residual(lp, F, e)

__all__ = [
    "closed_state",
    "jacobian_call",
    "kinematics_call",
    "motion_pass",
    "newton",
    "pose_pass",
    "residual_call",
    "solve_call",
]
