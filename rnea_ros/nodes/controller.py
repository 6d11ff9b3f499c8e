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
``<joint>_motor`` and the commands are motor torques. With ``imu.topic`` it also
subscribes that ``sensor_msgs/Imu`` (best-effort QoS) and compensates the base's
motion (:mod:`rnea_ros.control.imu`); its state is a second status on
``/diagnostics`` (``<node>: imu``). The statuses are named after the node's
fully-qualified name (``/left/rnea_controller``), ``hardware_id`` the robot; a
status warns about rejected inputs (mimic, passive-encoder mismatches) while they
occurred in the last ``diagnostics_window`` seconds (10), the totals are key-values.
Mimic followers (URDF ``<mimic>``) are not coordinates: never required on
``joint_states``, never commanded; when published with their leader they are
checked against the coupling (``mimic.check``, ``mimic.tolerance``; a mismatch is
a WARN on ``/diagnostics``, the command is unaffected). Topic names are relative
(``<namespace>/joint_states``) except ``/diagnostics``, and remappable. Parameters: see
``rnea_ros/params/controller.yaml`` (``python -m rnea_ros.parameters controller``) and
``config/arm7_controller.yaml``. With ``contact.enable``: the contact topics and
``~/rearm_contact`` of :mod:`rnea_ros.nodes.contact_ports`. The logic lives in
:class:`rnea_ros.control.controller.TorqueController`.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.control.closed_loop import ClosedLoopController
from rnea_ros.control.config import CONTROLLER_PARAMETERS, controller_config
from rnea_ros.control.controller import Result
from rnea_ros.control.controller_status import ControllerReport
from rnea_ros.control.diagnostics import status_name
from rnea_ros.control.factory import build_controller
from rnea_ros.control.freshness import watchdog_period
from rnea_ros.control.imu import ImuSample, provided
from rnea_ros.core.errors import RneaError
from rnea_ros.nodes.common import SerializedArray, note_robot, run, stamp_seconds, steady_timer
from rnea_ros.nodes.contact_ports import ContactPorts
from rnea_ros.nodes.parameters import declare, watch
from rnea_ros.nodes.shedding import NewestOnly, joint_names

NODE_NAME = "rnea_controller"
_monotonic = time.monotonic
LEVELS = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN,
          "error": DiagnosticStatus.ERROR}
STATE_QOS = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=10,
                       reliability=QoSReliabilityPolicy.BEST_EFFORT,
                       durability=QoSDurabilityPolicy.VOLATILE)


class ControllerNode(Node):
    """rclpy adapter around :class:`TorqueController`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self.values = declare(self, CONTROLLER_PARAMETERS)
        # (note_robot: its kernels compile next, on a cold cache)
        self.controller, model = build_controller(self.values, lambda m: note_robot(m.name))
        self.loops = self.controller.loops if isinstance(
            self.controller, ClosedLoopController) else None
        self.warm_other_modes()
        config = self.controller.config
        self.command_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                                 10)
        self.effort_pub = (self.create_publisher(JointState, "~/efforts", 10)
                           if config.params.publish_effort_state else None)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # Introspection of the predictive time scaling: [s, s_dot, s_ddot].
        self.scaling_pub = self.create_publisher(Float64MultiArray, "~/time_scaling", 10)
        self.scaling_msg = Float64MultiArray()
        # contact.enable: ~/external_torque, ~/external_wrench, ~/contact, ~/rearm_contact
        self.contact = (ContactPorts(self, self.controller)
                        if config.params.contact.enable else None)
        self.imu_state = ""  # the IMU's state last logged
        if config.imu is not None:  # (before joint_states: taken first when both are ready)
            self.imu_sub = self.create_subscription(
                Imu, config.imu.topic, self.on_imu, STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies())
            steady_timer(self, 0.05, self.on_imu_watch)
        self.state_sub = self.create_subscription(
            JointState, "joint_states", self.on_joint_state, STATE_QOS,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())
        # A backlog of states (a flood, a stall) is shed to the newest of each name set.
        self.intake = NewestOnly(self.state_sub, joint_names)
        # Raw: the size is checked before rclpy deserialises (slowly, in Python).
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self.on_trajectory_raw,
                                 10, raw=True)
        watch(self, CONTROLLER_PARAMETERS, self.on_set_parameters)
        # Steady clocks: the watchdog must fire when (simulated) time stops with the states.
        # Its period follows watchdog_timeout and grace, at runtime too (control/freshness.py).
        self.watchdog_period = watchdog_period(config.watchdog_timeout, config.watchdog_grace)
        self.watchdog_timer = steady_timer(self, self.watchdog_period, self.on_watchdog)
        self.diagnostics_timer = steady_timer(self, config.params.diagnostics_period,
                                              self.publish_diagnostics)
        # On simulated time, 0 is a real stamp (the simulation's start), not "unstamped".
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        if self.sim_time:  # the rate limit's receipt clock: /clock, under the clock rule
            self.controller.use_plant_clock(lambda: self.get_clock().now().nanoseconds * 1e-9)
        # The command message, kept serialised: the controller writes each command into
        # its data through this numpy view, the bytes are published as they are.
        self.command = SerializedArray(len(config.joints))
        self.command_view = self.command.values
        self.effort_msg = JointState()
        self.messages_received = 0
        # /diagnostics' bookkeeping: counters over the last diagnostics_window s (what the
        # status warns about), the receipt-to-publish times [us], the last clock reset.
        self.status_report = ControllerReport(config.params.diagnostics_window)
        self.callback_us = self.status_report.callback_us
        self.stale_since = math.nan  # steady time the watchdog fired; nan: not stale
        followers = (f" (mimic followers, not commanded: {', '.join(model.mimic_joints)})"
                     if model.mimic_joints else "")
        self.get_logger().info(
            f"{model.name}: {model.nv} joints{followers}, mode '{config.mode}', commanding "
            f"{len(config.joints)} joints on {self.command_pub.topic_name}")
        if config.imu is not None:
            self.get_logger().info(
                f"moving base: IMU on link '{config.imu.link}' from "
                f"{self.imu_sub.topic_name}, fallback '{config.imu.fallback}'")
        if self.loops is not None:
            self.get_logger().info(
                f"{model.name}: closed loops {', '.join(loop.name for loop in self.loops.loops)}"
                f"; active joints {', '.join(self.loops.active_names)} (measured and "
                f"commanded), passive joints {', '.join(self.loops.passive_names)} solved "
                "from them (passive encoders on joint_states: a consistency check)")

    def warm_other_modes(self) -> None:
        """Configure the controller once in every other mode (and elastic law) this robot
        accepts, then back: their kernels are compiled (or loaded) now, not in the
        parameter callback of a runtime switch nor at the first state after it (issue 35).
        The choices are the parameter table's."""
        c, values = self.controller, self.values
        current = c.config
        laws = CONTROLLER_PARAMETERS["elastic.law"].choices
        for mode in CONTROLLER_PARAMETERS["mode"].choices:
            for law in laws if mode == "elastic" else (values["elastic.law"],):
                if (mode, law) == (values["mode"], values["elastic.law"]):
                    continue
                try:
                    other = controller_config({**values, "mode": mode, "elastic.law": law},
                                              c.base_model, c.elastic, self.loops)
                except (RneaError, ValueError, TypeError):
                    continue  # (not a mode of this robot)
                c.configure(other)
        c.configure(current)

    # ---------------------------------------------------------------- inputs
    def on_joint_state(self, msg: JointState) -> None:
        """The newest queued state of each name set (:class:`NewestOnly`: the older ones
        shed and counted), each handled by :meth:`handle_state`."""
        for newest in self.intake.newest(msg):
            self.handle_state(newest)
        self.messages_received = self.intake.taken  # (handled or shed)
        self.status_report.shed = self.intake.shed

    def handle_state(self, msg: JointState) -> None:
        """One joint state: its command, or its rejection logged."""
        # The 1 kHz path: each Python operation here costs several times its warm-loop
        # time (cold caches), so the stamp is read once, the message's arrays go to the
        # controller as they are (array('d')) and the command lands in the serialised
        # command message (SerializedArray).
        received = _monotonic()  # also the controller's steady clock
        header_stamp = msg.header.stamp
        sec, nanosec = header_stamp.sec, header_stamp.nanosec
        if sec == 0 and nanosec == 0 and not self.sim_time:  # unstamped: the receive time
            header_stamp = self.get_clock().now().to_msg()
            sec, nanosec = header_stamp.sec, header_stamp.nanosec
        t = sec + 1e-9 * nanosec
        result = self.controller.joint_state(msg.name, msg.position, msg.velocity, t,
                                             received, self.command_view)
        if result.event or result.reason is not None or result.warning:
            self.report(result)
        rule = self.controller.plant_clock
        if rule is not None and rule.event:  # /clock jumped or stopped (the clock rule)
            self.get_logger().warning(rule.event, throttle_duration_sec=1.0)
        if self.stale_since == self.stale_since:  # (not nan) stale: log when states resume
            self.log_resumed(received)
        if result.command is not None:
            contact = self.contact
            if contact is not None and contact.supervisor.latched is not None:
                contact.react(t, result.command)  # a latched reaction replaces the command
            self.publish_command(result.command, header_stamp, received)
            if contact is not None:  # the monitor, events, ~/external_torque
                contact.after(msg.name, msg.effort, t, header_stamp, result.command)
            reference = self.controller.reference
            if reference.scaling is not None and reference.trajectory is not None:
                scaling = reference.scaling
                self.scaling_msg.data = [scaling.s, scaling.speed, scaling.acceleration]
                self.scaling_pub.publish(self.scaling_msg)
        if self.loops is not None:
            assert isinstance(self.controller, ClosedLoopController)
            alarm = self.controller.passive_alarm
            if alarm:
                self.get_logger().warning(alarm, throttle_duration_sec=1.0)

    def log_resumed(self, now: float) -> None:
        """One INFO line when valid joint states resume after the watchdog fired."""
        if not self.controller.stale:
            self.get_logger().info(f"joint states resumed {now - self.stale_since:.2f} s after "
                                   "the watchdog fired: commands computed again",
                                   throttle_duration_sec=1.0)
            self.stale_since = math.nan

    def report(self, result: Result) -> None:
        """Log a clock reset or a rejection (throttled)."""
        if result.event:
            self.status_report.last_event_wall = time.monotonic()
            self.get_logger().warning(result.event, throttle_duration_sec=1.0)
        if result.warning:
            self.get_logger().warning(result.warning, throttle_duration_sec=2.0)
        if result.reason == "missing_joints":
            self.get_logger().warning(f"waiting for joints: {result.message}",
                                      throttle_duration_sec=5.0)
        elif result.reason is not None:
            self.get_logger().warning(f"rejected joint state ({result.reason}): "
                                      f"{result.message}", throttle_duration_sec=1.0)

    def on_imu(self, msg: Imu) -> None:
        """A ``sensor_msgs/Imu`` sample (REP-145: a field whose covariance starts with -1
        is not provided)."""
        stamp = stamp_seconds(msg.header.stamp)
        if stamp == 0.0 and not self.sim_time:  # unstamped: the receive time
            stamp = self.get_clock().now().nanoseconds * 1e-9
        o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        sample = ImuSample(
            stamp, msg.header.frame_id,
            np.array([o.x, o.y, o.z, o.w]) if provided(msg.orientation_covariance) else None,
            np.array([w.x, w.y, w.z]) if provided(msg.angular_velocity_covariance) else None,
            np.array([a.x, a.y, a.z]) if provided(msg.linear_acceleration_covariance)
            else None)
        result = self.controller.imu_sample(sample)
        if result.event:
            self.get_logger().warning(result.event, throttle_duration_sec=1.0)
        if result.reason is not None:
            self.get_logger().warning(f"rejected IMU sample ({result.reason}): "
                                      f"{result.message}", throttle_duration_sec=1.0)

    def on_imu_watch(self) -> None:
        """Log the IMU's transitions (fresh, stale, recovered) as they happen."""
        imu = self.controller.imu
        if imu is None or imu.state == self.imu_state or \
                (imu.state == "waiting" and imu.fallback_steps == 0):  # not computing yet
            return
        previous, self.imu_state = self.imu_state, imu.state
        level, message = imu.status()
        if imu.state == "ok":
            self.get_logger().info("IMU fresh" + (" again: moving-base compensation resumed"
                                                  if previous == "stale" else ""))
        elif level == "error":
            self.get_logger().error(message)
        else:
            self.get_logger().warning(message)

    def on_trajectory_raw(self, data: bytes) -> None:
        limit = self.controller.config.params.trajectory.max_bytes
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
            self.stale_since = _monotonic()
            self.get_logger().error(
                f"no valid joint state for {self.controller.config.watchdog_timeout:g} s + "
                f"{self.controller.config.watchdog_grace:g} s grace: "
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
        """A runtime change (read-only flags and ranges checked by the table already):
        validated against the model, then applied."""
        values = {**self.values, **{p.name: p.value for p in params}}
        try:
            config = controller_config(values, self.controller.base_model,
                                       self.controller.elastic, self.loops)
            self.controller.configure(config)
            if self.contact is not None:
                self.contact.reconfigure(self.controller)
        except (RneaError, ValueError, TypeError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        look = watchdog_period(config.watchdog_timeout, config.watchdog_grace)
        if look != self.watchdog_period:  # the reaction: <= timeout + grace + look
            self.destroy_timer(self.watchdog_timer)
            self.watchdog_period = look
            self.watchdog_timer = steady_timer(self, look, self.on_watchdog)
        period = config.params.diagnostics_period  # (within the table's safety bounds)
        if period != float(self.values["diagnostics_period"]):
            self.destroy_timer(self.diagnostics_timer)
            self.diagnostics_timer = steady_timer(self, period, self.publish_diagnostics)
        self.status_report.window.window = config.params.diagnostics_window
        self.values = values
        self.get_logger().info("parameters updated: " + ", ".join(p.name for p in params))
        return SetParametersResult(successful=True)

    # ----------------------------------------------------------- diagnostics
    def publish_diagnostics(self) -> None:
        """The statuses of :class:`~rnea_ros.control.controller_status.ControllerReport`
        (the computation's, the IMU's), named after the node's fully-qualified name."""
        c = self.controller
        imu_topic = self.imu_sub.topic_name if c.imu is not None else ""
        reports = self.status_report.statuses(c, self.messages_received, imu_topic=imu_topic)
        node = self.get_fully_qualified_name()
        statuses = [DiagnosticStatus(
            level=LEVELS[s.level], name=status_name(node, "imu" if k else ""),
            message=s.message, hardware_id=c.base_model.name,
            values=[KeyValue(key=key, value=value) for key, value in s.values.items()])
            for k, s in enumerate(reports)]
        if self.contact is not None:
            statuses.append(self.contact.status(node, c.base_model.name))
        array = DiagnosticArray(status=statuses)
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(array)


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros controller``."""
    return run(NODE_NAME, ControllerNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
