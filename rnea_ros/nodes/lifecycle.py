"""Managed (lifecycle) nodes: the controller and the rate limiter as ``rclpy.lifecycle``
nodes, the way ros2_control's controllers and Nav2's servers are brought up.

The states and transitions are the ROS 2 managed-node design's
(https://design.ros2.org/articles/node_lifecycle.html), served by rclpy on
``~/change_state``, ``~/get_state``, ``~/get_available_states`` and
``~/get_available_transitions`` (``lifecycle_msgs``). :class:`ManagedNode` maps them
onto four hooks a node implements:

=================  ==========================================================
transition         hook (its failure)
=================  ==========================================================
configure          :meth:`~ManagedNode.configure_node`: load the model, build and
                   warm the kernels, check the parameters. A configuration error
                   (:data:`CONFIG_ERRORS`) returns FAILURE: the node stays
                   *unconfigured*, the reason logged and on ``/diagnostics``;
                   anything else returns ERROR (error processing, below).
activate           :meth:`~ManagedNode.activate_node`: start commanding.
deactivate         :meth:`~ManagedNode.deactivate_node`: a final command, then
                   nothing.
cleanup            :meth:`~ManagedNode.cleanup_node`: release the model.
shutdown           from any state: the final command if it was active, release.
error processing   after an ERROR of a transition or :meth:`~ManagedNode.fail`
                   (an exception in a callback): the final command if it was
                   active, release; then *unconfigured*, the reason kept on
                   ``/diagnostics`` until the next successful configure.
=================  ==========================================================

``autostart`` (each node's parameter table) says how far the node brings itself up
when it is built: ``active`` (configure and activate: what ``ros2 run`` and the
launch files do by default), ``inactive`` (configure only: ros2_control's spawner
``--inactive``, the launch files' ``start_inactive:=true``) or ``unconfigured``
(a lifecycle manager drives it). A configure that fails during ``autostart``
raises its error from the constructor, so the process ends with one line and exit
status 1 as before (:func:`rnea_ros.nodes.common.run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.exceptions import ParameterException
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.publisher import Publisher
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.timer import Timer

from rnea_ros.control.diagnostics import status_name
from rnea_ros.core.errors import RneaError
from rnea_ros.nodes.parameters import declare
from rnea_ros.parameters import ParameterSpec

__all__ = ["CONFIG_ERRORS", "ManagedNode"]

# A configure that raises one of these failed on its input (a parameter, a file): FAILURE.
CONFIG_ERRORS = (RneaError, ParameterException, ValueError, TypeError, OSError)
SUCCESS, FAILURE, ERROR = (TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE,
                           TransitionCallbackReturn.ERROR)


class ManagedNode(LifecycleNode):
    """A lifecycle node whose parameter table (``rnea_ros/params/<node>.yaml``) is
    declared at construction; subclasses implement the hooks and call :meth:`start`
    at the end of their constructor."""

    def __init__(self, name: str, table: Mapping[str, ParameterSpec], **kwargs: Any) -> None:
        self.destroyed = False  # destroy_node ran: no state machine any more
        super().__init__(name, **kwargs)
        self.table = table
        self.values = declare(self, table)
        self.active = False  # commands are published only while True
        self.configured = False
        self.reason = ""  # why the last configure failed or the node went to error
        self.failure: BaseException | None = None  # the last configure's exception
        self.failing = False  # fail() is deactivating the node: the transition errs
        self.starting = False  # autostart's configure: a failure is raised, not logged
        self.configured_entities: list[Any] = []  # made by configure, gone at cleanup

    # -------------------------------------------------------------- the hooks
    def configure_node(self) -> None:
        """Load, build and check everything the node needs (raise to refuse)."""

    def activate_node(self) -> None:
        """Start commanding."""

    def deactivate_node(self) -> None:
        """Publish the final command (the node is still active)."""

    def cleanup_node(self) -> None:
        """Release what :meth:`configure_node` made (also after a partial configure)."""

    def destroy_configured(self) -> None:
        """Destroy the publishers, subscriptions, services and timers listed in
        :attr:`configured_entities` (what a configure made)."""
        for entity in self.configured_entities:
            if isinstance(entity, Timer):
                self.destroy_timer(entity)
            elif isinstance(entity, Publisher):
                self.destroy_publisher(entity)
            elif isinstance(entity, Subscription):
                self.destroy_subscription(entity)
            elif isinstance(entity, Service):
                self.destroy_service(entity)
        self.configured_entities = []

    # -------------------------------------------------------------- the state
    @property
    def state_label(self) -> str:
        """The current lifecycle state: ``unconfigured``, ``inactive``, ``active``,
        ``finalized`` or a transition state (``configuring``, …); ``destroyed`` after
        :meth:`destroy_node`."""
        if self.destroyed:
            return "destroyed"
        return str(self._state_machine.current_state[1])

    def destroy_node(self) -> None:
        """Destroy the node and its lifecycle state machine.

        rclpy's ``LifecycleNode.destroy_node`` leaves the state machine
        (``_rclpy.LifecycleStateMachine``): it holds the rcl node (its services and
        transition publisher are the node's), so the node -- and with the last node of
        its context, rmw_fastrtps' DDS participant and its UDP sockets -- outlived
        ``destroy_node`` and ``rclpy.shutdown`` until the garbage collector reached
        this object, never when a ``gc.freeze()`` had moved it out of the collector's
        reach (the test harness; :func:`rnea_ros.nodes.common.run`). Measured: a
        context's 5 UDP sockets left after each controller or rate limiter; after a
        module of node tests, 8-28. Late in a test session the participants left took
        the few participant indices Fast DDS probes on localhost, and another process
        no longer discovered this one (issue 35)."""
        if self.destroyed:
            return
        super().destroy_node()
        self.destroyed = True
        machine = getattr(self, "_state_machine", None)  # (None: rclpy's init failed)
        if machine is not None:
            machine.destroy_when_not_in_use()

    @property
    def finalized(self) -> bool:
        """Shut down: the node publishes nothing more, ``/diagnostics`` included."""
        return self.state_label == "finalized"

    def start(self) -> None:
        """Bring the node up to ``autostart``; a failing configure raises its error."""
        target = self.values.get("autostart", "active")
        if target == "unconfigured":
            self.get_logger().info("unconfigured: waiting for the configure transition")
            return
        self.starting = True
        try:
            self.trigger_configure()
        finally:
            self.starting = False
        if not self.configured:
            raise self.failure if self.failure is not None else RneaError(self.reason)
        if target == "active":
            self.trigger_activate()

    def refresh_values(self) -> dict[str, Any]:
        """The table's parameters as they are now (a configure re-reads them)."""
        self.values = {name: self.get_parameter(name).value for name in self.table}
        return self.values

    # ------------------------------------------------------- the transitions
    def _attempt(self, what: str, step: Callable[[], None]) -> TransitionCallbackReturn:
        """Run a hook: SUCCESS; a configuration error FAILURE, anything else ERROR (the
        reason kept and logged)."""
        try:
            step()
        except CONFIG_ERRORS as exc:
            self.failure, self.reason = exc, f"{what} failed: {exc}"
            if not self.starting:  # (else raised: the process's one 'cannot start' line)
                self.get_logger().error(self.reason)
            return FAILURE
        except Exception as exc:  # the lifecycle's error processing
            self.failure = exc
            self.reason = f"{what} failed: {type(exc).__name__}: {exc}"
            self.get_logger().error(self.reason)
            return ERROR
        return SUCCESS

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.failure = None
        result = self._attempt("configure", self.configure_node)
        if result != SUCCESS:
            self._release()
            return result
        self.configured, self.reason = True, ""
        self.get_logger().info("configured (inactive)")
        return super().on_configure(state)

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = self._attempt("activate", self.activate_node)
        if result != SUCCESS:
            return result
        self.active, self.reason = True, ""
        self.get_logger().info("active: commanding")
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = self._attempt("deactivate", self.deactivate_node)
        self.active = False
        if self.failing:  # (fail(): the deactivation it forced ends in error processing)
            self.failing = False
            return ERROR
        self.get_logger().info("inactive: final command published, commanding stopped")
        return super().on_deactivate(state) if result == SUCCESS else result

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        self.get_logger().info("cleaned up (unconfigured): model released")
        return super().on_cleanup(state)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop(f"shutdown from '{state.label}'")
        self.get_logger().info(f"shut down from '{state.label}' (finalized): nothing more "
                               "is published")
        return super().on_shutdown(state)

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop(f"error processing from '{state.label}'")
        self.get_logger().error(f"error processing: {self.reason or 'unknown error'}; "
                                "unconfigured (configure to recover)")
        return SUCCESS  # -> unconfigured

    def _stop(self, why: str) -> None:
        """The final command if active, then release (shutdown, error processing)."""
        if self.active:
            try:
                self.deactivate_node()
            except Exception as exc:  # still release, say why
                self.get_logger().error(f"{why}: no final command: {exc}")
        self.active = False
        self._release()

    def _release(self) -> None:
        try:
            self.cleanup_node()
        finally:
            self.configured = False

    def fail(self, reason: str) -> None:
        """An error in a callback: to error processing with ``reason`` (from active,
        through a deactivation that publishes the final command and returns ERROR)."""
        self.reason = reason
        self.get_logger().error(reason)
        if self.state_label == "active":  # (callbacks act only while active)
            self.failing = True
            self.trigger_deactivate()

    def finish(self) -> None:
        """The shutdown transition from whatever state the node is in (a process
        ending: the final command if it was active), unless already finalized."""
        if self.state_label != "finalized":  # (a primary state: no transition runs now)
            self.trigger_shutdown()

    def lifecycle_values(self) -> dict[str, str]:
        """The key-values ``/diagnostics`` adds in every state."""
        return {"lifecycle_state": self.state_label, "lifecycle_reason": self.reason}

    def lifecycle_status(self, node: str) -> DiagnosticArray:
        """The one status of an unconfigured node: WARN, or ERROR with the reason of a
        failed configure or of the error that unconfigured it."""
        level = DiagnosticStatus.ERROR if self.reason else DiagnosticStatus.WARN
        message = f"{self.state_label}, not commanding" + (
            f": {self.reason}" if self.reason else " (waiting for configure)")
        status = DiagnosticStatus(
            level=level, name=status_name(node), message=message, hardware_id="",
            values=[KeyValue(key=k, value=v) for k, v in self.lifecycle_values().items()])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        return array
