"""The robot model: an immutable kinematic tree with inertial and drive parameters.

Layout. ``njoints`` joints own the coordinates; ``nbodies`` bodies move, one per
joint plus one per mimic follower (``nbodies == njoints`` without mimic joints,
and then joint ``i`` moves body ``i``):

* Body ``b`` hangs from body ``parent[b]`` (``-1`` = fixed base);
  ``parent[b] < b`` (topological order). Joint ``j`` moves body
  ``joint_body[j]``; follower ``f`` moves ``mimic_joints[f].body``.
* Body ``b``'s frame is its joint's frame *after* the joint motion (the URDF
  child-link frame, the modified-DH frame ``R_j``). The joint frame before the
  motion is placed in the parent body frame by ``placement_rotation[b]`` and
  ``placement_translation[b]``.
* A 1-DoF joint moves about (revolute, continuous) or along (prismatic) the
  unit vector ``axis[b]``, expressed in the joint frame, which the motion
  leaves invariant. A continuous joint is a revolute joint without position
  limits and uses **one** angle (unlike Pinocchio's cos/sin pair).
* Multi-DoF joints (``"free-flyer"``, ``"planar"``, ``"spherical"``) follow
  Pinocchio's layout (:mod:`rnea_ros.core.model.joints`): free-flyer
  ``q = [x y z qx qy qz qw]``, ``v = [v; w]`` in the body frame; planar
  ``q = [x y cos(th) sin(th)]`` in the joint frame's xy plane, ``v = [vx vy wz]``;
  spherical ``q = [qx qy qz qw]``, ``v = w``. Their ``axis`` is unused.
* Coordinates: joint ``j`` owns ``q[idx_q[j]: idx_q[j] + joint_nq[j]]`` and
  ``v[idx_v[j]: idx_v[j] + joint_nv[j]]`` (Pinocchio's names), in joint order;
  ``nq = sum joint_nq``, ``nv = sum joint_nv``; accelerations and generalized
  forces are ``nv``-vectors, the mass matrix is ``(nv, nv)``.
* Mimic followers (URDF ``<mimic>``) own no coordinate and are not in
  ``joint_names``: ``mimic_joints`` maps each follower's name to its
  :class:`~rnea_ros.core.model.joints.MimicJoint` (body, type, leader,
  multiplier, offset); :meth:`RobotModel.mimic_positions` gives their positions.
* Body ``b`` has ``mass[b]`` [kg], centre of mass ``com[b]`` [m] and rotational
  inertia about that COM ``inertia[b]`` [kg m^2], all in body ``b``'s frame.
  Links welded by fixed joints are merged into one body; ``frames`` keeps every
  link's placement as a :class:`Frame`.
* Drive parameters per velocity coordinate (``nv``): ``armature`` (reflected rotor
  inertia ``gear_ratio**2 * rotor_inertia`` [kg m^2] or [kg]), ``coulomb``
  [N m] or [N], ``viscous`` [N m s/rad] or [N s/m]; the friction is
  ``coulomb clip(qd / coulomb_band, -1, 1) + viscous qd`` (Khalil eq. 31 with a linear
  zone of half-width ``coulomb_band`` [rad/s or m/s], one value for the model; 0, the
  default: the exact ``sign(qd)``, :func:`rnea_ros.core._algebra.coulomb_sign`);
  limits ``effort_limit``, ``velocity_limit`` (``nv``) and ``lower_limit``, ``upper_limit`` (``nq``)
  (``inf`` when absent).
* ``gravity`` (3,) [m/s^2] in the base frame.

For the compiled kernels the model is packed into 1-DoF rows, the *kernel
tree* (:mod:`rnea_ros.core.model.kernel_tree`): ``kernel_floats`` and
``kernel_map``; ``expanded`` is False when it is the model itself (1-DoF joints
only, no mimic), whose kernels then run exactly as they always did.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import (
    InertiaError,
    InertiaWarning,
    JointNameError,
    ModelError,
    StateError,
    options,
)
from rnea_ros.core.model.joints import (
    JOINT_KINDS,
    JOINT_NQ,
    JOINT_NV,
    JOINT_TYPES,
    ONE_DOF,
    UNIT_PARTS,
    UNIT_TOLERANCE,
    MimicJoint,
)
from rnea_ros.core.model.kernel_tree import BodyMotion, build_kernel_tree

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

INERTIA_CHECKS = ("strict", "warn")
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True, eq=False)
class Frame:
    """Placement of a link frame: ``body`` (``-1`` = base) and the transform
    ``(rotation, translation)`` of the link frame in that body's frame."""

    body: int
    rotation: Array
    translation: Array


# Inertial magnitudes (mass [kg], max |COM| [m], |inertia| [kg m^2] about the COM): beyond
# INERTIAL_BOUNDS no robot link is physical (1e308 kg overflowed the dynamics into
# clipped +-limit commands; 1e308 kg m^2 broke the eigenvalue check), refused; beyond
# INERTIAL_USUAL a link is possible but unusual (a unit slip: g for kg, mm for m): warned.
INERTIAL_BOUNDS = (1e6, 1e3, 1e6)
INERTIAL_USUAL = (1e4, 10.0, 1e4)
_INERTIAL_NAMES = (("mass", "kg"), ("largest centre of mass coordinate", "m"),
                   ("largest inertia component", "kg m^2"))


def check_magnitudes(where: str, mass: float, com: Array, inertia: Array) -> None:
    """:class:`InertiaError` if ``mass``, ``|com|`` or ``max |inertia|`` exceeds
    :data:`INERTIAL_BOUNDS`, naming ``where`` and the bound; an :class:`InertiaWarning`
    if one exceeds :data:`INERTIAL_USUAL`."""
    values = (abs(mass), float(np.abs(com).max()), float(np.abs(inertia).max()))
    for value, bound, usual, (name, unit) in zip(values, INERTIAL_BOUNDS, INERTIAL_USUAL,
                                                 _INERTIAL_NAMES, strict=True):
        if value > bound:
            raise InertiaError(f"{where}: {name} {value:.4g} {unit} exceeds the physical "
                               f"bound {bound:g} {unit}: not a robot link (refused in "
                               "either inertia_check mode)")
        if value > usual:
            warnings.warn(f"{where}: {name} {value:.4g} {unit} is unusually large (above "
                          f"{usual:g} {unit}; refused above {bound:g}): check the units",
                          InertiaWarning, stacklevel=4)


def check_inertia(where: str, mass: float, com: Array, inertia: Array,
                  mode: str = "strict") -> None:
    """Check that ``(mass, com, inertia about com)`` is physical.

    Checks: finite values, ``mass >= 0``, magnitudes within :data:`INERTIAL_BOUNDS`
    (beyond: refused in either mode; beyond :data:`INERTIAL_USUAL`: an
    :class:`InertiaWarning`, see :func:`check_magnitudes`), a symmetric inertia tensor whose
    principal moments are non-negative (positive semi-definite) and satisfy the
    triangle inequality ``I1 + I2 >= I3``. ``where`` names the link or body.
    ``mode="strict"`` raises :class:`InertiaError`; ``"warn"`` issues an
    :class:`InertiaWarning` for the last two checks (many vendor URDFs violate
    them slightly) and still raises for non-finite values or a negative mass.
    """
    if not (np.isfinite(mass) and np.all(np.isfinite(com)) and np.all(np.isfinite(inertia))):
        raise InertiaError(f"{where}: inertial parameters are not finite")
    if mass < 0.0:
        raise InertiaError(f"{where}: mass {mass:g} kg is negative")
    check_magnitudes(where, mass, com, inertia)
    scale = float(np.abs(inertia).max())
    tol = max(1e-9 * scale, 1e-15)
    problem = ""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    listed = ", ".join(f"{m:.4g}" for m in moments)
    if float(np.abs(inertia - inertia.T).max()) > tol:
        problem = "inertia tensor is not symmetric"
    elif moments[0] < -tol:
        problem = f"inertia tensor is not positive definite (principal moments {listed} kg m^2)"
    elif moments[0] + moments[1] < moments[2] - tol:
        problem = (f"principal moments {listed} kg m^2 violate the triangle inequality "
                   "I1 + I2 >= I3")
    if not problem:
        return
    if mode == "warn":
        warnings.warn(f"{where}: {problem}", InertiaWarning, stacklevel=3)
        return
    raise InertiaError(f"{where}: {problem}; inertia_check='warn' accepts it with a warning")


def _frozen(a: Any, dtype: type = np.float64) -> Any:
    out: NDArray[Any] = np.array(a, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class RobotModel:
    """Immutable kinematic tree (see the module docstring for the layout)."""

    name: str
    joint_names: tuple[str, ...]
    joint_types: tuple[str, ...]
    body_names: tuple[str, ...]
    parent: IntArray
    placement_rotation: Array
    placement_translation: Array
    axis: Array
    mass: Array
    com: Array
    inertia: Array
    armature: Array
    coulomb: Array
    viscous: Array
    effort_limit: Array
    velocity_limit: Array
    lower_limit: Array
    upper_limit: Array
    gravity: Array = field(default_factory=lambda: np.array(STANDARD_GRAVITY))
    frames: Mapping[str, Frame] = field(default_factory=dict)
    root_link: str = "base"
    inertia_check: str = "strict"
    mimic_joints: Mapping[str, MimicJoint] = field(default_factory=dict)
    coulomb_band: float = 0.0  # [rad/s or m/s] the Coulomb law's linear zone (0: exact sign)
    # Derived: sizes, the coordinate layout, and the packed arrays handed to the kernels.
    nq: int = field(init=False)
    nv: int = field(init=False)
    njoints: int = field(init=False)
    nbodies: int = field(init=False)
    idx_q: IntArray = field(init=False, repr=False)
    idx_v: IntArray = field(init=False, repr=False)
    joint_nq: IntArray = field(init=False, repr=False)
    joint_nv: IntArray = field(init=False, repr=False)
    joint_body: IntArray = field(init=False, repr=False)
    vector_shape: tuple[int] = field(init=False, repr=False)
    config_shape: tuple[int] = field(init=False, repr=False)
    expanded: bool = field(init=False, repr=False)
    kernel_floats: Array = field(init=False, repr=False)
    kernel_map: Array = field(init=False, repr=False)
    kernel_first_row: IntArray = field(init=False, repr=False)
    kernel_last_row: IntArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "joint_names", tuple(self.joint_names))
        set_(self, "joint_types", tuple(self.joint_types))
        set_(self, "body_names", tuple(self.body_names))
        set_(self, "mimic_joints", dict(self.mimic_joints))
        set_(self, "parent", _frozen(self.parent, np.int64))
        for name in (
            "placement_rotation", "placement_translation", "axis", "mass", "com", "inertia",
            "armature", "coulomb", "viscous", "effort_limit", "velocity_limit",
            "lower_limit", "upper_limit", "gravity",
        ):
            set_(self, name, _frozen(getattr(self, name)))
        set_(self, "frames", dict(self.frames))
        self._layout()
        self._validate()
        motions = self._body_motions()
        tree = build_kernel_tree(
            motions, self.nq, self.nv, self.parent, self.placement_rotation,
            self.placement_translation, self.axis, self.mass, self.com, self.inertia,
            self.armature, self.coulomb, self.viscous, self.coulomb_band)
        set_(self, "kernel_floats", _frozen(tree.floats))
        set_(self, "kernel_map", _frozen(tree.map))
        set_(self, "kernel_first_row", _frozen(tree.first_row, np.int64))
        set_(self, "kernel_last_row", _frozen(tree.last_row, np.int64))
        set_(self, "expanded", bool(self.mimic_joints)
             or any(t not in ONE_DOF for t in self.joint_types))

    def _layout(self) -> None:
        """Sizes and ``idx_q``/``idx_v``/``joint_nq``/``joint_nv``/``joint_body``."""
        set_ = object.__setattr__
        for jname, jtype in zip(self.joint_names, self.joint_types, strict=False):
            if jtype not in JOINT_TYPES:
                raise ModelError(
                    f"joint '{jname}': type '{jtype}' is not one of {options(JOINT_TYPES)}")
        nq_j = np.array([JOINT_NQ[t] for t in self.joint_types], dtype=np.int64)
        nv_j = np.array([JOINT_NV[t] for t in self.joint_types], dtype=np.int64)
        set_(self, "joint_nq", _frozen(nq_j, np.int64))
        set_(self, "joint_nv", _frozen(nv_j, np.int64))
        set_(self, "idx_q", _frozen(np.cumsum(nq_j) - nq_j, np.int64))
        set_(self, "idx_v", _frozen(np.cumsum(nv_j) - nv_j, np.int64))
        set_(self, "nq", int(nq_j.sum()))
        set_(self, "nv", int(nv_j.sum()))
        set_(self, "njoints", len(self.joint_names))
        set_(self, "nbodies", len(self.body_names))
        set_(self, "vector_shape", (self.nv,))
        set_(self, "config_shape", (self.nq,))
        followers = {m.body for m in self.mimic_joints.values()}
        set_(self, "joint_body", _frozen(
            [b for b in range(self.nbodies) if b not in followers], np.int64))

    def _body_motions(self) -> list[BodyMotion]:
        """What moves each body (the kernel tree's input)."""
        motions: list[BodyMotion | None] = [None] * self.nbodies
        for j, b in enumerate(self.joint_body):
            motions[int(b)] = BodyMotion(self.joint_types[j], int(self.idx_q[j]),
                                         int(self.idx_v[j]))
        for m in self.mimic_joints.values():
            leader = self.joint_names.index(m.leader)
            motions[m.body] = BodyMotion(m.type, int(self.idx_q[leader]),
                                         int(self.idx_v[leader]), m.multiplier, m.offset,
                                         follower=True)
        return [m for m in motions if m is not None]

    # ------------------------------------------------------------------ checks
    def _validate(self) -> None:
        n, nb, nq, nv = self.njoints, self.nbodies, self.nq, self.nv
        band = self.coulomb_band
        if not (isinstance(band, (int, float)) and 0.0 <= band < float("inf")):
            raise ModelError(f"coulomb_band {band!r}: must be a finite number >= 0 "
                             "[rad/s or m/s] (0: the exact sign)")
        shapes = {
            "joint_types": (len(self.joint_types),), "body_names": (nb,),
            "parent": self.parent.shape, "placement_rotation": self.placement_rotation.shape,
            "placement_translation": self.placement_translation.shape, "axis": self.axis.shape,
            "mass": self.mass.shape, "com": self.com.shape, "inertia": self.inertia.shape,
            "armature": self.armature.shape, "coulomb": self.coulomb.shape,
            "viscous": self.viscous.shape, "effort_limit": self.effort_limit.shape,
            "velocity_limit": self.velocity_limit.shape, "lower_limit": self.lower_limit.shape,
            "upper_limit": self.upper_limit.shape, "gravity": self.gravity.shape,
        }
        expected = {
            "joint_types": (n,), "placement_rotation": (nb, 3, 3),
            "placement_translation": (nb, 3), "axis": (nb, 3), "com": (nb, 3),
            "inertia": (nb, 3, 3), "gravity": (3,), "armature": (nv,), "coulomb": (nv,),
            "viscous": (nv,), "effort_limit": (nv,), "velocity_limit": (nv,),
            "lower_limit": (nq,), "upper_limit": (nq,),
        }
        for key, shape in shapes.items():
            want = expected.get(key, (nb,))
            if shape != want:
                raise ModelError(f"model '{self.name}': {key} has shape {shape}, expected {want}")
        if n == 0:
            raise ModelError(f"model '{self.name}' has no moving joint")
        if self.inertia_check not in INERTIA_CHECKS:
            raise ModelError(f"inertia_check '{self.inertia_check}' is not one of "
                             f"{options(INERTIA_CHECKS)}")
        names = list(self.joint_names) + list(self.mimic_joints)
        if len(set(names)) != len(names):
            dup = sorted({j for j in names if names.count(j) > 1})
            raise ModelError(f"model '{self.name}': duplicate joint names {options(dup)}")
        self._validate_mimic()
        if len(self.joint_body) != n:
            raise ModelError(f"model '{self.name}': {nb} bodies for {n} joints and "
                             f"{len(self.mimic_joints)} mimic followers")
        joint_of_body = {int(b): j for j, b in enumerate(self.joint_body)}
        for b in range(nb):
            jname = (self.joint_names[joint_of_body[b]] if b in joint_of_body else
                     next(f for f, m in self.mimic_joints.items() if m.body == b))
            if not -1 <= self.parent[b] < b:
                raise ModelError(
                    f"joint '{jname}': parent body {self.parent[b]} must precede it (tree order)"
                )
            if abs(float(np.linalg.norm(self.axis[b])) - 1.0) > 1e-9:
                raise ModelError(
                    f"joint '{jname}': axis {self.axis[b].tolist()} is not a unit vector")
            R = self.placement_rotation[b]
            if float(np.abs(R @ R.T - np.eye(3)).max()) > 1e-9 or np.linalg.det(R) < 0.0:
                raise ModelError(f"joint '{jname}': placement rotation is not a rotation matrix")
            with warnings.catch_warnings():  # links were checked (and warned about) already
                warnings.simplefilter("ignore", InertiaWarning)
                check_inertia(f"body '{self.body_names[b]}'", float(self.mass[b]),
                              self.com[b], self.inertia[b], self.inertia_check)
        for j, jname in enumerate(self.joint_names):
            v = slice(int(self.idx_v[j]), int(self.idx_v[j] + self.joint_nv[j]))
            q = slice(int(self.idx_q[j]), int(self.idx_q[j] + self.joint_nq[j]))
            for key in ("armature", "coulomb", "viscous"):
                values = getattr(self, key)[v]
                if not np.all(np.isfinite(values)) or np.any(values < 0.0):
                    raise ModelError(f"joint '{jname}': {key} = {values.tolist()} must be "
                                     "finite and >= 0")
            if np.any(self.lower_limit[q] > self.upper_limit[q]):
                raise ModelError(
                    f"joint '{jname}': lower limit {self.lower_limit[q].tolist()} > "
                    f"upper limit {self.upper_limit[q].tolist()}"
                )
            for key in ("effort_limit", "velocity_limit"):
                if not np.all(getattr(self, key)[v] > 0.0):
                    raise ModelError(f"joint '{jname}': {key} must be > 0 (inf when unlimited)")
        if not np.all(np.isfinite(self.gravity)):
            raise ModelError(f"model '{self.name}': gravity {self.gravity.tolist()} is not finite")

    def _validate_mimic(self) -> None:
        bodies: set[int] = set()
        for fname, m in self.mimic_joints.items():
            if not isinstance(m, MimicJoint):
                raise ModelError(f"mimic joint '{fname}': expected a MimicJoint, got {m!r}")
            if m.type not in ONE_DOF:
                raise ModelError(f"mimic joint '{fname}': type '{m.type}' is not one of "
                                 f"{options(ONE_DOF)}")
            if m.leader not in self.joint_names:
                raise ModelError(f"mimic joint '{fname}': leader '{m.leader}' is not a joint of "
                                 f"model '{self.name}'; joints: {options(self.joint_names)}")
            leader_type = self.joint_types[self.joint_names.index(m.leader)]
            if leader_type not in ONE_DOF:
                raise ModelError(f"mimic joint '{fname}': leader '{m.leader}' is a "
                                 f"{leader_type} joint; a leader must be 1-DoF "
                                 f"({options(ONE_DOF)})")
            if not (np.isfinite(m.multiplier) and np.isfinite(m.offset)):
                raise ModelError(f"mimic joint '{fname}': multiplier and offset must be finite")
            if not 0 <= m.body < self.nbodies or m.body in bodies:
                raise ModelError(f"mimic joint '{fname}': body {m.body} is not a free body "
                                 f"index in 0..{self.nbodies - 1}")
            bodies.add(m.body)

    # --------------------------------------------------------------- geometry
    def replace(self, **changes: Any) -> RobotModel:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def without_friction(self) -> RobotModel:
        """A copy with Coulomb and viscous friction set to zero."""
        zero = np.zeros(self.nv)
        return self.replace(coulomb=zero, viscous=zero)

    def require_one_dof(self, what: str, *, mimic: bool = False) -> None:
        """Raise :class:`ModelError` when the model has multi-DoF joints, or mimic joints
        unless ``mimic`` (``what`` handles them), which ``what`` (an algorithm's name)
        does not support yet (docs/design.md lists them)."""
        if not self.expanded:
            return
        multi = [f"'{j}' ({t})" for j, t in zip(self.joint_names, self.joint_types, strict=True)
                 if t not in ONE_DOF]
        if mimic and not multi:
            return
        if mimic:
            raise ModelError(f"{what} supports 1-DoF joints (mimic followers too) only; "
                             f"model '{self.name}' has {', '.join(multi)}")
        followers = [f"'{f}' (mimic)" for f in self.mimic_joints]
        raise ModelError(f"{what} supports 1-DoF joints without mimic only; model "
                         f"'{self.name}' has {', '.join(multi + followers)}")

    # ------------------------------------------------------------- coordinates
    def joint_of_coordinate(self, index: int, space: str = "v") -> str:
        """Name of the joint owning entry ``index`` of a configuration (``space="q"``)
        or velocity-sized (``"v"``) vector."""
        start, size = (self.idx_q, self.joint_nq) if space == "q" else (self.idx_v, self.joint_nv)
        for j, name in enumerate(self.joint_names):
            if start[j] <= index < start[j] + size[j]:
                return name
        raise ModelError(f"model '{self.name}': no coordinate {index} in {space} "
                         f"(size {self.nq if space == 'q' else self.nv})")

    def check_configuration(self, q: Array) -> None:
        """Raise :class:`StateError` naming the joint whose quaternion (or planar
        ``cos, sin`` pair) in ``q`` (nq,) is not a unit vector within
        ``UNIT_TOLERANCE`` (it is never silently normalised)."""
        for j, jtype in enumerate(self.joint_types):
            if jtype in UNIT_PARTS:
                lo, hi = UNIT_PARTS[jtype]
                part = q[int(self.idx_q[j]) + lo: int(self.idx_q[j]) + hi]
                norm = float(np.linalg.norm(part))
                if not abs(norm - 1.0) <= UNIT_TOLERANCE:
                    raise StateError(
                        f"q of {jtype} joint '{self.joint_names[j]}': "
                        f"{JOINT_KINDS[jtype].unit_name} {part.tolist()} "
                        f"has norm {norm:.9g}, not 1 (tolerance {UNIT_TOLERANCE:g})")

    def mimic_positions(self, q: object) -> dict[str, float]:
        """Positions of the mimic followers at ``q`` (nq,):
        ``multiplier * q_leader + offset`` by follower name."""
        qa = np.asarray(q, dtype=np.float64)
        if qa.shape != self.config_shape:
            raise StateError(f"q has shape {qa.shape}, expected ({self.nq},) (nq) for model "
                             f"'{self.name}'")
        return {name: m.multiplier * float(qa[self.idx_q[self.joint_names.index(m.leader)]])
                + m.offset for name, m in self.mimic_joints.items()}

    # ------------------------------------------------------------ joint names
    def joint_index(self, name: str) -> int:
        """Index of joint ``name`` in model order."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise JointNameError(
                f"unknown joint '{name}' in model '{self.name}'; "
                f"valid joints: {options(self.joint_names)}"
            ) from None

    def link_frame(self, name: str) -> Frame:
        """Placement of link ``name`` (merged links included)."""
        try:
            return self.frames[name]
        except KeyError:
            raise JointNameError(
                f"unknown link '{name}' in model '{self.name}'; valid links: {options(self.frames)}"
            ) from None

    def name_map(self, names: Sequence[str]) -> IntArray:
        """Positions in ``names`` of the model's joints, in model order.

        ``names`` may list the joints in any order and contain extra joints
        (ignored). Raises :class:`JointNameError` naming the missing joints.
        """
        position = {name: k for k, name in enumerate(names)}
        if len(position) != len(names):
            dup = sorted({j for j in names if list(names).count(j) > 1})
            raise JointNameError(f"joint names listed twice: {options(dup)}")
        missing = [j for j in self.joint_names if j not in position]
        if missing:
            raise JointNameError(
                f"joint state lacks joints {options(missing)} of model '{self.name}'"
            )
        return np.array([position[j] for j in self.joint_names], dtype=np.int64)

    def to_model_order(self, names: Sequence[str], values: Sequence[float] | Array) -> Array:
        """Reorder a name-keyed vector (e.g. ``JointState.position``) into model order
        (1-DoF joints only: a multi-DoF joint has no single value)."""
        multi = [j for j, t in zip(self.joint_names, self.joint_types, strict=True)
                 if t not in ONE_DOF]
        if multi:
            raise ModelError(f"model '{self.name}' has multi-DoF joints {options(multi)}: "
                             "a name-keyed vector cannot hold their coordinates")
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(names),):
            raise StateError(
                f"{len(names)} joint names but values of shape {values.shape}"
            )
        return values[self.name_map(names)]
