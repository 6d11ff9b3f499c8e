"""Small rigid-body helpers used while *building* models (numpy, not hot path).

Conventions: a transform ``(R, p)`` of frame B relative to frame A maps
coordinates in B to coordinates in A, ``x_A = R @ x_B + p``. Rotations are
3x3 arrays, positions (3,) arrays. Inertias are 3x3 arrays about the centre of
mass unless the name says otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def skew(v: Array) -> Array:
    """Cross-product matrix: ``skew(v) @ w == np.cross(v, w)``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def axis_angle(axis: Array, angle: float) -> Array:
    """Rotation by ``angle`` [rad] about the unit vector ``axis`` (Rodrigues:
    ``I + sin(angle) K + (1 - cos(angle)) K^2``, ``K = skew(axis)``)."""
    K = skew(axis)
    out: Array = np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K
    return out


def rot_x(angle: float) -> Array:
    """Rotation about x by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> Array:
    """Rotation about y by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle: float) -> Array:
    """Rotation about z by ``angle`` [rad]."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(roll: float, pitch: float, yaw: float) -> Array:
    """URDF ``rpy``: fixed-axis X-Y-Z rotation, ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def compose(a: tuple[Array, Array], b: tuple[Array, Array]) -> tuple[Array, Array]:
    """Compose transforms: ``(A_T_B, B_T_C) -> A_T_C``."""
    Ra, pa = a
    Rb, pb = b
    return Ra @ Rb, pa + Ra @ pb


def identity() -> tuple[Array, Array]:
    """The identity transform."""
    return np.eye(3), np.zeros(3)


def translation(x: float, y: float, z: float) -> tuple[Array, Array]:
    """A pure translation."""
    return np.eye(3), np.array([x, y, z], dtype=np.float64)


def rotation(R: Array) -> tuple[Array, Array]:
    """A pure rotation."""
    return np.asarray(R, dtype=np.float64), np.zeros(3)


def express_inertia(
    mass: float, com: Array, inertia: Array, R: Array, p: Array
) -> tuple[float, Array, Array]:
    """Express a body's inertia given in frame B in frame A, with ``A_T_B = (R, p)``.

    Returns ``(mass, com_A (3,), inertia_about_com_A (3, 3))``.
    """
    return mass, p + R @ com, R @ inertia @ R.T


def add_inertias(
    a: tuple[float, Array, Array], b: tuple[float, Array, Array]
) -> tuple[float, Array, Array]:
    """Sum of two rigid bodies expressed in the same frame (parallel-axis theorem)."""
    ma, ca, Ia = a
    mb, cb, Ib = b
    m = ma + mb
    if m <= 0.0:
        return 0.0, np.zeros(3), Ia + Ib
    c = (ma * ca + mb * cb) / m
    da, db = ca - c, cb - c
    Ia_c = Ia + ma * (float(da @ da) * np.eye(3) - np.outer(da, da))
    Ib_c = Ib + mb * (float(db @ db) * np.eye(3) - np.outer(db, db))
    return m, c, Ia_c + Ib_c


def inertia_about_origin(mass: float, com: Array, inertia: Array) -> Array:
    """Rotational inertia about the frame origin from the one about the COM."""
    return inertia + mass * (float(com @ com) * np.eye(3) - np.outer(com, com))
