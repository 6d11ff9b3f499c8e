"""A base whose motion is known: the initial values of RNEA's forward recursion.

Khalil 2010 §7.1: for a robot on a moving base (a mobile platform, a ship, a
legged robot's torso measured by an IMU) the inverse dynamics is the usual
recursion started from the base's velocity ``V_0 = [v_0; w_0]`` and
acceleration ``dV_0`` instead of zero; gravity is folded in as before,
``dV_0 - [g; 0]`` (here: the fictitious base acceleration ``a0 = a_spatial - R^T g``).

Frames and conventions (all vectors in the **base frame**, the model's root
frame, like Pinocchio's local free-flyer velocity):

* ``orientation`` (3, 3): the base frame's rotation in the world frame, the frame
  in which ``model.gravity`` is given (a quaternion ``[x, y, z, w]`` is accepted);
* ``angular_velocity`` ``w0`` [rad/s] and ``angular_acceleration`` ``dw0`` [rad/s^2];
* ``linear_velocity`` ``v0`` [m/s] of the base-frame origin;
* ``linear_acceleration`` [m/s^2]: the *classical* acceleration of the base-frame
  origin (what an accelerometer there would read, plus gravity), without gravity.

The spatial acceleration's linear part, which RNEA propagates, is the classical
one minus ``w0 x v0`` (Featherstone 2008, §2.11).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import StateError
from rnea_ros.core.model.configuration import quaternion_matrix

Array = NDArray[np.float64]


def _vector(name: str, x: object) -> Array:
    a = np.array(x, dtype=np.float64, copy=True).reshape(-1)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise StateError(f"base motion: {name} must be a finite (3,) vector, got {x!r}")
    a.setflags(write=False)
    return a


def rotation_from(name: str, x: object, tol: float = 1e-6) -> Array:
    """A (3, 3) rotation from a matrix or a unit quaternion ``[x, y, z, w]``.

    Raises :class:`StateError` for a non-finite value, a matrix that is not a
    rotation, or a quaternion whose norm differs from 1 by more than ``tol``
    (it is never silently normalised).
    """
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise StateError(f"{name} is not finite: {a.tolist()}")
    if a.shape == (4,):
        norm = float(np.linalg.norm(a))
        if abs(norm - 1.0) > tol:
            raise StateError(f"{name}: quaternion [x, y, z, w] = {a.tolist()} has norm "
                             f"{norm:.9g}, not 1 (tolerance {tol:g})")
        qx, qy, qz, qw = a
        return np.array([
            [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
            [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
            [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
        ])
    if a.shape != (3, 3):
        raise StateError(f"{name} must be a (3, 3) rotation or a quaternion [x, y, z, w], "
                         f"got shape {a.shape}")
    if float(np.abs(a @ a.T - np.eye(3)).max()) > tol or np.linalg.det(a) < 0.0:
        raise StateError(f"{name} is not a rotation matrix: {a.tolist()}")
    out: Array = a.copy()
    return out


@dataclass(frozen=True)
class BaseMotion:
    """Known motion of the model's base (see the module docstring for frames and units)."""

    orientation: Array = field(default_factory=lambda: np.eye(3))
    angular_velocity: Array = field(default_factory=lambda: np.zeros(3))
    angular_acceleration: Array = field(default_factory=lambda: np.zeros(3))
    linear_velocity: Array = field(default_factory=lambda: np.zeros(3))
    linear_acceleration: Array = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        R = rotation_from("base motion: orientation", self.orientation)
        R.setflags(write=False)
        object.__setattr__(self, "orientation", R)
        for name in ("angular_velocity", "angular_acceleration", "linear_velocity",
                     "linear_acceleration"):
            object.__setattr__(self, name, _vector(name, getattr(self, name)))


def base_vectors(base_pose: object, base_twist: object) -> tuple[Array, Array, Array]:
    """A floating base's ``(pose (7,), R (3, 3), twist (6,))`` from ``base_pose``
    ``[x y z qx qy qz qw]`` and ``base_twist`` ``[v; w]`` (local), checked: finite,
    a unit quaternion (never normalised), else :class:`StateError`."""
    pose = np.asarray(base_pose, dtype=np.float64)
    if pose.shape != (7,) or not np.isfinite(pose).all():
        raise StateError(f"base_pose must be a finite (7,) vector [x y z qx qy qz qw], "
                         f"got {base_pose!r}")
    twist = np.asarray(base_twist, dtype=np.float64)
    if twist.shape != (6,) or not np.isfinite(twist).all():
        raise StateError(f"base_twist must be a finite (6,) vector [v; w], got {base_twist!r}")
    quat = pose[3:]
    if abs(float(quat @ quat) - 1.0) > 2e-6:  # |norm - 1| > ~1e-6
        rotation_from("base_pose", quat)  # raises, naming the norm
    return pose, quaternion_matrix(quat), twist


def base_state(motion: BaseMotion | None, gravity: Array) -> Array:
    """The forward recursion's start ``[w0, v0, dw0, a0]`` (12,) for ``motion``
    (``None``: a fixed base) under ``gravity`` (3,) given in the world frame."""
    out = np.zeros(12)
    if motion is None:
        out[9:] = -gravity
        return out
    w, v = motion.angular_velocity, motion.linear_velocity
    out[0:3] = w
    out[3:6] = v
    out[6:9] = motion.angular_acceleration
    out[9:12] = motion.linear_acceleration - np.cross(w, v) - motion.orientation.T @ gravity
    return out


__all__ = ["BaseMotion", "base_state", "base_vectors", "rotation_from"]
