"""Mimic joints outside the core: coupling checks and the unfolded tree.

A mimic follower (URDF ``<mimic>``, :class:`rnea_ros.core.MimicJoint`) is not a
coordinate of the model: ``q_f = multiplier * q_leader + offset``. A driver may
still publish it on ``joint_states`` (a real robot's does, e.g. PR2's gripper
fingers); the consumers here use it only as a consistency check.

* :func:`follower_check` -- which followers of a joint-state name list can be
  checked (leader and follower in the same message), and
  :func:`follower_deviation` the largest ``|q_f - (m q_l + o)|``.
* :func:`unfold` -- the same robot with every follower as an independent
  1-DoF joint (the *tree*, the model ``load_urdf(..., mimic=False)`` would
  give, drive terms of the followers dropped as the mimic model drops them) and
  the constant map ``q_tree = G q + o``, ``v_tree = G v``. Because ``G`` is
  constant, the generalized forces of the mimic model and their time
  derivatives are ``G^T`` those of the tree at the mapped state (virtual work):
  ``tau = G^T tau_tree`` and ``tau_dot = G^T tau_dot_tree``. The core's
  ``rnea_time_derivative`` does not take mimic models yet (it raises
  ``ModelError``), so ``rnea-bag`` computes ``tau_dot`` this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.model.joints import ONE_DOF
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


def leader_of(model: RobotModel, name: str) -> str | None:
    """The leader of follower ``name``, or None when ``name`` is not a follower."""
    m = model.mimic_joints.get(name)
    return None if m is None else m.leader


def check_actuated(model: RobotModel, joints: Sequence[str], parameter: str) -> None:
    """Raise :class:`ParameterError` when ``joints`` (a node's ``parameter``) names
    a mimic follower (never commanded: its leader's effort drives it) or a joint
    the model does not have."""
    followers = [j for j in joints if j in model.mimic_joints]
    if followers:
        pairs = ", ".join(f"'{f}' follows '{model.mimic_joints[f].leader}'" for f in followers)
        raise ParameterError(
            f"parameter '{parameter}': {pairs} (URDF <mimic>): a follower is not a coordinate "
            "and is never commanded; command its leader instead; commandable joints: "
            f"{options(model.joint_names)}")
    unknown = [j for j in joints if j not in model.joint_names]
    if unknown:
        raise ParameterError(f"parameter '{parameter}': {options(unknown)} not in the model; "
                             f"valid: {options(model.joint_names)}")


@dataclass(frozen=True)
class FollowerCheck:
    """The followers of one joint-state name list that can be checked: their
    position in the message (``follower``), their leader's (``leader``), the
    coupling (``multiplier``, ``offset``) and their names."""

    follower: IntArray
    leader: IntArray
    multiplier: Array
    offset: Array
    names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.names)

    @property
    def rows(self) -> tuple[tuple[int, int, float, float, str], ...]:
        """``(follower, leader, multiplier, offset, name)`` as Python scalars, for a
        per-message loop without numpy scalars."""
        return tuple(zip(self.follower.tolist(), self.leader.tolist(),
                         self.multiplier.tolist(), self.offset.tolist(), self.names,
                         strict=True))


NO_FOLLOWERS = FollowerCheck(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                             np.zeros(0), ())


def follower_check(model: RobotModel, names: Sequence[str]) -> FollowerCheck:
    """What of ``names`` (a ``JointState``'s) can be checked against the coupling:
    the followers whose leader is in the same message (first occurrence of each
    name). Empty for a model without mimic joints."""
    if not model.mimic_joints:
        return NO_FOLLOWERS
    where: dict[str, int] = {}
    for k, name in enumerate(names):
        where.setdefault(name, k)
    rows = [(where[f], where[m.leader], m.multiplier, m.offset, f)
            for f, m in model.mimic_joints.items() if f in where and m.leader in where]
    if not rows:
        return NO_FOLLOWERS
    f, lead, mult, off, fnames = zip(*rows, strict=True)
    return FollowerCheck(np.array(f, np.int64), np.array(lead, np.int64),
                         np.array(mult, np.float64), np.array(off, np.float64), tuple(fnames))


def follower_deviation(check: FollowerCheck, position: Array) -> Array:
    """``position[f] - (m position[leader] + o)`` per checked follower; ``position``
    (len(names),) or (N, len(names)) for N messages of one layout."""
    p = np.asarray(position, dtype=np.float64)
    deviation: Array = p[..., check.follower] - (check.multiplier * p[..., check.leader]
                                                 + check.offset)
    return deviation


@dataclass(frozen=True, eq=False)
class Unfolded:
    """The tree of a mimic model and its coupling ``q_tree = G q + offset``."""

    tree: RobotModel  # every body on a 1-DoF joint of its own, in body order
    G: Array  # (tree.nv, model.nv)
    offset: Array  # (tree.nq,)

    def configuration(self, q: Array) -> Array:
        """``G q + offset``: (n,) or (N, n) -> the tree's positions."""
        out: Array = np.asarray(q, dtype=np.float64) @ self.G.T + self.offset
        return out

    def tangent(self, x: Array) -> Array:
        """``G x``: a velocity, acceleration or jerk, (n,) or (N, n)."""
        out: Array = np.asarray(x, dtype=np.float64) @ self.G.T
        return out

    def forces(self, tau_tree: Array) -> Array:
        """``G^T tau_tree``: the tree's generalized forces -> the model's."""
        out: Array = np.asarray(tau_tree, dtype=np.float64) @ self.G
        return out


def unfold(model: RobotModel) -> Unfolded:
    """The tree of ``model`` (see the module docstring); ``G`` is the identity and
    the tree ``model`` itself when there is no follower. 1-DoF joints only."""
    multi = [j for j, t in zip(model.joint_names, model.joint_types, strict=True)
             if t not in ONE_DOF]
    if multi:
        raise ModelError(f"model '{model.name}': unfolding mimic joints needs 1-DoF joints; "
                         f"{options(multi)} are not")
    if not model.mimic_joints:
        return Unfolded(model, np.eye(model.nv), np.zeros(model.nq))
    nb = model.nbodies
    names: list[str] = [""] * nb
    types: list[str] = [""] * nb
    G = np.zeros((nb, model.nv))
    offset = np.zeros(nb)
    drive = {key: np.zeros(nb) for key in ("armature", "coulomb", "viscous")}
    limit = {"effort_limit": np.full(nb, np.inf), "velocity_limit": np.full(nb, np.inf),
             "lower_limit": np.full(nb, -np.inf), "upper_limit": np.full(nb, np.inf)}
    for j, b in enumerate(model.joint_body):
        names[b], types[b] = model.joint_names[j], model.joint_types[j]
        G[b, j] = 1.0
        for key, values in (*drive.items(), *limit.items()):
            values[b] = getattr(model, key)[j]
    for f, m in model.mimic_joints.items():
        names[m.body], types[m.body] = f, m.type
        G[m.body, model.joint_index(m.leader)] = m.multiplier
        offset[m.body] = m.offset
    tree = model.replace(joint_names=tuple(names), joint_types=tuple(types), mimic_joints={},
                         **drive, **limit)
    return Unfolded(tree, G, offset)
