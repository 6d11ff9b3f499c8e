"""Forward kinematics and energies (numpy; for analysis and checks, not the 1 kHz path).

``body_poses`` gives every body frame in the base frame (the world, for a
free-flyer root); ``kinetic_energy`` ``T = 1/2 qd^T M(q) qd`` (rotor kinetic
energy included through the armature); ``potential_energy``
``V = -sum_i m_i g . c_i`` with ``c_i`` the COM of body ``i`` in the base frame.
Multi-DoF and mimic joints: the poses of the kernel tree's rows
(:mod:`rnea_ros.core._expansion`), each body's from the row carrying it.
Shapes: ``q`` (nq,), ``qd`` (nv,).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._expansion import expand
from rnea_ros.core._jit import joint_transform, parent
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.inputs import gravity_vector, joint_vector
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def body_poses(model: RobotModel, q: object) -> tuple[Array, Array]:
    """Rotations (nbodies, 3, 3) and origins (nbodies, 3) of the body frames in the
    base frame."""
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


def link_pose(model: RobotModel, q: object, link: str) -> tuple[Array, Array]:
    """Rotation (3, 3) and origin (3,) of link ``link`` (merged links too) in the base frame."""
    frame = model.link_frame(link)
    if frame.body < 0:
        return frame.rotation.copy(), frame.translation.copy()
    R, p = body_poses(model, q)
    Rb, pb = R[frame.body], p[frame.body]
    return Rb @ frame.rotation, pb + Rb @ frame.translation


def kinetic_energy(model: RobotModel, q: object, qd: object) -> float:
    """``T = 1/2 qd^T M(q) qd`` [J]."""
    qd = joint_vector(model, qd, "qd")
    return 0.5 * float(qd @ mass_matrix(model, q) @ qd)


def potential_energy(model: RobotModel, q: object, *, gravity: object | None = None) -> float:
    """``V = -sum_i m_i g . c_i`` [J], zero with every COM at the base origin."""
    R, p = body_poses(model, q)
    g = gravity_vector(model, gravity)
    com = p + np.einsum("nij,nj->ni", R, model.com)
    return -float(np.sum(model.mass * (com @ g)))
