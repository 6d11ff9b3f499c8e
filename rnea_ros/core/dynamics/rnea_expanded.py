"""RNEA and gravity on models with multi-DoF or mimic joints, through the kernel tree.

The unchanged kernels of :mod:`~rnea_ros.core.dynamics._rnea_jit` run on the model's kernel tree
(:mod:`rnea_ros.core.model.kernel_tree`): a copy of the packed rows with each
multi-DoF joint's anchor placed at ``placement o pose(q)``, kernel coordinates
``q_k``, ``v_k = G v`` and ``a_k = G a - corr(v)``
(:mod:`rnea_ros.core.expansion`), and the result folded back,
``tau = G^T tau_k`` plus armature and friction per velocity coordinate
(Khalil eq. 31). ``G`` holds the mimic multipliers, so a leader receives
``multiplier * tau_follower`` (exact: the coupling is a constant linear map).

Kernels: :mod:`~rnea_ros.core.dynamics._rnea_expanded_jit` (``tree_rnea_call``,
``tree_general_call``, ``tree_gravity_call``, ``rnea_tree_rows``, ``gravity_tree_rows``;
``rnea_free_rows``, the batch of a free-flyer root over 1-DoF joints, whose root
is one step instead of six rows: :func:`~rnea_ros.core.expansion.free_root`).

Shapes: ``q`` (nq,), ``v, a, tau`` (nv,); ``fext`` (nbodies, 6) and the joint
wrenches (nbodies, 6), per body; batch forms ``(N, nq)`` / ``(N, nv)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.dynamics._rnea_expanded_jit import (
    gravity_tree_rows,
    rnea_free_rows,
    rnea_tree_rows,
    tree_general_call,
    tree_gravity_call,
    tree_rnea_call,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion, base_state
from rnea_ros.core.expansion import free_root
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_vector,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

_rnea_fast = FastCall(tree_rnea_call)
_general = FastCall(tree_general_call)
_gravity_fast = FastCall(tree_gravity_call)
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
    if free_root(model):
        ok = rnea_free_rows(model.kernel_floats, Q, V, A, g, drive, tau)
    else:
        ok = rnea_tree_rows(model.kernel_floats, model.kernel_map, Q, V, A, g, drive, tau)
    if not ok:
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


__all__ = ["general", "gravity_batch", "gravity_torques", "rnea", "rnea_batch"]
