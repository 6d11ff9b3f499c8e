"""Build a :class:`RobotModel` from links and joints (the common back end of the
URDF, DH and modified-DH builders).

Each :class:`JointSpec` places its joint frame in the parent *link* frame
(``origin``); the child link frame is the joint frame after the motion. Fixed
joints are merged: the child link's inertia is added to the body it is welded
to and its frame is kept in ``RobotModel.frames``. Bodies are numbered in
depth-first order from the root, children in the order they were given.

Multi-DoF joints (``free-flyer``, ``planar``, ``spherical``; see
:mod:`~rnea_ros.core.model.joints`) take their scalar limits and drive
parameters for every coordinate; ``root_joint`` puts one between the base and
the root link (Pinocchio's ``buildModel(..., JointModelFreeFlyer())``, named
``root_joint`` as there). A joint with ``mimic = (leader, multiplier, offset)``
becomes a follower (``RobotModel.mimic_joints``) unless ``mimic=False``, where
it stays an independent joint (Pinocchio's default); chains of mimics resolve
to their root leader.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.errors import ModelError, options
from rnea_ros.core.model.joints import JOINT_NQ, JOINT_NV, MULTI_DOF, ONE_DOF, MimicJoint
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, Frame, RobotModel, check_inertia

Array = NDArray[np.float64]
INF = math.inf
SUPPORTED = (*ONE_DOF, "fixed", *MULTI_DOF)
ROOT_JOINTS = ("free-flyer", "planar")
ROOT_JOINT_NAME = "root_joint"  # Pinocchio's name for it


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
    mimic: tuple[str, float, float] | None = None  # (leader, multiplier, offset)


@dataclass(frozen=True, kw_only=True)
class TableRow:
    """What a row of a standard DH table (:class:`~rnea_ros.core.model.dh.DHLink`) and of
    a modified-DH one (:class:`~rnea_ros.core.model.mdh.MDHLink`) share besides the
    geometry: the link's inertial data, names, limits and drive parameters (keywords).

    ``com`` [m] and ``inertia`` (about the COM; 3 principal, 6 (xx, yy, zz, xy, xz, yz)
    or 9 numbers [kg m^2]) are in the row's link frame; ``armature``, ``coulomb``,
    ``viscous`` are Khalil eq. 31's ``Ia_j``, ``Fs_j``, ``Fv_j``.
    """

    mass: float = 0.0
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Sequence[float] = field(default=(0.0, 0.0, 0.0))
    name: str | None = None
    link_name: str | None = None
    effort_limit: float = INF
    velocity_limit: float = INF
    lower_limit: float = -INF
    upper_limit: float = INF
    armature: float = 0.0
    coulomb: float = 0.0
    viscous: float = 0.0

    def link_spec(self, link: str, where: str, error: type[ModelError] = ModelError) -> LinkSpec:
        """The link ``link`` carrying this row's mass, COM and inertia; ``error`` names
        ``where`` for a malformed COM or inertia."""
        return LinkSpec(link, float(self.mass), as_vector3(self.com, f"{where} com", error),
                        as_inertia(self.inertia, where, error))

    def joint_spec(self, name: str, type_: str, parent: str, child: str,
                   origin: tuple[Array, Array]) -> JointSpec:
        """Joint ``name`` about/along ``z`` of ``origin`` (its frame in ``parent``'s) with
        this row's limits and drive parameters."""
        return JointSpec(name, type_, parent, child, origin, np.array([0.0, 0.0, 1.0]),
                         self.effort_limit, self.velocity_limit, self.lower_limit,
                         self.upper_limit, self.armature, self.coulomb, self.viscous)


def build_model(
    name: str,
    links: Sequence[LinkSpec],
    joints: Sequence[JointSpec],
    *,
    gravity: Sequence[float] = STANDARD_GRAVITY,
    error: type[ModelError] = ModelError,
    inertia_check: str = "strict",
    root_joint: str | None = None,
    mimic: bool = True,
) -> RobotModel:
    """Check the tree and assemble the model; problems raise ``error`` naming the item.

    ``inertia_check`` is ``"strict"`` (non-physical inertias raise
    :class:`~rnea_ros.core.errors.InertiaError`) or ``"warn"``. ``root_joint``
    (``"free-flyer"``, ``"planar"`` or None) moves the root link on a joint
    named ``root_joint``; ``mimic`` makes joints with a ``mimic`` entry followers.
    """
    if root_joint is not None and root_joint not in ROOT_JOINTS:
        raise error(f"root_joint '{root_joint}' is not one of {options(ROOT_JOINTS)} (or None)")
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
                f"supported types: {options(SUPPORTED)}"
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
    root_spec = None
    if root_joint is not None:
        floating = [j.name for j in children[root] if j.type == "free-flyer"]
        if floating:
            raise error(f"root_joint '{root_joint}' requested, but root link '{root}' already "
                        f"floats on joint '{floating[0]}'; load it with root_joint=None")
        if ROOT_JOINT_NAME in seen_joints:
            raise error(f"root_joint: the model already has a joint named '{ROOT_JOINT_NAME}'")
        root_spec = JointSpec(ROOT_JOINT_NAME, root_joint, "", root)

    frames: dict[str, Frame] = {}
    body_inertia: list[tuple[float, Array, Array]] = []
    rows: list[tuple[JointSpec, int, tuple[Array, Array]]] = []
    base = Frame(-1, np.eye(3), np.zeros(3))
    stack: list[tuple[str, JointSpec | None, Frame]] = [(root, root_spec, base)]
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
        if joint.type in MULTI_DOF:
            return np.array([0.0, 0.0, 1.0])  # unused (planar: the joint frame's xy plane)
        axis = np.asarray(joint.axis, dtype=np.float64)
        norm = float(np.linalg.norm(axis))
        if not np.isfinite(norm) or norm < 1e-12:
            raise error(f"joint '{joint.name}': axis {axis.tolist()} is not a valid direction")
        return axis / norm

    def vector(values: list[float]) -> Array:
        return np.array(values, dtype=np.float64)

    joint_rows = [r[0] for r in rows]
    followers = _resolve_mimic(joint_rows, joints, error) if mimic else {}
    coordinate_rows = [j for j in joint_rows if j.name not in followers]

    def per_v(get: Callable[[JointSpec], float]) -> Array:
        return vector([get(j) for j in coordinate_rows for _ in range(JOINT_NV[j.type])])

    def per_q(get: Callable[[JointSpec], float], unbounded: float) -> Array:
        """A position limit per configuration entry (none on multi-DoF joints)."""
        return vector([get(j) if j.type in ONE_DOF else unbounded
                       for j in coordinate_rows for _ in range(JOINT_NQ[j.type])])

    body_of = {j.name: b for b, j in enumerate(joint_rows)}
    return RobotModel(
        name=name,
        joint_names=tuple(j.name for j in coordinate_rows),
        joint_types=tuple(j.type for j in coordinate_rows),
        body_names=tuple(j.child for j in joint_rows),
        parent=np.array([r[1] for r in rows], dtype=np.int64),
        placement_rotation=np.array([r[2][0] for r in rows]),
        placement_translation=np.array([r[2][1] for r in rows]),
        axis=np.array([axis_of(j) for j in joint_rows]),
        mass=vector([b[0] for b in body_inertia]),
        com=np.array([b[1] for b in body_inertia]),
        inertia=np.array([b[2] for b in body_inertia]),
        armature=per_v(lambda j: j.armature),
        coulomb=per_v(lambda j: j.coulomb),
        viscous=per_v(lambda j: j.viscous),
        effort_limit=per_v(lambda j: j.effort_limit),
        velocity_limit=per_v(lambda j: j.velocity_limit),
        lower_limit=per_q(lambda j: -INF if j.type == "continuous" else j.lower_limit, -INF),
        upper_limit=per_q(lambda j: INF if j.type == "continuous" else j.upper_limit, INF),
        gravity=np.asarray(gravity, dtype=np.float64),
        frames=frames,
        root_link=root,
        inertia_check=inertia_check,
        mimic_joints={f: MimicJoint(body_of[f], joint_rows[body_of[f]].type, *coupling)
                      for f, coupling in followers.items()},
    )


def _resolve_mimic(moving: Sequence[JointSpec], joints: Sequence[JointSpec],
                   error: type[ModelError]) -> dict[str, tuple[str, float, float]]:
    """Followers among the ``moving`` joints -> (root leader, multiplier, offset):
    ``q_f = m q_l + o`` composed along chains of mimics. Raises ``error`` for an
    unknown leader, a leader that is not a 1-DoF joint, or a cycle."""
    by_name = {j.name: j for j in joints}
    direct = {j.name: j.mimic for j in moving if j.mimic is not None}
    out: dict[str, tuple[str, float, float]] = {}
    for follower in direct:
        if by_name[follower].type not in ONE_DOF:
            raise error(f"joint '{follower}' is a {by_name[follower].type} joint and cannot "
                        f"mimic another (followers are 1-DoF: {options(ONE_DOF)})")
        name, mult, off, seen = follower, 1.0, 0.0, [follower]
        while name in direct:
            leader, m, o = direct[name]
            if leader not in by_name:
                raise error(f"joint '{name}' mimics unknown joint '{leader}'")
            if leader in seen:
                raise error(f"mimic joints form a cycle: {' -> '.join([*seen, leader])}")
            mult, off = mult * m, mult * o + off  # q = mult (m q_l + o) + off
            name = leader
            seen.append(name)
        if by_name[name].type not in ONE_DOF:
            raise error(f"joint '{follower}' mimics '{name}', a {by_name[name].type} joint; "
                        f"a leader must be 1-DoF ({options(ONE_DOF)})")
        out[follower] = (name, mult, off)
    return out


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
