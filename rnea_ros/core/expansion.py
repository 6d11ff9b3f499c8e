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
:func:`expand`, :func:`velocity_matrix` and :func:`joint_rows`, which are here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._expansion_jit import expand_motion, expand_q
from rnea_ros.core._layout import FREE_FLYER, K_IV, K_KIND, K_MULT, SUB_COUNT

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


def joint_rows(model: RobotModel) -> list[tuple[int, int]]:
    """``(first, count)`` kernel rows of every multi-DoF joint."""
    km = model.kernel_map
    return [(k, SUB_COUNT[int(km[k, K_KIND])]) for k in range(km.shape[0])
            if int(km[k, K_KIND]) >= FREE_FLYER]


__all__ = ["expand", "joint_rows", "velocity_matrix"]
