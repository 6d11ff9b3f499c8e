"""Parallel robots as a platform and legs (Khalil 2010 §5), derived from one source:
a URDF spanning tree and its loop file ``<robot>.loops.yaml``.

The loop file (the format of :mod:`rnea_ros.core.coupling.loops`) lists the
active joints and the cut joints. From the tree and the cuts we find:

* the **platform**: the link every cut joint touches (``link2`` of a single
  loop); with the links welded to it by ``weld`` cuts it forms one rigid body
  (mass, COM, inertia summed);
* the **legs**: the tree's branches from the base to the platform. A branch
  ends at a ``spherical`` cut joint (the leg end is the cut's centre) or at a
  platform body; in the latter case its trailing joints whose child links are
  massless are the passive joints *connecting* the leg to the platform (a
  spherical or universal joint modelled as revolute joints meeting at one
  point) and the leg end is their centre. Khalil's ``q_i`` are the other
  joints of the branch (eq. 59: "q_i does not include the passive joint
  variables connecting the legs to the platform").

Each leg has three joints, one active; its end moves with the platform's point
``P_i`` (eq. 65). Two families are built (the kernels have a closed-form inverse
geometric model for each): :class:`GoughStewart` (6 legs universal-prismatic,
spherical joint on the platform, a 6-DoF platform) and :class:`DeltaRobot`
(3 legs revolute-universal, universal joint on a translating platform).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import yaml
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.coupling import _parallel_jit as pk
from rnea_ros.core.dynamics.kinematics import body_poses, link_pose
from rnea_ros.core.errors import ParallelRobotError, options
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, RobotModel
from rnea_ros.core.model.urdf import load_urdf

Array = NDArray[np.float64]
Transform = tuple[Array, Array]
CUT_TYPES = ("revolute", "prismatic", "spherical", "weld")


@dataclass(frozen=True, eq=False)
class CutJoint:
    """One loop of a loop file: cut joint ``name`` of ``type`` between the frame
    ``frame1 = (R, xyz)`` on ``link1`` and ``frame2`` on ``link2`` (link frames)."""

    name: str
    type: str
    link1: str
    frame1: Transform
    link2: str
    frame2: Transform


def _frame(entry: Any, where: str) -> Transform:
    if entry is None:
        return spatial.identity()
    if not isinstance(entry, Mapping) or not set(entry) <= {"xyz", "rpy"}:
        raise ParallelRobotError(f"{where}: expected {{xyz: [x, y, z], rpy: [r, p, y]}}")
    values = []
    for key in ("xyz", "rpy"):
        v = np.array(entry.get(key, (0.0, 0.0, 0.0)), dtype=np.float64)
        if v.shape != (3,) or not np.all(np.isfinite(v)):
            raise ParallelRobotError(f"{where}: {key} must be 3 finite numbers")
        values.append(v)
    return spatial.rpy_matrix(*values[1]), values[0]


def read_loops(source: str | Path | Mapping[str, Any]) -> tuple[tuple[str, ...],
                                                                 tuple[CutJoint, ...]]:
    """``(active joints, cut joints)`` from a loop file (path or loaded mapping)."""
    where = "loop file"
    data: Any = source
    if not isinstance(source, Mapping):
        where = str(source)
        try:
            data = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ParallelRobotError(f"cannot read loop file '{source}': {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ParallelRobotError(f"{where}: not valid YAML ({exc})") from None
    if not isinstance(data, Mapping) or "active" not in data or "loops" not in data:
        raise ParallelRobotError(f"{where}: needs the keys 'active' and 'loops'")
    active = data["active"]
    if not isinstance(active, list) or not all(isinstance(a, str) for a in active):
        raise ParallelRobotError(f"{where}: 'active' must be a list of joint names")
    cuts = []
    for k, loop in enumerate(data["loops"] or []):
        if not isinstance(loop, Mapping):
            raise ParallelRobotError(f"{where}: loop {k} is not a mapping")
        name = str(loop.get("name", f"loop{k}"))
        missing = [key for key in ("type", "link1", "link2") if key not in loop]
        if missing:
            raise ParallelRobotError(f"{where}: loop '{name}' lacks {options(missing)}")
        if loop["type"] not in CUT_TYPES:
            raise ParallelRobotError(f"{where}: loop '{name}' has type '{loop['type']}'; "
                                     f"valid types: {options(CUT_TYPES)}")
        cuts.append(CutJoint(name, str(loop["type"]), str(loop["link1"]),
                             _frame(loop.get("frame1"), f"{where}: loop '{name}' frame1"),
                             str(loop["link2"]),
                             _frame(loop.get("frame2"), f"{where}: loop '{name}' frame2")))
    return tuple(active), tuple(cuts)


def loop_file_of(urdf: str | Path) -> Path:
    """``<robot>.loops.yaml`` next to ``<robot>.urdf``."""
    path = Path(urdf)
    return path.with_name(path.name.removesuffix(".urdf") + ".loops.yaml")


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

    KIND: ClassVar[int] = pk.KIND_UPS
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
    loops: tuple[CutJoint, ...]
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
        set_(self, "nx", 7 if self.KIND == pk.KIND_UPS else 3)
        set_(self, "nv", 6 if self.KIND == pk.KIND_UPS else 3)
        bodies = [self.tree.joint_index(j) for leg in self.legs for j in leg.joints]
        set_(self, "legs_model", _sub_model(self.tree, bodies, f"{self.name}/legs"))
        set_(self, "leg_floats", self.legs_model.kernel_floats)
        set_(self, "leg_geometry", _frozen(np.array([self._geometry(leg) for leg in self.legs])))
        pl = np.zeros((1, pk.PL_COLS))
        m, c = self.platform_mass, self.platform_com
        pl[0, pk.PL_MASS] = m
        pl[0, pk.PL_H:pk.PL_H + 3] = m * c
        pl[0, pk.PL_IO:pk.PL_IO + 9] = spatial.inertia_about_origin(
            m, c, self.platform_inertia).reshape(9)
        pl[0, pk.PL_R0:pk.PL_R0 + 9] = self.orientation.reshape(9)
        set_(self, "platform_floats", _frozen(pl))

    @property
    def gravity(self) -> Array:
        """Gravity (3,) [m/s^2], base frame (the tree's)."""
        return self.tree.gravity

    @property
    def kind(self) -> int:
        """The kernels' robot family (``KIND_UPS`` or ``KIND_RUU``)."""
        return self.KIND

    def replace(self, **changes: Any) -> ParallelRobot:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls, urdf: str | Path, loops: str | Path | Mapping[str, Any] | None = None, *,
                  gravity: Sequence[float] = STANDARD_GRAVITY,
                  inertia_check: str = "strict") -> ParallelRobot:
        """The robot of URDF ``urdf`` (path or XML) and its loop file ``loops``
        (path or loaded mapping; default: ``<robot>.loops.yaml`` next to the URDF)."""
        if loops is None:
            if str(urdf).lstrip().startswith("<"):
                raise ParallelRobotError("a URDF given as XML text needs its loop file: loops=")
            loops = loop_file_of(urdf)
        tree = load_urdf(urdf, gravity=gravity, inertia_check=inertia_check)
        return cls.from_model(tree, loops)

    @classmethod
    def from_model(cls, tree: RobotModel, loops: str | Path | Mapping[str, Any]
                   ) -> ParallelRobot:
        """The robot of spanning tree ``tree`` and loop file ``loops``."""
        active, cuts = read_loops(loops)
        platform = _platform_link(tree, cuts)
        parts = _platform_parts(tree, platform, cuts)
        legs = [cls._leg(tree, body, cut, parts, platform)
                for body, cut in _branch_ends(tree, cuts, platform)]
        legs = _order_legs(tree, legs, active)
        _check_cover(tree, legs, parts)
        dof = 6 if cls.KIND == pk.KIND_UPS else 3
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

    @classmethod
    def _leg(cls, tree: RobotModel, end_body: int, cut: CutJoint | None,
             parts: Mapping[int, Transform], platform: str) -> ParallelLeg:
        path = _path(tree, end_body)
        if cut is not None and cut.type == "spherical":
            link, frame, plat_frame = _sides(cut, platform)
            placed = tree.link_frame(link)
            end = placed.rotation @ frame[1] + placed.translation
            leg_bodies, connection = path, []
            attachment, body_rotation = plat_frame[1], np.eye(3)
        else:
            connection = [path[-1]]
            while len(path) > len(connection) and tree.mass[path[-len(connection) - 1]] == 0.0 \
                    and len(connection) < cls.CONNECTION:
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
        cls._check_connection(tree, where, cut, connection)
        leg = ParallelLeg(_leg_name(names), names, -1,
                          tuple(tree.joint_names[b] for b in connection),
                          cut.name if cut is not None else "",
                          _sub_model(tree, leg_bodies, f"{tree.name}/{_leg_name(names)}"),
                          _frozen(end), _frozen(attachment), _frozen(body_rotation))
        types = tuple("revolute" if t == "continuous" else t for t in leg.model.joint_types)
        if types != cls.LEG_TYPES:
            raise ParallelRobotError(
                f"leg '{leg.name}': joints {options(names)} are {options(types)}; a "
                f"{cls.__name__} leg is {options(cls.LEG_TYPES)}")
        return leg

    @classmethod
    def _check_connection(cls, tree: RobotModel, where: str, cut: CutJoint | None,
                          connection: list[int]) -> None:
        if cut is not None and cut.type == "spherical":
            if cls.CONNECTION != 3:
                raise ParallelRobotError(f"loop '{cut.name}': a {cls.__name__} leg is joined to "
                                         "its platform by a universal joint, not a spherical one")
            return
        names = [tree.joint_names[b] for b in connection]
        if len(connection) != cls.CONNECTION or any(
                tree.joint_types[b] == "prismatic" for b in connection):
            raise ParallelRobotError(
                f"{where}: {options(names)} join it to the platform; a {cls.__name__} needs "
                f"{cls.CONNECTION} revolute joints on massless links there")
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

    def _geometry(self, leg: ParallelLeg) -> Array:
        """The leg's row of kernel geometry (see ``_parallel_jit.G_*``)."""
        raise NotImplementedError


def _frozen(a: Any) -> Array:
    out: Array = np.array(a, dtype=np.float64, copy=True)
    out.setflags(write=False)
    return out


def _common(row: Array, leg: ParallelLeg) -> None:
    row[pk.G_ATTACH:pk.G_ATTACH + 3] = leg.attachment
    row[pk.G_END:pk.G_END + 3] = leg.end
    row[pk.G_ACTIVE] = leg.active
    row[pk.G_LOWER:pk.G_LOWER + 3] = leg.model.lower_limit
    row[pk.G_UPPER:pk.G_UPPER + 3] = leg.model.upper_limit


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

    KIND = pk.KIND_UPS
    LEG_TYPES = ("revolute", "revolute", "prismatic")
    CONNECTION = 3

    def _geometry(self, leg: ParallelLeg) -> Array:
        m = leg.model
        P1, P2, P3 = m.placement_rotation
        a1, a2, a3 = m.axis
        row = np.zeros(pk.G_COLS)
        _check_universal(leg, 1, a1, P2 @ a2)
        c0 = m.placement_translation[2] + P3 @ leg.end  # leg end at zero stroke, cylinder frame
        e = P3 @ a3
        kappa = float(c0 @ e)
        if float(np.linalg.norm(c0 - kappa * e)) > 1e-9 * max(1.0, float(np.linalg.norm(c0))):
            raise ParallelRobotError(
                f"leg '{leg.name}': its end must lie on the axis of '{m.joint_names[2]}' "
                f"through the universal joint's centre")
        row[pk.G_A:pk.G_A + 3] = m.placement_translation[0]
        row[pk.G_P1:pk.G_P1 + 9] = P1.reshape(9)
        row[pk.G_UW1:pk.G_UW1 + 3] = a1
        row[pk.G_UW2:pk.G_UW2 + 3] = P2 @ a2
        row[pk.G_UP:pk.G_UP + 3] = P2 @ e
        row[pk.G_KAPPA] = kappa
        _common(row, leg)
        return row


class DeltaRobot(ParallelRobot):
    """Delta robot: three RUU legs (active revolute arm, universal joint at the
    elbow, universal joint on the platform: the parallelogram's equivalent), a
    translating platform with pose ``x = p`` and twist ``v`` (base frame)."""

    KIND = pk.KIND_RUU
    LEG_TYPES = ("revolute", "revolute", "revolute")
    CONNECTION = 2

    def _geometry(self, leg: ParallelLeg) -> Array:
        m = leg.model
        P1, P2, P3 = m.placement_rotation
        a1, a2, a3 = m.axis
        row = np.zeros(pk.G_COLS)
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
        row[pk.G_A:pk.G_A + 3] = A
        row[pk.G_P1:pk.G_P1 + 9] = P1.reshape(9)
        row[pk.G_UW1:pk.G_UW1 + 3] = a2
        row[pk.G_UW2:pk.G_UW2 + 3] = P3 @ a3
        row[pk.G_UP:pk.G_UP + 3] = P3 @ leg.end / lb
        row[pk.G_W:pk.G_W + 3] = w
        row[pk.G_RPERP:pk.G_RPERP + 3] = rperp
        row[pk.G_H] = h
        row[pk.G_LB] = lb
        row[pk.G_KNEE] = np.sign(knee)
        row[pk.G_P2:pk.G_P2 + 9] = P2.reshape(9)
        row[pk.G_A1:pk.G_A1 + 3] = a1
        _common(row, leg)
        return row


# ------------------------------------------------------------------ structure
def _platform_link(tree: RobotModel, cuts: Sequence[CutJoint]) -> str:
    if not cuts:
        raise ParallelRobotError(f"model '{tree.name}': the loop file has no loop")
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


def _sides(cut: CutJoint, platform: str) -> tuple[str, Transform, Transform]:
    """``(other link, its cut frame, the platform's cut frame)``."""
    if cut.link2 == platform:
        return cut.link1, cut.frame1, cut.frame2
    return cut.link2, cut.frame2, cut.frame1


def _inverse(T: Transform) -> Transform:
    R, t = T
    return R.T, -R.T @ t


def _platform_parts(tree: RobotModel, platform: str, cuts: Sequence[CutJoint]
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


def _branch_ends(tree: RobotModel, cuts: Sequence[CutJoint], platform: str
                 ) -> list[tuple[int, CutJoint | None]]:
    ends: list[tuple[int, CutJoint | None]] = [(tree.link_frame(platform).body, None)]
    for cut in cuts:
        link = _sides(cut, platform)[0]
        ends.append((tree.link_frame(link).body, cut))
    return ends


def _path(tree: RobotModel, body: int) -> list[int]:
    path: list[int] = []
    while body >= 0:
        path.insert(0, body)
        body = int(tree.parent[body])
    return path


def _leg_name(joints: Sequence[str]) -> str:
    """The joints' common name prefix (``leg3`` of ``leg3_u1, leg3_u2, leg3_slide``),
    else the joint names."""
    prefix = joints[0]
    for name in joints[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix.rstrip("_-. ")
    return prefix or "/".join(joints)


def _sub_model(tree: RobotModel, bodies: Sequence[int], name: str) -> RobotModel:
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


def _order_legs(tree: RobotModel, legs: Sequence[ParallelLeg], active: Sequence[str]
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


def _check_cover(tree: RobotModel, legs: Sequence[ParallelLeg],
                 parts: Mapping[int, Transform]) -> None:
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


def _zero_pose(robot: ParallelRobot) -> Array:
    """The platform pose the legs' ends give at zero joint values: the mean of
    ``end_i - R0 P_i`` and the tree's zero orientation ``R0``."""
    ends = []
    for leg in robot.legs:
        R, p = body_poses(leg.model, np.zeros(3))
        ends.append(p[2] + R[2] @ leg.end - robot.orientation @ leg.attachment)
    position: Array = np.mean(ends, axis=0)
    if robot.KIND != pk.KIND_UPS:
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
