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
  ``[-pi, pi]`` (angles: revolute, continuous) or ``[-1, 1]`` m (displacements:
  prismatic; ``JointKind.linear``);
  translations (free-flyer, planar) uniform in the box ``[-1, 1]`` m per axis
  (``translation_box=`` changes it); planar angles uniform in ``[-pi, pi]``.

Quaternions are never normalised silently: :func:`check_configuration` raises a
:class:`~rnea_ros.core.errors.StateError` naming the joint whose quaternion (or
planar ``(cos, sin)`` pair) is not of unit norm.

Every operation is written once per Lie group (:mod:`.lie_groups`); a joint's
record (``JOINT_KINDS[kind].group``) picks its group, never its name, and an
unknown type raises :class:`~rnea_ros.core.errors.ModelError` listing the valid
ones. The per-joint faces are ``*_joint(kind, ...)``; the
model-level functions loop over :func:`joint_layout`, the one place that reads
the joint layout from a :class:`RobotModel` (its own ``idx_q``, ``idx_v``,
``joint_nq``, ``joint_nv``, cross-checked against :data:`JOINT_SIZES`; position
limits are ``nq``-sized, read at ``idx_q``). Mimic followers own no coordinate:
they are not joints of the layout, and their positions follow from ``q``
(``RobotModel.mimic_positions``). The coordinates of the ``"vector"`` joints are
added and subtracted in one vectorised step; the other joints one by one.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import ModelError, StateError, options
from rnea_ros.core.model.joints import JOINT_KINDS, MULTI_DOF, ONE_DOF, JointKind
from rnea_ros.core.model.lie_groups import (
    DEFAULT_ANGLE_RANGE,
    DEFAULT_PRISMATIC_RANGE,
    GROUPS,
    Group,
    quaternion_conjugate,
    quaternion_exp,
    quaternion_log,
    quaternion_matrix,
    quaternion_multiply,
    se3_left_jacobian,
    se3_left_jacobian_inverse,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

# Coordinates per joint type: (nq, nv), Pinocchio's layout; from the joint-kind records.
JOINT_SIZES: dict[str, tuple[int, int]] = {
    n: (JOINT_KINDS[n].nq, JOINT_KINDS[n].nv) for n in (*MULTI_DOF, *ONE_DOF)}
DEFAULT_TRANSLATION_BOX = 1.0  # [m], free-flyer and planar translations in [-box, box]


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
    """A model's layout, prepared for the model-level loops: every joint, those
    whose group is not ``"vector"``, and the ``q``/``v`` indices of the vector
    joints' coordinates (one vectorised operation for all of them)."""

    joints: tuple[JointLayout, ...]
    grouped: tuple[JointLayout, ...]
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
    vector = [j for j in out if JOINT_KINDS[j.kind].group == "vector"]
    return _Plan(tuple(out), tuple(j for j in out if j not in vector),
                 np.array([j.idx_q + i for j in vector for i in range(j.nq)], dtype=np.int64),
                 np.array([j.idx_v + i for j in vector for i in range(j.nv)], dtype=np.int64))


def _kind(kind: str, name: str = "") -> JointKind:
    """The record of joint type ``kind``; an unknown type raises, naming the joint."""
    try:
        return JOINT_KINDS[kind]
    except KeyError:
        where = f"joint '{name}': " if name else ""
        raise ModelError(f"{where}type '{kind}' is not one of {options(JOINT_SIZES)}") from None


def _sizes(kind: str, name: str = "") -> tuple[int, int]:
    record = _kind(kind, name)
    return record.nq, record.nv


def _block(x: object, size: int, what: str) -> Array:
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if a.shape != (size,):
        raise StateError(f"{what} has shape {a.shape}, expected ({size},)")
    return a


def _group(kind: str) -> Group:
    record = _kind(kind)
    try:
        return GROUPS[record.group]
    except KeyError:
        raise ModelError(f"joint type '{kind}': group '{record.group}' has no configuration "
                         f"operations (valid: {options(GROUPS)})") from None


# ------------------------------------------------------------ per joint type
def neutral_joint(kind: str) -> Array:
    """The identity configuration ``q_j`` of a joint of type ``kind``."""
    return _group(kind).neutral(_sizes(kind)[0])


def integrate_joint(kind: str, q: object, v: object) -> Array:
    """``q_j ⊕ v_j`` for one joint of type ``kind`` (see the module docstring)."""
    nq, nv = _sizes(kind)
    return _group(kind).integrate(_block(q, nq, f"{kind} configuration"),
                                  _block(v, nv, f"{kind} velocity"))


def difference_joint(kind: str, q0: object, q1: object) -> Array:
    """``q1_j ⊖ q0_j`` (nv_j,): the local velocity that :func:`integrate_joint` maps
    ``q0_j`` to ``q1_j`` in one second (the short way for rotations)."""
    nq, _ = _sizes(kind)
    return _group(kind).difference(_block(q0, nq, f"{kind} configuration q0"),
                                   _block(q1, nq, f"{kind} configuration q1"))


def random_joint(kind: str, rng: np.random.Generator, lower: float = -math.inf,
                 upper: float = math.inf,
                 translation_box: float = DEFAULT_TRANSLATION_BOX) -> Array:
    """A random configuration ``q_j`` of one joint (ranges in the module docstring)."""
    return _group(kind).random(_kind(kind), rng, lower, upper, translation_box)


def unit_part(kind: str, q: Array) -> Array | None:
    """The part of ``q_j`` that must have unit norm (the record's ``unit``: the
    quaternion of a free-flyer or spherical joint, planar's ``(cos, sin)`` pair);
    ``None`` for a joint without one."""
    unit = _kind(kind).unit
    return None if unit is None else q[unit[0]:unit[1]]


# ---------------------------------------------------------------- model level
def _vector(x: object, size: int, what: str, model: RobotModel) -> Array:
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (size,):
        raise StateError(f"{what} has shape {a.shape}, expected ({size},) for model "
                         f"'{model.name}'")
    return a


def neutral(model: RobotModel) -> Array:
    """The neutral configuration (nq,) of ``model`` (Pinocchio's ``pin.neutral``).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    ndarray of shape (nq,)
        The neutral configuration.
    """
    plan = _plan(model)
    q = np.zeros(model.nq)
    for j in plan.grouped:
        q[j.idx_q:j.idx_q + j.nq] = neutral_joint(j.kind)
    return q


def integrate(model: RobotModel, q: object, v: object) -> Array:
    """``q ⊕ v`` (nq,): every joint moved by its block of ``v`` (nv,) (``pin.integrate``).

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
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
    for j in plan.grouped:
        out[j.idx_q:j.idx_q + j.nq] = integrate_joint(
            j.kind, qa[j.idx_q:j.idx_q + j.nq], va[j.idx_v:j.idx_v + j.nv])
    return out


def difference(model: RobotModel, q0: object, q1: object) -> Array:
    """``q1 ⊖ q0`` (nv,), so that ``integrate(model, q0, difference(model, q0, q1))`` is
    ``q1`` (``pin.difference``; a continuous joint's angle difference is not wrapped,
    unlike Pinocchio's ``(cos, sin)`` pair).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
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
    for j in plan.grouped:
        sl = slice(j.idx_q, j.idx_q + j.nq)
        out[j.idx_v:j.idx_v + j.nv] = difference_joint(j.kind, a[sl], b[sl])
    return out


def random_configuration(model: RobotModel, rng: np.random.Generator | int | None = None, *,
                         translation_box: float = DEFAULT_TRANSLATION_BOX) -> Array:
    """A random configuration (nq,) of ``model`` (ranges in the module docstring).

    ``rng`` is a NumPy generator or a seed (``None``: fresh entropy).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
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

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
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
            raise StateError(
                f"joint '{j.name}' ({j.kind}): {JOINT_KINDS[j.kind].unit_name} "
                f"{unit.tolist()} has norm {norm:.9g}, "
                f"not 1 (tolerance {tol:g}); it is never normalised silently")
    return qa


__all__ = [
    "DEFAULT_ANGLE_RANGE",
    "DEFAULT_PRISMATIC_RANGE",
    "DEFAULT_TRANSLATION_BOX",
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
    "quaternion_conjugate",
    "quaternion_exp",
    "quaternion_log",
    "quaternion_matrix",
    "quaternion_multiply",
    "random_configuration",
    "random_joint",
    "se3_left_jacobian",
    "se3_left_jacobian_inverse",
    "unit_part",
]
