"""Parallel robots as a platform and legs (Khalil 2010 §5), derived from one source:
a URDF spanning tree and its loop file ``<robot>.loops.yaml`` (how the platform,
the legs and the joints connecting them are found:
:mod:`~rnea_ros.core.coupling.parallel_structure`).

Each leg has three joints, one active; its end moves with the platform's point
``P_i`` (eq. 65). Two families are built (the kernels have a closed-form inverse
geometric model for each): :class:`GoughStewart` (6 legs universal-prismatic,
spherical joint on the platform, a 6-DoF platform) and :class:`DeltaRobot`
(3 legs revolute-universal, universal joint on a translating platform).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.coupling import _parallel_legs as lk
from rnea_ros.core.coupling.loop_file import LoopSource, loop_file_path, read_loop_file
from rnea_ros.core.coupling.loops import Loop
from rnea_ros.core.coupling.parallel_structure import (
    ParallelLeg,
    branch_ends,
    check_cover,
    find_leg,
    order_legs,
    platform_link,
    platform_parts,
    sub_model,
)
from rnea_ros.core.dynamics.kinematics import body_poses, link_pose
from rnea_ros.core.errors import ParallelRobotError
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, RobotModel, _frozen
from rnea_ros.core.model.urdf import load_urdf

Array = NDArray[np.float64]
Robot = TypeVar("Robot", bound="ParallelRobot")


@dataclass(frozen=True, eq=False)
class ParallelRobot:
    """A parallel robot as a platform and legs (Khalil 2010 §5). Build one with
    :meth:`GoughStewart.from_urdf` or :meth:`DeltaRobot.from_urdf`.

    ``tree`` is the spanning tree; ``active`` the active joints, the order of
    every force vector ``tau``; ``legs[k]`` carries ``active[k]``. The platform is
    the link ``platform``; ``platform_mass`` [kg], ``platform_com`` [m] and
    ``platform_inertia`` (about the COM) [kg m^2] in its frame include the links
    welded to it. ``orientation`` is the platform's orientation at the tree's
    zero configuration (the constant orientation of a translating platform);
    ``zero_pose`` the pose the legs' ends suggest there (the forward geometric
    model's default seed). ``nx``/``nv``: sizes of the platform's pose and twist;
    ``legs_model``: the legs without the platform, leg by leg (one model whose
    RNEA gives every ``Gamma_i`` in one pass).
    """

    KIND: ClassVar[int] = lk.KIND_UPS
    LEG_TYPES: ClassVar[tuple[str, ...]] = ()
    CONNECTION: ClassVar[int] = 3  # revolute joints modelling the leg-platform joint

    name: str
    tree: RobotModel
    legs: tuple[ParallelLeg, ...]
    active: tuple[str, ...]
    platform: str
    platform_mass: float
    platform_com: Array
    platform_inertia: Array
    loops: tuple[Loop, ...]
    orientation: Array
    zero_pose: Array
    nx: int = field(init=False)
    nv: int = field(init=False)
    legs_model: RobotModel = field(init=False, repr=False)
    leg_floats: Array = field(init=False, repr=False)
    leg_geometry: Array = field(init=False, repr=False)
    platform_floats: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "nx", 7 if self.KIND == lk.KIND_UPS else 3)
        set_(self, "nv", 6 if self.KIND == lk.KIND_UPS else 3)
        bodies = [self.tree.joint_index(j) for leg in self.legs for j in leg.joints]
        set_(self, "legs_model", sub_model(self.tree, bodies, f"{self.name}/legs"))
        set_(self, "leg_floats", self.legs_model.kernel_floats)
        set_(self, "leg_geometry", _frozen(np.array([self._geometry(leg) for leg in self.legs])))
        pl = np.zeros((1, lk.PL_COLS))
        m, c = self.platform_mass, self.platform_com
        pl[0, lk.PL_MASS] = m
        pl[0, lk.PL_H:lk.PL_H + 3] = m * c
        pl[0, lk.PL_IO:lk.PL_IO + 9] = spatial.inertia_about_origin(
            m, c, self.platform_inertia).reshape(9)
        pl[0, lk.PL_R0:lk.PL_R0 + 9] = self.orientation.reshape(9)
        set_(self, "platform_floats", _frozen(pl))

    @property
    def gravity(self) -> Array:
        """Gravity (3,) [m/s^2], base frame (the tree's)."""
        return self.tree.gravity

    @property
    def kind(self) -> int:
        """The kernels' robot family (``KIND_UPS`` or ``KIND_RUU``)."""
        return self.KIND

    def replace(self: Robot, **changes: Any) -> Robot:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls: type[Robot], urdf: str | Path, loops: LoopSource | None = None, *,
                  gravity: Sequence[float] = STANDARD_GRAVITY,
                  inertia_check: str = "strict") -> Robot:
        """The robot of URDF ``urdf`` (path or XML) and its loop file ``loops``
        (path, loaded mapping or :class:`LoopFile`; default: ``<robot>.loops.yaml``
        next to the URDF)."""
        if loops is None:
            if str(urdf).lstrip().startswith("<"):
                raise ParallelRobotError("a URDF given as XML text needs its loop file: loops=")
            loops = loop_file_path(urdf)
        tree = load_urdf(urdf, gravity=gravity, inertia_check=inertia_check)
        return cls.from_model(tree, loops)

    @classmethod
    def from_model(cls: type[Robot], tree: RobotModel, loops: LoopSource) -> Robot:
        """The robot of spanning tree ``tree`` and loop file ``loops`` (read by
        :func:`~rnea_ros.core.coupling.loop_file.read_loop_file`: a malformed file is a
        :class:`LoopError`; one that does not fit the platform + legs model a
        :class:`ParallelRobotError`)."""
        spec = read_loop_file(loops)
        active, cuts = spec.active, spec.loops
        platform = platform_link(tree, cuts)
        parts = platform_parts(tree, platform, cuts)
        legs = [find_leg(tree, body, cut, parts, platform, cls.__name__, cls.LEG_TYPES,
                         cls.CONNECTION) for body, cut in branch_ends(tree, cuts, platform)]
        legs = order_legs(tree, legs, active)
        check_cover(tree, legs)
        dof = 6 if cls.KIND == lk.KIND_UPS else 3
        if len(legs) != dof:
            raise ParallelRobotError(
                f"model '{tree.name}' has {len(legs)} legs; a {cls.__name__} has {dof}, one "
                "active joint per degree of freedom of its platform (J_p square, eq. 60)")
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        for body, (R, t) in parts.items():
            mass, com, inertia = spatial.add_inertias(
                (mass, com, inertia),
                spatial.express_inertia(float(tree.mass[body]), tree.com[body],
                                        tree.inertia[body], R, t))
        zero = np.zeros(tree.nv)
        orientation = link_pose(tree, zero, platform)[0]
        robot = cls(tree.name, tree, tuple(legs), tuple(active), platform, mass, _frozen(com),
                    _frozen(inertia), cuts, _frozen(orientation), np.zeros(1))
        return robot.replace(zero_pose=_frozen(_zero_pose(robot)))

    def _geometry(self, leg: ParallelLeg) -> Array:
        """The leg's row of kernel geometry (see ``_parallel_jit.G_*``)."""
        raise NotImplementedError


def _common(row: Array, leg: ParallelLeg, leg_types: tuple[str, ...]) -> None:
    row[lk.G_ATTACH:lk.G_ATTACH + 3] = leg.attachment
    row[lk.G_END:lk.G_END + 3] = leg.end
    row[lk.G_ACTIVE] = leg.active
    row[lk.G_LOWER:lk.G_LOWER + 3] = leg.model.lower_limit
    row[lk.G_UPPER:lk.G_UPPER + 3] = leg.model.upper_limit
    w1, w2, up = ((float(row[k]), float(row[k + 1]), float(row[k + 2]))
                  for k in (lk.G_UW1, lk.G_UW2, lk.G_UP))
    row[lk.G_TA:lk.G_TA + lk.TA_COLS] = lk.two_angles_setup(w1, w2, up)
    for j, (kind, lower, upper) in enumerate(zip(
            leg_types, leg.model.lower_limit, leg.model.upper_limit, strict=True)):
        row[lk.G_LIM + 4 * j:lk.G_LIM + 4 * j + 4] = lk.limit_test(
            kind == "prismatic", float(lower), float(upper))


def _check_universal(leg: ParallelLeg, k: int, w1: Array, w2: Array) -> None:
    model = leg.model
    if float(np.abs(model.placement_translation[k]).max()) > 1e-12:
        raise ParallelRobotError(
            f"leg '{leg.name}': joint '{model.joint_names[k]}' is offset from "
            f"'{model.joint_names[k - 1]}': a universal joint's axes must meet")
    if abs(float(w1 @ w2)) > 1.0 - 1e-9:
        raise ParallelRobotError(f"leg '{leg.name}': joints '{model.joint_names[k - 1]}' and "
                                 f"'{model.joint_names[k]}' have parallel axes")


class GoughStewart(ParallelRobot):
    """Gough-Stewart platform: six UPS legs (universal joint on the base, active
    prismatic joint, spherical joint on the platform), a 6-DoF platform with
    pose ``x = [p, qx, qy, qz, qw]`` and twist ``[v, w]`` (base frame)."""

    KIND = lk.KIND_UPS
    LEG_TYPES = ("revolute", "revolute", "prismatic")
    CONNECTION = 3

    def _geometry(self, leg: ParallelLeg) -> Array:
        m = leg.model
        P1, P2, P3 = m.placement_rotation
        a1, a2, a3 = m.axis
        row = np.zeros(lk.G_COLS)
        _check_universal(leg, 1, a1, P2 @ a2)
        c0 = m.placement_translation[2] + P3 @ leg.end  # leg end at zero stroke, cylinder frame
        e = P3 @ a3
        kappa = float(c0 @ e)
        if float(np.linalg.norm(c0 - kappa * e)) > 1e-9 * max(1.0, float(np.linalg.norm(c0))):
            raise ParallelRobotError(
                f"leg '{leg.name}': its end must lie on the axis of '{m.joint_names[2]}' "
                f"through the universal joint's centre")
        row[lk.G_A:lk.G_A + 3] = m.placement_translation[0]
        row[lk.G_P1:lk.G_P1 + 9] = P1.reshape(9)
        row[lk.G_UW1:lk.G_UW1 + 3] = a1
        row[lk.G_UW2:lk.G_UW2 + 3] = P2 @ a2
        row[lk.G_UP:lk.G_UP + 3] = P2 @ e
        row[lk.G_KAPPA] = kappa
        _common(row, leg, self.LEG_TYPES)
        return row


class DeltaRobot(ParallelRobot):
    """Delta robot: three RUU legs (active revolute arm, universal joint at the
    elbow, universal joint on the platform: the parallelogram's equivalent), a
    translating platform with pose ``x = p`` and twist ``v`` (base frame)."""

    KIND = lk.KIND_RUU
    LEG_TYPES = ("revolute", "revolute", "revolute")
    CONNECTION = 2

    def _geometry(self, leg: ParallelLeg) -> Array:
        m = leg.model
        P1, P2, P3 = m.placement_rotation
        a1, a2, a3 = m.axis
        row = np.zeros(lk.G_COLS)
        _check_universal(leg, 2, a2, P3 @ a3)
        A = m.placement_translation[0]
        w = P1 @ a1
        elbow = P1 @ m.placement_translation[1]
        h = float(elbow @ w)
        rperp = elbow - h * w
        lb = float(np.linalg.norm(leg.end))
        if float(np.linalg.norm(rperp)) < 1e-9 or lb < 1e-9:
            raise ParallelRobotError(f"leg '{leg.name}': the elbow must be off the arm's axis "
                                     "and the leg end off the elbow")
        forearm = P1 @ P2 @ P3 @ leg.end
        knee = float(w @ np.cross(rperp, forearm))
        if abs(knee) < 1e-9 * float(np.linalg.norm(rperp)) * lb:
            raise ParallelRobotError(
                f"leg '{leg.name}': at zero joint angles the forearm is aligned with the arm, "
                "so the knee branch of the inverse geometric model is undefined")
        row[lk.G_A:lk.G_A + 3] = A
        row[lk.G_P1:lk.G_P1 + 9] = P1.reshape(9)
        row[lk.G_UW1:lk.G_UW1 + 3] = a2
        row[lk.G_UW2:lk.G_UW2 + 3] = P3 @ a3
        row[lk.G_UP:lk.G_UP + 3] = P3 @ leg.end / lb
        row[lk.G_W:lk.G_W + 3] = w
        row[lk.G_RPERP:lk.G_RPERP + 3] = rperp
        row[lk.G_H] = h
        row[lk.G_LB] = lb
        row[lk.G_KNEE] = np.sign(knee)
        row[lk.G_P2:lk.G_P2 + 9] = P2.reshape(9)
        row[lk.G_A1:lk.G_A1 + 3] = a1
        _common(row, leg, self.LEG_TYPES)
        return row


def _zero_pose(robot: ParallelRobot) -> Array:
    """The platform pose the legs' ends give at zero joint values: the mean of
    ``end_i - R0 P_i`` and the tree's zero orientation ``R0``."""
    ends = []
    for leg in robot.legs:
        R, p = body_poses(leg.model, np.zeros(3))
        ends.append(p[2] + R[2] @ leg.end - robot.orientation @ leg.attachment)
    position: Array = np.mean(ends, axis=0)
    if robot.KIND != lk.KIND_UPS:
        return position
    return np.concatenate([position, quaternion_of(robot.orientation)])


def quaternion_of(R: Array) -> Array:
    """Unit quaternion ``[qx, qy, qz, qw]`` (``qw >= 0``) of rotation ``R`` (Shepperd's
    method: from the largest of ``qw^2, qx^2, qy^2, qz^2``, so no digits are lost)."""
    t = float(np.trace(R))
    k = int(np.argmax([t, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        w = 0.5 * np.sqrt(1.0 + t)
        q = np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                      (R[1, 0] - R[0, 1]) / (4 * w), w])
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        r = 0.5 * np.sqrt(1.0 + 2.0 * R[i, i] - t)
        q = np.empty(4)
        q[i] = r
        q[j] = (R[j, i] + R[i, j]) / (4 * r)
        q[m] = (R[m, i] + R[i, m]) / (4 * r)
        q[3] = (R[m, j] - R[j, m]) / (4 * r)
    q /= np.linalg.norm(q)
    return q if q[3] >= 0.0 else -q
