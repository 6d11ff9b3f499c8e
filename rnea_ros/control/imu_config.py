"""The controller's IMU settings (``imu.*`` parameters, ``rnea_ros/params/controller.yaml``)
validated against the robot model: :func:`imu_config` gives the :class:`ImuConfig` that
:class:`rnea_ros.control.imu.ImuEstimator` runs on. Ranges and choices are the table's
(:func:`rnea_ros.parameters.check`); here only what involves the model. Free of ROS."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rnea_ros.core.errors import JointNameError, ParameterError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameters import check, load_table

_IMU = {name: spec for name, spec in load_table("controller").items()
        if name.startswith("imu.")}  # the imu.* rows of rnea_ros/params/controller.yaml
IMU_FALLBACKS = _IMU["imu.fallback"].choices
LINEAR_ACCELERATION_MODES = _IMU["imu.linear_acceleration"].choices


@dataclass(frozen=True)
class ImuConfig:
    """Validated IMU settings (the ``imu.*`` parameters of ``rnea_ros/params/controller.yaml``)."""

    topic: str
    link: str  # resolved: never empty
    frame_id: str
    timeout: float
    fallback: str
    linear_acceleration: str  # resolved: 'measured' or 'ignore'
    angular_acceleration_window: float
    linear_acceleration_cutoff: float
    clock_reset_threshold: float = 1.0
    clock_reset_count: int = 5


def imu_config(values: Mapping[str, Any], model: RobotModel) -> ImuConfig | None:
    """The IMU settings from parameter ``values`` (None when ``imu.topic`` is empty);
    raises :class:`ParameterError` naming the parameter (an unknown ``imu.link``
    lists the model's links)."""
    topic = str(values.get("imu.topic") or "")
    if not topic:
        return None
    link = str(values.get("imu.link") or "") or model.root_link
    try:
        moving = model.link_frame(link).body >= 0
    except JointNameError as exc:
        raise ParameterError(f"parameter 'imu.link': {exc}") from None
    check(_IMU, values)
    linear = str(values["imu.linear_acceleration"])
    if linear == "auto":
        linear = "ignore" if moving else "measured"
    elif linear == "measured" and moving:
        raise ParameterError(
            f"parameter 'imu.linear_acceleration' is 'measured' but the IMU's link '{link}' "
            "moves with the joints: its accelerometer measures the arm's own acceleration "
            "J(q) qdd, which the commands change (a feedback loop that diverges on arm7's "
            "flange); use 'ignore' (tilt and rotation from the IMU, gravity from the model) "
            "or mount the IMU on the base")
    return ImuConfig(topic=topic, link=link, frame_id=str(values.get("imu.frame_id") or ""),
                     timeout=float(values["imu.timeout"]),
                     fallback=str(values["imu.fallback"]),
                     linear_acceleration=linear,
                     angular_acceleration_window=float(values["imu.angular_acceleration_window"]),
                     linear_acceleration_cutoff=float(values["imu.linear_acceleration_cutoff"]),
                     clock_reset_threshold=float(values.get("clock_reset.threshold", 1.0)),
                     clock_reset_count=int(values.get("clock_reset.count", 5)))


__all__ = ["IMU_FALLBACKS", "LINEAR_ACCELERATION_MODES", "ImuConfig", "imu_config"]
