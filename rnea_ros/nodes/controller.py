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
``~/rearm_contact`` of :mod:`rnea_ros.nodes.contact_ports`. With
``robot_description_source: topic`` the model comes from the ``robot_description`` topic
(:mod:`rnea_ros.nodes.description`): the node waits for it, then configures. The logic:
:class:`rnea_ros.control.controller.TorqueController`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from rclpy.qos_overriding_options import QoSOverridingOptions
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from rnea_ros.control.config import CONTROLLER_PARAMETERS, controller_config
from rnea_ros.control.controller import Result, TorqueController
from rnea_ros.control.controller_status import ControllerReport
from rnea_ros.control.diagnostics import status_name
from rnea_ros.control.factory import build_controller
from rnea_ros.control.freshness import watchdog_period
from rnea_ros.control.imu import ImuSample, provided
from rnea_ros.core.errors import ParameterError, RneaError
from rnea_ros.nodes.common import (
    SerializedArray,
    note_robot,
    retime,
    run,
    stamp_seconds,
    steady_timer,
)
from rnea_ros.nodes.contact_ports import ContactPorts
from rnea_ros.nodes.description import wait_for_description
from rnea_ros.nodes.lifecycle import ManagedNode
from rnea_ros.nodes.parameters import watch
from rnea_ros.nodes.shedding import NewestOnly, joint_names
from rnea_ros.nodes.warm_up import BackgroundWarmUp, configure_other_modes
from rnea_ros.parameters import parameter_set

NODE_NAME = "rnea_controller"
_monotonic = time.monotonic
LEVELS = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN,
          "error": DiagnosticStatus.ERROR}
STATE_QOS = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=10,
                       reliability=QoSReliabilityPolicy.BEST_EFFORT,
                       durability=QoSDurabilityPolicy.VOLATILE)


def load_controller(values: dict[str, Any]) -> tuple[TorqueController, Any]:
    """The configure step's model loading: the controller of parameter ``values`` and
    its robot model (:func:`~rnea_ros.control.factory.build_controller`; the robot named
    in the start-up's compile report before its kernels compile)."""
    return build_controller(values, lambda m: note_robot(m.name))


class ControllerNode(ManagedNode):
    """rclpy adapter around :class:`TorqueController`, a managed node
    (:mod:`rnea_ros.nodes.lifecycle`): the topics, the diagnostics and their timer
    exist in every state; the model, the controller and what depends on its
    configuration come with configure (:meth:`configure_node`) and go with cleanup."""

    def __init__(self, *, background_warm_up: bool = False, **kwargs: Any) -> None:
        """``background_warm_up``: the other modes' kernels compile in a thread after the
        first command (:mod:`rnea_ros.nodes.warm_up`; what ``rnea-controller`` does)
        instead of during configure."""
        super().__init__(NODE_NAME, CONTROLLER_PARAMETERS, **kwargs)
        self.background_warm_up = background_warm_up
        self.warm_up: BackgroundWarmUp | None = None
        self.warm_pending = False  # the background warm-up starts after the first command
        start = parameter_set(CONTROLLER_PARAMETERS, self.values)  # typed, by dotted name
        # None while unconfigured (typed as configured: the callbacks that use it run only
        # in a configured state, and check it where they may run in another).
        self.controller: TorqueController = None  # type: ignore[assignment]
        self.loops: Any = None
        self.contact: ContactPorts | None = None
        self.effort_pub: Any = None
        self.imu_sub: Any = None
        self.watchdog_timer: Any = None  # made by configure (its period: watchdog_period)
        self.watchdog_period = math.nan
        self.command_pub = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                                 10)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.state_sub = self.subscribe_states()
        # A backlog of states (a flood, a stall) is shed to the newest of each name set.
        self.intake = NewestOnly(self.state_sub, joint_names)
        # Raw: the size is checked before rclpy deserialises (slowly, in Python).
        self.create_subscription(JointTrajectory, "~/joint_trajectory", self.on_trajectory_raw,
                                 10, raw=True)
        watch(self, CONTROLLER_PARAMETERS, self.on_set_parameters)
        # On simulated time, 0 is a real stamp (the simulation's start), not "unstamped".
        self.sim_time = bool(self.get_parameter("use_sim_time").value)
        self.effort_msg = JointState()
        self.messages_received = 0
        self.inactive_states = 0  # joint states received while not active (not handled)
        # /diagnostics' bookkeeping: counters over the last diagnostics_window s (what the
        # status warns about), the receipt-to-publish times [us], the last clock reset.
        self.status_report = ControllerReport(start.diagnostics_window)
        self.callback_us = self.status_report.callback_us
        self.stale_since = math.nan  # steady time the watchdog fired; nan: not stale
        self.answered_stamp: Any = None  # header stamp of the state answered last
        self.diagnostics_timer = steady_timer(self, start.diagnostics_period,
                                              self.publish_diagnostics)
        # robot_description_source: topic -- configured with the first description that
        # builds (autostart); until then a configure is refused with what it waits for.
        self.description_text = ""
        self.description = wait_for_description(self, self.values, CONTROLLER_PARAMETERS,
                                                self.start_described)
        if self.description is None:
            self.start()

    def start_described(self, values: dict[str, Any]) -> None:
        """A description arrived on the topic (``values['robot_description']``): bring the
        node up to ``autostart`` with it (a failing configure raises: the waiter logs it
        and keeps waiting)."""
        self.description_text = parameter_set(CONTROLLER_PARAMETERS, values).robot_description
        self.start()

    # ------------------------------------------------------------- lifecycle
    def configure_node(self) -> None:
        """Load the model (:func:`load_controller`), warm every mode's kernels, create
        what the configuration needs (``~/efforts``, the IMU, the contact ports, the
        watchdog)."""
        values = self.refresh_values()
        if self.description is not None:  # robot_description_source: topic
            if not self.description_text:
                raise ParameterError(self.description.waiting_line())
            values = self.values = {**values, "robot_description": self.description_text}
        self.controller, model = load_controller(values)
        self.loops = self.controller.loops
        if self.background_warm_up:  # the first command comes sooner on a cold cache
            self.warm_up = BackgroundWarmUp(self.warm_copy, values, self.get_logger().info)
        else:
            self.warm_other_modes()
        self.warm_pending = self.warm_up is not None  # started after the first command
        config = self.controller.config
        made = self.configured_entities
        self.effort_pub = (self.create_publisher(JointState, "~/efforts", 10)
                           if config.params.publish_effort_state else None)
        # Introspection of the predictive time scaling: [s, s_dot, s_ddot].
        self.scaling_pub = self.create_publisher(Float64MultiArray, "~/time_scaling", 10)
        self.scaling_msg = Float64MultiArray()
        made += [p for p in (self.effort_pub, self.scaling_pub) if p is not None]
        # contact.enable: ~/external_torque, ~/external_wrench, ~/contact, ~/rearm_contact
        self.contact = (ContactPorts(self, self.controller)
                        if config.params.contact.enable else None)
        if self.contact is not None:
            made += [self.contact.torque_pub, self.contact.wrench_pub, self.contact.event_pub,
                     self.contact.rearm_srv]
        self.imu_state = ""  # the IMU's state last logged
        if config.imu is not None:
            self.imu_sub = self.create_subscription(
                Imu, config.imu.topic, self.on_imu, STATE_QOS,
                qos_overriding_options=QoSOverridingOptions.with_default_policies())
            made += [self.imu_sub, steady_timer(self, 0.05, self.on_imu_watch)]
            # joint_states subscribed again, after the IMU: the executor serves ready
            # subscriptions in creation order, so a sample and a state ready together
            # are taken IMU first
            self.destroy_subscription(self.state_sub)
            self.state_sub = self.intake.subscription = self.subscribe_states()
        # Steady clocks: the watchdog must fire when (simulated) time stops with the states.
        # Its period follows watchdog_timeout and grace, at runtime too (control/freshness.py).
        self.watchdog_period = watchdog_period(config.watchdog_timeout, config.watchdog_grace)
        self.watchdog_timer = steady_timer(self, self.watchdog_period, self.on_watchdog)
        made.append(self.watchdog_timer)
        if self.sim_time:  # the rate limit's receipt clock: /clock, under the clock rule
            self.controller.use_plant_clock(lambda: self.get_clock().now().nanoseconds * 1e-9)
        # The command message, kept serialised: the controller writes each command into
        # its data through this numpy view, the bytes are published as they are.
        self.command = SerializedArray(len(config.joints))
        self.command_view = self.command.values
        self.status_report.window.window = config.params.diagnostics_window
        self.log_configuration(model)

    def subscribe_states(self) -> Any:
        """The ``joint_states`` subscription (best effort, QoS overrides allowed)."""
        return self.create_subscription(
            JointState, "joint_states", self.on_joint_state, STATE_QOS,
            qos_overriding_options=QoSOverridingOptions.with_default_policies())

    def log_configuration(self, model: Any) -> None:
        """What was configured: the robot, the mode, the joints, the IMU, the loops."""
        assert self.controller is not None
        config = self.controller.config
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

    def activate_node(self) -> None:
        """Command from the pose at activation (bumpless): the reference is released, so
        the first state after activation is the pose held until a trajectory comes
        (as at a mode switch); the watchdog restarts from that state."""
        c = self.controller
        assert c is not None
        c.reference.release()
        c.last_valid_wall = None
        c.stale = False
        self.stale_since = math.nan

    def deactivate_node(self) -> None:
        """The final command: the stale behaviour's (``hold``: gravity at the last valid
        pose; ``zero``), through the same limits as every command; nothing after it."""
        c = self.controller
        if c is None or not self.active:
            return
        if c.last_valid_wall is None:  # no state since activation: nothing was commanded
            return
        command = c._output(c.stale_torque(), _monotonic(), math.nan, self.command_view)
        self.publish_command(command, self.unanswering_stamp())

    def cleanup_node(self) -> None:
        """Release the model, the controller and what configure made."""
        self.destroy_configured()
        self.controller = None  # type: ignore[assignment]
        self.loops = self.contact = self.effort_pub = self.imu_sub = None
        self.watchdog_timer, self.watchdog_period = None, math.nan

    def warm_other_modes(self) -> None:
        """Configure the controller once in every other mode (and elastic law) this robot
        accepts, then back: their kernels are compiled (or loaded) now, not in the
        parameter callback of a runtime switch nor at the first state after it (issue 35).
        The choices are the parameter table's."""
        configure_other_modes(self.controller, self.values, self.loops)

    def warm_copy(self, values: Mapping[str, Any]) -> None:
        """:meth:`warm_other_modes` on a copy of the controller (the background warm-up's
        thread: the live one is never touched from there)."""
        controller, _ = build_controller(values)
        configure_other_modes(controller, values, controller.loops)

    # ---------------------------------------------------------------- inputs
    def on_joint_state(self, msg: JointState) -> None:
        """The newest queued state of each name set (:class:`NewestOnly`: the older ones
        shed and counted), each handled by :meth:`handle_state`; while not active only
        counted. An exception ends in error processing (:meth:`ManagedNode.fail`)."""
        if not self.active:
            self.inactive_states += 1
            return
        try:
            for newest in self.intake.newest(msg):
                self.handle_state(newest)
        except Exception as exc:  # never a crash: error processing
            self.fail(f"joint state callback failed: {type(exc).__name__}: {exc}")
            return
        self.messages_received = self.intake.taken  # (handled or shed)
        self.status_report.shed = self.intake.shed

    def handle_state(self, msg: JointState) -> None:
        """One joint state: its command, or its rejection logged."""
        # The 1 kHz path (cold caches): the stamp read once, the message's arrays passed as
        # they are (array('d')), the command written into the serialised message.
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
            self.answered_stamp = header_stamp
            if contact is not None:  # the monitor, events, ~/external_torque
                contact.after(msg.name, msg.effort, t, header_stamp, result.command)
            reference = self.controller.reference
            if reference.scaling is not None and reference.trajectory is not None:
                scaling = reference.scaling
                self.scaling_msg.data = [scaling.s, scaling.speed, scaling.acceleration]
                self.scaling_pub.publish(self.scaling_msg)
        alarm = self.controller.passive_alarm  # closed loops: a passive encoder off
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
        is not provided); taken in every configured state (the base's estimate is
        current at activation)."""
        if self.controller is None:
            return
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
        if self.controller is None:
            return
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
        if not self.active:  # (a reference for a controller not commanding: refused)
            if self.controller is not None:
                self.controller.rejected["inactive"] += 1
            self.get_logger().warning(f"rejected trajectory: the controller is "
                                      f"{self.state_label}, not active",
                                      throttle_duration_sec=1.0)
            return
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
        if not self.active:
            return
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
        self.publish_command(command, self.unanswering_stamp())

    def unanswering_stamp(self) -> Any:
        """``~/efforts`` stamp of a command answering no new state (watchdog, deactivation):
        the state answered last, so a lockstep simulator on stamped answers
        (``lockstep_answers``) never steps on it; the clock's time before any answer."""
        return self.answered_stamp or self.get_clock().now().to_msg()

    def publish_command(self, command: np.ndarray, stamp: Any,
                        received: float | None = None) -> None:
        """Publish ``command`` (commanded-joint order), stamped ``stamp`` on ``~/efforts``;
        ``received``: the steady time the joint state arrived. The controller writes
        its commands into ``command_view``, inside the serialised command message:
        nothing to copy or convert then."""
        if not self.active:  # (nothing is published unless active)
            return
        if command is not self.command_view:
            self.command_view[:] = command
        self.command_pub.publish(self.command.payload())
        if self.warm_pending and self.warm_up is not None:  # the first command is out:
            self.warm_pending = False  # the other modes' kernels now
            self.warm_up.start()
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
        if self.controller is None:  # unconfigured: checked by the next configure
            self.set_diagnostics_period(
                parameter_set(CONTROLLER_PARAMETERS, values).diagnostics_period)
            self.values = values
            return SetParametersResult(successful=True)
        switching = any(values[k] != self.values[k] for k in ("mode", "elastic.law"))
        waiting = self.warm_up.refusal() if self.warm_up is not None and switching else None
        if waiting is not None:
            return SetParametersResult(successful=False, reason=waiting)
        try:
            config = controller_config(values, self.controller.base_model,
                                       self.controller.elastic, self.loops)
            self.controller.configure(config)
            if self.contact is not None:
                self.contact.reconfigure(self.controller)
        except (RneaError, ValueError, TypeError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if self.watchdog_timer is not None:  # the reaction: <= timeout + grace + period
            self.watchdog_period = watchdog_period(config.watchdog_timeout,
                                                   config.watchdog_grace)
            self.watchdog_timer = retime(self, self.watchdog_timer, self.watchdog_period,
                                         self.on_watchdog, self.configured_entities)
        self.set_diagnostics_period(config.params.diagnostics_period)
        self.status_report.window.window = config.params.diagnostics_window
        self.values = values
        self.get_logger().info("parameters updated: " + ", ".join(p.name for p in params))
        return SetParametersResult(successful=True)

    def set_diagnostics_period(self, period: float) -> None:
        """``/diagnostics`` every ``period`` s (within the table's safety bounds)."""
        self.diagnostics_timer = retime(self, self.diagnostics_timer, period,
                                        self.publish_diagnostics)

    # ----------------------------------------------------------- diagnostics
    def publish_diagnostics(self) -> None:
        """The statuses of :class:`~rnea_ros.control.controller_status.ControllerReport`
        (the computation's, the IMU's), named after the node's fully-qualified name, in
        every lifecycle state (:meth:`lifecycle_status`)."""
        if self.finalized:  # (shut down: nothing more is published)
            return
        c = self.controller
        node = self.get_fully_qualified_name()
        if c is None:  # unconfigured
            self.diagnostics_pub.publish(self.lifecycle_status(node))
            return
        imu_topic = self.imu_sub.topic_name if c.imu is not None else ""
        reports = self.status_report.statuses(c, self.messages_received, imu_topic=imu_topic)
        statuses = [DiagnosticStatus(
            level=LEVELS[s.level], name=status_name(node, "imu" if k else ""),
            message=s.message, hardware_id=c.base_model.name,
            values=[KeyValue(key=key, value=value) for key, value in s.values.items()])
            for k, s in enumerate(reports)]
        if self.contact is not None:
            statuses.append(self.contact.status(node, c.base_model.name))
        state = self.lifecycle_values()
        main = statuses[0]
        main.values += [KeyValue(key=k, value=v) for k, v in state.items()]
        if not self.active:  # configured, not commanding: said first, at least a WARN
            main.level = max(main.level, DiagnosticStatus.WARN)
            main.message = f"{self.state_label}, not commanding: {main.message}"
        array = DiagnosticArray(status=statuses)
        array.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(array)


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros controller``."""
    return run(NODE_NAME, lambda: ControllerNode(background_warm_up=True), args)


if __name__ == "__main__":
    raise SystemExit(main())
