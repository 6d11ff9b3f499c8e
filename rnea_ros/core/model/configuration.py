"""Configuration-space operations: the Lie group of each joint (Pinocchio's conventions).

A configuration ``q`` (nq,) and a velocity ``v`` (nv,) are concatenations of
per-joint blocks, in joint order, laid out as Pinocchio lays them out:

============== ======================================== =================================
joint type     ``q_j``                                  ``v_j``
============== ======================================== =================================
free-flyer     ``[x y z qx qy qz qw]`` (7)              ``[v; w]`` (6), body frame (local)
planar         ``[x y cos(th) sin(th)]`` (4)            ``[vx vy wz]`` (3), local
spherical      ``[qx qy qz qw]`` (4)                    ``w`` (3), local
revolute       angle (1)                                angular rate (1)
continuous     angle (1) -- one angle, not cos/sin      angular rate (1)
prismatic      displacement (1)                         rate (1)
============== ======================================== =================================

The group operations (Solà, Deray & Atchuthan 2018, "A micro Lie theory";
Pinocchio's ``liegroup`` module):

* ``integrate(q, v) = q ⊕ v``: the pose reached from ``q`` moving at the
  constant *local* velocity ``v`` for one second, ``M(q) exp(v)`` -- SE(3)
  ``exp6`` for a free-flyer, SO(3) ``exp3`` (quaternion product) for a
  spherical joint, SE(2) ``exp`` for a planar joint, plain addition otherwise.
  As in Pinocchio, a free-flyer's new quaternion keeps the sign of the old one
  (``q_new . q >= 0``); a spherical joint's is the plain product ``q exp3(w)``.
* ``difference(q0, q1) = q1 ⊖ q0 = log(M(q0)^-1 M(q1))``, so that
  ``integrate(q0, difference(q0, q1))`` is ``q1`` (its quaternions up to sign).
  The rotation part takes the short way (angle in ``[0, pi]``): a quaternion and
  its negative are the same rotation and their difference is zero.
* ``neutral``: the identity (zero angles, unit quaternion ``[0 0 0 1]``, ``cos = 1``).
* ``random_configuration``: uniform rotations (unit quaternions drawn uniformly on
  S^3), 1-DoF coordinates uniform within finite position limits, else within
  ``[-pi, pi]`` (revolute, continuous) or ``[-1, 1]`` m (prismatic);
  translations (free-flyer, planar) uniform in the box ``[-1, 1]`` m per axis
  (``translation_box=`` changes it); planar angles uniform in ``[-pi, pi]``.

Quaternions are never normalised silently: :func:`check_configuration` raises a
:class:`~rnea_ros.core.errors.StateError` naming the joint whose quaternion (or
planar ``(cos, sin)`` pair) is not of unit norm.

Every operation is written once per joint type (``*_joint(kind, ...)``) and the
model-level functions loop over :func:`joint_layout`, the one place that reads
the joint layout from a :class:`RobotModel` (its own ``idx_q``, ``idx_v``,
``joint_nq``, ``joint_nv``, cross-checked against :data:`JOINT_SIZES`; position
limits are ``nq``-sized, read at ``idx_q``). Mimic followers own no coordinate:
they are not joints of the layout, and their positions follow from ``q``
(``RobotModel.mimic_positions``). The 1-DoF coordinates, a vector space, are
added and subtracted in one vectorised step; the multi-DoF joints one by one.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import quaternion_matrix as _quaternion_rows
from rnea_ros.core.errors import ModelError, StateError, options
from rnea_ros.core.model.joints import JOINT_KINDS, MULTI_DOF, ONE_DOF
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

# Coordinates per joint type: (nq, nv), Pinocchio's layout; from the joint-kind records.
JOINT_SIZES: dict[str, tuple[int, int]] = {
    n: (JOINT_KINDS[n].nq, JOINT_KINDS[n].nv) for n in (*MULTI_DOF, *ONE_DOF)}
DEFAULT_ANGLE_RANGE = (-math.pi, math.pi)  # unlimited revolute/continuous joints, planar angles
DEFAULT_PRISMATIC_RANGE = (-1.0, 1.0)  # [m], unlimited prismatic joints
DEFAULT_TRANSLATION_BOX = 1.0  # [m], free-flyer and planar translations in [-box, box]
_SMALL = 1e-6  # below this angle, Taylor series replace the closed forms


# --------------------------------------------------------------------- layout
@dataclass(frozen=True)
class JointLayout:
    """Where joint ``name`` (type ``kind``) sits in ``q`` and ``v``: ``q[idx_q:idx_q+nq]``,
    ``v[idx_v:idx_v+nv]``; ``lower``/``upper`` are its position limits (1-DoF joints;
    ``-inf``/``inf`` when absent and for multi-DoF joints)."""

    name: str
    kind: str
    idx_q: int
    idx_v: int
    nq: int
    nv: int
    lower: float = -math.inf
    upper: float = math.inf


def joint_layout(model: RobotModel) -> tuple[JointLayout, ...]:
    """The joints of ``model`` with their blocks of ``q`` and ``v``.

    The one function that reads the layout from the model: each joint's block is
    the model's own ``idx_q``/``idx_v``/``joint_nq``/``joint_nv`` (Pinocchio's
    names), cross-checked against :data:`JOINT_SIZES` and against ``model.nq``/``nv``
    (blocks in joint order, back to back); a 1-DoF joint's position limits are
    ``lower_limit[idx_q]``/``upper_limit[idx_q]`` (the limits are ``nq``-sized).
    Mimic followers own no coordinate and are not listed. Computed once per model.
    """
    return _plan(model).joints


@dataclass(frozen=True)
class _Plan:
    """A model's layout, prepared for the model-level loops: every joint, the
    multi-DoF ones, and the ``q``/``v`` indices of the 1-DoF coordinates (vector
    space: one vectorised operation for all of them)."""

    joints: tuple[JointLayout, ...]
    multi: tuple[JointLayout, ...]
    scalar_q: NDArray[np.int64]
    scalar_v: NDArray[np.int64]


_PLANS: weakref.WeakKeyDictionary[RobotModel, _Plan] = weakref.WeakKeyDictionary()


def _plan(model: RobotModel) -> _Plan:
    try:
        return _PLANS[model]
    except (KeyError, TypeError):
        pass
    plan = _make_plan(model)
    try:
        _PLANS[model] = plan
    except TypeError:  # not weak-referenceable: no cache
        pass
    return plan


def _make_plan(model: RobotModel) -> _Plan:
    out: list[JointLayout] = []
    iq = iv = 0
    for j, (name, kind) in enumerate(zip(model.joint_names, model.joint_types, strict=True)):
        sizes = _sizes(kind, name)
        block = (int(model.idx_q[j]), int(model.idx_v[j]), int(model.joint_nq[j]),
                 int(model.joint_nv[j]))
        if block != (iq, iv, *sizes):
            raise ModelError(
                f"model '{model.name}': joint '{name}' ({kind}) has idx_q, idx_v, nq, nv = "
                f"{block}, expected {(iq, iv, *sizes)} (Pinocchio's layout)")
        nq, nv = sizes
        lower, upper = -math.inf, math.inf
        if nq == 1:
            lower, upper = float(model.lower_limit[iq]), float(model.upper_limit[iq])
        out.append(JointLayout(name, kind, iq, iv, nq, nv, lower, upper))
        iq, iv = iq + nq, iv + nv
    if (iq, iv) != (model.nq, model.nv):
        raise ModelError(f"model '{model.name}': joint blocks add up to nq = {iq}, nv = {iv}, "
                         f"but the model has nq = {model.nq}, nv = {model.nv}")
    scalar = [j for j in out if j.nq == 1]
    return _Plan(tuple(out), tuple(j for j in out if j.nq > 1),
                 np.array([j.idx_q for j in scalar], dtype=np.int64),
                 np.array([j.idx_v for j in scalar], dtype=np.int64))


def _sizes(kind: str, name: str = "") -> tuple[int, int]:
    try:
        return JOINT_SIZES[kind]
    except KeyError:
        where = f"joint '{name}': " if name else ""
        raise ModelError(f"{where}type '{kind}' is not one of {options(JOINT_SIZES)}") from None


def _block(x: object, size: int, what: str) -> Array:
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if a.shape != (size,):
        raise StateError(f"{what} has shape {a.shape}, expected ({size},)")
    return a


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


# ------------------------------------------------------------ per joint type
def neutral_joint(kind: str) -> Array:
    """The identity configuration ``q_j`` of a joint of type ``kind``."""
    nq, _ = _sizes(kind)
    out = np.zeros(nq)
    if kind in ("free-flyer", "spherical"):
        out[-1] = 1.0
    elif kind == "planar":
        out[2] = 1.0
    return out


def integrate_joint(kind: str, q: object, v: object) -> Array:
    """``q_j ⊕ v_j`` for one joint of type ``kind`` (see the module docstring)."""
    nq, nv = _sizes(kind)
    qj = _block(q, nq, f"{kind} configuration")
    vj = _block(v, nv, f"{kind} velocity")
    if nq == 1:
        return qj + vj
    if kind == "spherical":
        return quaternion_multiply(qj, quaternion_exp(vj))
    if kind == "free-flyer":
        quat = qj[3:]
        out = np.empty(7)
        out[:3] = qj[:3] + quaternion_matrix(quat) @ (se3_left_jacobian(vj[3:]) @ vj[:3])
        out[3:] = _keep_sign(quaternion_multiply(quat, quaternion_exp(vj[3:])), quat)
        return out
    # planar: SE(2)
    c, s = qj[2], qj[3]
    R = np.array([[c, -s], [s, c]])
    theta = float(vj[2])
    ct, st = math.cos(theta), math.sin(theta)
    out = np.empty(4)
    out[:2] = qj[:2] + R @ (_se2_v(theta) @ vj[:2])
    out[2] = c * ct - s * st
    out[3] = s * ct + c * st
    return out


def difference_joint(kind: str, q0: object, q1: object) -> Array:
    """``q1_j ⊖ q0_j`` (nv_j,): the local velocity that :func:`integrate_joint` maps
    ``q0_j`` to ``q1_j`` in one second (the short way for rotations)."""
    nq, _ = _sizes(kind)
    a = _block(q0, nq, f"{kind} configuration q0")
    b = _block(q1, nq, f"{kind} configuration q1")
    if nq == 1:
        return b - a
    if kind == "spherical":
        return quaternion_log(quaternion_multiply(quaternion_conjugate(a), b))
    if kind == "free-flyer":
        rel = quaternion_multiply(quaternion_conjugate(a[3:]), b[3:])
        w = quaternion_log(rel)
        p = quaternion_matrix(a[3:]).T @ (b[:3] - a[:3])  # translation of M0^-1 M1
        out = np.empty(6)
        out[:3] = se3_left_jacobian_inverse(w) @ p
        out[3:] = w
        return out
    # planar: log(M0^-1 M1) in SE(2)
    c0, s0, c1, s1 = a[2], a[3], b[2], b[3]
    theta = math.atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = b[0] - a[0], b[1] - a[1]
    p = np.array([c0 * dx + s0 * dy, -s0 * dx + c0 * dy])
    out = np.empty(3)
    out[:2] = _se2_v_inverse(theta) @ p
    out[2] = theta
    return out


def random_joint(kind: str, rng: np.random.Generator, lower: float = -math.inf,
                 upper: float = math.inf,
                 translation_box: float = DEFAULT_TRANSLATION_BOX) -> Array:
    """A random configuration ``q_j`` of one joint (ranges in the module docstring)."""
    nq, _ = _sizes(kind)
    if nq == 1:
        lo_d, hi_d = DEFAULT_PRISMATIC_RANGE if kind == "prismatic" else DEFAULT_ANGLE_RANGE
        lo = lower if math.isfinite(lower) else lo_d
        hi = upper if math.isfinite(upper) else hi_d
        if lo > hi:  # one finite limit beyond the default range: a default-wide interval
            lo, hi = (lo, lo + hi_d - lo_d) if math.isfinite(lower) else (hi - hi_d + lo_d, hi)
        return np.array([rng.uniform(lo, hi)])
    if kind == "planar":
        theta = rng.uniform(*DEFAULT_ANGLE_RANGE)
        xy = rng.uniform(-translation_box, translation_box, 2)
        return np.array([xy[0], xy[1], math.cos(theta), math.sin(theta)])
    quat = rng.normal(size=4)  # an isotropic Gaussian, normalised: uniform on S^3
    quat /= np.linalg.norm(quat)
    if kind == "spherical":
        out: Array = quat
        return out
    return np.concatenate([rng.uniform(-translation_box, translation_box, 3), quat])


def unit_part(kind: str, q: Array) -> Array | None:
    """The part of ``q_j`` that must have unit norm: the quaternion (free-flyer,
    spherical), the ``(cos, sin)`` pair (planar); ``None`` for 1-DoF joints."""
    if kind in ("free-flyer", "spherical"):
        return q[-4:]
    if kind == "planar":
        return q[2:4]
    return None


# ---------------------------------------------------------------- model level
def _vector(x: object, size: int, what: str, model: RobotModel) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (size,):
        raise StateError(f"{what} has shape {a.shape}, expected ({size},) for model "
                         f"'{model.name}'")
    return a


def neutral(model: RobotModel) -> Array:
    """The neutral configuration (nq,) of ``model`` (Pinocchio's ``pin.neutral``).

    Parameters
    ----------
    model : RobotModel
        The robot (:func:`load_urdf`, :func:`from_dh`, :func:`from_mdh`).

    Returns
    -------
    ndarray of shape (nq,)
        The neutral configuration.
    """
    plan = _plan(model)
    q = np.zeros(model.nq)
    for j in plan.multi:
        q[j.idx_q:j.idx_q + j.nq] = neutral_joint(j.kind)
    return q


def integrate(model: RobotModel, q: object, v: object) -> Array:
    """``q ⊕ v`` (nq,): every joint moved by its block of ``v`` (nv,) (``pin.integrate``).

    Parameters
    ----------
    model : RobotModel
        The robot (:func:`load_urdf`, :func:`from_dh`, :func:`from_mdh`).
    q : array_like of shape (nq,)
        Joint positions [rad, m], Pinocchio's layout (a free-flyer's ``[x y z qx qy qz
        qw]``, a continuous joint's ``(cos, sin)``).
    v : array_like of shape (nv,)
        Tangent displacement [rad, m], a block per joint.

    Returns
    -------
    ndarray of shape (nq,)
        ``q ⊕ v``.
    """
    qa = _vector(q, model.nq, "q", model)
    va = _vector(v, model.nv, "v", model)
    plan = _plan(model)
    out = np.empty(model.nq)
    out[plan.scalar_q] = qa[plan.scalar_q] + va[plan.scalar_v]
    for j in plan.multi:
        out[j.idx_q:j.idx_q + j.nq] = integrate_joint(
            j.kind, qa[j.idx_q:j.idx_q + j.nq], va[j.idx_v:j.idx_v + j.nv])
    return out


def difference(model: RobotModel, q0: object, q1: object) -> Array:
    """``q1 ⊖ q0`` (nv,), so that ``integrate(model, q0, difference(model, q0, q1))`` is
    ``q1`` (``pin.difference``; a continuous joint's angle difference is not wrapped,
    unlike Pinocchio's ``(cos, sin)`` pair).

    Parameters
    ----------
    model : RobotModel
        The robot (:func:`load_urdf`, :func:`from_dh`, :func:`from_mdh`).
    q0 : array_like of shape (nq,)
        Start configuration.
    q1 : array_like of shape (nq,)
        End configuration.

    Returns
    -------
    ndarray of shape (nv,)
        ``q1 ⊖ q0`` [rad, m].
    """
    a = _vector(q0, model.nq, "q0", model)
    b = _vector(q1, model.nq, "q1", model)
    plan = _plan(model)
    out = np.empty(model.nv)
    out[plan.scalar_v] = b[plan.scalar_q] - a[plan.scalar_q]
    for j in plan.multi:
        sl = slice(j.idx_q, j.idx_q + j.nq)
        out[j.idx_v:j.idx_v + j.nv] = difference_joint(j.kind, a[sl], b[sl])
    return out


def random_configuration(model: RobotModel, rng: np.random.Generator | int | None = None, *,
                         translation_box: float = DEFAULT_TRANSLATION_BOX) -> Array:
    """A random configuration (nq,) of ``model`` (ranges in the module docstring).

    ``rng`` is a NumPy generator or a seed (``None``: fresh entropy).

    Parameters
    ----------
    model : RobotModel
        The robot (:func:`load_urdf`, :func:`from_dh`, :func:`from_mdh`).
    rng : numpy.random.Generator or int, optional
        Generator or seed (``None``: fresh entropy).
    translation_box : float, default 1.0
        Half-width [m] of the box for free-flyer and planar translations.

    Returns
    -------
    ndarray of shape (nq,)
        A random configuration.
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if not (math.isfinite(translation_box) and translation_box >= 0.0):
        raise StateError(f"translation_box must be finite and >= 0, got {translation_box!r}")
    q = np.empty(model.nq)
    for j in joint_layout(model):
        q[j.idx_q:j.idx_q + j.nq] = random_joint(j.kind, gen, j.lower, j.upper, translation_box)
    return q


def check_configuration(model: RobotModel, q: object, tol: float = 1e-6) -> Array:
    """``q`` as a float64 (nq,) array after checking it; else :class:`StateError`.

    Checks the shape, finiteness, and that every quaternion (free-flyer,
    spherical) and planar ``(cos, sin)`` pair has norm 1 within ``tol``, naming
    the joint. Nothing is normalised.

    Parameters
    ----------
    model : RobotModel
        The robot (:func:`load_urdf`, :func:`from_dh`, :func:`from_mdh`).
    q : array_like of shape (nq,)
        Joint positions [rad, m], Pinocchio's layout (a free-flyer's ``[x y z qx qy qz
        qw]``, a continuous joint's ``(cos, sin)``).
    tol : float, default 1e-6
        Tolerance on the norm of each quaternion and ``(cos, sin)`` pair.

    Returns
    -------
    q : ndarray of shape (nq,)
        ``q`` as float64 (not normalised).
    """
    qa = _vector(q, model.nq, "q", model)
    for j in joint_layout(model):
        block = qa[j.idx_q:j.idx_q + j.nq]
        if not np.all(np.isfinite(block)):
            raise StateError(f"q of joint '{j.name}' is {block.tolist()}: not finite")
        unit = unit_part(j.kind, block)
        if unit is None:
            continue
        norm = float(np.linalg.norm(unit))
        if abs(norm - 1.0) > tol:
            part = "quaternion [x, y, z, w]" if j.kind != "planar" else "(cos, sin) pair"
            raise StateError(
                f"joint '{j.name}' ({j.kind}): {part} {unit.tolist()} has norm {norm:.9g}, "
                f"not 1 (tolerance {tol:g}); it is never normalised silently")
    return qa


__all__ = [
    "JOINT_SIZES",
    "JointLayout",
    "check_configuration",
    "difference",
    "difference_joint",
    "integrate",
    "integrate_joint",
    "joint_layout",
    "neutral",
    "neutral_joint",
    "quaternion_exp",
    "quaternion_log",
    "quaternion_matrix",
    "quaternion_multiply",
    "random_configuration",
    "random_joint",
    "unit_part",
]
