"""Robots with mixed rigid and elastic joints, and motors on any link (hua-2024 section II).

A :class:`ElasticModel` is a link model (:class:`~rnea_ros.core.model.RobotModel`,
e.g. from a URDF) plus, per joint, whether it is rigid or elastic and the
motor that drives it:

* **elastic joint** ``i`` (the ``k``-th in model order): a spring of stiffness
  ``K_k`` [N m/rad] and optional damping ``D_k`` [N m s/rad] between the motor
  and the link; the motor has its own coordinate ``theta_k``;
* **motor**: mounted on any link (the base too), its rotation axis ``z_m`` and
  centre in that link's frame, mass and inertia ``diag(I_mx, I_my, I_mz)`` about
  its centre, gear ratio ``eta``. A link and the motors mounted on it form the
  paper's *unified rigid body* (its Fig. 2): their masses and inertias add up
  (:attr:`ElasticModel.unified`), and each rotor adds its spin
  ``eta psi_dot I_mz z_m`` to the body's angular momentum (eq. 21).

**Gear-ratio convention** (hua-2024 eq. 6, 28 and 29; its Algorithm 2 writes the
spring as ``K eta (theta - eta q)``, a rotor-side ``theta``: we do not use that)::

    theta       motor position on the *link side* of the gearbox [rad], so that the
                rotor turns by eta * theta relative to the link carrying it (eq. 6);
                a rigid joint's rotor turns by eta * q (eq. 9)
    spring      K (theta - q) + D (theta_dot - q_dot) acts on the link (eq. 28)
    tau_m       motor torque on the link side, eta x the rotor's torque (eq. 29)

A rotor encoder reading ``phi`` [rad] gives ``theta = phi / eta``; a torque
``tau_m`` is ``tau_m / eta`` at the rotor.

Assumption A2 of the paper (a motor is a body of revolution about its axis,
centre on the axis) is enforced: ``I_mx == I_my``. An elastic joint's motor
needs ``I_mz > 0`` (a massless motor side has no dynamics), and its joint no
``armature`` (its rotor inertia belongs to the motor).

The YAML side file, next to the URDF (URDF has no such fields)::

    joints:
      joint3:
        stiffness: 100.0          # N m/rad (N/m prismatic); present = elastic joint
        damping: 0.0              # N m s/rad, optional
        motor:
          link: link1             # link it is mounted on (the root link = the base)
          axis: [0, 0, 1]         # rotation axis in that link's frame
          position: [0, 0, 0.1]   # motor centre in that link's frame, m
          mass: 1.0               # kg, added to the link (unified rigid body)
          inertia: [0.006, 0.006, 0.004]  # I_mx I_my I_mz, kg m^2, about its centre
          gear_ratio: 1.0         # rotor turns per joint turn (> 0)
      joint1:                     # rigid joint (no stiffness) with a motor
        motor: {link: base, inertia: [0.006, 0.006, 0.004]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.errors import ModelParameterError, options
from rnea_ros.core.model.drives import load_side_file
from rnea_ros.core.model.robot_model import RobotModel, _frozen, check_inertia
from rnea_ros.core.model.tree import as_vector3

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

JOINT_KEYS = ("stiffness", "damping", "motor")
MOTOR_KEYS = ("link", "axis", "position", "mass", "inertia", "gear_ratio")

# Packed per-joint (ep) and per-motor (mp) rows for the kernels.
E_ELASTIC, E_INDEX, E_K, E_D, E_MOTOR = 0, 1, 2, 3, 4  # E_INDEX: k, or -1 (rigid)
M_JOINT, M_BODY, M_ETA, M_IZ, M_AXIS, M_POS = 0, 1, 2, 3, 4, 7  # M_BODY -1: the base


@dataclass(frozen=True)
class MotorSpec:
    """A motor on ``link``: axis and centre in that link's frame, mass [kg],
    ``inertia = (I_mx, I_my, I_mz)`` [kg m^2] about its centre (z = axis), gear ratio."""

    link: str
    inertia: Sequence[float] = (0.0, 0.0, 0.0)
    gear_ratio: float = 1.0
    axis: Sequence[float] = (0.0, 0.0, 1.0)
    position: Sequence[float] = (0.0, 0.0, 0.0)
    mass: float = 0.0


@dataclass(frozen=True)
class JointDrive:
    """How joint ``joint`` is driven: elastic when ``stiffness`` is given, and its motor."""

    joint: str
    stiffness: float | None = None
    damping: float = 0.0
    motor: MotorSpec | None = None


@dataclass(frozen=True, eq=False)
class ElasticModel:
    """Immutable mixed rigid/elastic robot; build it with :func:`elastic_model`.

    Per joint (n,): ``elastic`` flags, ``stiffness``/``damping`` (0 when rigid).
    Per motor (m,): driven ``motor_joint``, carrier ``motor_body`` (-1: base),
    ``motor_axis``/``motor_position`` (m, 3) in the carrier body frame,
    ``motor_mass``, ``motor_inertia`` (m, 3) ``(I_mx, I_my, I_mz)``, ``gear_ratio``.
    """

    links: RobotModel
    elastic: NDArray[np.bool_]
    stiffness: Array
    damping: Array
    motor_joint: IntArray
    motor_body: IntArray
    motor_axis: Array
    motor_position: Array
    motor_mass: Array
    motor_inertia: Array
    gear_ratio: Array
    # Derived.
    unified: RobotModel = field(init=False, repr=False)
    elastic_joints: IntArray = field(init=False, repr=False)
    elastic_names: tuple[str, ...] = field(init=False, repr=False)
    joint_floats: Array = field(init=False, repr=False)
    motor_floats: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("stiffness", "damping", "motor_axis", "motor_position", "motor_mass",
                     "motor_inertia", "gear_ratio"):
            set_(self, name, _frozen(getattr(self, name)))
        for name in ("motor_joint", "motor_body"):
            set_(self, name, _frozen(getattr(self, name), np.int64))
        set_(self, "elastic", _frozen(self.elastic, np.bool_))
        idx = np.flatnonzero(self.elastic).astype(np.int64)
        set_(self, "elastic_joints", _frozen(idx, np.int64))
        set_(self, "elastic_names", tuple(self.links.joint_names[i] for i in idx))
        set_(self, "unified", _unified(self))
        ep = np.zeros((self.n, 5))
        ep[:, E_ELASTIC] = self.elastic
        ep[:, E_INDEX] = -1.0
        ep[idx, E_INDEX] = np.arange(idx.size)
        ep[:, E_K] = self.stiffness
        ep[:, E_D] = self.damping
        ep[:, E_MOTOR] = -1.0
        ep[self.motor_joint, E_MOTOR] = np.arange(self.motor_joint.size)
        mp = np.zeros((self.motor_joint.size, 10))
        mp[:, M_JOINT] = self.motor_joint
        mp[:, M_BODY] = self.motor_body
        mp[:, M_ETA] = self.gear_ratio
        mp[:, M_IZ] = self.motor_inertia[:, 2] if self.motor_joint.size else 0.0
        mp[:, M_AXIS:M_AXIS + 3] = self.motor_axis
        mp[:, M_POS:M_POS + 3] = self.motor_position
        set_(self, "joint_floats", _frozen(ep))
        set_(self, "motor_floats", _frozen(mp))

    @property
    def name(self) -> str:
        return self.links.name

    @property
    def n(self) -> int:
        """Number of joints (link coordinates ``q``)."""
        return self.links.nv

    @property
    def n_elastic(self) -> int:
        """Number of elastic joints (motor coordinates ``theta``)."""
        return int(self.elastic_joints.size)

    @property
    def motor_names(self) -> tuple[str, ...]:
        """Names of the motor coordinates ``theta``: ``<joint>_motor`` (ROS joint-state names)."""
        return tuple(f"{j}_motor" for j in self.elastic_names)

    def spring_torque(self, q: Array, theta: Array, qd: Array, thetad: Array) -> Array:
        """``K (theta - q) + D (theta_dot - q_dot)`` (n_e,) of the elastic joints (eq. 28)."""
        e = self.elastic_joints
        return np.asarray(self.stiffness[e] * (theta - q[e]) + self.damping[e] * (thetad - qd[e]))

    def rigid_equivalent(self) -> RobotModel:
        """The K -> infinity limit in the usual reduced form: the unified links with the
        reflected rotor inertia ``eta^2 I_mz`` as ``armature`` (exact when every motor
        sits on the base; otherwise the rotors' gyroscopic coupling is left out)."""
        armature = np.array(self.links.armature, dtype=np.float64)
        for m, j in enumerate(self.motor_joint):
            armature[j] += self.gear_ratio[m] ** 2 * self.motor_inertia[m, 2]
        return self.unified.replace(armature=armature)


def _unified(model: ElasticModel) -> RobotModel:
    """Links with their motors' mass and inertia added (hua-2024 Fig. 2)."""
    links = model.links
    mass, com, inertia = links.mass.copy(), links.com.copy(), links.inertia.copy()
    for m, body in enumerate(model.motor_body):
        if body < 0:
            continue
        Ixy, _, Iz = model.motor_inertia[m]
        z = model.motor_axis[m]
        I_m = Ixy * np.eye(3) + (Iz - Ixy) * np.outer(z, z)  # body of revolution about z
        mass[body], com[body], inertia[body] = spatial.add_inertias(
            (float(mass[body]), com[body], inertia[body]),
            (float(model.motor_mass[m]), model.motor_position[m], I_m))
    return links.replace(mass=mass, com=com, inertia=inertia)


def _number(value: object, where: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ModelParameterError(f"{where} = {value!r} is not a number") from None
    if not np.isfinite(number):
        raise ModelParameterError(f"{where} = {value!r} is not finite")
    return number


def _motor(links: RobotModel, joint: str, spec: MotorSpec, elastic: bool
           ) -> tuple[int, Array, Array, float, Array, float]:
    where = f"motor of joint '{joint}'"
    if spec.link not in links.frames:
        raise ModelParameterError(f"{where}: unknown link '{spec.link}'; valid links: "
                             f"{options(links.frames)}")
    frame = links.frames[spec.link]
    axis = as_vector3(spec.axis, f"{where}: axis", ModelParameterError)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-12:
        raise ModelParameterError(f"{where}: axis {axis.tolist()} is zero")
    position = as_vector3(spec.position, f"{where}: position", ModelParameterError)
    mass = _number(spec.mass, f"{where}: mass")
    eta = _number(spec.gear_ratio, f"{where}: gear_ratio")
    if eta <= 0.0:
        raise ModelParameterError(f"{where}: gear_ratio = {eta:g} must be > 0 "
                             "(reverse the axis for a motor turning the other way)")
    inertia = np.asarray(spec.inertia, dtype=np.float64).ravel()
    if inertia.shape != (3,):
        raise ModelParameterError(f"{where}: inertia needs 3 numbers (I_mx, I_my, I_mz), "
                             f"got {list(spec.inertia)!r}")
    for value, key in zip(inertia, ("I_mx", "I_my", "I_mz"), strict=True):
        _number(value, f"{where}: inertia {key}")
    if abs(inertia[0] - inertia[1]) > 1e-12 * max(1.0, abs(inertia[0])):
        raise ModelParameterError(f"{where}: I_mx = {inertia[0]:g} and I_my = "
                                  f"{inertia[1]:g} differ; a motor is a body of revolution "
                                  "about its axis (hua-2024 A2)")
    check_inertia(where, mass, position, np.diag(inertia))
    if elastic and not inertia[2] > 0.0:
        raise ModelParameterError(f"{where}: joint '{joint}' is elastic, its motor needs I_mz > 0 "
                             "(a motor side without inertia has no dynamics)")
    R, t = frame.rotation, frame.translation
    return frame.body, R @ (axis / norm), R @ position + t, mass, inertia, eta


def elastic_model(links: RobotModel,
                  drives: str | Path | Mapping[str, Any] | Sequence[JointDrive]
                  ) -> ElasticModel:
    """Build and validate an :class:`ElasticModel` from a side file, its mapping, or specs.

    Joints not listed are rigid without motor. Raises :class:`ModelParameterError`
    naming the joint and parameter (``K <= 0``, unknown link, ``gear_ratio`` 0...);
    :class:`~rnea_ros.core.errors.ModelError` for links with multi-DoF or mimic joints.

    Parameters
    ----------
    links : RobotModel
        The rigid links (single-DoF joints, no mimic).
    drives : str, Path, Mapping or sequence of JointDrive
        The elastic side file, its mapping, or the drives (joints not listed: rigid, no
        motor).

    Returns
    -------
    ElasticModel
        The validated model.
    """
    links.require_one_dof("elastic_model")
    if isinstance(drives, (str, Path)):
        drives = load_side_file(drives, "elastic-joint file")
    specs = _specs_from_mapping(drives) if isinstance(drives, Mapping) else list(drives)
    n = links.nv
    elastic = np.zeros(n, dtype=bool)
    stiffness, damping = np.zeros(n), np.zeros(n)
    motors: list[tuple[int, int, Array, Array, float, Array, float]] = []
    seen: set[str] = set()
    for spec in specs:
        if spec.joint not in links.joint_names:
            raise ModelParameterError(f"unknown joint '{spec.joint}'; valid joints: "
                                 f"{options(links.joint_names)}")
        if spec.joint in seen:
            raise ModelParameterError(f"joint '{spec.joint}' is listed twice")
        seen.add(spec.joint)
        i = links.joint_index(spec.joint)
        if spec.stiffness is not None:
            K = _number(spec.stiffness, f"joint '{spec.joint}': stiffness")
            if K <= 0.0:
                raise ModelParameterError(f"joint '{spec.joint}': stiffness = {K:g} must be > 0 "
                                     "(leave it out for a rigid joint)")
            D = _number(spec.damping, f"joint '{spec.joint}': damping")
            if D < 0.0:
                raise ModelParameterError(f"joint '{spec.joint}': damping = {D:g} must be >= 0")
            if spec.motor is None:
                raise ModelParameterError(f"joint '{spec.joint}' is elastic and needs a motor")
            if links.armature[i] != 0.0:
                raise ModelParameterError(f"joint '{spec.joint}' is elastic: give its rotor "
                                          "inertia to its motor, not as armature")
            elastic[i], stiffness[i], damping[i] = True, K, D
        elif spec.damping:
            raise ModelParameterError(f"joint '{spec.joint}': damping needs stiffness "
                                 "(a rigid joint's friction goes in the drive file)")
        if spec.motor is not None:
            motors.append((i, *_motor(links, spec.joint, spec.motor, bool(elastic[i]))))
    motors.sort(key=lambda row: row[0])
    return ElasticModel(
        links=links, elastic=elastic, stiffness=stiffness, damping=damping,
        motor_joint=np.array([r[0] for r in motors], dtype=np.int64),
        motor_body=np.array([r[1] for r in motors], dtype=np.int64),
        motor_axis=np.array([r[2] for r in motors]).reshape(-1, 3),
        motor_position=np.array([r[3] for r in motors]).reshape(-1, 3),
        motor_mass=np.array([r[4] for r in motors], dtype=np.float64),
        motor_inertia=np.array([r[5] for r in motors]).reshape(-1, 3),
        gear_ratio=np.array([r[6] for r in motors], dtype=np.float64),
    )


def _specs_from_mapping(data: Mapping[str, Any]) -> list[JointDrive]:
    joints = data.get("joints")
    if not isinstance(joints, Mapping):
        raise ModelParameterError("elastic-joint parameters need a 'joints' mapping keyed by "
                                  "joint name")
    specs = []
    for joint, params in joints.items():
        if not isinstance(params, Mapping):
            raise ModelParameterError(f"joint '{joint}': parameters must be a mapping")
        unknown = sorted(set(params) - set(JOINT_KEYS))
        if unknown:
            raise ModelParameterError(f"joint '{joint}': unknown keys {options(unknown)}; "
                                 f"valid: {options(JOINT_KEYS)}")
        motor = params.get("motor")
        spec_motor = None
        if motor is not None:
            if not isinstance(motor, Mapping) or "link" not in motor:
                raise ModelParameterError(f"joint '{joint}': motor must be a mapping with a 'link'")
            unknown = sorted(set(motor) - set(MOTOR_KEYS))
            if unknown:
                raise ModelParameterError(f"motor of joint '{joint}': unknown keys "
                                     f"{options(unknown)}; valid: {options(MOTOR_KEYS)}")
            spec_motor = MotorSpec(**{k: v for k, v in motor.items()})
        specs.append(JointDrive(joint=str(joint), stiffness=params.get("stiffness"),
                                damping=params.get("damping", 0.0), motor=spec_motor))
    return specs


__all__ = ["ElasticModel", "JointDrive", "MotorSpec", "elastic_model"]
