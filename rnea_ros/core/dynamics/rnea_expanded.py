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
is one step instead of six rows: :func:`free_root`).

Shapes: ``q`` (nq,), ``v, a, tau`` (nv,); ``fext`` (nbodies, 6) and the joint
wrenches (nbodies, 6), per body; batch forms ``(N, nq)`` / ``(N, nv)``.
"""

from __future__ import annotations

import weakref

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core._layout import (
    F_AXIS,
    F_KIND,
    F_MASS,
    F_P,
    F_R,
    FREE_FLYER,
    INNER,
    K_IQ,
    K_IV,
    K_KIND,
    K_MULT,
    K_OFFSET,
    OWN,
    PRISMATIC,
    REVOLUTE_X,
    REVOLUTE_Y,
    REVOLUTE_Z,
)
from rnea_ros.core.dynamics._rnea_expanded_jit import (
    gravity_tree_rows,
    rnea_free_rows,
    rnea_tree_rows,
    tree_general_call,
    tree_gravity_call,
    tree_rnea_call,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion, base_state
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
_FREE_ROOT: weakref.WeakKeyDictionary[RobotModel, bool] = weakref.WeakKeyDictionary()
_ROOT_KINDS = (PRISMATIC, PRISMATIC, PRISMATIC, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)


def free_root(model: RobotModel) -> bool:
    """Whether the kernel tree is a free-flyer root on rows 0-5 (axes ``e_x, e_y, e_z``
    twice, rows 1-5 at the identity placement, no mass on rows 0-4) and otherwise 1-DoF
    joints without mimic (row ``k`` at ``q[k + 1]``, ``v[k]``): the layout
    :func:`~._rnea_expanded_jit.rnea_free_rows` needs. Decided once per model."""
    known = _FREE_ROOT.get(model)
    if known is None:
        fp, km = model.kernel_floats, model.kernel_map
        rows = np.arange(km.shape[0])
        known = bool(
            km.shape[0] > 6 and km[0, K_KIND] == FREE_FLYER and np.all(km[1:6, K_KIND] == INNER)
            and np.all(km[6:, K_KIND] == OWN) and np.all(km[6:, K_MULT] == 1.0)
            and np.all(km[6:, K_OFFSET] == 0.0) and np.all(km[6:, K_IQ] == rows[6:] + 1)
            and np.all(km[:, K_IV] == rows) and np.all(fp[:6, F_KIND] == _ROOT_KINDS)
            and np.all(fp[:6, F_AXIS:F_AXIS + 3] == np.vstack([np.eye(3), np.eye(3)]))
            and np.all(fp[1:6, F_R:F_R + 9] == np.eye(3).ravel())
            and np.all(fp[1:6, F_P:F_P + 3] == 0.0) and np.all(fp[:5, F_MASS] == 0.0)
            and np.all(fp[:5, F_MASS + 1:F_MASS + 10] == 0.0))
        _FREE_ROOT[model] = known
    return known


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


__all__ = ["free_root", "general", "gravity_batch", "gravity_torques", "rnea", "rnea_batch"]
