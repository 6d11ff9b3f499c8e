"""Joint limits of a planning problem, and the checks made before solving.

Every limit is per joint (n,) and ``inf`` when absent: position
``lower``/``upper`` [rad or m], ``velocity`` [rad/s or m/s], ``torque``
[N m or N], ``torque_rate`` [N m/s or N/s] (the same bound the controller's
torque-rate limiter enforces) and ``force``: the norm of the internal joint
force, the force part of :func:`rnea_ros.core.rnea_with_wrenches` [N].

Joints are the model's coordinates: with mimic joints (URDF ``<mimic>``) the
followers have no limit of their own here, and the force limit of joint ``j``
is on the wrench of the body it moves (``model.joint_body[j]``). The followers
move with their leaders and load them through the dynamics (the sensitivities fold
them back by the chain rule); multi-DoF joints are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.planning.errors import InfeasibleError, PlanningError

Array = NDArray[np.float64]

FIELDS = ("lower", "upper", "velocity", "torque", "torque_rate", "force")


@dataclass(frozen=True, eq=False)
class Limits:
    """Per-joint limits (n,), ``inf`` (or ``-inf`` for ``lower``) when absent."""

    lower: Array
    upper: Array
    velocity: Array
    torque: Array
    torque_rate: Array
    force: Array

    @classmethod
    def from_model(cls, model: RobotModel, **overrides: object) -> Limits:
        """The model's (URDF) position, velocity and effort limits; no rate or force limit.

        ``overrides`` replace a field by a scalar (all joints) or a (n,) vector.
        """
        n = model.nv
        base = cls(lower=model.lower_limit.copy(), upper=model.upper_limit.copy(),
                   velocity=model.velocity_limit.copy(), torque=model.effort_limit.copy(),
                   torque_rate=np.full(n, np.inf), force=np.full(n, np.inf))
        return base.with_(model, **overrides)

    def with_(self, model: RobotModel, **overrides: object) -> Limits:
        """A copy with some fields replaced (scalar or (n,)); validated."""
        unknown = sorted(set(overrides) - set(FIELDS))
        if unknown:
            raise PlanningError(f"unknown limit(s) {unknown}; valid: {list(FIELDS)}")
        values = {}
        for key, value in overrides.items():
            if value is None:
                continue
            arr = np.asarray(value, dtype=float)
            arr = np.full(model.nv, float(arr)) if arr.ndim == 0 else arr
            if arr.shape != (model.nv,):
                raise PlanningError(f"limit '{key}' needs one value or {model.nv} (one per joint "
                                    f"{list(model.joint_names)}), got {arr.shape}")
            values[key] = arr
        out = replace(self, **values)
        out.validate(model)
        return out

    def validate(self, model: RobotModel) -> None:
        for key in FIELDS[2:]:
            value = getattr(self, key)
            bad = np.flatnonzero(~(value > 0))
            if bad.size:
                j = int(bad[0])
                raise PlanningError(f"limit '{key}' of joint '{model.joint_names[j]}' must be "
                                    f"> 0 (inf when absent), got {value[j]:g}")
        bad = np.flatnonzero(self.lower > self.upper)
        if bad.size:
            j = int(bad[0])
            raise PlanningError(f"joint '{model.joint_names[j]}': lower limit {self.lower[j]:g}"
                                f" > upper limit {self.upper[j]:g}")


def joint_forces(model: RobotModel, q: Array, qd: Array, qdd: Array) -> Array:
    """``|F|`` (N, n) [N]: the norm of the internal force through each coordinate joint
    (on the body it moves, ``model.joint_body``; mimic followers have no limit) at the
    states ``q, qd, qdd`` (N, n)."""
    body = model.joint_body
    return np.array([np.linalg.norm(rc.rnea_with_wrenches(model, *x)[1][body, :3], axis=1)
                     for x in zip(q, qd, qdd, strict=True)]).reshape(len(q), model.nv)


def check_waypoints(model: RobotModel, waypoints: Array, limits: Limits) -> None:
    """Raise :class:`InfeasibleError` naming the waypoint and joint that no trajectory can meet.

    Checked: finite values, positions inside the joint limits, and at rest
    (start and end, or any waypoint we might stop at) the gravity torque and
    the internal force at rest within their limits.
    """
    if not np.all(np.isfinite(waypoints)):
        raise InfeasibleError("waypoints contain non-finite values")
    names = model.joint_names
    for k, w in enumerate(waypoints):
        for j in range(model.nv):
            if not limits.lower[j] <= w[j] <= limits.upper[j]:
                raise InfeasibleError(
                    f"waypoint {k} is unreachable: joint '{names[j]}' = {w[j]:g} is outside "
                    f"its position limits [{limits.lower[j]:g}, {limits.upper[j]:g}]")
    zero = np.zeros((1, model.nv))
    for k in (0, len(waypoints) - 1):
        tau = rc.gravity_torques(model, waypoints[k])
        force = joint_forces(model, waypoints[k][None], zero, zero)[0]
        for j in range(model.nv):
            if abs(tau[j]) > limits.torque[j]:
                raise InfeasibleError(
                    f"torque limit infeasible: holding waypoint {k} needs |tau| = "
                    f"{abs(tau[j]):.4g} on joint '{names[j]}' (gravity load), above its torque "
                    f"limit {limits.torque[j]:.4g}")
            if force[j] > limits.force[j]:
                raise InfeasibleError(
                    f"internal force limit infeasible: at rest at waypoint {k} joint "
                    f"'{names[j]}' carries |F| = {force[j]:.4g} N, above its limit "
                    f"{limits.force[j]:.4g} N")


def limits_from_arguments(model: RobotModel, items: Sequence[str]) -> Limits:
    """The model's limits with ``KEY=VALUE`` overrides (a command line's ``--limits``;
    VALUE one number or one per joint, comma-separated)."""
    overrides: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise PlanningError(f"--limits expects KEY=VALUE, got '{item}'; keys: {list(FIELDS)}")
        try:
            values = [float(v) for v in value.split(",")]
        except ValueError:
            raise PlanningError(f"--limits {key}: '{value}' is not a number or list") from None
        overrides[key] = values[0] if len(values) == 1 else values
    return Limits.from_model(model, **overrides)
