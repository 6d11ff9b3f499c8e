"""RNEA and gravity on models with multi-DoF or mimic joints, through the kernel tree.

The unchanged kernels of :mod:`~rnea_ros.core.dynamics.rnea` and
:mod:`~rnea_ros.core.dynamics.batch_kernels` run on the model's kernel tree
(:mod:`rnea_ros.core.model.kernel_tree`): a copy of the packed rows with each
multi-DoF joint's anchor placed at ``placement o pose(q)``, kernel coordinates
``q_k``, ``v_k = G v`` and ``a_k = G a - corr(v)``
(:mod:`rnea_ros.core._expansion`), and the result folded back,
``tau = G^T tau_k`` plus armature and friction per velocity coordinate
(Khalil eq. 31). ``G`` holds the mimic multipliers, so a leader receives
``multiplier * tau_follower`` (exact: the coupling is a constant linear map).

Shapes: ``q`` (nq,), ``v, a, tau`` (nv,); ``fext`` (nbodies, 6) and the joint
wrenches (nbodies, 6), per body; batch forms ``(N, nq)`` / ``(N, nv)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import base_tuple, fixed_base
from rnea_ros.core._compile import (
    FastCall,
    inline,
    jit_entry,
    jit_entry_fma,
    jit_fma,
    tree_scratch,
    tree_vector,
)
from rnea_ros.core._expansion import expand_q, expand_state, gather
from rnea_ros.core._layout import K_NQ, K_NV, N_FLOATS, RW_COLS, RW_F, RW_N
from rnea_ros.core.dynamics.batch_kernels import gravity_row, rnea_row
from rnea_ros.core.dynamics.moving_base import BaseMotion, base_state
from rnea_ros.core.dynamics.rnea import rnea_pass
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_vector,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

_gravity_row = inline(gravity_row)
_rnea_row = inline(rnea_row)
_expand_q, _expand_state, _gather = inline(expand_q), inline(expand_state), inline(gather)


def _copy_rows(fp: Array, fpx: Array) -> None:
    """``fpx[:] = fp`` (plain loops: numba compiles them to a copy)."""
    for i in range(fp.shape[0]):
        for c in range(N_FLOATS):
            fpx[i, c] = fp[i, c]


_copy = inline(_copy_rows)


@jit_entry
def _rnea_call(fp: Array, km: Array, q: Array, v: Array, a: Array, g: Array,
               tau: Array) -> bool:
    """The per-call entry: armature and friction, fixed base, no external wrenches.
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
    rnea_pass(fpx, qk, vk, ak, fixed_base(g), work[:0], False, False, tk, work)
    return bool(np.isfinite(_gather(fp, km, tk, v, a, True, tau)))


@jit_entry
def _general_call(fp: Array, km: Array, body_row: NDArray[np.int64], q: Array, v: Array, a: Array,
                  base: Array, fext: Array, use_fext: bool, drive: bool, tau: Array,
                  first_row: NDArray[np.int64], wrenches: Array, want_wrenches: bool) -> bool:
    """The general entry: ``base`` (12,) as in :func:`~.rnea.rnea_pass`; ``fext``
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
def _gravity_call(fp: Array, km: Array, q: Array, g: Array, tau: Array) -> bool:
    """Generalized gravity (composite first moments, :func:`~.batch_kernels.gravity_row`)."""
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
    """:func:`~.batch_kernels.rnea_row` on every sample through the kernel tree
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


@jit_fma
def gravity_tree_rows(fp: Array, km: Array, Q: Array, g: Array, TAU: Array) -> bool:
    """:func:`~.batch_kernels.gravity_row` on every sample through the kernel tree."""
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


_rnea_fast = FastCall(_rnea_call)
_general = FastCall(_general_call)
_gravity_fast = FastCall(_gravity_call)
_NO_WRENCH = np.zeros((0, 6))


def rnea(model: RobotModel, q: Array, v: Array, a: Array, gravity: object | None,
         fext: object | None, base_motion: BaseMotion | None) -> Array:
    """:func:`~.rnea.rnea` on the kernel tree (``q, v, a`` C-contiguous float64, 1-D)."""
    tau = np.empty(model.nv)
    if fext is None and base_motion is None:
        g = model.gravity if gravity is None else gravity_vector(model, gravity)
        ok = _rnea_fast.call(model.kernel_floats, model.kernel_map, q, v, a, g, tau)
    else:
        use_fext = fext is not None
        f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
        base = base_state(base_motion, gravity_vector(model, gravity))
        ok = _general.call(model.kernel_floats, model.kernel_map, model.kernel_last_row, q, v,
                           a, base, f, use_fext, True, tau, model.kernel_first_row,
                           _NO_WRENCH, False)
    if not ok:
        raise_bad_input(model, q=q, qd=v, qdd=a)
    return tau


def general(model: RobotModel, q: Array, v: Array, a: Array, base: Array, fext: Array | None,
            drive: bool, want_wrenches: bool) -> tuple[Array, Array]:
    """``(tau (nv,), joint wrenches (nbodies, 6))`` from the general entry."""
    tau = np.empty(model.nv)
    wrenches = np.empty((model.nbodies, 6)) if want_wrenches else _NO_WRENCH
    use_fext = fext is not None
    if not _general.call(model.kernel_floats, model.kernel_map, model.kernel_last_row, q, v, a,
                         base, fext if use_fext else _NO_WRENCH, use_fext, drive, tau,
                         model.kernel_first_row, wrenches, want_wrenches):
        raise_bad_input(model, q=q, qd=v, qdd=a)
    return tau, wrenches


def gravity_torques(model: RobotModel, q: Array, g: Array) -> Array:
    """:func:`~.rnea.gravity_torques` on the kernel tree, fixed base."""
    tau = np.empty(model.nv)
    if not _gravity_fast.call(model.kernel_floats, model.kernel_map, q, g, tau):
        raise_bad_input(model, q=q)
    return tau


def rnea_batch(model: RobotModel, Q: Array, V: Array, A: Array, g: Array, drive: bool
               ) -> Array:
    """:func:`~.rnea.rnea_batch` on the kernel tree (checked ``(N, nq)``/``(N, nv)`` inputs)."""
    tau = np.empty_like(V)
    if not rnea_tree_rows(model.kernel_floats, model.kernel_map, Q, V, A, g, drive, tau):
        raise_non_finite(model, q=Q, qd=V, qdd=A)
    return tau


def gravity_batch(model: RobotModel, Q: Array, g: Array) -> Array:
    """:func:`~.rnea.gravity_batch` on the kernel tree."""
    tau = np.empty((Q.shape[0], model.nv))
    if not gravity_tree_rows(model.kernel_floats, model.kernel_map, Q, g, tau):
        raise_non_finite(model, q=Q)
    return tau


def check(model: RobotModel, q: object, v: object, a: object) -> tuple[Array, Array, Array]:
    """``q`` (nq,), ``v, a`` (nv,) as float64 arrays, else :class:`StateError`."""
    return joint_vector(model, q, "q"), joint_vector(model, v, "qd"), joint_vector(model, a, "qdd")


__all__ = ["general", "gravity_batch", "gravity_torques", "rnea", "rnea_batch",
           "rnea_tree_rows"]
