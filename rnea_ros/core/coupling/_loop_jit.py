"""Compiled kernels of the closed-loop algorithms (Khalil 2010 §2.2 and §4).

Everything here works on arrays only: the tree's packed model ``fp`` (see
:mod:`rnea_ros.core._layout`), the packed loops ``lp`` (one row per loop, columns
``L_*`` below, built by :class:`~rnea_ros.core.coupling.loops.ClosedLoopModel`)
and ``perm`` (n,), the tree joints reordered as ``[active..., passive...]``.

**Cut-joint constraint.** Loop ``l`` joins frame 1 (on body ``b1``, Khalil's
``R_k`` at ``q_k = 0``) to frame 2 (on body ``b2``, Khalil's ``R_{k+B}``). Its
relative twist ``V_rel`` -- the body twist of frame 2 relative to frame 1,
``[v; w]`` in frame 2 at frame 2's origin -- must lie in the cut joint's
motion subspace; the blocked components (the type's ``rows`` in :mod:`.cut_kinds`)
of ``[v_x, v_y, v_z, w_x, w_y, w_z]``: spherical ``v`` (3 rows), revolute
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
carves it up (:func:`views`); everything else is tuples. This module holds the
layout, the geometry, ``K`` and the scratch; ``K_p``'s factorisations (QR, 2 x 2
blocks) are in :mod:`._loop_qr_jit` (re-exported here); the algorithms are in
:mod:`._loop_kinematics_jit` (Newton, rates) and :mod:`._loop_dynamics_jit`.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    cross,
    joint_transform,
    mat3,
    mm,
    mt,
    mtv,
    mv,
    put3,
    put9,
    sub3,
    vec3,
)
from rnea_ros.core._compile import inline, jit
from rnea_ros.core._layout import F_AXIS, PRISMATIC, kind, parent
from rnea_ros.core.coupling._loop_qr_jit import (
    factor_pairs,
    factor_passive,
    pairs_solve,
    pairs_transpose_solve,
    qr_factor,
    qr_solve,
    qr_transpose_solve,
    solve_passive,
)
from rnea_ros.core.errors import LoopError

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Packed loop columns.
L_BODY1, L_BODY2, L_TYPE, L_ROW, L_NROWS = 0, 1, 2, 3, 4
L_R1, L_P1, L_R2, L_P2 = 5, 14, 17, 26
L_IDENTITY = 29  # 2 columns: 1 if frame 1's (2's) rotation on its body is the identity
L_SUPPORT = 31  # n columns: +1 joint moves body 2 only, -1 body 1 only, 0 both or neither
L_COLS = 31

# Cut-joint type codes: one record per type in cut_kinds.CUT_KINDS (blocked rows, free
# components, ...); every kernel branches on each code and raises on any other.
SPHERICAL, REVOLUTE, PRISMATIC_CUT, WELD, PLANAR_REVOLUTE = 0, 1, 2, 3, 4

# Newton status codes.
CLOSED, NOT_CONVERGED, SINGULAR, REVERSED = 0, 1, 2, 3
# Continuation status codes: the work budget is spent (no solution), or the solve
# paused after its chunk of work (resume with the same progress array).
BUDGET, PAUSED = 4, 5
SINGULAR_RATIO = 1e-5  # min |R_kk| / |column k| of K_p below which K_p is singular: passive
# velocities amplified 1e5 times; at a fold, Newton's best closure leaves ~sqrt(eps) ~ 1e-6
POLISHED = 1e-15  # a residual within tol but above this gets one more Newton step

W_R, W_P = 0, 9  # pose columns of the (n, 12) pose array and of RNEA's work array
W_W, W_V, W_DW, W_A, W_N, W_F = 12, 15, 18, 21, 24, 27  # RNEA's work (dynamics.rnea)
ZERO = (0.0, 0.0, 0.0)
UNKNOWN_CUT = ("closed-loop kernel: unknown cut type code in loop_floats (valid: SPHERICAL, "
               "REVOLUTE, PRISMATIC_CUT, WELD, PLANAR_REVOLUTE of "
               "rnea_ros.core.coupling._loop_jit; see cut_kinds.CUT_KINDS)")


# ------------------------------------------------------------------ geometry
@jit
def put_world_pose(fp: Array, P: Array, i: int, Rl: Mat, pl: Vec) -> None:
    """Body ``i``'s world pose into ``P[i]`` (rotation row-major, origin) from its joint
    transform ``(Rl, pl)`` and its parent's pose, already in ``P`` (the recursion
    ``^0T_i = ^0T_parent ^parentT_i``)."""
    par = parent(fp, i)
    if par < 0:
        put9(P, i, W_R, Rl)
        put3(P, i, W_P, pl)
    else:
        Rp = mat3(P, par, W_R)
        put9(P, i, W_R, mm(Rp, Rl))
        put3(P, i, W_P, add3(vec3(P, par, W_P), mv(Rp, pl)))


@jit
def body_poses(fp: Array, q: Array, P: Array) -> None:
    """World poses of the bodies into ``P`` (n, 12): rotation (row-major), origin."""
    for i in range(q.shape[0]):
        Rl, pl = joint_transform(fp, i, q[i])
        put_world_pose(fp, P, i, Rl, pl)


@inline  # two per loop and pose: called, they were ~5 % of the loop batch (perf)
def frame_pose(lp: Array, P: Array, l: int, side: int) -> tuple[Mat, Vec]:
    """World pose of loop ``l``'s frame ``side`` (0: frame 1, 1: frame 2)."""
    b = int(lp[l, L_BODY1 + side])
    Rf = mat3(lp, l, L_R1 if side == 0 else L_R2)
    pf = vec3(lp, l, L_P1 if side == 0 else L_P2)
    if b < 0:
        return Rf, pf
    Rb = mat3(P, b, W_R)
    pw = add3(vec3(P, b, W_P), mv(Rb, pf))
    if lp[l, L_IDENTITY + side] != 0.0:  # a cut frame placed by its offset alone
        return Rb, pw
    return mm(Rb, Rf), pw


@jit
def relative_pose(lp: Array, P: Array, l: int) -> tuple[Mat, Vec, Mat, Vec]:
    """``(R_rel, p_rel, R2, p2)``: frame 2 in frame 1, and frame 2 in the world."""
    R1, p1 = frame_pose(lp, P, l, 0)
    R2, p2 = frame_pose(lp, P, l, 1)
    return mm(mt(R1), R2), mtv(R1, sub3(p2, p1)), R2, p2


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
        if t == REVOLUTE or t == PLANAR_REVOLUTE:  # z1's misalignment
            six = (d[0], d[1], d[2], Rr[7], -Rr[6], 0.0)
        elif t == SPHERICAL or t == PRISMATIC_CUT or t == WELD:  # sin(angle) * axis
            six = (d[0], d[1], d[2], s[0], s[1], s[2])
        else:
            raise LoopError(UNKNOWN_CUT)
        r0 = int(lp[l, L_ROW])
        for r in range(int(lp[l, L_NROWS])):
            x = six[component(t, r)]
            e[r0 + r] = x
            if abs(x) > big or not x == x:
                big = abs(x) if x == x else np.inf
                worst = l
    return worst


@jit
def component(t: int, r: int) -> int:
    """Component of ``[v; w]`` (0..5) of row ``r`` of a cut joint of type ``t`` (the
    record's ``rows[r]``); an unknown type raises ``LoopError``."""
    if t == PRISMATIC_CUT:
        return r if r < 2 else r + 1  # v_x, v_y, w
    if t == SPHERICAL or t == REVOLUTE or t == WELD or t == PLANAR_REVOLUTE:
        return r  # spherical v; revolute v, w_x, w_y; weld v, w; planar revolute v_x, v_y
    raise LoopError(UNKNOWN_CUT)


@jit
def reversed_loop(lp: Array, F: Array) -> int:
    """A closed loop whose cut joint closed upside down (revolute/prismatic axis
    reversed, weld/prismatic turned by more than 90 degrees), else -1."""
    for l in range(lp.shape[0]):
        t = int(lp[l, L_TYPE])
        Rr = mat3(F, l, 0)
        if t == REVOLUTE or t == PLANAR_REVOLUTE:  # z axis flipped
            if Rr[8] < 0.0:
                return l
        elif t == PRISMATIC_CUT or t == WELD:  # turned by more than 90 degrees
            if Rr[0] + Rr[4] + Rr[8] < 1.0:
                return l
        elif t != SPHERICAL:  # a spherical cut has no orientation to reverse
            raise LoopError(UNKNOWN_CUT)
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
        p2 = vec3(F, l, 21)
        t = int(lp[l, L_TYPE])
        r0 = int(lp[l, L_ROW])
        nr = int(lp[l, L_NROWS])
        for j in range(n):
            sgn = lp[l, L_SUPPORT + j]
            if sgn == 0.0:
                for r in range(nr):
                    K[r0 + r, j] = 0.0
                continue
            u = mv(mat3(P, j, W_R), vec3(fp, j, F_AXIS))
            prismatic = kind(fp, j) == PRISMATIC
            v = u if prismatic else cross(u, sub3(p2, vec3(P, j, W_P)))
            for r in range(nr):  # the blocked components only: R2^T v, R2^T w
                c = component(t, r)
                if c < 3:
                    x = F[l, 12 + c] * v[0] + F[l, 15 + c] * v[1] + F[l, 18 + c] * v[2]
                elif prismatic:
                    x = 0.0
                else:
                    x = F[l, 9 + c] * u[0] + F[l, 12 + c] * u[1] + F[l, 15 + c] * u[2]
                K[r0 + r, j] = sgn * x


# ------------------------------------------------------------------ scratch
WS_COLS = 32  # columns of the per-call scratch (a compile-time constant for _jit.scratch)


@intrinsic
def _carve(typingctx: Any, buf: Any, offset: Any, rows: Any, cols: Any) -> Any:
    """A C-contiguous ``(rows, cols)`` float64 view of ``buf``'s data from element
    ``offset`` on: the array struct filled in directly (no reshape checks, no
    meminfo: valid while ``buf`` is, like :func:`~rnea_ros.core._compile.scratch`)."""
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


@numba.njit(inline="always")
def carve(buf: Array, offset: int, rows: int, cols: int) -> Array:
    """:func:`_carve` (typed for mypy: an intrinsic's first parameter is its context)."""
    return _carve(buf, offset, rows, cols)  # type: ignore[call-arg]


@jit
def workspace_rows(n: int, m: int, p: int, loops: int) -> int:
    """Rows of the ``(rows, WS_COLS)`` scratch :func:`views` and :func:`state_views`
    carve up."""
    size = 52 * n + m * n + m * p + 3 * m + 4 * p + 24 * loops  # views, state_views,
    # block_views
    return (size + WS_COLS - 1) // WS_COLS


@jit
def views(buf: Array, n: int, m: int, p: int, loops: int
          ) -> tuple[Array, Array, Array, Array, Array, Array, Array, Array, Array, Array,
                     Array, Array]:
    """``(work (n, 30), P (n, 12), D (n, 6), F (B, 24), K (m, n), A (m, p), b (m,), rdiag,
    tau, xp (p,), tree, extra (n,))`` carved from the scratch ``buf`` (valid while it is)."""
    o = 48 * n + 24 * loops
    K = carve(buf, o, m, n)
    o += m * n
    A = carve(buf, o, m, p)
    o += m * p
    vectors = carve(buf, o, 1, m + 4 * p + 2 * n)[0]
    b = vectors[0:m]
    rdiag = vectors[m:m + p]
    tau = vectors[m + p:m + 2 * p]
    xp = vectors[m + 2 * p:m + 3 * p]
    o = m + 4 * p
    return (carve(buf, 0, n, 30), carve(buf, 30 * n, n, 12), carve(buf, 42 * n, n, 6),
            carve(buf, 48 * n, loops, 24), K, A, b, rdiag, tau, xp, vectors[o:o + n],
            vectors[o + n:o + 2 * n])


@jit
def state_views(buf: Array, n: int, m: int, p: int, loops: int) -> tuple[Array, Array, Array]:
    """``(qd, qdd (n,), lam (m,))`` after :func:`views`' arrays in ``buf``."""
    o = 48 * n + 24 * loops + m * n + m * p + m + 4 * p + 2 * n
    v = carve(buf, o, 1, 2 * n + m)[0]
    return v[0:n], v[n:2 * n], v[2 * n:2 * n + m]


@jit
def block_views(buf: Array, n: int, m: int, p: int, loops: int) -> Array:
    """``u`` (m,) after :func:`state_views`' arrays: the scratch of :func:`pairs_solve`
    and :func:`pairs_transpose_solve`."""
    o = 48 * n + 24 * loops + m * n + m * p + m + 4 * p + 4 * n + m
    u: Array = carve(buf, o, 1, m)[0]
    return u


@jit
def row_views(buf: Array, n: int, m: int, p: int, loops: int
              ) -> tuple[Array, Array, Array, Array]:
    """``(qd, qdd, tree (1, n), lam (m,))``: :func:`state_views`' rates and :func:`views`'
    ``tree`` as one-row matrices, the layout the tree's row passes read
    (``_rnea_jit.forward_span``, ``backward_span``)."""
    o = 48 * n + 24 * loops + m * n + m * p + m + 4 * p
    s = o + 2 * n
    return (carve(buf, s, 1, n), carve(buf, s + n, 1, n), carve(buf, o, 1, n),
            carve(buf, s + 2 * n, 1, m)[0])


__all__ = [
    "BUDGET",
    "CLOSED",
    "L_COLS",
    "NOT_CONVERGED",
    "PAUSED",
    "PLANAR_REVOLUTE",
    "REVERSED",
    "SINGULAR",
    "SINGULAR_RATIO",
    "WS_COLS",
    "block_views",
    "constraint_jacobian",
    "factor_pairs",
    "factor_passive",
    "loop_poses",
    "pairs_solve",
    "pairs_transpose_solve",
    "qr_factor",
    "qr_solve",
    "qr_transpose_solve",
    "residual",
    "row_views",
    "solve_passive",
    "state_views",
    "views",
    "workspace_rows",
]
