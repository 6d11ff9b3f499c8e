"""The controller's IMU settings (``imu.*`` parameters, ``rnea_ros/params/controller.yaml``)
validated against the robot model: :func:`imu_config` gives the :class:`ImuConfig` that
:class:`rnea_ros.control.imu.ImuEstimator` runs on. Ranges and choices are the table's
(:func:`rnea_ros.parameters.check`); here only what involves the model. Free of ROS."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rnea_ros.core.errors import JointNameError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import ParameterSet, load_table, parameter_set

_TABLE = load_table("controller")  # rnea_ros/params/controller.yaml
IMU_FALLBACKS = _TABLE["imu.fallback"].choices
LINEAR_ACCELERATION_MODES = _TABLE["imu.linear_acceleration"].choices


@dataclass(frozen=True)
class ImuConfig:
    """Validated IMU settings: the ``imu.*`` parameters of
    ``rnea_ros/params/controller.yaml`` under their names (``link`` and
    ``linear_acceleration`` resolved against the model), and the controller's
    ``clock_reset`` namespace (``clock_reset.threshold`` [s], ``clock_reset.count``),
    which the IMU's stamps follow as the joint states' do."""

    topic: str
    link: str  # resolved: never empty
    frame_id: str
    timeout: float  # [s]
    fallback: str
    linear_acceleration: str  # resolved: 'measured' or 'ignore'
    angular_acceleration_window: float  # [s]
    linear_acceleration_cutoff: float  # [Hz]
    clock_reset: ParameterSet


def imu_config(values: Mapping[str, Any] | ParameterSet, model: RobotModel) -> ImuConfig | None:
    """The IMU settings from the controller's parameters (a checked
    :class:`~rnea_ros.parameters.ParameterSet`, or values by dotted name, checked here
    by the table); None when ``imu.topic`` is empty. Raises :class:`ParameterError`
    naming the parameter (an unknown ``imu.link`` lists the model's links)."""
    p = values if isinstance(values, ParameterSet) else parameter_set(_TABLE, values)
    imu = p.imu
    if not imu.topic:
        return None
    link = imu.link or model.root_link
    try:
        moving = model.link_frame(link).body >= 0
    except JointNameError as exc:
        raise ParameterError(f"parameter 'imu.link': {exc}") from None
    linear = imu.linear_acceleration
    if linear == "auto":
        linear = "ignore" if moving else "measured"
    elif linear == "measured" and moving:
        raise ParameterError(
            f"parameter 'imu.linear_acceleration' is 'measured' but the IMU's link '{link}' "
            "moves with the joints: its accelerometer measures the arm's own acceleration "
            "J(q) qdd, which the commands change (a feedback loop that diverges on arm7's "
            "flange); use 'ignore' (tilt and rotation from the IMU, gravity from the model) "
            "or mount the IMU on the base")
    return ImuConfig(topic=imu.topic, link=link, frame_id=imu.frame_id, timeout=imu.timeout,
                     fallback=imu.fallback, linear_acceleration=linear,
                     angular_acceleration_window=imu.angular_acceleration_window,
                     linear_acceleration_cutoff=imu.linear_acceleration_cutoff,
                     clock_reset=p.clock_reset)


__all__ = ["IMU_FALLBACKS", "LINEAR_ACCELERATION_MODES", "ImuConfig", "imu_config"]
