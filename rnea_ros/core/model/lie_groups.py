"""The Lie groups of joint configurations: one set of operations per group.

A joint-kind record (:data:`~rnea_ros.core.model.joints.JOINT_KINDS`) names its
group (``JointKind.group``); :mod:`rnea_ros.core.model.configuration` picks the
operations here by that name (:data:`GROUPS`) and never by the joint's name:

========  =================================  ============================================
group     ``q`` (nq)                         ``q ⊕ v`` (``v`` local)
========  =================================  ============================================
vector    ``R^nq`` (nq = nv)                 ``q + v``
SO3       ``[qx qy qz qw]`` (4)              ``q exp3(w)`` (quaternion product)
SE2       ``[x y cos(th) sin(th)]`` (4)      ``M(q) exp([vx vy wz])``
SE3       ``[x y z qx qy qz qw]`` (7)        ``M(q) exp6([v; w])``, quaternion sign kept
========  =================================  ============================================

``difference(q0, q1) = log(M(q0)^-1 M(q1))`` the short way (Solà, Deray &
Atchuthan 2018, "A micro Lie theory"; Pinocchio's ``liegroup`` module). Random
configurations: uniform rotations (unit quaternions uniform on S^3), vector
coordinates uniform within finite limits, else within the default range of an
angle or a displacement (``JointKind.linear``), translations uniform in a box.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import quaternion_matrix as _quaternion_rows
from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.model.joints import LIE_GROUPS, JointKind

Array = NDArray[np.float64]

DEFAULT_ANGLE_RANGE = (-math.pi, math.pi)  # unlimited revolute/continuous joints, planar angles
DEFAULT_PRISMATIC_RANGE = (-1.0, 1.0)  # [m], unlimited prismatic joints
_SMALL = 1e-6  # below this angle, Taylor series replace the closed forms


# ---------------------------------------------------------------- quaternions
def quaternion_multiply(a: Array, b: Array) -> Array:
    """Hamilton product ``a b`` of quaternions ``[x, y, z, w]`` (4,)."""
    av, aw = a[:3], a[3]
    bv, bw = b[:3], b[3]
    out = np.empty(4)
    out[:3] = aw * bv + bw * av + np.cross(av, bv)
    out[3] = aw * bw - float(av @ bv)
    return out


def quaternion_conjugate(a: Array) -> Array:
    """``[-x, -y, -z, w]``: the inverse of a unit quaternion."""
    return np.array([-a[0], -a[1], -a[2], a[3]])


def quaternion_matrix(a: Array) -> Array:
    """The rotation (3, 3) of a unit quaternion ``[x, y, z, w]`` (the package's one
    formula, :func:`rnea_ros.core._algebra.quaternion_matrix`, as an array)."""
    x, y, z, w = a
    return np.array(_quaternion_rows(float(x), float(y), float(z), float(w))).reshape(3, 3)


def quaternion_exp(w: Array) -> Array:
    """``exp3(w)`` as a unit quaternion: rotation by ``|w|`` about ``w / |w|``."""
    theta = float(np.linalg.norm(w))
    half = 0.5 * theta
    if theta < _SMALL:  # sin(t/2)/t = 1/2 - t^2/48 + ...
        s = 0.5 - theta * theta / 48.0
    else:
        s = math.sin(half) / theta
    return np.array([s * w[0], s * w[1], s * w[2], math.cos(half)])


def quaternion_log(a: Array) -> Array:
    """``log3`` of a unit quaternion: the rotation vector (3,) of angle in ``[0, pi]``
    (the short way: ``a`` and ``-a`` give the same vector)."""
    if a[3] < 0.0:
        a = -a
    u = a[:3]
    s = float(np.linalg.norm(u))
    w = float(a[3])
    if s < _SMALL:  # 2 atan2(s, w) / s = 2/w - 2 s^2 / (3 w^3) + ...
        factor = 2.0 / w - 2.0 * s * s / (3.0 * w ** 3)
    else:
        factor = 2.0 * math.atan2(s, w) / s
    out: Array = factor * u
    return out


def _skew(w: Array) -> Array:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def se3_left_jacobian(w: Array) -> Array:
    """``V(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2`` (3, 3), ``t = |w|``:
    the translation of ``exp6([v; w])`` is ``V(w) v``."""
    t2 = float(w @ w)
    t = math.sqrt(t2)
    if t < _SMALL:
        a, b = 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        sh = math.sin(0.5 * t)  # 1 - cos t = 2 sin^2(t/2), without cancellation
        a, b = 2.0 * sh * sh / t2, (t - math.sin(t)) / (t2 * t)
    K = _skew(w)
    out: Array = np.eye(3) + a * K + b * (K @ K)
    return out


def se3_left_jacobian_inverse(w: Array) -> Array:
    """``V(w)^-1 = I - [w]x / 2 + (1 - (t/2) cot(t/2)) / t^2 [w]x^2`` (3, 3)."""
    t2 = float(w @ w)
    t = math.sqrt(t2)
    if t < _SMALL:
        c = 1.0 / 12.0 + t2 / 720.0
    else:
        half = 0.5 * t
        c = (1.0 - half * math.cos(half) / math.sin(half)) / t2
    K = _skew(w)
    out: Array = np.eye(3) - 0.5 * K + c * (K @ K)
    return out


def _keep_sign(new: Array, old: Array) -> Array:
    """``new`` or ``-new``, whichever is on ``old``'s side (Pinocchio's rule for SE(3))."""
    return -new if float(new @ old) < 0.0 else new


def _se2_v(theta: float) -> Array:
    """SE(2)'s ``V(theta)`` (2, 2): the translation of ``exp([vx vy wz])`` is ``V [vx vy]``."""
    if abs(theta) < _SMALL:
        a, b = 1.0 - theta * theta / 6.0, 0.5 * theta
    else:
        sh = math.sin(0.5 * theta)
        a, b = math.sin(theta) / theta, 2.0 * sh * sh / theta
    return np.array([[a, -b], [b, a]])


def _se2_v_inverse(theta: float) -> Array:
    """``V(theta)^-1 = [[al, t/2], [-t/2, al]]``, ``al = (t/2) cot(t/2)``."""
    half = 0.5 * theta
    if abs(theta) < _SMALL:
        al = 1.0 - theta * theta / 12.0
    else:
        al = half * math.cos(half) / math.sin(half)
    return np.array([[al, half], [-half, al]])


# ------------------------------------------------------------- per Lie group
# One function per group and operation; a joint-kind record's ``group`` picks them.
def _vector_neutral(nq: int) -> Array:
    return np.zeros(nq)


def _so3_neutral(nq: int) -> Array:
    return np.array([0.0, 0.0, 0.0, 1.0])


def _se2_neutral(nq: int) -> Array:
    return np.array([0.0, 0.0, 1.0, 0.0])


def _se3_neutral(nq: int) -> Array:
    return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def _vector_integrate(q: Array, v: Array) -> Array:
    out: Array = q + v
    return out


def _so3_integrate(q: Array, v: Array) -> Array:
    return quaternion_multiply(q, quaternion_exp(v))


def _se3_integrate(q: Array, v: Array) -> Array:
    quat = q[3:]
    out = np.empty(7)
    out[:3] = q[:3] + quaternion_matrix(quat) @ (se3_left_jacobian(v[3:]) @ v[:3])
    out[3:] = _keep_sign(quaternion_multiply(quat, quaternion_exp(v[3:])), quat)
    return out


def _se2_integrate(q: Array, v: Array) -> Array:
    c, s = q[2], q[3]
    R = np.array([[c, -s], [s, c]])
    theta = float(v[2])
    ct, st = math.cos(theta), math.sin(theta)
    out = np.empty(4)
    out[:2] = q[:2] + R @ (_se2_v(theta) @ v[:2])
    out[2] = c * ct - s * st
    out[3] = s * ct + c * st
    return out


def _vector_difference(a: Array, b: Array) -> Array:
    out: Array = b - a
    return out


def _so3_difference(a: Array, b: Array) -> Array:
    return quaternion_log(quaternion_multiply(quaternion_conjugate(a), b))


def _se3_difference(a: Array, b: Array) -> Array:
    w = quaternion_log(quaternion_multiply(quaternion_conjugate(a[3:]), b[3:]))
    p = quaternion_matrix(a[3:]).T @ (b[:3] - a[:3])  # translation of M0^-1 M1
    out = np.empty(6)
    out[:3] = se3_left_jacobian_inverse(w) @ p
    out[3:] = w
    return out


def _se2_difference(a: Array, b: Array) -> Array:  # log(M0^-1 M1) in SE(2)
    c0, s0, c1, s1 = a[2], a[3], b[2], b[3]
    theta = math.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = b[0] - a[0], b[1] - a[1]
    p = np.array([c0 * dx + s0 * dy, -s0 * dx + c0 * dy])
    out = np.empty(3)
    out[:2] = _se2_v_inverse(theta) @ p
    out[2] = theta
    return out


def _vector_random(kind: JointKind, rng: np.random.Generator, lower: float, upper: float,
                   box: float) -> Array:
    """Each coordinate uniform within its finite limits, else the default range of a
    displacement or an angle (``kind.linear``)."""
    out = np.empty(kind.nq)
    for i, linear in enumerate(kind.linear):
        lo_d, hi_d = DEFAULT_PRISMATIC_RANGE if linear else DEFAULT_ANGLE_RANGE
        lo = lower if math.isfinite(lower) else lo_d
        hi = upper if math.isfinite(upper) else hi_d
        if lo > hi:  # one finite limit beyond the default range: a default-wide interval
            lo, hi = (lo, lo + hi_d - lo_d) if math.isfinite(lower) else (hi - hi_d + lo_d, hi)
        out[i] = rng.uniform(lo, hi)
    return out


def _uniform_quaternion(rng: np.random.Generator) -> Array:
    quat: Array = rng.normal(size=4)  # an isotropic Gaussian, normalised: uniform on S^3
    quat /= np.linalg.norm(quat)
    return quat


def _so3_random(kind: JointKind, rng: np.random.Generator, lower: float, upper: float,
                box: float) -> Array:
    return _uniform_quaternion(rng)


def _se2_random(kind: JointKind, rng: np.random.Generator, lower: float, upper: float,
                box: float) -> Array:
    theta = rng.uniform(*DEFAULT_ANGLE_RANGE)
    xy = rng.uniform(-box, box, 2)
    return np.array([xy[0], xy[1], math.cos(theta), math.sin(theta)])


def _se3_random(kind: JointKind, rng: np.random.Generator, lower: float, upper: float,
                box: float) -> Array:
    quat = _uniform_quaternion(rng)
    return np.concatenate([rng.uniform(-box, box, 3), quat])


@dataclass(frozen=True)
class Group:
    """A Lie group's operations on one joint's blocks: ``neutral(nq)``,
    ``integrate(q, v)``, ``difference(q0, q1)``, ``random(kind, rng, lower, upper, box)``."""

    neutral: Callable[[int], Array]
    integrate: Callable[[Array, Array], Array]
    difference: Callable[[Array, Array], Array]
    random: Callable[[JointKind, np.random.Generator, float, float, float], Array]


GROUPS: dict[str, Group] = {
    "vector": Group(_vector_neutral, _vector_integrate, _vector_difference, _vector_random),
    "SO3": Group(_so3_neutral, _so3_integrate, _so3_difference, _so3_random),
    "SE2": Group(_se2_neutral, _se2_integrate, _se2_difference, _se2_random),
    "SE3": Group(_se3_neutral, _se3_integrate, _se3_difference, _se3_random),
}
if set(GROUPS) != set(LIE_GROUPS):  # a group without operations fails on import
    raise ModelError(f"lie_groups.py has operations for {options(GROUPS)}, the joint "
                     f"kinds name the groups {options(LIE_GROUPS)}")


__all__ = [
    "DEFAULT_ANGLE_RANGE",
    "DEFAULT_PRISMATIC_RANGE",
    "GROUPS",
    "Group",
    "quaternion_conjugate",
    "quaternion_exp",
    "quaternion_log",
    "quaternion_matrix",
    "quaternion_multiply",
    "se3_left_jacobian",
    "se3_left_jacobian_inverse",
]
