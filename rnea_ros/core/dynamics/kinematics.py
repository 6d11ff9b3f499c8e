"""Forward kinematics and energies (numpy; for analysis and checks, not the 1 kHz path).

``body_poses`` gives every body frame in the base frame (the world, for a
free-flyer root); ``body_velocities`` every body's twist in its own frame (the
forward recursion of RNEA's first pass, Khalil 2010 eq. 13); ``kinetic_energy``
``T = 1/2 qd^T M(q) qd`` (rotor kinetic energy included through the armature);
``potential_energy``
``V = -sum_i m_i g . c_i`` with ``c_i`` the COM of body ``i`` in the base frame.
Multi-DoF and mimic joints: the poses of the kernel tree's rows
(:mod:`rnea_ros.core.expansion`), each body's from the row carrying it.
Shapes: ``q`` (nq,), ``qd`` (nv,).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import joint_transform, vec3
from rnea_ros.core._layout import F_AXIS, PRISMATIC, kind, parent
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.errors import StateError
from rnea_ros.core.expansion import expand
from rnea_ros.core.inputs import gravity_vector, joint_vector
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def body_poses(model: RobotModel, q: object) -> tuple[Array, Array]:
    """Rotations (nbodies, 3, 3) and origins (nbodies, 3) of the body frames in the
    base frame.

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    rotations : ndarray of shape (nbodies, 3, 3)
        Body orientations in the base frame.
    origins : ndarray of shape (nbodies, 3)
        Body origins in the base frame [m].
    """
    q = joint_vector(model, q, "q")
    fp, qk = model.kernel_floats, q
    if model.expanded:
        fp, qk, _ = expand(model, q)
    n = fp.shape[0]
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    for i in range(n):
        Rl, pl = joint_transform(fp, i, float(qk[i]))
        Rl_a = np.array(Rl).reshape(3, 3)
        par = parent(fp, i)
        if par < 0:
            R[i], p[i] = Rl_a, np.array(pl)
        else:
            R[i] = R[par] @ Rl_a
            p[i] = p[par] + R[par] @ np.array(pl)
    if model.expanded:
        return R[model.kernel_last_row], p[model.kernel_last_row]
    return R, p


def body_velocities(model: RobotModel, q: object, qd: object, *,
                    base_twist: object | None = None) -> Array:
    """Twists (nbodies, 6) ``[v_i; w_i]`` of the bodies, each in its own frame (Pinocchio's
    ``data.v[i]``, linear part first, like the free-flyer's local velocity).

    ``v_i`` is the velocity of body ``i``'s origin, ``w_i`` its angular velocity;
    ``base_twist`` (6,) ``[v_0; w_0]`` is the base's, in the base frame (default
    at rest). Khalil 2010 eq. 13: ``w_i = R^T w_p + S_i qd_i`` (revolute),
    ``v_i = R^T (v_p + w_p x p) (+ S_i qd_i`` prismatic).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``base_twist``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    twists : ndarray of shape (nbodies, 6)
        ``[v_i; w_i]`` [m/s, rad/s], each in its body's frame.
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    base = np.zeros(6) if base_twist is None else np.asarray(base_twist, dtype=np.float64)
    if base.shape != (6,) or not np.all(np.isfinite(base)):
        raise StateError(f"base_twist must be a finite (6,) vector [v; w], got {base_twist!r}")
    fp, qk, vk = model.kernel_floats, q, qd
    if model.expanded:  # the kernel tree's rows: sub-joints, mimic followers
        fp, qk, vk = expand(model, q, qd)
    n = fp.shape[0]
    out = np.empty((n, 6))
    for i in range(n):
        Rl, pl = joint_transform(fp, i, float(qk[i]))
        R, p = np.array(Rl).reshape(3, 3), np.array(pl)
        par = parent(fp, i)
        v_p, w_p = (base[:3], base[3:]) if par < 0 else (out[par, :3], out[par, 3:])
        v = R.T @ (v_p + np.cross(w_p, p))
        w = R.T @ w_p
        s = np.array(vec3(fp, i, F_AXIS)) * vk[i]
        if kind(fp, i) == PRISMATIC:
            v = v + s
        else:
            w = w + s
        out[i, :3], out[i, 3:] = v, w
    if model.expanded:
        return out[model.kernel_last_row]
    return out


def link_pose(model: RobotModel, q: object, link: str) -> tuple[Array, Array]:
    """Rotation (3, 3) and origin (3,) of link ``link`` (merged links too) in the base frame.

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    link : str
        Link name (merged links too).

    Returns
    -------
    rotation : ndarray of shape (3, 3)
        Orientation in the base frame.
    origin : ndarray of shape (3,)
        Origin in the base frame [m].
    """
    frame = model.link_frame(link)
    if frame.body < 0:
        return frame.rotation.copy(), frame.translation.copy()
    R, p = body_poses(model, q)
    Rb, pb = R[frame.body], p[frame.body]
    return Rb @ frame.rotation, pb + Rb @ frame.translation


def kinetic_energy(model: RobotModel, q: object, qd: object) -> float:
    """``T = 1/2 qd^T M(q) qd`` [J].

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    float
        ``1/2 qd^T M qd`` [J].
    """
    qd = joint_vector(model, qd, "qd")
    return 0.5 * float(qd @ mass_matrix(model, q) @ qd)


def potential_energy(model: RobotModel, q: object, *, gravity: object | None = None) -> float:
    """``V = -sum_i m_i g . c_i`` [J], zero with every COM at the base origin.

    Arguments as in Conventions: ``model``, ``q``, ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    float
        ``V`` [J].
    """
    R, p = body_poses(model, q)
    g = gravity_vector(model, gravity)
    com = p + np.einsum("nij,nj->ni", R, model.com)
    return -float(np.sum(model.mass * (com @ g)))
