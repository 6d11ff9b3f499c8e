"""Numba kernels of :mod:`rnea_ros.core.dynamics.rnea_expanded` (the face): RNEA and
gravity through the kernel tree of a model with multi-DoF or mimic joints.

Each entry copies the packed rows, places the anchors at ``q`` and expands the
coordinates (:mod:`rnea_ros.core.expansion`), runs the unchanged kernels of
:mod:`~rnea_ros.core.dynamics._rnea_jit` and folds the result back with
:func:`~rnea_ros.core._expansion_jit.gather`. Entries: :func:`tree_rnea_call`,
:func:`tree_general_call`, :func:`tree_gravity_call`; batch kernels
:func:`rnea_tree_rows`, :func:`gravity_tree_rows`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    add3,
    base_tuple,
    coulomb_sign,
    cross,
    inertia_times,
    mm,
    mtv,
    quaternion_matrix,
)
from rnea_ros.core._compile import (
    inline,
    jit_entry,
    jit_entry_fma,
    jit_fma,
    tree_scratch,
    tree_vector,
)
from rnea_ros.core._expansion_jit import expand_q, expand_state, gather
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_BAND,
    F_COULOMB,
    F_R,
    F_VISCOUS,
    K_NQ,
    K_NV,
    N_FLOATS,
    RW_A,
    RW_COLS,
    RW_DW,
    RW_F,
    RW_N,
    RW_V,
    RW_W,
)
from rnea_ros.core.dynamics._rnea_jit import gravity_row, rnea_pass, rnea_row, rnea_span
from rnea_ros.core.model.joints import UNIT_TOLERANCE

Array = NDArray[np.float64]

_gravity_row = inline(gravity_row)
_rnea_row = inline(rnea_row)
_expand_q, _expand_state, _gather = inline(expand_q), inline(expand_state), inline(gather)
_add3, _cross, _mm, _mtv = inline(add3), inline(cross), inline(mm), inline(mtv)
_inertia_times = inline(inertia_times)
_quaternion_matrix = inline(quaternion_matrix)


def _copy_rows(fp: Array, fpx: Array) -> None:
    """``fpx[:] = fp`` (plain loops: numba compiles them to a copy)."""
    for i in range(fp.shape[0]):
        for c in range(N_FLOATS):
            fpx[i, c] = fp[i, c]


_copy = inline(_copy_rows)


@jit_entry_fma
def tree_rnea_call(fp: Array, km: Array, q: Array, v: Array, a: Array, g: Array,
               tau: Array) -> bool:
    """The per-call entry: armature and friction, fixed base, no external wrenches;
    the batch's :func:`~._rnea_jit.rnea_row` on the one sample, as :func:`rnea_tree_rows`.
    False: a wrong length, a quaternion off the unit sphere, or a non-finite result."""
    nk = fp.shape[0]
    if (q.shape[0] != km[0, K_NQ] or v.shape[0] != km[0, K_NV] or a.shape[0] != km[0, K_NV]
            or g.shape[0] != 3):
        return False
    fpx = tree_scratch(nk, N_FLOATS)
    _copy(fp, fpx)
    qk, vk, ak, tk = tree_vector(nk), tree_vector(nk), tree_vector(nk), tree_vector(nk)
    if not _expand_state(fp, km, q, v, a, fpx, qk, vk, ak):
        return False
    work = tree_scratch(nk, RW_COLS)
    _rnea_row(fpx, qk.reshape((1, nk)), vk.reshape((1, nk)), ak.reshape((1, nk)), 0, g, False,
              tk.reshape((1, nk)), work)
    return bool(np.isfinite(_gather(fp, km, tk, v, a, True, tau)))


@jit_entry
def tree_general_call(fp: Array, km: Array, body_row: NDArray[np.int64], q: Array, v: Array,
                      a: Array, base: Array, fext: Array, use_fext: bool, drive: bool,
                      tau: Array, first_row: NDArray[np.int64], wrenches: Array,
                      want_wrenches: bool) -> bool:
    """The general entry: ``base`` (12,) as in :func:`~._rnea_jit.rnea_pass`; ``fext``
    (nbodies, 6) applied on each body's last kernel row (``body_row``); the joint
    wrench of body ``b`` is the one through its joint's first row (``first_row``),
    whose frame is the body frame."""
    nk = fp.shape[0]
    if q.shape[0] != km[0, K_NQ] or v.shape[0] != km[0, K_NV] or a.shape[0] != km[0, K_NV]:
        return False
    fpx = fp.copy()
    qk, vk, ak, tk = np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk)
    if not expand_state(fp, km, q, v, a, fpx, qk, vk, ak):
        return False
    fk = np.zeros((nk, 6))
    if use_fext:
        for b in range(body_row.shape[0]):
            fk[int(body_row[b]), :] = fext[b, :]
    work = np.empty((nk, RW_COLS))
    rnea_pass(fpx, qk, vk, ak, base_tuple(base), fk, use_fext, False, tk, work)
    ok = bool(np.isfinite(gather(fp, km, tk, v, a, drive, tau)))
    if want_wrenches:
        for b in range(first_row.shape[0]):
            k = int(first_row[b])
            for c in range(3):
                wrenches[b, c] = work[k, RW_F + c]
                wrenches[b, 3 + c] = work[k, RW_N + c]
    return ok


@jit_entry_fma
def tree_gravity_call(fp: Array, km: Array, q: Array, g: Array, tau: Array) -> bool:
    """Generalized gravity (composite first moments, :func:`~._rnea_jit.gravity_row`)."""
    nk = fp.shape[0]
    if q.shape[0] != km[0, K_NQ] or g.shape[0] != 3:
        return False
    fpx = tree_scratch(nk, N_FLOATS)
    _copy(fp, fpx)
    qk, tk = tree_vector(nk), tree_vector(nk)
    if not _expand_q(fp, km, q, fpx, qk):
        return False
    work = tree_scratch(nk, RW_COLS)
    _gravity_row(fpx, qk.reshape((1, nk)), 0, g, tk.reshape((1, nk)), work)
    return bool(np.isfinite(_gather(fp, km, tk, q[:0], q[:0], False, tau)))


@inline
def _row_in(X: Array, s: int, x: Array) -> None:
    """``x[:] = X[s]`` (a copy into a reused buffer: cheaper than a per-sample view)."""
    for i in range(x.shape[0]):
        x[i] = X[s, i]


@inline
def _row_out(x: Array, X: Array, s: int) -> None:
    """``X[s] = x``."""
    for i in range(x.shape[0]):
        X[s, i] = x[i]


@jit_fma
def rnea_tree_rows(fp: Array, km: Array, Q: Array, V: Array, A: Array, g: Array,
                   drive: bool, TAU: Array) -> bool:
    """:func:`~._rnea_jit.rnea_row` on every sample through the kernel tree
    (one copy of the rows, anchors rewritten per sample); False if a quaternion is
    off the unit sphere or a torque is not finite."""
    nk, nq, nv = fp.shape[0], Q.shape[1], V.shape[1]
    fpx = fp.copy()
    QK, VK, AK, TK = np.empty((1, nk)), np.empty((1, nk)), np.empty((1, nk)), np.empty((1, nk))
    qk, vk, ak, tk = QK[0], VK[0], AK[0], TK[0]  # views made once
    q, v, a, tau = np.empty(nq), np.empty(nv), np.empty(nv), np.empty(nv)
    work = np.empty((nk, RW_COLS))
    total = 0.0
    for s in range(Q.shape[0]):
        _row_in(Q, s, q)
        _row_in(V, s, v)
        _row_in(A, s, a)
        if not _expand_state(fp, km, q, v, a, fpx, qk, vk, ak):
            return False
        _rnea_row(fpx, QK, VK, AK, 0, g, False, TK, work)
        total += _gather(fp, km, tk, v, a, drive, tau)
        _row_out(tau, TAU, s)
    return bool(np.isfinite(total))


@inline
def _free_root(fp: Array, Q: Array, V: Array, A: Array, s: int, g: Array,
               work: Array) -> float:
    """The free-flyer root of sample ``s`` in one step, for :func:`rnea_free_rows`:
    its body (kernel row 5, where the children read it) moves with ``w = omega``,
    ``v = nu``, ``dw = domega``, ``a = dnu + R^T (-g)`` in its own frame
    (Pinocchio's ``v = [nu; omega]``, body frame; ``S = 1_6`` is constant, so
    ``v x S v = 0`` adds nothing), ``R`` the placement of row 0 times the
    quaternion's rotation; its body force
    ``(n, f) = I (dw, a) + v x* I v`` goes to ``work[5]`` for the children to add to.
    Returns NaN for a quaternion off the unit sphere, else 0."""
    x, y, z, w_ = Q[s, 3], Q[s, 4], Q[s, 5], Q[s, 6]
    if abs(np.sqrt(x * x + y * y + z * z + w_ * w_) - 1.0) > UNIT_TOLERANCE:
        return np.nan
    R0 = (fp[0, F_R], fp[0, F_R + 1], fp[0, F_R + 2], fp[0, F_R + 3], fp[0, F_R + 4],
          fp[0, F_R + 5], fp[0, F_R + 6], fp[0, F_R + 7], fp[0, F_R + 8])
    R = _mm(R0, _quaternion_matrix(x, y, z, w_))
    w, v = (V[s, 3], V[s, 4], V[s, 5]), (V[s, 0], V[s, 1], V[s, 2])
    dw = (A[s, 3], A[s, 4], A[s, 5])
    a = _add3((A[s, 0], A[s, 1], A[s, 2]), _mtv(R, (-g[0], -g[1], -g[2])))
    n1, f1 = _inertia_times(fp, 5, dw, a)
    n2, f2 = _inertia_times(fp, 5, w, v)
    n_ = _add3(n1, _add3(_cross(w, n2), _cross(v, f2)))
    f_ = _add3(f1, _cross(w, f2))
    for c in range(3):
        work[5, RW_W + c], work[5, RW_V + c] = w[c], v[c]
        work[5, RW_DW + c], work[5, RW_A + c] = dw[c], a[c]
        work[5, RW_N + c], work[5, RW_F + c] = n_[c], f_[c]
    return 0.0


@inline
def _root_out(fp: Array, V: Array, A: Array, s: int, drive: bool, TAU: Array,
              work: Array) -> float:
    """The root's six generalized forces: the wrench through it (``f`` then ``n``, body
    frame, children's included), plus each coordinate's drive terms; their sum."""
    total = 0.0
    for j in range(6):
        t = work[5, RW_F + j] if j < 3 else work[5, RW_N + j - 3]
        if drive:
            vj = V[s, j]
            t += fp[j, F_ARMATURE] * A[s, j] + fp[j, F_VISCOUS] * vj
            if fp[j, F_COULOMB] != 0.0:
                t += fp[j, F_COULOMB] * coulomb_sign(vj, fp[j, F_BAND])
        TAU[s, j] = t
        total += t
    return total


@jit_fma
def rnea_free_rows(fp: Array, Q: Array, V: Array, A: Array, g: Array, drive: bool,
                   TAU: Array) -> bool:
    """:func:`rnea_tree_rows` for a kernel tree whose only multi-DoF joint is a
    free-flyer root on rows 0-5 (``nq = nv + 1``, the other rows 1-DoF joints at
    ``q[i + 1]``, ``v[i]``; ``rnea_expanded.free_root`` decides): the root in one step
    (:func:`_free_root`) instead of six 1-DoF rows, the rest by
    :func:`~._rnea_jit.rnea_span` reading the samples in place. Its twin:
    :func:`rnea_tree_rows` (equal to rounding, test/core/dynamics/test_rnea_expanded.py).
    False if a quaternion is off the unit sphere or a torque is not finite."""
    work = np.zeros((fp.shape[0], RW_COLS))
    total = 0.0
    for s in range(Q.shape[0]):
        total += _free_root(fp, Q, V, A, s, g, work)
        total += rnea_span(fp, Q, V, A, s, g, drive, TAU, work, 6, 1)
        total += _root_out(fp, V, A, s, drive, TAU, work)
    return bool(np.isfinite(total))


@jit_fma
def gravity_tree_rows(fp: Array, km: Array, Q: Array, g: Array, TAU: Array) -> bool:
    """:func:`~._rnea_jit.gravity_row` on every sample through the kernel tree."""
    nk, nq = fp.shape[0], Q.shape[1]
    fpx = fp.copy()
    QK, TK = np.empty((1, nk)), np.empty((1, nk))
    qk, tk = QK[0], TK[0]
    q, tau = np.empty(nq), np.empty(TAU.shape[1])
    work = np.empty((nk, RW_COLS))
    total = 0.0
    for s in range(Q.shape[0]):
        _row_in(Q, s, q)
        if not _expand_q(fp, km, q, fpx, qk):
            return False
        _gravity_row(fpx, QK, 0, g, TK, work)
        total += _gather(fp, km, tk, q[:0], q[:0], False, tau)
        _row_out(tau, TAU, s)
    return bool(np.isfinite(total))


__all__ = ["gravity_tree_rows", "rnea_free_rows", "rnea_tree_rows", "tree_general_call",
           "tree_gravity_call", "tree_rnea_call"]
