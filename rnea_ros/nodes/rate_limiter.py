"""Standalone torque-rate limiter node: between any effort source and the robot.

Input ``~/input`` (``std_msgs/Float64MultiArray``, ``input_type: array``; the
time step is the receipt time on a steady clock) or ``~/input_state``
(``sensor_msgs/JointState`` efforts mapped by name to ``joints``,
``input_type: joint_state``; the time step comes from the header stamps).
Output ``~/output`` (``std_msgs/Float64MultiArray``; remap it to e.g.
``/effort_controller/commands``): ``|tau_k - tau_{k-1}| <= effort_rate_limits
* dt``, optionally clipped to ``effort_limits``. A zero or negative time step
keeps the previous command; bad messages (length, NaN, a joint named twice,
a missing joint) are rejected and counted; ``/diagnostics`` reports the
counters.
"""

from __future__ import annotations

import math
import time
from array import array
from collections import Counter
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.control.config import ParameterSpec, per_joint
from rnea_ros.control.rate_limit import SlewLimiter, positive_limits
from rnea_ros.core.errors import ParameterError
from rnea_ros.nodes.common import declare, run, stamp_seconds, steady_clock

NODE_NAME = "rnea_rate_limiter"

RATE_LIMITER_PARAMETERS: dict[str, ParameterSpec] = {
    "joints": ParameterSpec([""], "joint names, in the order of the output array", True),
    "input_type": ParameterSpec("array", "'array' (Float64MultiArray on ~/input) or "
                                "'joint_state' (JointState efforts on ~/input_state)", True),
    "effort_rate_limits": ParameterSpec([1000.0], "|d tau/dt| per joint or one for all "
                                        "[N m/s or N/s]", True),
    "effort_limits": ParameterSpec([0.0], "|tau| per joint or one for all [N m or N]; "
                                   "[0.0]: no clipping", True),
    "diagnostics_period": ParameterSpec(1.0, "period of /diagnostics [s]", True),
}


class RateLimiterNode(Node):
    """Slew-rate limits an effort stream."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        v = declare(self, RATE_LIMITER_PARAMETERS)
        self.joints = [j for j in v["joints"] if j]
        if not self.joints:
            raise ParameterError("parameter 'joints' must name the joints of the output array")
        n = len(self.joints)
        rates = per_joint(v, "effort_rate_limits", n, -math.inf)
        self.slew = SlewLimiter(positive_limits(rates, "effort_rate_limits"))
        if list(v["effort_limits"]) == [0.0]:
            self.limits = np.full(n, np.inf)
        else:
            limits = per_joint(v, "effort_limits", n, -math.inf)
            self.limits = positive_limits(limits, "effort_limits")
        self.rejected: Counter[str] = Counter()
        self.joint_set = set(self.joints)
        self.index_cache: dict[tuple[str, ...], np.ndarray] = {}
        self.output = self.create_publisher(Float64MultiArray, "~/output", 10)
        self.msg = Float64MultiArray()
        if v["input_type"] == "array":
            self.create_subscription(Float64MultiArray, "~/input", self.on_array, 10)
        elif v["input_type"] == "joint_state":
            self.create_subscription(JointState, "~/input_state", self.on_state, 10)
        else:
            raise ParameterError(f"parameter 'input_type' is '{v['input_type']}'; valid: "
                                 "'array', 'joint_state'")
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(float(v["diagnostics_period"]), self.publish_diagnostics,
                          clock=steady_clock())

    def on_array(self, msg: Float64MultiArray) -> None:
        self.limit(np.asarray(msg.data, dtype=np.float64), time.monotonic())

    def on_state(self, msg: JointState) -> None:
        names = msg.name
        if len(msg.effort) != len(names):
            self.reject("length_mismatch")
            return
        key = tuple(names)
        index = self.index_cache.get(key)
        if index is None:
            position = {name: k for k, name in enumerate(key)}
            ours = [n for n in key if n in self.joint_set]
            if len(ours) != len(set(ours)):
                self.reject("duplicate_names")  # which value wins would be undefined
                return
            if any(j not in position for j in self.joints):
                self.reject("missing_joints")
                return
            index = np.array([position[j] for j in self.joints], dtype=np.int64)
            if len(self.index_cache) < 16 and sum(map(len, key)) <= 4096:
                self.index_cache[key] = index
        t = stamp_seconds(msg.header.stamp)
        if not math.isfinite(t):
            self.reject("non_finite")
            return
        self.limit(np.asarray(msg.effort, dtype=np.float64)[index], t)

    def reject(self, reason: str) -> None:
        self.rejected[reason] += 1
        self.get_logger().warning(f"rejected effort input ({reason})", throttle_duration_sec=1.0)

    def limit(self, tau: np.ndarray, t: float) -> None:
        if tau.shape != (len(self.joints),):
            self.reject("length_mismatch")
            return
        if not np.isfinite(tau).all():
            self.reject("non_finite")
            return
        out = self.slew(np.minimum(np.maximum(tau, -self.limits), self.limits), t)
        data = array("d")
        data.frombytes(out.tobytes())
        self.msg.data = data
        self.output.publish(self.msg)

    def publish_diagnostics(self) -> None:
        values = {"rate limited": str(self.slew.limited), "bad dt": str(self.slew.bad_dt),
                  **{f"rejected: {k}": str(v) for k, v in sorted(self.rejected.items())}}
        level = DiagnosticStatus.WARN if sum(self.rejected.values()) else DiagnosticStatus.OK
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: rate limiter",
                                  message="limiting",
                                  values=[KeyValue(key=k, value=x) for k, x in values.items()])
        self.diagnostics.publish(DiagnosticArray(status=[status]))


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros rate_limiter``."""
    return run(NODE_NAME, RateLimiterNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
