"""Compiled factorisations of ``K_p`` (m, p), the passive columns of the loops'
constraint Jacobian (Khalil 2010 §4, eq. 4 and 56; the layout and ``K`` itself are
in :mod:`._loop_jit`, which re-exports these names).

* Householder QR (:func:`qr_factor`, :func:`qr_solve`, :func:`qr_transpose_solve`,
  each reflector applied by :func:`reflect`;
  :func:`factor_passive`, :func:`solve_passive` on ``K``'s passive columns): m >= p,
  redundant rows allowed, the column rank checked by ``min |R_kk| / |column k|``.
* Planar loops two by two (:func:`factor_pairs`, :func:`pairs_solve`,
  :func:`pairs_transpose_solve`): block lower triangular 2 x 2 blocks, each solved
  by its inverse (Cramer).

Arrays are the caller's scratch (``_loop_jit.views``); nothing is allocated.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


# --------------------------------------------------------------- QR of K_p
@jit
def reflect(A: Array, rows: int, k: int, tk: float, x: Array) -> None:
    """``x[k:rows] -= tk (u . x) u``, ``u = A[k:rows, k]``: the ``k``-th Householder
    reflector ``H_k = I - tk u u^T`` of :func:`qr_factor` applied to ``x`` (rows,)
    (``H_k`` is symmetric and its own inverse: ``Q^T b`` applies ``H_0 .. H_{p-1}``,
    ``Q z`` the reverse); ``tk = 0`` (a zero column) is the identity."""
    if tk == 0.0:
        return
    dot = 0.0
    for i in range(k, rows):
        dot += A[i, k] * x[i]
    dot *= tk
    for i in range(k, rows):
        x[i] -= dot * A[i, k]


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
        reflect(A, rows, k, tau[k], b)
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
        reflect(A, rows, k, tau[k], z)


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
    rank: float = qr_factor(A, m, p, rdiag, tau)
    return rank


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


# ------------------------------------------------- K_p two by two (blk)
# ``blk`` (int64, ``ClosedLoopModel.passive_blocks``): ``[B, ro (m), co (p)]``. ``B > 0``:
# the rows ``ro`` and passive columns ``co`` (positions in ``perm[na:]``) order ``K_p`` as
# ``B`` square 2 x 2 blocks, block lower triangular (block ``b``: rows ``ro[2b:2b+2]``,
# columns ``co[2b:2b+2]``; a block's rows are zero in the later blocks' columns, an exact 0
# in ``K``: those joints do not move that loop, ``L_SUPPORT`` 0). That is a mechanism of
# planar loops (2 rows each), each of which fixes two passive joints the earlier ones left:
# the four-bar and five-bar (one block) and the palletizer (three). ``K_p`` is then solved
# block by block, each block by its inverse (Cramer), in place of its QR (Khalil 2010 §4,
# eq. 4 loop by loop; ``det K_p`` is the blocks' product). ``B = 0``: no such order,
# ``K_p``'s QR (:func:`factor_passive`).


@jit
def factor_pairs(K: Array, perm: IntArray, na: int, blk: IntArray, A: Array) -> float:
    """``A`` (m, p) = ``K_p[ro, co]`` (``blk``, ``B > 0``) on and below its diagonal
    blocks, each diagonal block replaced by its inverse. Returns the rank measure of
    :func:`qr_factor` over the blocks (its value on a 2 x 2 block ``[c0 c1]`` is
    ``|det| / (|c0| |c1|)``; 0: singular)."""
    nb = blk[0]
    m = 2 * nb
    smallest = np.inf
    for bb in range(nb):
        r = 2 * bb
        for i in range(r, r + 2):
            row = blk[1 + i]
            for k in range(r + 2):
                A[i, k] = K[row, perm[na + blk[1 + m + k]]]
        a, b, c, d = A[r, r], A[r, r + 1], A[r + 1, r], A[r + 1, r + 1]
        det = a * d - b * c
        n2 = (a * a + c * c) * (b * b + d * d)
        smallest = min(smallest, det * det / n2 if n2 != 0.0 else 0.0)
        if det != 0.0:
            inv = 1.0 / det
            A[r, r], A[r, r + 1], A[r + 1, r], A[r + 1, r + 1] = (d * inv, -b * inv, -c * inv,
                                                                  a * inv)
    return math.sqrt(smallest)


@jit
def pairs_solve(blk: IntArray, A: Array, b: Array, u: Array, x: Array) -> None:
    """``x`` (p,) = ``K_p^-1 b`` (b (m,)) with :func:`factor_pairs`' ``A``: block by block
    in order, the right-hand side less the earlier blocks' columns (block forward
    substitution), times the block's inverse. ``u`` (m,) is scratch."""
    nb = blk[0]
    m = 2 * nb
    for bb in range(nb):
        r = 2 * bb
        s0, s1 = b[blk[1 + r]], b[blk[2 + r]]
        for k in range(r):
            s0 -= A[r, k] * u[k]
            s1 -= A[r + 1, k] * u[k]
        u[r] = A[r, r] * s0 + A[r, r + 1] * s1
        u[r + 1] = A[r + 1, r] * s0 + A[r + 1, r + 1] * s1
    for k in range(m):
        x[blk[1 + m + k]] = u[k]


@jit
def pairs_transpose_solve(blk: IntArray, A: Array, y: Array, u: Array, z: Array) -> None:
    """``z`` (m,) = ``K_p^-T y`` (y (p,)) with :func:`factor_pairs`' ``A``: block by block
    backwards (``K_p^T`` is block upper triangular), the right-hand side less the later
    blocks' rows, times the block's inverse transposed. ``u`` (m,) is scratch."""
    nb = blk[0]
    m = 2 * nb
    for bb in range(nb - 1, -1, -1):
        r = 2 * bb
        s0, s1 = y[blk[1 + m + r]], y[blk[2 + m + r]]
        for i in range(r + 2, m):
            s0 -= A[i, r] * u[i]
            s1 -= A[i, r + 1] * u[i]
        u[r] = A[r, r] * s0 + A[r + 1, r] * s1
        u[r + 1] = A[r, r + 1] * s0 + A[r + 1, r + 1] * s1
    for i in range(m):
        z[blk[1 + i]] = u[i]


__all__ = [
    "factor_pairs",
    "factor_passive",
    "pairs_solve",
    "pairs_transpose_solve",
    "qr_factor",
    "qr_solve",
    "qr_transpose_solve",
    "reflect",
    "solve_passive",
]
