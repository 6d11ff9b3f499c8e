"""Build a :class:`RobotModel` from links and joints (the common back end of the
URDF, DH and modified-DH builders).

Each :class:`JointSpec` places its joint frame in the parent *link* frame
(``origin``); the child link frame is the joint frame after the motion. Fixed
joints are merged: the child link's inertia is added to the body it is welded
to and its frame is kept in ``RobotModel.frames``. Bodies are numbered in
depth-first order from the root, children in the order they were given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, Frame, RobotModel, check_inertia

Array = NDArray[np.float64]
INF = math.inf
SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")


@dataclass(frozen=True)
class LinkSpec:
    """A link: ``mass`` [kg], ``com`` (3,) [m] and ``inertia`` (3, 3) about the COM
    [kg m^2], both in the link frame."""

    name: str
    mass: float = 0.0
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))


@dataclass(frozen=True)
class JointSpec:
    """A joint between ``parent`` and ``child`` links.

    ``origin`` is the joint frame in the parent link frame; ``axis`` is in the
    joint frame. Limits default to unbounded; drive parameters to zero.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: tuple[Array, Array] = field(default_factory=spatial.identity)
    axis: Array = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    effort_limit: float = INF
    velocity_limit: float = INF
    lower_limit: float = -INF
    upper_limit: float = INF
    armature: float = 0.0
    coulomb: float = 0.0
    viscous: float = 0.0


def build_model(
    name: str,
    links: Sequence[LinkSpec],
    joints: Sequence[JointSpec],
    *,
    gravity: Sequence[float] = STANDARD_GRAVITY,
    error: type[ModelError] = ModelError,
    inertia_check: str = "strict",
) -> RobotModel:
    """Check the tree and assemble the model; problems raise ``error`` naming the item.

    ``inertia_check`` is ``"strict"`` (non-physical inertias raise
    :class:`~rnea_ros.core.errors.InertiaError`) or ``"warn"``.
    """
    if not links:
        raise error(f"model '{name}' defines no links")
    link_by_name: dict[str, LinkSpec] = {}
    for link in links:
        if link.name in link_by_name:
            raise error(f"link '{link.name}' is defined twice")
        check_inertia(f"link '{link.name}'", link.mass, link.com, link.inertia, inertia_check)
        link_by_name[link.name] = link
    children: dict[str, list[JointSpec]] = {name_: [] for name_ in link_by_name}
    parent_joint: dict[str, JointSpec] = {}
    seen_joints: set[str] = set()
    for joint in joints:
        if joint.name in seen_joints:
            raise error(f"joint '{joint.name}' is defined twice")
        seen_joints.add(joint.name)
        if joint.type not in SUPPORTED:
            raise error(
                f"joint '{joint.name}' has type '{joint.type}', which is not supported; "
                f"supported types: {options(SUPPORTED)} (fixed-base trees only)"
            )
        for role, link_name in (("parent", joint.parent), ("child", joint.child)):
            if link_name not in link_by_name:
                raise error(
                    f"joint '{joint.name}': {role} link '{link_name}' is not defined; "
                    f"links: {options(link_by_name)}"
                )
        if joint.child in parent_joint:
            raise error(
                f"link '{joint.child}' has two parent joints, "
                f"'{parent_joint[joint.child].name}' and '{joint.name}' (closed loops are not "
                "supported)"
            )
        if joint.child == joint.parent:
            raise error(f"joint '{joint.name}' connects link '{joint.child}' to itself")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [link.name for link in links if link.name not in parent_joint]
    if not roots:
        raise error("the links form a cycle: every link has a parent joint")
    if len(roots) > 1:
        raise error(f"the model has several root links: {options(roots)}; a tree has one")
    root = roots[0]

    frames: dict[str, Frame] = {}
    body_inertia: list[tuple[float, Array, Array]] = []
    rows: list[tuple[JointSpec, int, tuple[Array, Array]]] = []
    base = Frame(-1, np.eye(3), np.zeros(3))
    stack: list[tuple[str, JointSpec | None, Frame]] = [(root, None, base)]
    while stack:  # pre-order depth-first: a body is numbered after its parent
        link_name, via, parent_frame = stack.pop()
        frame = parent_frame
        if via is not None:
            offset = spatial.compose((parent_frame.rotation, parent_frame.translation),
                                     via.origin)
            if via.type == "fixed":
                frame = Frame(parent_frame.body, offset[0], offset[1])
            else:
                frame = Frame(len(rows), np.eye(3), np.zeros(3))
                rows.append((via, parent_frame.body, offset))
                body_inertia.append((0.0, np.zeros(3), np.zeros((3, 3))))
        frames[link_name] = frame
        for child_joint in reversed(children[link_name]):  # reversed: pop keeps given order
            stack.append((child_joint.child, child_joint, frame))
    unreachable = sorted(set(link_by_name) - set(frames))
    if unreachable:
        raise error(f"links {options(unreachable)} are not connected to root '{root}' (cycle)")
    for link_name, frame in frames.items():
        if frame.body < 0:
            continue
        link = link_by_name[link_name]
        part = spatial.express_inertia(link.mass, link.com, link.inertia,
                                       frame.rotation, frame.translation)
        body_inertia[frame.body] = spatial.add_inertias(body_inertia[frame.body], part)
    n = len(rows)
    if n == 0:
        raise error(f"model '{name}' has no moving joint")

    def axis_of(joint: JointSpec) -> Array:
        axis = np.asarray(joint.axis, dtype=np.float64)
        norm = float(np.linalg.norm(axis))
        if not np.isfinite(norm) or norm < 1e-12:
            raise error(f"joint '{joint.name}': axis {axis.tolist()} is not a valid direction")
        return axis / norm

    def vector(values: list[float]) -> Array:
        return np.array(values, dtype=np.float64)

    joint_rows = [r[0] for r in rows]
    unlimited = [j.type == "continuous" for j in joint_rows]
    return RobotModel(
        name=name,
        joint_names=tuple(j.name for j in joint_rows),
        joint_types=tuple(j.type for j in joint_rows),
        body_names=tuple(j.child for j in joint_rows),
        parent=np.array([r[1] for r in rows], dtype=np.int64),
        placement_rotation=np.array([r[2][0] for r in rows]),
        placement_translation=np.array([r[2][1] for r in rows]),
        axis=np.array([axis_of(j) for j in joint_rows]),
        mass=vector([b[0] for b in body_inertia]),
        com=np.array([b[1] for b in body_inertia]),
        inertia=np.array([b[2] for b in body_inertia]),
        armature=vector([j.armature for j in joint_rows]),
        coulomb=vector([j.coulomb for j in joint_rows]),
        viscous=vector([j.viscous for j in joint_rows]),
        effort_limit=vector([j.effort_limit for j in joint_rows]),
        velocity_limit=vector([j.velocity_limit for j in joint_rows]),
        lower_limit=vector([-INF if u else j.lower_limit
                            for j, u in zip(joint_rows, unlimited, strict=True)]),
        upper_limit=vector([INF if u else j.upper_limit
                            for j, u in zip(joint_rows, unlimited, strict=True)]),
        gravity=np.asarray(gravity, dtype=np.float64),
        frames=frames,
        root_link=root,
        inertia_check=inertia_check,
    )


def as_inertia(value: object, where: str, error: type[ModelError] = ModelError) -> Array:
    """A 3x3 inertia from 3 (principal xx, yy, zz), 6 (xx, yy, zz, xy, xz, yz) or 9 numbers."""
    a = np.asarray(value, dtype=np.float64).ravel()
    if a.size == 3:
        return np.diag(a)
    if a.size == 6:
        xx, yy, zz, xy, xz, yz = a
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if a.size == 9:
        return a.reshape(3, 3)
    raise error(f"{where}: inertia needs 3, 6 or 9 numbers, got {a.size}")


def as_vector3(value: object, where: str, error: type[ModelError] = ModelError) -> Array:
    """A (3,) vector, else ``error`` naming ``where``."""
    a = np.asarray(value, dtype=np.float64).ravel()
    if a.size != 3:
        raise error(f"{where}: expected 3 numbers, got {a.size}")
    return a
