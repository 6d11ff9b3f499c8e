"""Standalone torque-rate limiter node: between any effort source and the robot.

Input ``~/input`` (``std_msgs/Float64MultiArray``, ``input_type: array``; the
time step is the time between receipts) or ``~/input_state``
(``sensor_msgs/JointState`` efforts mapped by name to ``joints``,
``input_type: joint_state``; the time step comes from the header stamps, but is
never more than the time between receipts: stamps dated ahead or running faster
than real time, e.g. a bag played at ``--rate 10``, cannot loosen the limit).
Receipts are timed on the steady clock; with ``use_sim_time`` on ``/clock``,
the simulated hardware's time (a bag played with ``--clock`` at 10x is then
limited in the bag's time: do not drive real hardware on simulated time).
Output ``~/output`` (``std_msgs/Float64MultiArray``; remap it to e.g.
``effort_controller/commands``): ``|tau_k - tau_{k-1}| <= effort_rate_limits
* dt``, optionally clipped to ``effort_limits``. A zero or negative time step,
or a future-dated stamp, keeps the previous command (``clock_reset.count``
such stamps in a row that agree are a clock reset: re-synchronised); bad
messages (length, NaN, a joint named twice, a missing joint) are rejected and
counted; ``/diagnostics`` reports the counters (status: the fully-qualified node name,
WARN while inputs were rejected in the last ``diagnostics_window`` seconds).
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

from rnea_ros.control.config import per_joint
from rnea_ros.control.diagnostics import SlidingWindow, status_name
from rnea_ros.control.rate_limit import SlewLimiter, positive_limits
from rnea_ros.core.errors import ParameterError, options
from rnea_ros.nodes.common import run, stamp_seconds, steady_timer
from rnea_ros.nodes.parameters import declare, watch
from rnea_ros.parameters import ParameterSpec, load_table

NODE_NAME = "rnea_rate_limiter"

# rnea_ros/params/rate_limiter.yaml (rnea_ros.parameters)
RATE_LIMITER_PARAMETERS: dict[str, ParameterSpec] = load_table("rate_limiter")


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
        self.threshold = float(v["clock_reset.threshold"])
        self.reset_count = int(v["clock_reset.count"])
        if not (math.isfinite(self.threshold) and self.threshold > 0 and self.reset_count >= 2):
            raise ParameterError("parameters 'clock_reset.threshold' > 0 and "
                                 "'clock_reset.count' >= 2")
        self.last_output_wall = -math.inf
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        self.streak, self.streak_stamp = 0, -math.inf
        self.clock_resets = 0
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
        window = float(v["diagnostics_window"])
        if not (math.isfinite(window) and window > 0):
            raise ParameterError(f"parameter 'diagnostics_window' must be > 0 s, got {window}")
        self.window = SlidingWindow(window, time.monotonic())
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        steady_timer(self, float(v["diagnostics_period"]), self.publish_diagnostics)
        watch(self, RATE_LIMITER_PARAMETERS)

    def receipt_time(self) -> float:
        """Now on the receiver's clock [s], which bounds the time step: the steady
        clock, or ``/clock`` on simulated time (the simulated hardware's time)."""
        if self.sim_time:
            return float(self.get_clock().now().nanoseconds) * 1e-9
        return time.monotonic()

    def on_array(self, msg: Float64MultiArray) -> None:
        received = self.receipt_time()
        self.limit(np.asarray(msg.data, dtype=np.float64), received, received)

    def on_state(self, msg: JointState) -> None:
        received = self.receipt_time()
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
            missing = [j for j in self.joints if j not in position]
            if missing:
                self.reject("missing_joints", f"lacks joints {options(missing)}")
                return
            index = np.array([position[j] for j in self.joints], dtype=np.int64)
            if len(self.index_cache) < 16 and sum(map(len, key)) <= 4096:
                self.index_cache[key] = index
        t = self.on_stamp(stamp_seconds(msg.header.stamp), time.monotonic())
        self.limit(np.asarray(msg.effort, dtype=np.float64)[index], t, received)

    def on_stamp(self, t: float, now: float) -> float:
        """The time to limit on: ``t``, or NaN (hold the previous command, counted as a
        bad time step) for a backwards or future-dated stamp -- until
        ``clock_reset.count`` of them in a row agree: a clock reset, re-synchronised
        (the time step is then the steady time since the last output)."""
        last = self.slew.last_time
        if self.slew.previous is None or not math.isfinite(last):
            return t
        d, wall = t - last, max(now - self.last_output_wall, 0.0)
        if 0.0 <= d <= wall + self.threshold:
            self.streak = 0
            return t
        agree = self.streak > 0 and 0.0 < t - self.streak_stamp <= self.threshold
        self.streak, self.streak_stamp = (self.streak + 1 if agree else 1), t
        if self.streak < self.reset_count:
            return math.nan
        self.streak = 0
        self.clock_resets += 1
        self.slew.last_time = t - wall
        self.get_logger().warning(f"clock reset: effort stamps jumped by {d:+.6f} s",
                                  throttle_duration_sec=1.0)
        return t

    def reject(self, reason: str, detail: str = "") -> None:
        self.rejected[reason] += 1
        self.get_logger().warning(f"rejected effort input ({reason}{': ' if detail else ''}"
                                  f"{detail})", throttle_duration_sec=1.0)

    def limit(self, tau: np.ndarray, t: float, received: float) -> None:
        """Clip, then slew-limit ``tau`` at time ``t`` received at ``received``
        (:meth:`receipt_time`); publish."""
        if tau.shape != (len(self.joints),):
            self.reject("length_mismatch")
            return
        if not np.isfinite(tau).all():
            self.reject("non_finite")
            return
        out = self.slew(np.minimum(np.maximum(tau, -self.limits), self.limits), t, received)
        self.last_output_wall = time.monotonic()
        data = array("d")
        data.frombytes(out.tobytes())
        self.msg.data = data
        self.output.publish(self.msg)

    def publish_diagnostics(self, now: float | None = None) -> None:
        """One status named after the node's fully-qualified name (distinct per
        namespace): WARN while inputs were rejected in the last ``diagnostics_window``
        seconds (steady time ``now``), totals as key-values."""
        rejected = sum(self.rejected.values())
        recent = self.window.update(time.monotonic() if now is None else now,
                                    {"rejected": rejected})["rejected"]
        window = f"last {self.window.window:g} s"
        values = {"rate limited": str(self.slew.limited), "bad dt": str(self.slew.bad_dt),
                  "clock resets": str(self.clock_resets),
                  f"rejected ({window})": str(recent),
                  **{f"rejected: {k}": str(v) for k, v in sorted(self.rejected.items())}}
        level, message = DiagnosticStatus.OK, "limiting"
        if recent:
            level = DiagnosticStatus.WARN
            message = f"rejecting some inputs ({recent} in the {window})"
        status = DiagnosticStatus(level=level, name=status_name(self.get_fully_qualified_name()),
                                  message=message, hardware_id=", ".join(self.joints),
                                  values=[KeyValue(key=k, value=x) for k, x in values.items()])
        self.diagnostics.publish(DiagnosticArray(status=[status]))

def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros rate_limiter``."""
    return run(NODE_NAME, RateLimiterNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
