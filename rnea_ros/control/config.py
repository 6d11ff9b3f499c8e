"""The controller's parameters: one table (``rnea_ros/params/controller.yaml``: names,
types, defaults, ranges, safety bounds, units, descriptions) used by the node to declare
them, by the launch-file test to check them, and by :func:`controller_config` to
validate values at start-up and at runtime: every range and choice by the table
(:func:`rnea_ros.parameters.check`), then the rules that involve the robot or several
parameters (:data:`rnea_ros.control.config_rules.CONTROLLER_RULES`, one named function
each). No range or choice is written here: the choice lists below are the table's."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.config_rules import CONTROLLER_RULES
from rnea_ros.control.imu_config import ImuConfig, imu_config
from rnea_ros.core.coupling.loop_file import load_loops, loop_file_path
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.elastic.model import ElasticModel, elastic_model
from rnea_ros.core.errors import options
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.mimic import check_actuated
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import ParameterSet, check, defaults, load_table, parameter_set
from rnea_ros.parameters import ParameterSpec as ParameterSpec  # (re-exported)
from rnea_ros.samples import resolve_path
from rnea_ros.values import number_list as _number_list
from rnea_ros.values import per_joint as per_joint  # (re-exported)

Array = NDArray[np.float64]

# The controller's parameters: rnea_ros/params/controller.yaml (names, types, defaults,
# ranges, units, descriptions; rnea_ros.parameters), IMU ones (imu.*) included.
CONTROLLER_PARAMETERS: dict[str, ParameterSpec] = load_table("controller")

# The table's choice lists, by name (read from it, never copied).
MODES = CONTROLLER_PARAMETERS["mode"].choices
PARALLEL_FAMILIES = CONTROLLER_PARAMETERS["loops.parallel"].choices  # control/parallel.py


@dataclass(frozen=True, eq=False)
class ControllerConfig:
    """The controller's settings: one object, read by the table's dotted names
    (``config.mode``, ``config.slew_limit.enable``, ``config.clock_reset.threshold``,
    ``config.oracle.every_n``): every parameter of ``rnea_ros/params/controller.yaml``,
    typed and checked (:attr:`params`, a :class:`~rnea_ros.parameters.ParameterSet`
    built from the table alone), and in its own field each value resolved against the
    robot, under the parameter's name where it has one (``joints``, ``gravity``,
    ``kp``, ``payload``, ``imu``: the table's value as the model needs it). A name that
    is not a field is the table's (:meth:`__getattr__`): nothing is renamed, nothing is
    copied by hand."""

    joints: tuple[str, ...]  # the commanded joints ('joints', or the model's)
    command_index: NDArray[np.int64]  # model (closed loops: active) index of each commanded joint
    gravity: Array  # (3,) [m/s^2], world frame
    payload: Payload | None  # 'payload.*'; None: no payload link
    effort_limits: Array  # (m,) per commanded joint [N m or N] ('effort_limits', or the URDF's)
    kp: Array  # per model joint (closed loops: per active joint)
    kd: Array
    effort_rate_limits: Array  # (m,) per commanded joint [N m/s or N/s]
    # mode 'elastic': elastic.lambda_q, elastic.kd_q (nv,), elastic.lambda_theta,
    # elastic.kd_theta (n_elastic,), per joint; () otherwise
    elastic_gains: tuple[Array, ...] = ()
    imu: ImuConfig | None = None  # 'imu.*', resolved; None: a fixed base ('imu.topic' empty)
    # Every parameter, checked, by its dotted name (params.diagnostics_period, ...).
    params: ParameterSet = field(
        default_factory=lambda: parameter_set(CONTROLLER_PARAMETERS, {}))

    def __getattr__(self, name: str) -> Any:
        """A parameter or namespace of the table that is not a field: ``config.mode``,
        ``config.watchdog_timeout``, ``config.oracle`` (``config.oracle.enable``)."""
        if name.startswith("__") or name == "params":  # (copy, pickle: before __init__)
            raise AttributeError(name)
        return getattr(self.params, name)

    def with_values(self, values: Mapping[str, Any], checked: bool = True
                    ) -> ControllerConfig:
        """This configuration with the parameters ``values`` (dotted names) changed,
        checked by the table alone (``checked=False``: not even that), not by the
        robot's rules (:func:`controller_config`'s): for a test handing a controller a
        mode its robot does not run, to see it refused there too."""
        merged = {**self.params.dotted(), **values}
        return dataclasses.replace(
            self, params=parameter_set(CONTROLLER_PARAMETERS, merged, checked))


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
    check(CONTROLLER_PARAMETERS, {"inertia_check": values["inertia_check"]})
    return load_urdf(source, drives=resolve_path(drives) if drives else None,
                     inertia_check=str(values["inertia_check"]))


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
    the closed loops of ``loops_file``: then joints and gains are the active joints'):
    the table's ranges, choices and safety bounds first, then the named cross-parameter
    rules (:data:`~rnea_ros.control.config_rules.CONTROLLER_RULES`); raises
    :class:`ParameterError` naming the parameter."""
    p = parameter_set(CONTROLLER_PARAMETERS, values)
    flat = p.dotted()  # every parameter, typed by the table (absent: its default)
    for rule in CONTROLLER_RULES:
        rule(flat, elastic, loops)
    mode = p.mode
    gains: tuple[Array, ...] = ()
    if mode == "elastic":
        assert elastic is not None  # (CONTROLLER_RULES: mode_of_family)
        ne = elastic.n_elastic
        gains = tuple(per_joint(flat, f"elastic.{key}", size, 1e-12) for key, size in
                      (("lambda_q", model.nv), ("kd_q", model.nv), ("lambda_theta", ne),
                       ("kd_theta", ne)))
    joints, index = _joints(flat, model, loops)
    n = model.nv if loops is None else loops.n_active
    urdf_limits = model.effort_limit if loops is None else \
        model.effort_limit[loops.active_index]
    limits = _number_list(flat, "effort_limits")
    if limits.size == 1 and limits[0] == 0.0:
        limits = urdf_limits[index].copy()
    elif limits.size != len(joints) or np.any(limits <= 0.0):
        raise ParameterError(f"parameter 'effort_limits' needs {len(joints)} positive values "
                             f"(or [0.0] for the URDF limits), got {limits.tolist()}")
    gravity = _number_list(flat, "gravity")
    if gravity.shape != (3,):
        raise ParameterError(f"parameter 'gravity' needs 3 values, got {gravity.tolist()}")
    payload = None
    if p.payload.link:
        com = _number_list(flat, "payload.com")
        inertia = _number_list(flat, "payload.inertia")
        if com.size != 3 or inertia.size != 6:
            raise ParameterError("parameters 'payload.com' and 'payload.inertia' need 3 and 6 "
                                 "values")
        payload = Payload(p.payload.link, p.payload.mass, tuple(com.tolist()),
                          tuple(inertia.tolist()))
    imu = imu_config(p, model)
    if imu is not None and mode == "elastic":
        raise ParameterError("mode 'elastic' does not support an IMU (parameter 'imu.topic'): "
                             "the elastic laws assume a fixed base")
    if imu is not None and loops is not None:
        raise ParameterError("closed-loop robots do not support an IMU (parameter "
                             "'imu.topic'): their inverse dynamics assumes a fixed base")
    return ControllerConfig(
        joints=joints, command_index=index, gravity=gravity, payload=payload,
        effort_limits=limits, kp=per_joint(flat, "kp", n), kd=per_joint(flat, "kd", n),
        effort_rate_limits=per_joint(flat, "effort_rate_limits", len(joints)),
        elastic_gains=gains, imu=imu, params=p)


def default_values() -> dict[str, Any]:
    """Every parameter at its default."""
    return defaults(CONTROLLER_PARAMETERS)
