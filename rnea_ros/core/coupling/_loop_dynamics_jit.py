"""Compiled kernels of closed-loop dynamics (Khalil 2010 §4): inverse dynamics of the
active joints, ``tau_a = G^T tau_tree`` with the cut wrenches (eq. 55, 57), and
direct dynamics ``A_c qdd_a + H_c = tau_a`` (eq. 58). Layout and geometry:
:mod:`._loop_jit`; the consistent state: :mod:`._loop_kinematics_jit`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import add3, cross, inertia_times, mat3, mtv, put3, scale3, vec3
from rnea_ros.core._compile import inline, jit, jit_entry, jit_entry_fma, jit_fma, scratch
from rnea_ros.core._layout import F_AXIS, PRISMATIC, kind, parent
from rnea_ros.core.coupling._loop_jit import (
    L_NROWS,
    L_ROW,
    SINGULAR_RATIO,
    W_F,
    W_N,
    W_P,
    W_R,
    WS_COLS,
    ZERO,
    block_views,
    carve,
    constraint_jacobian,
    factor_pairs,
    factor_passive,
    loop_poses,
    pairs_solve,
    pairs_transpose_solve,
    put_world_pose,
    qr_solve,
    qr_transpose_solve,
    residual,
    row_views,
    state_views,
    views,
    workspace_rows,
)
from rnea_ros.core.coupling._loop_kinematics_jit import closed_state, relative_acceleration
from rnea_ros.core.dynamics._crba_jit import crba_pass
from rnea_ros.core.dynamics._rnea_jit import backward_pass, backward_span, forward_span, pose_span

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@jit
def add_accelerations(fp: Array, dqdd: Array, work: Array, D: Array) -> None:
    """Add joint accelerations ``dqdd`` (n,) to the pass in ``work``: the forward pass is
    affine in ``qdd``, so each body's acceleration grows by ``X dA_parent + S dqdd`` and
    its force by ``I dA`` (``D`` (n, 6) holds the ``dA``)."""
    for i in range(dqdd.shape[0]):
        R = mat3(work, i, W_R)
        p = vec3(work, i, W_P)
        par = parent(fp, i)
        if par < 0:
            ddw, da = ZERO, ZERO
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
        put3(work, i, W_N, add3(vec3(work, i, W_N), n1))
        put3(work, i, W_F, add3(vec3(work, i, W_F), f1))


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


# ------------------------------------------------------------ the row kernel
# The helpers inlined, so the row kernel's FMA contraction reaches them.
_mat3, _vec3, _put_world_pose = inline(mat3), inline(vec3), inline(put_world_pose)
_loop_poses, _residual = inline(loop_poses), inline(residual)
_constraint_jacobian = inline(constraint_jacobian)
_factor_pairs, _pairs_solve = inline(factor_pairs), inline(pairs_solve)
_pairs_transpose_solve = inline(pairs_transpose_solve)
_relative_acceleration = inline(relative_acceleration)

RowWork = tuple[Array, Array, Array, Array, Array, Array, Array, Array, Array, Array, Array,
                Array, Array, Array]  # the arrays of row_workspace


@jit
def row_workspace(buf: Array, n: int, m: int, p: int, loops: int) -> RowWork:
    """``(work, P, F, K, A, b, rdiag, tau, xp, qd, qdd, tree, lam, u)`` of
    :func:`loop_rnea_row`, carved from ``buf`` (:func:`workspace_rows` rows):
    :func:`views`, :func:`row_views` and :func:`block_views` (pointer arithmetic only)."""
    work, P, _, F, K, A, b, rdiag, tau, xp, _, _ = views(buf, n, m, p, loops)
    qd, qdd, tree, lam = row_views(buf, n, m, p, loops)
    u = block_views(buf, n, m, p, loops)
    return work, P, F, K, A, b, rdiag, tau, xp, qd, qdd, tree, lam, u


_row_workspace = inline(row_workspace)


@jit_fma
def loop_rnea_row(fp: Array, lp: Array, perm: IntArray, blk: IntArray, Q: Array, QDA: Array,
                  QDDA: Array, k: int, g: Array, closure_tol: float, TAU: Array, buf: Array
                  ) -> float:
    """:func:`inverse_dynamics` on sample ``k`` (``TAU[k] = tau_a``), written for
    throughput (its twin: ``test_loop_dynamics.py::test_row_kernel_equals_inverse_dynamics``
    checks they agree to rounding): the same steps, the tree's passes being the FMA row
    passes of the tree's batch RNEA (``_rnea_jit.pose_span``, ``forward_span``,
    ``backward_span``; the first without body forces), ``K_p`` solved 2 x 2 block by
    block when ``blk`` has such blocks (:func:`~._loop_jit.factor_pairs`; else by its
    QR, as there), its helpers inlined,
    the samples read in place, ``buf`` the work array of :func:`workspace_rows` rows
    (:func:`row_workspace`). One compiled function for :func:`loop_rnea_call` and
    :func:`loop_rnea_rows` (called, not inlined: inlining it into both doubled their
    cold compile for ~10 % of the batch's time). Returns the code of
    :func:`inverse_dynamics`."""
    n = fp.shape[0]
    na = QDA.shape[1]
    p = n - na
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    work, P, F, K, A, b, rdiag, tau, xp, qd, qdd, tree, lam, u = _row_workspace(
        buf, n, m, p, loops)
    pose_span(fp, Q, k, work, 0, 0)  # joint transforms, then world poses (eq. 3)
    for i in range(n):
        _put_world_pose(fp, P, i, _mat3(work, i, W_R), _vec3(work, i, W_P))
    _loop_poses(lp, P, F)
    worst: int = _residual(lp, F, b)
    for r in range(m):
        if not abs(b[r]) <= closure_tol:
            return -1.0 - worst
    _constraint_jacobian(fp, lp, P, F, K)
    pairs = blk[0] > 0
    if pairs:
        rank: float = _factor_pairs(K, perm, na, blk, A)
    else:  # the QR path called, not inlined (cold compile)
        rank = factor_passive(K, perm, na, A, rdiag, tau)
    if rank < SINGULAR_RATIO:
        return rank
    for r in range(m):  # qd_p = -K_p^+ K_a qd_a (eq. 4)
        s = 0.0
        for c in range(na):
            s += K[r, perm[c]] * QDA[k, c]
        b[r] = s
    if pairs:
        _pairs_solve(blk, A, b, u, xp)
    else:
        qr_solve(A, m, p, rdiag, tau, b, xp)
    for c in range(na):
        qd[0, perm[c]] = QDA[k, c]
        qdd[0, perm[c]] = QDDA[k, c]
    for c in range(p):
        qd[0, perm[na + c]] = -xp[c]
        qdd[0, perm[na + c]] = 0.0
    forward_span(fp, qd, qdd, 0, g, work, 0, False)  # motion at qdd = [qdd_a; 0]
    _relative_acceleration(lp, F, work, (-g[0], -g[1], -g[2]), b)  # K_a qdd_a + gamma
    if pairs:
        _pairs_solve(blk, A, b, u, xp)
    else:
        qr_solve(A, m, p, rdiag, tau, b, xp)
    for c in range(p):
        qdd[0, perm[na + c]] = -xp[c]
    forward_span(fp, qd, qdd, 0, g, work, 0, True)  # at the consistent qdd
    tree_total = backward_span(fp, qd, qdd, 0, True, tree, work, 0)
    for c in range(p):  # lam = K_p^{+T} tau_p, tau_a = tau_tree_a - K_a^T lam (eq. 57)
        xp[c] = tree[0, perm[na + c]]
    if pairs:
        _pairs_transpose_solve(blk, A, xp, u, lam)
    else:
        qr_transpose_solve(A, m, p, rdiag, tau, xp, lam)
    total = tree_total
    for c in range(na):
        j = perm[c]
        s = tree[0, j]
        for r in range(m):
            s -= K[r, j] * lam[r]
        TAU[k, c] = s
        total += s
    if not np.isfinite(total):
        return np.nan
    return rank


@inline
def borrow(a: Array) -> Array:
    """``a`` (2-D, C-contiguous float64) as a view without a reference count (its
    meminfo null, like :func:`~._loop_jit.carve`'s; valid while ``a`` is). The row
    kernel's inlined helpers alias their array arguments, and numba increments and
    decrements a counted array's reference count at each alias: ~40 atomic pairs per
    palletizer sample (perf: ~10 % of the batch's time in ``NRT_incref/decref``); on a
    borrowed view each is a null test."""
    return carve(a, 0, a.shape[0], a.shape[1])


@jit_entry_fma
def loop_rnea_call(fp: Array, lp: Array, perm: IntArray, blk: IntArray, q: Array, qda: Array,
                   qdda: Array, g: Array, closure_tol: float, tau_a: Array) -> float:
    """The 1 kHz entry: :func:`loop_rnea_row` on the one sample, its work array on the
    stack; NaN for wrong lengths."""
    n = fp.shape[0]
    na = tau_a.shape[0]
    if (q.shape[0] != n or qda.shape[0] != na or qdda.shape[0] != na or g.shape[0] != 3
            or perm.shape[0] != n or na >= n):
        return np.nan
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    buf = scratch(workspace_rows(n, m, n - na, loops), WS_COLS)
    code: float = loop_rnea_row(borrow(fp), borrow(lp), perm, blk, carve(q, 0, 1, n),
                                carve(qda, 0, 1, na), carve(qdda, 0, 1, na), 0,
                                carve(g, 0, 1, 3)[0], closure_tol, carve(tau_a, 0, 1, na), buf)
    return code


@jit_fma
def loop_rnea_rows(fp: Array, lp: Array, perm: IntArray, blk: IntArray, Q: Array, QDA: Array,
                   QDDA: Array, g: Array, closure_tol: float, TAU: Array) -> tuple[int, float]:
    """:func:`loop_rnea_row` on every row of ``Q`` (S, n), one work array; returns
    ``(k, code)``: the first failing row (-1: none) and its code."""
    n = fp.shape[0]
    na = QDA.shape[1]
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    store = np.empty((workspace_rows(n, m, n - na, loops), WS_COLS))
    fp_, lp_, Q_, QDA_, QDDA_, TAU_, buf = (borrow(fp), borrow(lp), borrow(Q), borrow(QDA),
                                            borrow(QDDA), borrow(TAU), borrow(store))
    g_ = carve(g, 0, 1, 3)[0]
    for k in range(Q.shape[0]):
        code = loop_rnea_row(fp_, lp_, perm, blk, Q_, QDA_, QDDA_, k, g_, closure_tol, TAU_,
                             buf)
        if not code >= SINGULAR_RATIO:
            return k, code
    return -1, 1.0


@jit
def forward_dynamics(fp: Array, lp: Array, perm: IntArray, q: Array, qda: Array, tau_a: Array,
                     g: Array, closure_tol: float, qdda: Array, buf: Array, M: Array,
                     G: Array, Ac: Array, crba_work: Array) -> float:
    """``qdda = A_c^{-1} (tau_a - H_c - G^T F)`` (eq. 58): the bias by
    :func:`inverse_dynamics` at ``qdd_a = 0``, ``A_c = G^T M G`` with ``M`` from the
    tree's CRBA (armature included) and ``G`` (n, na) from ``K_p``'s QR, then a
    Cholesky solve. Returns the code of :func:`inverse_dynamics` (NaN also when
    ``A_c`` is not positive definite)."""
    n = q.shape[0]
    na = qda.shape[0]
    p = n - na
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    qd, qdd, lam = state_views(buf, n, m, p, loops)
    for c in range(na):
        qdda[c] = 0.0
    bias = np.empty(na)
    code = inverse_dynamics(fp, lp, perm, q, qda, qdda, g, closure_tol, bias, qd, qdd, lam,
                            buf)
    if not code >= SINGULAR_RATIO:
        return code
    _, _, _, _, K, A, b, rdiag, tau, xp, _, _ = views(buf, n, m, p, loops)
    for c in range(na):  # G = [1; -K_p^+ K_a] (eq. 56), in tree order
        for r in range(n):
            G[r, c] = 0.0
        G[perm[c], c] = 1.0
        for r in range(m):
            b[r] = K[r, perm[c]]
        qr_solve(A, m, p, rdiag, tau, b, xp)
        for r in range(p):
            G[perm[na + r], c] = -xp[r]
    for r in range(n):
        for c in range(n):
            M[r, c] = 0.0
    crba_pass(fp, q, M, crba_work)
    for i in range(na):  # A_c = G^T M G, lower triangle, then Cholesky in place
        for j in range(i + 1):
            s = 0.0
            for r in range(n):
                t = 0.0
                for c in range(n):
                    t += M[r, c] * G[c, j]
                s += G[r, i] * t
            Ac[i, j] = s
    for j in range(na):
        d = Ac[j, j]
        for k in range(j):
            d -= Ac[j, k] * Ac[j, k]
        if not d > 0.0:
            return np.nan
        d = math.sqrt(d)
        Ac[j, j] = d
        for i in range(j + 1, na):
            s = Ac[i, j]
            for k in range(j):
                s -= Ac[i, k] * Ac[j, k]
            Ac[i, j] = s / d
    for i in range(na):  # L y = tau_a - bias
        s = tau_a[i] - bias[i]
        for k in range(i):
            s -= Ac[i, k] * qdda[k]
        qdda[i] = s / Ac[i, i]
    for i in range(na - 1, -1, -1):  # L^T x = y
        s = qdda[i]
        for k in range(i + 1, na):
            s -= Ac[k, i] * qdda[k]
        qdda[i] = s / Ac[i, i]
    return code


@jit
def forward_dynamics_rows(fp: Array, lp: Array, perm: IntArray, Q: Array, QDA: Array,
                          TAU: Array, g: Array, closure_tol: float, QDDA: Array
                          ) -> tuple[int, float]:
    """:func:`forward_dynamics` over the rows of ``Q`` (S, n); ``(k, code)`` of the first
    failing row (-1: none)."""
    n = Q.shape[1]
    na = QDA.shape[1]
    loops = lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    buf = np.empty((workspace_rows(n, m, n - na, loops), WS_COLS))
    M = np.empty((n, n))
    G = np.empty((n, na))
    Ac = np.empty((na, na))
    crba_work = np.empty((n, 25))
    for k in range(Q.shape[0]):
        if (Q.shape[1] != fp.shape[0] or TAU.shape[1] != na or perm.shape[0] != n
                or na >= n or g.shape[0] != 3):
            return k, np.nan
        code = forward_dynamics(fp, lp, perm, Q[k], QDA[k], TAU[k], g, closure_tol, QDDA[k],
                                buf, M, G, Ac, crba_work)
        if not code >= SINGULAR_RATIO:
            return k, code
    return -1, 1.0

__all__ = [
    "add_accelerations",
    "forward_dynamics",
    "forward_dynamics_rows",
    "inverse_dynamics",
    "inverse_dynamics_call",
    "loop_rnea_call",
    "loop_rnea_row",
    "loop_rnea_rows",
    "row_workspace",
]
