"""The controller's parameters: one table (``rnea_ros/params/controller.yaml``: names,
types, defaults, ranges, descriptions) used by the node to declare them, by the
launch-file test to check them, and by :func:`controller_config` to validate values
at start-up and at runtime (with the checks that involve the robot or several
parameters)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.imu_config import ImuConfig, imu_config
from rnea_ros.core.coupling.loop_file import load_loops, loop_file_path
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.elastic.model import ElasticModel, elastic_model
from rnea_ros.core.errors import ParameterError, options
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.mimic import check_actuated
from rnea_ros.parameters import ParameterSpec as ParameterSpec  # (re-exported)
from rnea_ros.parameters import defaults, load_table
from rnea_ros.samples import resolve_path
from rnea_ros.values import number_list as _number_list
from rnea_ros.values import per_joint as per_joint  # (re-exported)

Array = NDArray[np.float64]

MODES = ("gravity", "inverse_dynamics", "elastic")
ELASTIC_LAWS = ("feedforward_pd", "hua")
STALE_BEHAVIORS = ("hold", "zero")
PARALLEL_FAMILIES = ("", "delta", "gough_stewart")  # loops.parallel (control/parallel.py)


# The controller's parameters: rnea_ros/params/controller.yaml (names, types, defaults,
# ranges, units, descriptions; rnea_ros.parameters), IMU ones (imu.*) included.
CONTROLLER_PARAMETERS: dict[str, ParameterSpec] = load_table("controller")


@dataclass(frozen=True, eq=False)
class ControllerConfig:
    """Validated controller settings, in model terms."""

    joints: tuple[str, ...]
    command_index: NDArray[np.int64]  # model (closed loops: active) index of each commanded joint
    mode: str
    gravity: Array
    friction_compensation: bool
    payload: Payload | None
    effort_limits: Array  # per commanded joint
    kp: Array  # per model joint (closed loops: per active joint)
    kd: Array
    effort_rate_limits: Array  # per commanded joint
    slew_limit: bool
    time_scaling: bool
    time_scaling_min_speed: float
    time_scaling_max_acceleration: float
    time_scaling_horizon: float
    time_scaling_margin: float
    watchdog_timeout: float
    stale_behavior: str
    clock_reset_threshold: float
    clock_reset_count: int
    oracle_enable: bool
    oracle_every_n: int
    oracle_tolerance: float
    passive_tolerance: float = 0.01  # closed loops: passive encoder deviation reported [rad, m]
    parallel: str = ""  # closed loops run as a platform and legs: 'delta', 'gough_stewart'
    elastic_law: str = "feedforward_pd"
    elastic_gains: tuple[Array, ...] = ()  # lambda_q, kd_q (n,), lambda_theta, kd_theta (n_e,)
    imu: ImuConfig | None = None  # a moving base measured by an IMU; None: a fixed base
    mimic_check: bool = True
    mimic_tolerance: float = 0.005  # [rad or m]
    watchdog_grace: float = 0.0  # [s] silence after the timeout before the stale behaviour


def _choice(values: Mapping[str, Any], name: str, allowed: Sequence[str]) -> str:
    value = values[name]
    if value not in allowed:
        raise ParameterError(f"parameter '{name}' is '{value}'; valid: {options(allowed)}")
    return str(value)


def urdf_source(values: Mapping[str, Any]) -> str:
    """The URDF to read: ``robot_description`` (XML) or the resolved ``urdf_path``."""
    description = str(values.get("robot_description") or "")
    urdf_path = str(values.get("urdf_path") or "")
    if not description and not urdf_path:
        raise ParameterError("set parameter 'robot_description' (URDF XML) or 'urdf_path'")
    return description if description else str(resolve_path(urdf_path))


def load_model(values: Mapping[str, Any]) -> RobotModel:
    """The robot model named by ``robot_description``/``urdf_path``, ``drives_file``
    and ``inertia_check`` (gravity and payload are applied by the controller)."""
    source = urdf_source(values)
    drives = str(values.get("drives_file") or "")
    check = _choice(values, "inertia_check", ("strict", "warn"))
    return load_urdf(source, drives=resolve_path(drives) if drives else None,
                     inertia_check=check)


def load_elastic(values: Mapping[str, Any], model: RobotModel) -> ElasticModel | None:
    """The elastic-joint model from ``elastic_file`` (None when the parameter is empty)."""
    path = str(values.get("elastic_file") or "")
    return elastic_model(model, resolve_path(path)) if path else None


def loops_path(values: Mapping[str, Any]) -> Path | None:
    """The loop file named by ``loops_file``: that path; for ``''``, ``<urdf
    stem>.loops.yaml`` next to ``urdf_path`` when it exists (a ``robot_description``
    has no location: name the file); ``None`` for ``'none'`` or nothing found."""
    given = str(values.get("loops_file") or "")
    if given.lower() == "none":
        return None
    if given:
        path = resolve_path(given)
        if not path.is_file():
            raise ParameterError(f"parameter 'loops_file': no file '{path}'")
        return path
    urdf_path = str(values.get("urdf_path") or "")
    if values.get("robot_description") or not urdf_path:
        return None
    beside = loop_file_path(resolve_path(urdf_path))
    return beside if beside.is_file() else None


def load_loop_model(values: Mapping[str, Any], model: RobotModel) -> ClosedLoopModel | None:
    """The closed-loop model of ``model`` (the spanning tree) from :func:`loops_path`,
    or None; :class:`~rnea_ros.core.errors.LoopError` naming the file and the unknown
    link or joint for a file that does not fit the URDF."""
    path = loops_path(values)
    if path is None:
        return None
    if values.get("elastic_file"):
        raise ParameterError("parameters 'loops_file' and 'elastic_file' cannot be combined "
                             "(closed loops of rigid joints only)")
    return load_loops(model, path)


def _joints(values: Mapping[str, Any], model: RobotModel, loops: ClosedLoopModel | None
            ) -> tuple[tuple[str, ...], NDArray[np.int64]]:
    """The commanded joints and their index in the model order (closed loops: the
    active order)."""
    names = [j for j in (values["joints"] or []) if j]
    valid = model.joint_names if loops is None else loops.active_names
    joints = tuple(names) if names else valid
    check_actuated(model, joints, "joints")
    if loops is not None:
        passive = [j for j in joints if j in loops.passive_names]
        if passive:
            raise ParameterError(f"parameter 'joints': {options(passive)} passive in the loop "
                                 f"file (not actuated); commandable (active) joints: "
                                 f"{options(valid)}")
    unknown = [j for j in joints if j not in valid]
    if unknown:
        raise ParameterError(f"parameter 'joints': {options(unknown)} not in the model; "
                             f"valid: {options(valid)}")
    if len(set(joints)) != len(joints):
        raise ParameterError("parameter 'joints' lists a joint twice")
    return joints, np.array([valid.index(j) for j in joints], dtype=np.int64)


def controller_config(values: Mapping[str, Any], model: RobotModel,
                      elastic: ElasticModel | None = None,
                      loops: ClosedLoopModel | None = None) -> ControllerConfig:
    """Validate parameter ``values`` (every key of :data:`CONTROLLER_PARAMETERS`)
    against ``model`` (and ``elastic``, the model of ``elastic_file``, or ``loops``,
    the closed loops of ``loops_file``: then joints and gains are the active joints');
    raises :class:`ParameterError` naming the parameter."""
    mode = _choice(values, "mode", MODES)
    parallel = _choice(values, "loops.parallel", PARALLEL_FAMILIES)
    if parallel and loops is None:
        raise ParameterError(f"parameter 'loops.parallel' is '{parallel}' but the robot has "
                             "no loop file (parameter 'loops_file')")
    if parallel and values["friction_compensation"]:
        raise ParameterError(f"parameter 'friction_compensation' is not supported with "
                             f"'loops.parallel' ('{parallel}': the platform + legs model has no "
                             "joint friction); set loops.parallel to '' for the general "
                             "closed-loop controller")
    if loops is not None:
        if mode == "elastic":
            raise ParameterError("mode 'elastic' is for robots with elastic joints; a "
                                 "closed-loop robot runs 'gravity' or 'inverse_dynamics'")
        if values["time_scaling.enable"]:
            raise ParameterError("parameter 'time_scaling.enable' is not supported for "
                                 "closed-loop robots (loops_file)")
        tolerance = float(values["loops.passive_tolerance"])
        if not (math.isfinite(tolerance) and tolerance > 0.0):
            raise ParameterError(f"parameter 'loops.passive_tolerance' must be > 0, got "
                                 f"{tolerance}")
    gains: tuple[Array, ...] = ()
    if mode == "elastic":
        if elastic is None:
            raise ParameterError("mode 'elastic' needs parameter 'elastic_file' (the side file "
                                 "with the elastic joints and motors)")
        if values["time_scaling.enable"] or values["oracle.enable"]:
            raise ParameterError("mode 'elastic' supports neither 'time_scaling.enable' nor "
                                 "'oracle.enable' (Pinocchio has no geared rotors)")
        ne = elastic.n_elastic
        gains = tuple(per_joint(values, f"elastic.{key}", size, 1e-12) for key, size in
                      (("lambda_q", model.nv), ("kd_q", model.nv), ("lambda_theta", ne),
                       ("kd_theta", ne)))
    joints, index = _joints(values, model, loops)
    n = model.nv if loops is None else loops.n_active
    urdf_limits = model.effort_limit if loops is None else \
        model.effort_limit[loops.active_index]
    limits = _number_list(values, "effort_limits")
    if limits.size == 1 and limits[0] == 0.0:
        limits = urdf_limits[index].copy()
    elif limits.size != len(joints) or np.any(limits <= 0.0):
        raise ParameterError(f"parameter 'effort_limits' needs {len(joints)} positive values "
                             f"(or [0.0] for the URDF limits), got {limits.tolist()}")
    gravity = _number_list(values, "gravity")
    if gravity.shape != (3,):
        raise ParameterError(f"parameter 'gravity' needs 3 values, got {gravity.tolist()}")
    payload = None
    if values["payload.link"]:
        com = _number_list(values, "payload.com")
        inertia = _number_list(values, "payload.inertia")
        if com.size != 3 or inertia.size != 6:
            raise ParameterError("parameters 'payload.com' and 'payload.inertia' need 3 and 6 "
                                 "values")
        payload = Payload(str(values["payload.link"]), float(values["payload.mass"]),
                          tuple(com.tolist()), tuple(inertia.tolist()))
    rates = per_joint(values, "effort_rate_limits", len(joints))
    if np.any(rates <= 0.0):
        raise ParameterError(f"parameter 'effort_rate_limits' must be > 0, got {rates.tolist()}")
    speed = float(values["time_scaling.min_speed"])
    if not 0.0 < speed < 1.0:
        raise ParameterError(f"parameter 'time_scaling.min_speed' must be in (0, 1), got {speed}")
    for key in ("time_scaling.max_acceleration", "time_scaling.horizon"):
        if not float(values[key]) > 0.0:
            raise ParameterError(f"parameter '{key}' must be > 0")
    margin = float(values["time_scaling.margin"])
    if not 0.0 < margin <= 1.0:
        raise ParameterError(f"parameter 'time_scaling.margin' must be in (0, 1], got {margin}")
    timeout = float(values["watchdog_timeout"])
    if not (math.isfinite(timeout) and timeout > 0.0):
        raise ParameterError(f"parameter 'watchdog_timeout' must be > 0 s, got {timeout}")
    grace = float(values["watchdog_grace"])
    if not (math.isfinite(grace) and grace >= 0.0):
        raise ParameterError(f"parameter 'watchdog_grace' must be >= 0 s, got {grace}")
    threshold = float(values["clock_reset.threshold"])
    if not (math.isfinite(threshold) and threshold > 0.0):
        raise ParameterError(f"parameter 'clock_reset.threshold' must be > 0 s, got {threshold}")
    count = int(values["clock_reset.count"])
    if count < 2:
        raise ParameterError(f"parameter 'clock_reset.count' must be >= 2, got {count}")
    every_n = int(values["oracle.every_n"])
    tolerance = float(values["oracle.tolerance"])
    if every_n < 1 or not tolerance > 0.0:
        raise ParameterError("parameters 'oracle.every_n' >= 1 and 'oracle.tolerance' > 0")
    if int(values["trajectory.max_bytes"]) < 1:
        raise ParameterError("parameter 'trajectory.max_bytes' must be >= 1")
    period = float(values["diagnostics_period"])
    if not period > 0.0:
        raise ParameterError(f"parameter 'diagnostics_period' must be > 0 s, got {period}")
    window = float(values["diagnostics_window"])
    if not window > 0.0:
        raise ParameterError(f"parameter 'diagnostics_window' must be > 0 s, got {window}")
    imu = imu_config(values, model)
    if imu is not None and mode == "elastic":
        raise ParameterError("mode 'elastic' does not support an IMU (parameter 'imu.topic'): "
                             "the elastic laws assume a fixed base")
    if imu is not None and loops is not None:
        raise ParameterError("closed-loop robots do not support an IMU (parameter "
                             "'imu.topic'): their inverse dynamics assumes a fixed base")
    mimic_tolerance = float(values["mimic.tolerance"])
    if not (math.isfinite(mimic_tolerance) and mimic_tolerance > 0.0):
        raise ParameterError(f"parameter 'mimic.tolerance' must be > 0 (rad or m), got "
                             f"{mimic_tolerance}")
    return ControllerConfig(
        joints=joints, command_index=index,
        mode=mode,
        elastic_law=_choice(values, "elastic.law", ELASTIC_LAWS),
        elastic_gains=gains,
        gravity=gravity,
        friction_compensation=bool(values["friction_compensation"]),
        payload=payload,
        effort_limits=limits,
        effort_rate_limits=rates,
        slew_limit=bool(values["slew_limit.enable"]),
        time_scaling=bool(values["time_scaling.enable"]),
        time_scaling_min_speed=speed,
        time_scaling_max_acceleration=float(values["time_scaling.max_acceleration"]),
        time_scaling_horizon=float(values["time_scaling.horizon"]),
        time_scaling_margin=margin,
        kp=per_joint(values, "kp", n), kd=per_joint(values, "kd", n),
        passive_tolerance=float(values["loops.passive_tolerance"]), parallel=parallel,
        watchdog_timeout=timeout, watchdog_grace=grace,
        stale_behavior=_choice(values, "stale_behavior", STALE_BEHAVIORS),
        clock_reset_threshold=threshold, clock_reset_count=count,
        oracle_enable=bool(values["oracle.enable"]), oracle_every_n=every_n,
        oracle_tolerance=tolerance, imu=imu,
        mimic_check=bool(values["mimic.check"]), mimic_tolerance=mimic_tolerance,
    )


def default_values() -> dict[str, Any]:
    """Every parameter at its default."""
    return defaults(CONTROLLER_PARAMETERS)
