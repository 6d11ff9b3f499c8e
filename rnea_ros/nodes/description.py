"""The robot's model from the ``robot_description`` topic, as ``controller_manager`` takes
it since Jazzy: ``std_msgs/String``, reliable and transient local (depth 1), so a
description published once -- by ``robot_state_publisher`` before or after the node
starts -- is delivered.

A node whose ``robot_description_source`` parameter is ``topic`` declares its parameters,
then waits (:class:`DescriptionWaiter`): one INFO line at once and every
:data:`WAIT_LOG_PERIOD` seconds naming the topic as resolved (namespace and remappings
applied: ``/left/robot_description``). The first description that builds (the node's
``start(values)`` with ``robot_description`` set to the text) starts the node. One that
does not -- malformed XML, a URDF that does not fit the parameter file (an unknown joint in
``joints``) -- is logged as one ERROR line with the typed error's message and counted;
the node stays waiting for a valid one (nothing was built: ``start`` builds the model
before it creates any topic). A later, different description is ignored with a warning
(restart the node to load it): a running controller never swaps its model under a
command stream.

``robot_description_source: parameter`` (the default) keeps the start-up as it was:
``robot_description`` (XML), else ``urdf_path``. The function a node calls,
:func:`wait_for_description`, is free of the node's own class, so a lifecycle node can
call it from its configure transition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSDurabilityPolicy, QoSHistoryPolicy, QoSProfile, QoSReliabilityPolicy
from std_msgs.msg import String

from rnea_ros.core.errors import ParameterError, RneaError
from rnea_ros.nodes.common import compile_report, logged_warnings, steady_timer
from rnea_ros.parameters import ParameterSpec

TOPIC = "robot_description"  # relative: under the node's namespace, remappable
WAIT_LOG_PERIOD = 5.0  # [s] between the "waiting" lines
# controller_manager's (and robot_state_publisher's) QoS: a late joiner gets the last one.
DESCRIPTION_QOS = QoSProfile(history=QoSHistoryPolicy.KEEP_LAST, depth=1,
                             reliability=QoSReliabilityPolicy.RELIABLE,
                             durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)

Start = Callable[[dict[str, Any]], None]


def from_topic(values: Mapping[str, Any]) -> bool:
    """Whether parameter ``values`` take the model from the topic; a
    :class:`ParameterError` when they also name a URDF (two sources: say which)."""
    if values.get("robot_description_source", "parameter") != "topic":
        return False
    given = [name for name in ("robot_description", "urdf_path") if values.get(name)]
    if given:
        raise ParameterError(
            f"parameter 'robot_description_source' is 'topic' but {', '.join(map(repr, given))}"
            " also set: leave them empty (the URDF comes from the topic) or set "
            "'robot_description_source: parameter'")
    return True


def current_values(node: Node, table: Mapping[str, ParameterSpec]) -> dict[str, Any]:
    """The node's values of ``table``'s parameters now (set while it waited: checked by
    the table as at start-up)."""
    values = {name: node.get_parameter(name).value for name in table}
    for name, spec in table.items():
        why = spec.refusal(name, values[name])
        if why:
            raise ParameterError(why)
    return values


class DescriptionWaiter:
    """Waits on ``robot_description`` for ``node`` and calls ``start(values)`` with the
    first description that builds (see the module's text). ``rejected`` counts the
    descriptions refused, ``error`` is the last refusal's message, ``started`` whether
    ``start`` succeeded."""

    def __init__(self, node: Node, table: Mapping[str, ParameterSpec], start: Start) -> None:
        self.node, self.table, self.start_node = node, table, start
        self.started = False
        self.text = ""  # the description the node runs
        self.rejected = 0
        self.error = ""
        self.subscription = node.create_subscription(String, TOPIC, self.on_description,
                                                     DESCRIPTION_QOS)
        self.topic = self.subscription.topic_name  # resolved: namespace, remappings
        self.timer = steady_timer(node, WAIT_LOG_PERIOD, self.log_waiting)
        self.log_waiting()

    def waiting_line(self) -> str:
        """What the node is waiting for, and why it still waits."""
        why = f"; the last one was refused: {self.error}" if self.error else ""
        return (f"waiting for the robot's URDF on topic '{self.topic}' (std_msgs/String, "
                "transient local, as robot_state_publisher publishes it; "
                f"robot_description_source: topic){why}")

    def log_waiting(self) -> None:
        if not self.started:
            self.node.get_logger().info(self.waiting_line())

    def on_description(self, msg: String) -> None:
        """A description: the node started with it, or refused with one ERROR line."""
        text = str(msg.data)
        logger = self.node.get_logger()
        if self.started:
            if text != self.text:
                logger.warning(f"a new robot description on '{self.topic}' is ignored: the "
                               "node runs the model it started with; restart it to load the "
                               "new one", throttle_duration_sec=10.0)
            return
        try:
            values = {**current_values(self.node, self.table), "robot_description": text}
            with compile_report(logger), logged_warnings(logger):
                self.start_node(values)
        except (RneaError, ValueError, TypeError) as exc:
            self.rejected += 1
            self.error = f"{type(exc).__name__}: {exc}"
            logger.error(f"robot description on '{self.topic}' refused ({self.error}); still "
                         "waiting for a valid one")
            return
        self.started, self.text = True, text
        self.node.destroy_timer(self.timer)
        logger.info(f"robot model from '{self.topic}' ({len(text)} bytes)")


def wait_for_description(node: Node, values: Mapping[str, Any],
                         table: Mapping[str, ParameterSpec], start: Start
                         ) -> DescriptionWaiter | None:
    """With ``robot_description_source: topic`` in ``values``: a
    :class:`DescriptionWaiter` that calls ``start`` once a description builds; otherwise
    None (the caller starts at once from its parameters). :class:`ParameterError` for a
    URDF given by parameter as well."""
    if not from_topic(values):
        return None
    return DescriptionWaiter(node, table, start)


__all__ = ["DESCRIPTION_QOS", "TOPIC", "DescriptionWaiter", "current_values", "from_topic",
           "wait_for_description"]
