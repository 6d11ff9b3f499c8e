"""The RNEA torque controller node.

Subscribes ``joint_states`` (``sensor_msgs/JointState``, best-effort QoS, so
reliable and best-effort publishers both match; ``qos_overrides`` allowed) and
``~/joint_trajectory`` (``trajectory_msgs/JointTrajectory``, reference of the
``inverse_dynamics`` mode); publishes ``effort_controller/commands``
(``std_msgs/Float64MultiArray`` ordered by the ``joints`` parameter: what
ros2_control's ``forward_command_controller`` with ``interface_name: effort``
expects), optionally ``~/efforts`` (``sensor_msgs/JointState``) and
``/diagnostics``. With ``elastic_file`` (robots with elastic joints, mode
``elastic``), ``joint_states`` also carries each elastic joint's motor as
``<joint>_motor`` and the commands are motor torques. Topic names are relative
(``<namespace>/joint_states``) except ``/diagnostics``, and remappable. Parameters: see
:data:`rnea_ros.control.config.CONTROLLER_PARAMETERS` and
``config/arm7_controller.yaml``; the logic lives in
:class:`rnea_ros.control.controller.TorqueController`.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.control.config import (
    CONTROLLER_PARAMETERS,
    ControllerConfig,
    controller_config,
    load_elastic,
    load_model,
    urdf_source,
)
from rnea_ros.control.controller import Oracle, Result, TorqueController
from rnea_ros.control.laws import Step
from rnea_ros.core.dynamics.rnea import friction_torques
from rnea_ros.core.errors import RneaError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.nodes.common import SerializedArray, declare, run, stamp_seconds, steady_timer

NODE_NAME = "rnea_controller"
_monotonic = time.monotonic
STATE_QOS = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=10,
                       reliability=QoSReliabilityPolicy.BEST_EFFORT,
                       durability=QoSDurabilityPolicy.VOLATILE)


def pinocchio_oracle_factory(urdf: Any) -> Any:
    """Oracle factory for :class:`TorqueController`: Pinocchio on the same URDF."""
    from rnea_ros.oracle import PinocchioOracle

    def factory(model: RobotModel, config: ControllerConfig) -> Oracle:
        oracle = PinocchioOracle(urdf, model)
        if config.payload is not None:
            oracle.add_payload(config.payload)

        def reference(step: Step) -> np.ndarray:
            if config.mode == "gravity":
                return oracle.gravity(step.q)
            assert step.q_ref is not None and step.qd_ref is not None
            assert step.qdd_ref is not None
            return oracle.rnea(step.q_ref, step.qd_ref, step.qdd_ref) + \
                friction_torques(model, step.qd_ref)
        return reference
    return factory


class ControllerNode(Node):
    """rclpy adapter around :class:`TorqueController`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self.values = declare(self, CONTROLLER_PARAMETERS)
        model = load_model(self.values)
        elastic = load_elastic(self.values, model)
        config = controller_config(self.values, model, elastic)
        urdf = urdf_source(self.values)
        self.controller = TorqueController(model, config, pinocchio_oracle_factory(urdf),
                                           elastic=elastic)
        self.command_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                                 10)
        self.effort_pub = (self.create_publisher(JointState, "~/efforts", 10)
                           if self.values["publish_effort_state"] else None)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # Introspection of the predictive time scaling: [s, s_dot, s_ddot].
        self.scaling_pub = self.create_publisher(Float64MultiArray, "~/time_scaling", 10)
        self.scaling_msg = Float64MultiArray()
        self.create_subscription(JointState, "joint_states", self.on_joint_state, STATE_QOS,
                                 qos_overriding_options=QoSOverridingOptions
                                 .with_default_policies())
        # Raw: the size is checked before rclpy deserialises (slowly, in Python).
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self.on_trajectory_raw,
                                 10, raw=True)
        self.add_on_set_parameters_callback(self.on_set_parameters)
        # Steady clocks: the watchdog must fire when (simulated) time stops with the states.
        steady_timer(self, min(config.watchdog_timeout / 4, 0.02), self.on_watchdog)
        steady_timer(self, float(self.values["diagnostics_period"]), self.publish_diagnostics)
        # On simulated time, 0 is a real stamp (the simulation's start), not "unstamped".
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        # The command message, kept serialised: the controller writes each command into
        # its data through this numpy view, the bytes are published as they are.
        self.command = SerializedArray(len(config.joints))
        self.command_view = self.command.values
        self.effort_msg = JointState()
        self.messages_received = 0
        self.received_at_diagnostics = 0
        self.callback_us: deque[float] = deque(maxlen=5000)  # receipt to publish
        self.last_diagnostics = time.monotonic()
        self.last_event_wall = -math.inf  # last clock reset
        self.get_logger().info(
            f"{model.name}: {model.nv} joints, mode '{config.mode}', commanding "
            f"{len(config.joints)} joints on {self.command_pub.topic_name}")

    # ---------------------------------------------------------------- inputs
    def on_joint_state(self, msg: JointState) -> None:
        # The 1 kHz path: each Python operation here costs several times its warm-loop
        # time (cold caches), so the stamp is read once, the message's arrays go to the
        # controller as they are (array('d')) and the command lands in the serialised
        # command message (SerializedArray).
        received = _monotonic()  # also the controller's steady clock
        self.messages_received += 1
        header_stamp = msg.header.stamp
        sec, nanosec = header_stamp.sec, header_stamp.nanosec
        if sec == 0 and nanosec == 0 and not self.sim_time:  # unstamped: the receive time
            header_stamp = self.get_clock().now().to_msg()
            sec, nanosec = header_stamp.sec, header_stamp.nanosec
        result = self.controller.joint_state(msg.name, msg.position, msg.velocity,
                                             sec + 1e-9 * nanosec, received, self.command_view)
        if result.event or result.reason is not None:
            self.report(result)
        if result.command is not None:
            self.publish_command(result.command, header_stamp, received)
            reference = self.controller.reference
            if reference.scaling is not None and reference.trajectory is not None:
                scaling = reference.scaling
                self.scaling_msg.data = [scaling.s, scaling.speed, scaling.acceleration]
                self.scaling_pub.publish(self.scaling_msg)

    def report(self, result: Result) -> None:
        """Log a clock reset or a rejection (throttled)."""
        if result.event:
            self.last_event_wall = time.monotonic()
            self.get_logger().warning(result.event, throttle_duration_sec=1.0)
        if result.reason == "missing_joints":
            self.get_logger().warning(f"waiting for joints: {result.message}",
                                      throttle_duration_sec=5.0)
        elif result.reason is not None:
            self.get_logger().warning(f"rejected joint state ({result.reason}): "
                                      f"{result.message}", throttle_duration_sec=1.0)

    def on_trajectory_raw(self, data: bytes) -> None:
        limit = int(self.values["trajectory.max_bytes"])
        if len(data) > limit:
            self.controller.rejected["trajectory"] += 1
            self.get_logger().warning(
                f"rejected trajectory: {len(data)} bytes serialised, more than "
                f"'trajectory.max_bytes' = {limit}", throttle_duration_sec=1.0)
            return
        self.on_trajectory(deserialize_message(data, JointTrajectory))

    def on_trajectory(self, msg: JointTrajectory) -> None:
        points = msg.points
        try:
            if not points:
                raise RneaError("trajectory has no points")
            times = np.array([stamp_seconds(p.time_from_start) for p in points])
            positions = np.array([p.positions for p in points], dtype=np.float64)
            has_vel = all(len(p.velocities) for p in points)
            has_acc = all(len(p.accelerations) for p in points)
            velocities = np.array([p.velocities for p in points]) if has_vel else None
            accelerations = np.array([p.accelerations for p in points]) if has_acc else None
            start = stamp_seconds(msg.header.stamp)
            if start == 0.0:  # "start now": the time of the latest joint state
                last = self.controller.last_state_time
                start = last if last is not None else self.get_clock().now().nanoseconds * 1e-9
            self.controller.trajectory(list(msg.joint_names), times, positions, velocities,
                                       accelerations, start)
        except (RneaError, ValueError) as exc:
            self.controller.rejected["trajectory"] += 1
            self.get_logger().warning(f"rejected trajectory: {exc}", throttle_duration_sec=1.0)

    def on_watchdog(self) -> None:
        was_stale = self.controller.stale
        command = self.controller.watchdog(out=self.command_view)
        if command is None:
            return
        if not was_stale:
            self.get_logger().error(
                f"no valid joint state for {self.controller.config.watchdog_timeout:g} s: "
                f"stale behaviour '{self.controller.config.stale_behavior}'")
        self.publish_command(command, self.get_clock().now().to_msg())

    def publish_command(self, command: np.ndarray, stamp: Any,
                        received: float | None = None) -> None:
        """Publish ``command`` (commanded-joint order), stamped ``stamp`` on ``~/efforts``;
        ``received``: the steady time the joint state arrived. The controller writes
        its commands into ``command_view``, inside the serialised command message:
        nothing to copy or convert then."""
        if command is not self.command_view:
            self.command_view[:] = command
        self.command_pub.publish(self.command.payload())
        if received is not None:  # receipt of the state to publication of the command
            self.callback_us.append((_monotonic() - received) * 1e6)
        if self.effort_pub is not None:
            self.effort_msg.header.stamp = stamp
            self.effort_msg.name = list(self.controller.config.joints)
            self.effort_msg.effort = self.command_view.tolist()
            self.effort_pub.publish(self.effort_msg)

    # ------------------------------------------------------------ parameters
    def on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        values = dict(self.values)
        for p in params:
            if p.name in CONTROLLER_PARAMETERS and CONTROLLER_PARAMETERS[p.name].read_only:
                return SetParametersResult(successful=False,
                                           reason=f"parameter '{p.name}' is read-only")
            values[p.name] = p.value
        try:
            config = controller_config(values, self.controller.base_model,
                                       self.controller.elastic)
            self.controller.configure(config)
        except (RneaError, ValueError, TypeError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self.values = values
        self.get_logger().info("parameters updated: " + ", ".join(p.name for p in params))
        return SetParametersResult(successful=True)

    # ----------------------------------------------------------- diagnostics
    def publish_diagnostics(self) -> None:
        c = self.controller
        now = time.monotonic()
        received = self.messages_received - self.received_at_diagnostics
        rate = received / max(now - self.last_diagnostics, 1e-9)
        self.received_at_diagnostics, self.last_diagnostics = self.messages_received, now
        p50, p99 = c.compute_percentiles()
        cb50, cb99 = (np.percentile(np.fromiter(self.callback_us, float), [50, 99])
                      if self.callback_us else (0.0, 0.0))
        level, message = DiagnosticStatus.OK, "computing"
        if c.last_valid_wall is None:
            level, message = DiagnosticStatus.WARN, "waiting for a complete joint state"
        if sum(c.rejected.values()):
            level, message = DiagnosticStatus.WARN, "rejecting some inputs"
        oracle_bad = c.oracle is not None and c.oracle_discrepancy > c.config.oracle_tolerance
        if oracle_bad:
            level, message = DiagnosticStatus.ERROR, "model disagrees with Pinocchio"
        if now - self.last_event_wall < 5.0:
            level, message = DiagnosticStatus.WARN, "clock reset: re-synchronised"
        if c.stale:
            level, message = DiagnosticStatus.ERROR, "watchdog: joint states stopped"
        values = {
            "mode": c.config.mode,
            "input rate [Hz]": f"{rate:.1f}",
            "compute p50 [us]": f"{p50:.1f}",
            "compute p99 [us]": f"{p99:.1f}",
            "receipt to publish p50 [us]": f"{cb50:.1f}",
            "receipt to publish p99 [us]": f"{cb99:.1f}",
            "received": str(self.messages_received),
            "accepted": str(c.accepted),
            "ignored (no model joint)": str(c.ignored),
            "commands": str(c.commands),
            "rejected": str(sum(c.rejected.values())),
            "saturated": str(c.saturated),
            "watchdog": "stale" if c.stale else "ok",
            "stale events": str(c.stale_events),
            "clock resets": str(c.clock_resets),
            "last clock jump [s]": f"{c.last_clock_jump:+.6f}",
            "oracle discrepancy": f"{c.oracle_discrepancy:.3e}" if c.oracle else "disabled",
            "rate limited": str(c.slew.limited) if c.slew else "disabled",
            "bad dt": str(c.slew.bad_dt) if c.slew else "disabled",
        }
        scaling = c.reference.scaling
        if scaling is not None:
            values["time scaling s_dot"] = f"{scaling.speed:.3f}"
            values["time scaling constraint"] = scaling.constraint
        values.update({f"rejected: {k}": str(v) for k, v in sorted(c.rejected.items())})
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: torque computation",
                                  message=message, hardware_id=c.base_model.name,
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(array)


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros controller``."""
    return run(NODE_NAME, ControllerNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
