"""The robot model: an immutable kinematic tree with inertial and drive parameters.

Layout (``n`` = number of moving joints = number of bodies):

* Joint ``i`` connects body ``parent[i]`` (``-1`` = fixed base) to body ``i``;
  ``parent[i] < i`` (topological order).
* Body ``i``'s frame is joint ``i``'s frame *after* the joint motion (the URDF
  child-link frame, the modified-DH frame ``R_j``). The joint frame before the
  motion is placed in the parent body frame by ``placement_rotation[i]`` and
  ``placement_translation[i]``.
* The joint moves about (revolute, continuous) or along (prismatic) the unit
  vector ``axis[i]``, expressed in the joint frame, which the motion leaves
  invariant. A continuous joint is a revolute joint without position limits and
  uses **one** angle (unlike Pinocchio's cos/sin pair).
* Body ``i`` has ``mass[i]`` [kg], centre of mass ``com[i]`` [m] and rotational
  inertia about that COM ``inertia[i]`` [kg m^2], all in body ``i``'s frame.
  Links welded by fixed joints are merged into one body; ``frames`` keeps every
  link's placement as a :class:`Frame`.
* Drive parameters per joint: ``armature`` (reflected rotor inertia
  ``gear_ratio**2 * rotor_inertia`` [kg m^2] or [kg]), ``coulomb`` [N m] or
  [N], ``viscous`` [N m s/rad] or [N s/m]; limits ``effort_limit``,
  ``velocity_limit``, ``lower_limit``, ``upper_limit`` (``inf`` when absent).
* ``gravity`` (3,) [m/s^2] in the base frame.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import _jit
from rnea_ros.core.errors import (
    InertiaError,
    InertiaWarning,
    JointNameError,
    ModelError,
    StateError,
    options,
)

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

JOINT_TYPES = ("revolute", "continuous", "prismatic")
INERTIA_CHECKS = ("strict", "warn")
STANDARD_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True, eq=False)
class Frame:
    """Placement of a link frame: ``body`` (``-1`` = base) and the transform
    ``(rotation, translation)`` of the link frame in that body's frame."""

    body: int
    rotation: Array
    translation: Array


def check_inertia(where: str, mass: float, com: Array, inertia: Array,
                  mode: str = "strict") -> None:
    """Check that ``(mass, com, inertia about com)`` is physical.

    Checks: finite values, ``mass >= 0``, a symmetric inertia tensor whose
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
    """Immutable fixed-base kinematic tree (see the module docstring for the layout)."""

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
    # Derived: sizes, and the packed read-only array handed to the compiled kernels.
    nq: int = field(init=False)
    nv: int = field(init=False)
    vector_shape: tuple[int] = field(init=False, repr=False)
    kernel_floats: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        set_ = object.__setattr__
        set_(self, "nq", n)  # one coordinate per joint (continuous joints too)
        set_(self, "nv", n)
        set_(self, "vector_shape", (n,))
        set_(self, "parent", _frozen(self.parent, np.int64))
        for name in (
            "placement_rotation", "placement_translation", "axis", "mass", "com", "inertia",
            "armature", "coulomb", "viscous", "effort_limit", "velocity_limit",
            "lower_limit", "upper_limit", "gravity",
        ):
            set_(self, name, _frozen(getattr(self, name)))
        set_(self, "frames", dict(self.frames))
        self._validate(n)
        floats = _jit.pack_model(
            self.parent,
            np.array([_jit.joint_kind(t == "prismatic", u)
                      for t, u in zip(self.joint_types, self.axis, strict=True)], dtype=np.int64),
            self.placement_rotation, self.placement_translation, self.axis,
            self.mass, self.com, self.inertia, self.armature, self.coulomb, self.viscous,
        )
        set_(self, "kernel_floats", _frozen(floats))

    # ------------------------------------------------------------------ checks
    def _validate(self, n: int) -> None:
        shapes = {
            "joint_types": (len(self.joint_types),), "body_names": (len(self.body_names),),
            "parent": self.parent.shape, "placement_rotation": self.placement_rotation.shape,
            "placement_translation": self.placement_translation.shape, "axis": self.axis.shape,
            "mass": self.mass.shape, "com": self.com.shape, "inertia": self.inertia.shape,
            "armature": self.armature.shape, "coulomb": self.coulomb.shape,
            "viscous": self.viscous.shape, "effort_limit": self.effort_limit.shape,
            "velocity_limit": self.velocity_limit.shape, "lower_limit": self.lower_limit.shape,
            "upper_limit": self.upper_limit.shape, "gravity": self.gravity.shape,
        }
        expected = {
            "placement_rotation": (n, 3, 3), "placement_translation": (n, 3), "axis": (n, 3),
            "com": (n, 3), "inertia": (n, 3, 3), "gravity": (3,),
        }
        for key, shape in shapes.items():
            want = expected.get(key, (n,))
            if shape != want:
                raise ModelError(f"model '{self.name}': {key} has shape {shape}, expected {want}")
        if n == 0:
            raise ModelError(f"model '{self.name}' has no moving joint")
        if self.inertia_check not in INERTIA_CHECKS:
            raise ModelError(f"inertia_check '{self.inertia_check}' is not one of "
                             f"{options(INERTIA_CHECKS)}")
        if len(set(self.joint_names)) != n:
            dup = sorted({j for j in self.joint_names if self.joint_names.count(j) > 1})
            raise ModelError(f"model '{self.name}': duplicate joint names {options(dup)}")
        for i, (jname, jtype) in enumerate(zip(self.joint_names, self.joint_types, strict=True)):
            if jtype not in JOINT_TYPES:
                raise ModelError(
                    f"joint '{jname}': type '{jtype}' is not one of {options(JOINT_TYPES)}"
                )
            if not -1 <= self.parent[i] < i:
                raise ModelError(
                    f"joint '{jname}': parent body {self.parent[i]} must precede it (tree order)"
                )
            if abs(float(np.linalg.norm(self.axis[i])) - 1.0) > 1e-9:
                raise ModelError(
                    f"joint '{jname}': axis {self.axis[i].tolist()} is not a unit vector")
            R = self.placement_rotation[i]
            if float(np.abs(R @ R.T - np.eye(3)).max()) > 1e-9 or np.linalg.det(R) < 0.0:
                raise ModelError(f"joint '{jname}': placement rotation is not a rotation matrix")
            with warnings.catch_warnings():  # links were checked (and warned about) already
                warnings.simplefilter("ignore", InertiaWarning)
                check_inertia(f"body '{self.body_names[i]}'", float(self.mass[i]),
                              self.com[i], self.inertia[i], self.inertia_check)
            for key in ("armature", "coulomb", "viscous"):
                value = float(getattr(self, key)[i])
                if not np.isfinite(value) or value < 0.0:
                    raise ModelError(f"joint '{jname}': {key} = {value:g} must be finite and >= 0")
            if self.lower_limit[i] > self.upper_limit[i]:
                raise ModelError(
                    f"joint '{jname}': lower limit {self.lower_limit[i]:g} > "
                    f"upper limit {self.upper_limit[i]:g}"
                )
            for key in ("effort_limit", "velocity_limit"):
                if not float(getattr(self, key)[i]) > 0.0:
                    raise ModelError(f"joint '{jname}': {key} must be > 0 (inf when unlimited)")
        if not np.all(np.isfinite(self.gravity)):
            raise ModelError(f"model '{self.name}': gravity {self.gravity.tolist()} is not finite")

    # --------------------------------------------------------------- geometry
    def replace(self, **changes: Any) -> RobotModel:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def without_friction(self) -> RobotModel:
        """A copy with Coulomb and viscous friction set to zero."""
        zero = np.zeros(self.nq)
        return self.replace(coulomb=zero, viscous=zero)

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
        """Reorder a name-keyed vector (e.g. ``JointState.position``) into model order."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(names),):
            raise StateError(
                f"{len(names)} joint names but values of shape {values.shape}"
            )
        return values[self.name_map(names)]
