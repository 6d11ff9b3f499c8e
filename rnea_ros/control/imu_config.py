"""The controller's IMU settings (``imu.*`` parameters, ``rnea_ros/params/controller.yaml``)
validated against the robot model: :func:`imu_config` gives the :class:`ImuConfig` that
:class:`rnea_ros.control.imu.ImuEstimator` runs on. Free of ROS."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rnea_ros.core.errors import JointNameError, ParameterError, options
from rnea_ros.core.model.robot_model import RobotModel

IMU_FALLBACKS = ("fixed_gravity", "hold")
LINEAR_ACCELERATION_MODES = ("auto", "measured", "ignore")


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
    timeout = float(values["imu.timeout"])
    if not (math.isfinite(timeout) and timeout > 0.0):
        raise ParameterError(f"parameter 'imu.timeout' must be > 0 s, got {timeout}")
    for key, allowed in (("imu.fallback", IMU_FALLBACKS),
                         ("imu.linear_acceleration", LINEAR_ACCELERATION_MODES)):
        if values[key] not in allowed:
            raise ParameterError(f"parameter '{key}' is '{values[key]}'; valid: "
                                 f"{options(allowed)}")
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
    cutoffs = []
    for key in ("imu.angular_acceleration_window", "imu.linear_acceleration_cutoff"):
        value = float(values[key])
        if not (math.isfinite(value) and value >= 0.0):
            unit = "s" if key.endswith("window") else "Hz"
            raise ParameterError(f"parameter '{key}' must be >= 0 {unit} (0: off), got {value}")
        cutoffs.append(value)
    return ImuConfig(topic=topic, link=link, frame_id=str(values.get("imu.frame_id") or ""),
                     timeout=timeout, fallback=str(values["imu.fallback"]),
                     linear_acceleration=linear,
                     angular_acceleration_window=cutoffs[0],
                     linear_acceleration_cutoff=cutoffs[1],
                     clock_reset_threshold=float(values.get("clock_reset.threshold", 1.0)),
                     clock_reset_count=int(values.get("clock_reset.count", 5)))


__all__ = ["IMU_FALLBACKS", "LINEAR_ACCELERATION_MODES", "ImuConfig", "imu_config"]
