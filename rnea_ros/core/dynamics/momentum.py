"""Centre of mass and centroidal momentum (numpy; analysis, checks, balance).

For bodies ``i`` of mass ``m_i``, centre of mass ``c_i`` and rotational
inertia ``I_i`` about it (body frame), placed in the world by ``(R_i, p_i)``
and moving at the twist ``[v_i; w_i]`` (body frame, at the body origin):

* the centre of mass ``c = sum m_i x_i / m`` with ``x_i = p_i + R_i c_i``
  (the COM of body ``i`` in the world) and ``m = sum m_i``;
* its velocity ``dc = l / m`` with ``dx_i = R_i (v_i + w_i x c_i)``;
* the centroidal momentum ``h_G = [l; k]`` (Orin, Goswami & Lee 2013): the
  linear momentum ``l = sum m_i dx_i`` and the angular momentum about the COM
  ``k = sum (R_i I_i R_i^T) (R_i w_i) + m_i (x_i - c) x dx_i``, both with
  world-aligned axes (Pinocchio's ``data.hg`` after
  ``pin.computeCentroidalMomentum``).

"World" is the model's base frame (the frame of
:func:`~rnea_ros.core.dynamics.kinematics.body_poses`): the world for a model
with a free-flyer root (``load_urdf(..., root_joint="free-flyer")``), whose
root body -- the floating base, moved by ``q[:7]`` and ``v[:6]`` -- counts like
every other body (Pinocchio's ``centerOfMass``/``computeCentroidalMomentum`` on
its ``JointModelFreeFlyer`` model). For a fixed-base model the fixed base's own
inertia is not part of the model and does not count. Mimic followers are bodies
and move with their leaders. The model-level functions rest on
:func:`~.kinematics.body_poses` and :func:`~.kinematics.body_velocities` (the
kernel tree, so any joint type); :func:`bodies_momentum` takes the body poses and
twists directly (a free-floating robot given as a base plus a fixed-base tree,
see :func:`free_floating_momentum`).
Shapes: ``q`` (nq,), ``qd`` (nv,).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.kinematics import body_poses, body_velocities
from rnea_ros.core.dynamics.moving_base import base_vectors
from rnea_ros.core.errors import ModelError
from rnea_ros.core.model.base_inertia import BodyInertia
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


class Momentum(NamedTuple):
    """Centre of mass ``com`` (3,) [m], its velocity ``com_velocity`` (3,) [m/s] and the
    centroidal momentum ``hg`` (6,) = ``[l; k]`` [kg m/s, kg m^2/s], world frame."""

    mass: float
    com: Array
    com_velocity: Array
    hg: Array


def bodies_momentum(mass: Array, com: Array, inertia: Array, R: Array, p: Array,
                    twist: Array | None = None, where: str = "bodies") -> Momentum:
    """:class:`Momentum` of rigid bodies: ``mass`` (N,), ``com`` (N, 3) and ``inertia``
    (N, 3, 3) about the COM in each body frame, poses ``R`` (N, 3, 3), ``p`` (N, 3) in
    the world, twists ``twist`` (N, 6) ``[v; w]`` in the body frames (``None``: at rest).

    Raises :class:`ModelError` (naming ``where``) when the total mass is not positive.
    """
    m = float(np.sum(mass))
    if not m > 0.0:
        raise ModelError(f"{where}: total mass {m:g} kg is not positive; no centre of mass")
    x = p + np.einsum("nij,nj->ni", R, com)  # body COMs in the world
    c = mass @ x / m
    if twist is None:
        return Momentum(m, c, np.zeros(3), np.zeros(6))
    v, w = twist[:, :3], twist[:, 3:]
    dx = np.einsum("nij,nj->ni", R, v + np.cross(w, com))
    linear = mass @ dx
    # (R I R^T)(R w) = R (I w): angular momentum of each body about its own COM.
    spin = np.einsum("nij,nj->ni", R, np.einsum("nij,nj->ni", inertia, w))
    angular = spin.sum(axis=0) + np.sum(mass[:, None] * np.cross(x - c, dx), axis=0)
    return Momentum(m, c, linear / m, np.concatenate([linear, angular]))


def free_floating_momentum(tree: RobotModel, base_inertia: BodyInertia, base_pose: object,
                           base_twist: object, q: object, v: object) -> Momentum:
    """Centre of mass, its velocity and the centroidal momentum ``[l; k]`` of a
    free-floating robot given as a base body plus a fixed-base tree (base and tree),
    world frame, as :func:`~rnea_ros.core.dynamics.floating_base.free_floating_rnea`
    takes it. A free-flyer model needs none of this: :func:`momentum`.

    Arguments as in Conventions: ``tree``, ``base_inertia``, ``base_pose``
    ([floating base and tree](core.md#floating-base-and-tree)); ``base_twist``, ``q``, ``v``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    Momentum
        Centre of mass [m], its velocity [m/s] and the centroidal momentum ``[l; k]``, world
        frame.
    """
    pose, R, twist = base_vectors(base_pose, base_twist)
    p0 = pose[:3]
    Rt, pt = body_poses(tree, q)
    Vt = body_velocities(tree, q, v, base_twist=twist)
    return bodies_momentum(
        np.r_[base_inertia.mass, tree.mass], np.vstack([base_inertia.com, tree.com]),
        np.concatenate([base_inertia.inertia[None], tree.inertia]),
        np.concatenate([R[None], R @ Rt]), np.vstack([p0, pt @ R.T + p0]),
        np.vstack([twist, Vt]), f"free-floating '{tree.name}'")


def momentum(model: RobotModel, q: object, qd: object | None = None) -> Momentum:
    """:class:`Momentum` of ``model`` at ``q`` (and ``qd``; ``None``: at rest).

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    qd : array_like of shape (nv,), optional
        Joint velocities [rad/s, m/s] (``None``: at rest).

    Returns
    -------
    Momentum
        Centre of mass [m], its velocity [m/s] and centroidal momentum, base frame.
    """
    R, p = body_poses(model, q)
    twist = None if qd is None else body_velocities(model, q, qd)
    return bodies_momentum(model.mass, model.com, model.inertia, R, p, twist,
                           f"model '{model.name}'")


def center_of_mass(model: RobotModel, q: object) -> Array:
    """Centre of mass (3,) [m] of the moving bodies, base frame (the world for a
    free-flyer root) (``pin.centerOfMass``).

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    com : ndarray of shape (3,)
        Centre of mass [m], base frame.
    """
    return momentum(model, q).com


def center_of_mass_velocity(model: RobotModel, q: object, qd: object) -> Array:
    """Velocity (3,) [m/s] of the centre of mass, base frame (Pinocchio's ``data.vcom[0]``).

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    vcom : ndarray of shape (3,)
        Centre-of-mass velocity [m/s], base frame.
    """
    return momentum(model, q, qd).com_velocity


def centroidal_momentum(model: RobotModel, q: object, qd: object) -> Array:
    """Centroidal momentum ``[l; k]`` (6,): linear momentum [kg m/s] and angular momentum
    about the centre of mass [kg m^2/s], base-frame axes (``pin.computeCentroidalMomentum``).

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    h : ndarray of shape (6,)
        ``[l; k]``: linear [kg m/s] and angular momentum about the centre of mass [kg
        m^2/s], base-frame axes.
    """
    return momentum(model, q, qd).hg


__all__ = [
    "Momentum",
    "bodies_momentum",
    "center_of_mass",
    "center_of_mass_velocity",
    "centroidal_momentum",
    "free_floating_momentum",
    "momentum",
]
