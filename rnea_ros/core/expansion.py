"""Between user coordinates ``(q, v, a)`` and the *kernel tree*.

The kernels of :mod:`rnea_ros.core.dynamics` work on 1-DoF rows. A model with
multi-DoF or mimic joints is packed (:mod:`rnea_ros.core.model.kernel_tree`)
into such rows plus a small map ``km`` (nk, 7), one row per kernel row:

* ``K_KIND``: :data:`OWN` (a 1-DoF joint, or a mimic follower:
  ``q_k = mult q[iq] + offset``, ``v_k = mult v[iv]``, ``a_k = mult a[iv]``),
  :data:`INNER` (a later sub-joint of a multi-DoF joint: ``q_k = 0``,
  ``v_k = v[iv]``), or the *anchor* (first sub-joint) of a multi-DoF joint,
  :data:`FREE_FLYER`, :data:`PLANAR`, :data:`SPHERICAL`: ``q_k = 0`` and its
  placement becomes ``placement o pose(q[iq:iq + nq])`` (:func:`write_anchor`).
* ``K_IQ``, ``K_IV``: where its position and velocity come from;
  ``K_MULT``, ``K_OFFSET``: the mimic multiplier and offset (1, 0 otherwise);
  ``K_NQ``, ``K_NV``: the model's nq and nv (the same on every row).

The sub-joints of a multi-DoF joint sit at zero displacement on coincident
frames, so the kernel's body velocities equal Pinocchio's. Its
velocity-product term for sub-joint ``k`` uses the velocity *after* ``k``,
``v_par + sum_{j<=k} S_j v_j``, while a multi-DoF joint's body acceleration is
``a_i = X a_par + S a + v_i x S v`` with the body's whole velocity ``v_i``
(Caron's RNEA post, forward pass, for "common" joints whose ``S`` is constant in
the body frame; Pinocchio's): the kernel must see ``a_k = a - corr(v)`` with

    corr(v) = sum_{j<k} (S_j v_j) x (S_k v_k)

(spatial motion cross products within the joint, in its motion subspace;
:func:`joint_corr` gives them in closed form per type, :func:`pair_cross` in
general). Generalized forces come back as ``tau[iv] += mult * tau_k``
(:func:`gather`).

Kernels: :mod:`rnea_ros.core._expansion_jit` (every function named above but
:func:`expand`, :func:`velocity_matrix`, :func:`mimic_rows` and :func:`joint_rows`, which
are here).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._expansion_jit import expand_motion, expand_q, sub_count
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

if TYPE_CHECKING:
    from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def expand(model: RobotModel, q: Array, v: Array | None = None
           ) -> tuple[Array, Array, Array]:
    """Python-side expansion for the numpy analysis functions: ``(fpx, qk, vk)`` with
    the anchors placed at ``q`` (nq,) and ``vk = G v`` (zeros without ``v``). Raises
    :class:`~rnea_ros.core.errors.StateError` naming a joint whose quaternion is not
    a unit vector."""
    fp, km = model.kernel_floats, model.kernel_map
    fpx = fp.copy()
    qk = np.empty(fp.shape[0])
    if not expand_q(fp, km, q, fpx, qk):
        model.check_configuration(q)
    vk = np.zeros(fp.shape[0])
    if v is not None:
        expand_motion(km, v, vk)
    return fpx, qk, vk


def velocity_matrix(model: RobotModel) -> Array:
    """``G`` (nk, nv): kernel velocities ``v_k = G v`` (mimic multipliers)."""
    km = model.kernel_map
    G = np.zeros((km.shape[0], model.nv))
    G[np.arange(km.shape[0]), km[:, K_IV].astype(np.int64)] = km[:, K_MULT]
    return G


def mimic_rows(model: RobotModel, q: Array, *rates: Array) -> tuple[Array, ...]:
    """``(q, qd, qdd, ...)`` on the kernel rows of a model of 1-DoF joints and mimic
    followers (one row per body; callers check :meth:`RobotModel.require_one_dof` with
    ``mimic=True``): ``q_k = mult q[iq] + offset`` and every time derivative
    ``x_k = mult x[iv]`` (``v_k = G v``, ``a_k = G a``, ...). Each (n,) or (N, n)
    gives (nk,) or (N, nk), C-contiguous; a model without mimic joints gets its
    arrays back."""
    if not model.expanded:
        return (q, *rates)
    km = model.kernel_map
    mult = km[:, K_MULT]
    q_k = q[..., km[:, K_IQ].astype(np.int64)] * mult + km[:, K_OFFSET]
    iv = km[:, K_IV].astype(np.int64)
    return (np.ascontiguousarray(q_k), *(np.ascontiguousarray(x[..., iv] * mult) for x in rates))


def fold_forces(model: RobotModel, *tau: Array) -> tuple[Array, ...]:
    """Kernel-row generalized forces (..., nk) back to the model's (..., nv):
    ``tau = G^T tau_k`` (mimic followers onto their leaders); the same arrays without
    mimic joints."""
    if not model.expanded:
        return tau
    G = velocity_matrix(model)
    return tuple(np.ascontiguousarray(t @ G) for t in tau)


def joint_rows(model: RobotModel) -> list[tuple[int, int]]:
    """``(first, count)`` kernel rows of every multi-DoF joint."""
    km = model.kernel_map
    return [(k, sub_count(int(km[k, K_KIND]))) for k in range(km.shape[0])
            if int(km[k, K_KIND]) not in (OWN, INNER)]


_FREE_ROOT: weakref.WeakKeyDictionary[RobotModel, bool] = weakref.WeakKeyDictionary()
_ROOT_KINDS = (PRISMATIC, PRISMATIC, PRISMATIC, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)


def free_root(model: RobotModel) -> bool:
    """Whether the kernel tree is a free-flyer root on rows 0-5 (axes ``e_x, e_y, e_z``
    twice, rows 1-5 at the identity placement, no mass on rows 0-4) and otherwise 1-DoF
    joints without mimic (row ``k`` at ``q[k + 1]``, ``v[k]``): the layout the batch
    kernels ``rnea_free_rows`` and ``free_floating_free_rows`` need. Decided once per
    model."""
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


__all__ = ["expand", "free_root", "joint_rows", "velocity_matrix"]
