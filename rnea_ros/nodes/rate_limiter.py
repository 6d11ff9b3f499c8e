"""Standalone torque-rate limiter node: between any effort source and the robot.

Input ``~/input`` (``std_msgs/Float64MultiArray``, ``input_type: array``; the
time step is the time between receipts) or ``~/input_state``
(``sensor_msgs/JointState`` efforts mapped by name to ``joints``,
``input_type: joint_state``; the time step comes from the header stamps, but is
never more than the time between receipts: stamps dated ahead or running faster
than real time, e.g. a bag played at ``--rate 10``, cannot loosen the limit).
Receipts are timed on the steady clock; with ``use_sim_time`` on ``/clock``,
the plant's time, never more than ``clock_max_speed`` times faster than the
steady clock: a ``/clock`` jump back
or forward, or a ``/clock`` stopped for ``clock_stall_timeout`` while inputs
arrive, neither freezes the output nor lets a step through; it is reported
(the clock rule, :mod:`rnea_ros.control.clock_rule`; docs/nodes.md).
Output ``~/output`` (``std_msgs/Float64MultiArray``; remap it to e.g.
``effort_controller/commands``): ``|tau_k - tau_{k-1}| <= effort_rate_limits
* dt``, optionally clipped to ``effort_limits``. A zero or negative time step,
or a future-dated stamp, keeps the previous command (``clock_reset.count``
such stamps in a row that agree are a clock reset: re-synchronised); bad
messages (length, NaN, a joint named twice, a missing joint) are rejected and
counted; ``/diagnostics`` reports the counters (status: the fully-qualified node name,
WARN while inputs were rejected in the last ``diagnostics_window`` seconds).

A managed node (:mod:`rnea_ros.nodes.lifecycle`): configure builds the limiter from the
parameters and subscribes the input; only while active are inputs limited and the
output published (an inactive node counts them, ``inactive_inputs``); deactivate stops
the output (the last command stands: the limiter has no behaviour of its own);
cleanup releases the limiter. ``/diagnostics`` reports in every state, naming it.
"""

from __future__ import annotations

import time
from array import array
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.control.diagnostics import SlidingWindow, status_name
from rnea_ros.control.effort_limiter import RATE_LIMITER_PARAMETERS, EffortLimiter
from rnea_ros.nodes.common import run, stamp_seconds, steady_timer
from rnea_ros.nodes.lifecycle import ManagedNode
from rnea_ros.nodes.parameters import watch
from rnea_ros.parameters import parameter_set

NODE_NAME = "rnea_rate_limiter"
LEVELS = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN,
          "error": DiagnosticStatus.ERROR}

# RATE_LIMITER_PARAMETERS: rnea_ros/params/rate_limiter.yaml (rnea_ros.parameters)


class RateLimiterNode(ManagedNode):
    """Binds :class:`~rnea_ros.control.effort_limiter.EffortLimiter` (the logic) to ROS:
    parameters, the input subscription, the output, the log and ``/diagnostics``; a
    managed node (the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, RATE_LIMITER_PARAMETERS, **kwargs)
        # The table's names, typed (config.diagnostics_period, ...): the start-up values.
        config = parameter_set(RATE_LIMITER_PARAMETERS, self.values)
        # None while unconfigured (typed as configured: used only in configured states).
        self.limiter: EffortLimiter = None  # type: ignore[assignment]
        self.joints: list[str] = []
        self.inactive_inputs = 0  # inputs received while not active (not limited)
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        self.output = self.create_publisher(Float64MultiArray, "~/output", 10)
        self.msg = Float64MultiArray()
        self.window = SlidingWindow(config.diagnostics_window, time.monotonic())
        self.diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        steady_timer(self, config.diagnostics_period, self.publish_diagnostics)
        watch(self, RATE_LIMITER_PARAMETERS)
        self.start()

    def configure_node(self) -> None:
        """The limiter from the parameters (checked, its kernels warm), the input."""
        v = self.refresh_values()
        self.limiter = EffortLimiter.from_parameters(v)
        self.joints = self.limiter.joints
        self.slew, self.rejected = self.limiter.slew, self.limiter.rejected
        if self.limiter.config.input_type == "array":
            sub = self.create_subscription(Float64MultiArray, "~/input", self.on_array, 10)
        else:
            sub = self.create_subscription(JointState, "~/input_state", self.on_state, 10)
        self.configured_entities.append(sub)

    def cleanup_node(self) -> None:
        """Release the limiter and the input subscription."""
        self.destroy_configured()
        self.limiter = None  # type: ignore[assignment]
        self.joints = []

    def receipt_time(self) -> float:
        """Now on the receiver's clock [s], which bounds the time step: the steady
        clock, or ``/clock`` on simulated time (the simulated hardware's time)."""
        if self.sim_time:
            return float(self.get_clock().now().nanoseconds) * 1e-9
        return time.monotonic()

    def steady_time(self) -> float:
        """The steady clock [s], which bounds every safety interval (the clock rule)."""
        return time.monotonic()

    def on_array(self, msg: Float64MultiArray) -> None:
        if not self.active:
            self.inactive_inputs += 1
            return
        try:
            received = self.receipt_time()
            self.publish(self.limiter.array(np.asarray(msg.data, dtype=np.float64), received,
                                            self.steady_time()))
        except Exception as exc:  # never a crash: error processing
            self.fail(f"input callback failed: {type(exc).__name__}: {exc}")

    def on_state(self, msg: JointState) -> None:
        if not self.active:
            self.inactive_inputs += 1
            return
        try:
            received = self.receipt_time()
            self.publish(self.limiter.joint_state(msg.name, msg.effort,
                                                  stamp_seconds(msg.header.stamp), received,
                                                  self.steady_time()))
        except Exception as exc:  # never a crash: error processing
            self.fail(f"input callback failed: {type(exc).__name__}: {exc}")

    def publish(self, out: np.ndarray | None) -> None:
        """Publish the limited command, or log the rejection, clock reset or ``/clock``
        jump or stop (throttled)."""
        if self.limiter.event:
            self.get_logger().warning(self.limiter.event, throttle_duration_sec=1.0)
        if out is None:
            self.get_logger().warning(self.limiter.message, throttle_duration_sec=1.0)
            return
        if not self.active:  # (nothing is published unless active)
            return
        data = array("d")
        data.frombytes(out.tobytes())
        self.msg.data = data
        self.output.publish(self.msg)

    def publish_diagnostics(self, now: float | None = None) -> None:
        """One status named after the node's fully-qualified name (distinct per
        namespace): WARN while inputs were rejected in the last ``diagnostics_window``
        seconds (steady time ``now``), totals as key-values; in every lifecycle state,
        named (``lifecycle_state``; not active: at least WARN, the state said first; a
        failed configure or an error: ERROR with its reason)."""
        if self.finalized:  # (shut down: nothing more is published)
            return
        now = self.steady_time() if now is None else now
        if self.limiter is None:
            level, values = ("error" if self.reason else "warn"), {}
            message = self.reason or "waiting for configure"
        else:
            recent = self.window.update(
                now, {"rejected": sum(self.rejected.values())})["rejected"]
            level, message, values = self.limiter.status(recent, self.window.window, now,
                                                         self.receipt_time())
        values = {**values, "inactive_inputs": str(self.inactive_inputs),
                  **self.lifecycle_values()}
        if not self.active:
            level = "error" if level == "error" else "warn"
            message = f"{self.state_label}, not limiting: {message}"
        status = DiagnosticStatus(level=LEVELS[level], message=message,
                                  name=status_name(self.get_fully_qualified_name()),
                                  hardware_id=", ".join(self.joints),
                                  values=[KeyValue(key=k, value=x) for k, x in values.items()])
        self.diagnostics.publish(DiagnosticArray(status=[status]))


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros rate_limiter``."""
    return run(NODE_NAME, RateLimiterNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
