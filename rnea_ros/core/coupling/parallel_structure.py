"""How a parallel robot's parts are found in one source: a URDF spanning tree and its
loop file ``<robot>.loops.yaml`` (Khalil 2010 §2.2: the tree obtained by cutting
each closed chain at a passive joint, plus the cut joints).

The loop file (read by :func:`~rnea_ros.core.coupling.loop_file.read_loop_file`,
the format of the closed-loop models) lists the active joints and the cut joints
(:class:`~rnea_ros.core.coupling.loops.Loop`). From the tree and the cuts we find:

* the **platform**: the link every cut joint touches (``link2`` of a single
  loop); with the links welded to it by ``weld`` cuts it forms one rigid body;
* the **legs**: the tree's branches from the base to the platform. A branch
  ends at a ``spherical`` cut joint (the leg end is the cut's centre) or at a
  platform body; in the latter case its trailing joints whose child links are
  massless are the passive joints *connecting* the leg to the platform (a
  spherical or universal joint modelled as revolute joints meeting at one
  point) and the leg end is their centre. Khalil's ``q_i`` are the other
  joints of the branch (§5: "q_i does not include the passive joint variables
  connecting the legs to the platform").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.coupling.loops import Loop, branch
from rnea_ros.core.errors import ParallelRobotError, options
from rnea_ros.core.model.robot_model import RobotModel, _frozen

Array = NDArray[np.float64]
Transform = tuple[Array, Array]


@dataclass(frozen=True, eq=False)
class ParallelLeg:
    """One leg: its joints ``q_i`` (base to leg end, three), the index of its active
    joint, the passive tree joints ``connection`` from its end to the platform
    (empty when the loop is cut there: ``cut`` names that loop), the leg alone as
    a serial ``model``, its ``end`` in the last leg body's frame and the same
    point ``attachment`` on the platform (``P_i`` of eq. 65, platform frame).
    ``body_rotation``: the orientation, in the platform frame, of the body the
    connection ends on (identity for a cut leg)."""

    name: str
    joints: tuple[str, ...]
    active: int
    connection: tuple[str, ...]
    cut: str
    model: RobotModel
    end: Array
    attachment: Array
    body_rotation: Array


def find_leg(tree: RobotModel, end_body: int, cut: Loop | None,
             parts: Mapping[int, Transform], platform: str, family: str,
             leg_types: tuple[str, ...], connection_size: int) -> ParallelLeg:
    """The leg whose branch ends at ``end_body`` (cut there by ``cut``, or a platform
    body of ``parts``), checked against ``family``'s leg joints ``leg_types`` and its
    ``connection_size`` revolute joints to the platform (3: spherical, 2: universal)."""
    path = branch(tree, end_body)
    if cut is not None and cut.type == "spherical":
        link, frame, plat_frame = _sides(cut, platform)
        placed = tree.link_frame(link)
        end = placed.rotation @ frame[1] + placed.translation
        leg_bodies, connection = path, []
        attachment, body_rotation = plat_frame[1], np.eye(3)
    else:
        connection = [path[-1]]
        while len(path) > len(connection) and tree.mass[path[-len(connection) - 1]] == 0.0 \
                and len(connection) < connection_size:
            connection.insert(0, path[-len(connection) - 1])
        leg_bodies = path[:len(path) - len(connection)]
        end = tree.placement_translation[connection[0]]
        R, t = parts[end_body]
        attachment, body_rotation = t, R
    where = f"leg ending at link '{tree.body_names[end_body]}'"
    names = tuple(tree.joint_names[b] for b in leg_bodies)
    if len(names) != 3:
        raise ParallelRobotError(
            f"{where}: the platform + legs model needs legs of three joints "
            f"before the joint on the platform; this one has {options(names)}")
    _check_connection(tree, where, cut, connection, family, connection_size)
    leg = ParallelLeg(_leg_name(names), names, -1,
                      tuple(tree.joint_names[b] for b in connection),
                      cut.name if cut is not None else "",
                      sub_model(tree, leg_bodies, f"{tree.name}/{_leg_name(names)}"),
                      _frozen(end), _frozen(attachment), _frozen(body_rotation))
    types = tuple("revolute" if t == "continuous" else t for t in leg.model.joint_types)
    if types != leg_types:
        raise ParallelRobotError(
            f"leg '{leg.name}': joints {options(names)} are {options(types)}; a "
            f"{family} leg is {options(leg_types)}")
    return leg


def _check_connection(tree: RobotModel, where: str, cut: Loop | None,
                      connection: list[int], family: str, connection_size: int) -> None:
    if cut is not None and cut.type == "spherical":
        if connection_size != 3:
            raise ParallelRobotError(f"loop '{cut.name}': a {family} leg is joined to "
                                     "its platform by a universal joint, not a spherical one")
        return
    names = [tree.joint_names[b] for b in connection]
    if len(connection) != connection_size or any(
            tree.joint_types[b] == "prismatic" for b in connection):
        raise ParallelRobotError(
            f"{where}: {options(names)} join it to the platform; a {family} needs "
            f"{connection_size} revolute joints on massless links there")
    for b in connection[1:]:
        if float(np.abs(tree.placement_translation[b]).max()) > 1e-12:
            raise ParallelRobotError(
                f"joint '{tree.joint_names[b]}' is offset from '{names[0]}': the joints "
                "joining a leg to the platform must meet at one point")
    for b in connection:
        if tree.armature[b] or tree.coulomb[b] or tree.viscous[b]:
            raise ParallelRobotError(
                f"joint '{tree.joint_names[b]}' joins a leg to the platform and has "
                "armature or friction, which the platform + legs model does not carry")


def platform_link(tree: RobotModel, cuts: Sequence[Loop]) -> str:
    common = set.intersection(*({c.link1, c.link2} for c in cuts))
    if len(common) == 2:  # a single loop: its link2, as in our loop files
        common = {cuts[0].link2}
    if len(common) != 1:
        raise ParallelRobotError(
            f"model '{tree.name}': no single link is cut from every leg (the platform); "
            f"loops: {options(c.name for c in cuts)}")
    platform = common.pop()
    if tree.link_frame(platform).body < 0:
        raise ParallelRobotError(f"platform '{platform}' is fixed to the base in the tree")
    return platform


def _sides(cut: Loop, platform: str) -> tuple[str, Transform, Transform]:
    """``(other link, its cut frame, the platform's cut frame)``."""
    if cut.link2 == platform:
        return cut.link1, cut.frame1, cut.frame2
    return cut.link2, cut.frame2, cut.frame1


def _inverse(T: Transform) -> Transform:
    R, t = T
    return R.T, -R.T @ t


def platform_parts(tree: RobotModel, platform: str, cuts: Sequence[Loop]
                    ) -> dict[int, Transform]:
    """Bodies rigidly fixed to the platform: body -> its pose in the platform link frame."""
    placed = tree.link_frame(platform)
    parts = {placed.body: _inverse((placed.rotation, placed.translation))}
    for cut in cuts:
        if cut.type not in ("spherical", "weld"):
            raise ParallelRobotError(
                f"loop '{cut.name}' is a {cut.type} cut joint; the platform + legs model "
                "cuts spherical joints (legs) or welds (links bolted to the platform)")
        if cut.type != "weld":
            continue
        link, frame, plat_frame = _sides(cut, platform)
        other = tree.link_frame(link)
        # platform <- cut frame <- link frame <- body frame
        T = spatial.compose(spatial.compose(plat_frame, _inverse(frame)),
                            _inverse((other.rotation, other.translation)))
        if other.body in parts:
            raise ParallelRobotError(f"loop '{cut.name}' welds body "
                                     f"'{tree.body_names[other.body]}' twice")
        parts[other.body] = T
    return parts


def branch_ends(tree: RobotModel, cuts: Sequence[Loop], platform: str
                 ) -> list[tuple[int, Loop | None]]:
    ends: list[tuple[int, Loop | None]] = [(tree.link_frame(platform).body, None)]
    for cut in cuts:
        link = _sides(cut, platform)[0]
        ends.append((tree.link_frame(link).body, cut))
    return ends


def _leg_name(joints: Sequence[str]) -> str:
    """The joints' common name prefix (``leg3`` of ``leg3_u1, leg3_u2, leg3_slide``),
    else the joint names."""
    prefix = joints[0]
    for name in joints[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix.rstrip("_-. ")
    return prefix or "/".join(joints)


def sub_model(tree: RobotModel, bodies: Sequence[int], name: str) -> RobotModel:
    """The bodies ``bodies`` of ``tree`` (each after its parent, or on the base) as a model."""
    idx = list(bodies)
    position = {b: k for k, b in enumerate(idx)}
    return RobotModel(
        name=name, joint_names=tuple(tree.joint_names[b] for b in idx),
        joint_types=tuple(tree.joint_types[b] for b in idx),
        body_names=tuple(tree.body_names[b] for b in idx),
        parent=np.array([position.get(int(tree.parent[b]), -1) for b in idx]),
        placement_rotation=tree.placement_rotation[idx],
        placement_translation=tree.placement_translation[idx], axis=tree.axis[idx],
        mass=tree.mass[idx], com=tree.com[idx], inertia=tree.inertia[idx],
        armature=tree.armature[idx], coulomb=tree.coulomb[idx], viscous=tree.viscous[idx],
        effort_limit=tree.effort_limit[idx], velocity_limit=tree.velocity_limit[idx],
        lower_limit=tree.lower_limit[idx], upper_limit=tree.upper_limit[idx],
        gravity=tree.gravity, root_link=tree.root_link, inertia_check=tree.inertia_check)


def order_legs(tree: RobotModel, legs: Sequence[ParallelLeg], active: Sequence[str]
                ) -> list[ParallelLeg]:
    """One active joint per leg; legs in the order of ``active``."""
    for name in active:
        tree.joint_index(name)  # JointNameError for an unknown joint
    if len(set(active)) != len(active):
        raise ParallelRobotError(f"active joints listed twice in {options(active)}")
    by_active: dict[str, ParallelLeg] = {}
    for leg in legs:
        mine = [j for j in leg.joints if j in active]
        if len(mine) != 1:
            raise ParallelRobotError(
                f"leg '{leg.name}' ({options(leg.joints)}) has {len(mine)} active joints "
                f"{options(mine)}; the platform + legs model needs exactly one per leg")
        by_active[mine[0]] = dataclasses.replace(leg, active=leg.joints.index(mine[0]))
    stray = [a for a in active if a not in by_active]
    if stray:
        raise ParallelRobotError(f"active joints {options(stray)} are in no leg")
    return [by_active[a] for a in active]


def check_cover(tree: RobotModel, legs: Sequence[ParallelLeg]) -> None:
    """Every tree joint in exactly one leg (its joints or its connection)."""
    owner: dict[str, str] = {}
    for leg in legs:
        for j in (*leg.joints, *leg.connection):
            if j in owner:
                raise ParallelRobotError(f"joint '{j}' is in legs '{owner[j]}' and '{leg.name}'")
            owner[j] = leg.name
    stray = [j for j in tree.joint_names if j not in owner]
    if stray:
        raise ParallelRobotError(
            f"joints {options(stray)} belong to no leg: the platform + legs model has nothing "
            "moving on the platform or between the legs")
