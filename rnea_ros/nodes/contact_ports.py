"""The controller node's contact topics and service (``contact.enable``), around
:class:`rnea_ros.control.contact.reaction.ContactSupervisor` (all the logic lives there).

Publishes, per accepted joint state, ``~/external_torque`` (``sensor_msgs/JointState``:
the estimated external joint torques ``r`` [N m or N] in ``effort``, model joint order);
while in contact ``~/external_wrench`` (``geometry_msgs/WrenchStamped``: ``F = pinv(J^T)
r`` at the isolated link, ``frame_id`` the link, axes LOCAL_WORLD_ALIGNED, i.e. the base
frame's axes at the link origin); on each contact start/end and re-arm ``~/contact``
(``std_msgs/String``, a JSON object ``{state, link, joint, onset, peak, reaction,
latched}``: no existing message carries a link, a joint and a latched reaction together,
and a JSON line is readable by ``ros2 topic echo`` and any tool; reliable, transient
local depth 10, so a late subscriber gets the last events). Serves ``~/rearm_contact``
(``std_srvs/Trigger``) and the parameter ``contact.rearm`` (set it ``true``: the same
re-arm, then the node sets it back to ``false``, ready for the next): clear a latched
reaction. ``status`` is the ``<node>: contact`` entry on ``/diagnostics``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

from rnea_ros.control.contact.reaction import ContactStep, ContactSupervisor
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.diagnostics import status_name

EVENT_QOS = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE,
                       durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)


def supervisor_for(controller: TorqueController) -> ContactSupervisor:
    """The supervisor of ``controller``'s configuration, on its full model (gravity,
    payload and the friction of the URDF or drives file: the observer subtracts the
    friction the robot has, compensated by the controller or not)."""
    config = controller.config
    rates = config.effort_rate_limits if config.slew_limit.enable else None
    return ContactSupervisor(controller.full_model, config.params, config.command_index,
                             config.effort_limits, rates)


class ContactPorts:
    """The contact topics, service and status of ``node`` (a controller node)."""

    def __init__(self, node: Node, controller: TorqueController) -> None:
        self.node, self.controller = node, controller
        self.supervisor = supervisor_for(controller)
        self.supervisor.warm_up()  # (compiles before the first callback)
        self.torque_pub = node.create_publisher(JointState, "~/external_torque", 10)
        self.wrench_pub = node.create_publisher(WrenchStamped, "~/external_wrench", 10)
        self.event_pub = node.create_publisher(String, "~/contact", EVENT_QOS)
        self.rearm_srv = node.create_service(Trigger, "~/rearm_contact", self.on_rearm)
        self.torque_msg = JointState()
        self.torque_msg.name = list(self.supervisor.names)
        self.wrench_msg = WrenchStamped()
        self.last_link = ""
        node.add_post_set_parameters_callback(self.on_parameters_set)
        if node.get_parameter("contact.rearm").value:  # (nothing latched yet)
            node.set_parameters([Parameter("contact.rearm", value=False)])

    def reconfigure(self, controller: TorqueController) -> None:
        """New ``contact.*`` values: a new supervisor; a latched reaction stays latched
        (a parameter change never releases the arm)."""
        latched = self.supervisor.latched
        self.supervisor = supervisor_for(controller)
        self.supervisor.latched = latched

    def react(self, t: float, command: np.ndarray) -> None:
        """Before the command for the state at ``t`` [s] is published: a latched
        reaction replaces ``command`` (commanded-joint order)."""
        s = self.supervisor
        q, qd = s.state(*self.controller.merged_state)
        s.react(t, q, qd, command)

    def after(self, names: Any, effort: Any, t: float, stamp: Any,
              command: np.ndarray) -> None:
        """After ``command`` was published for the state at ``t`` [s] (off the
        receipt-to-publish path): the monitor, the events, ``~/external_torque`` and
        (in contact) ``~/external_wrench``."""
        s = self.supervisor
        q, qd = s.state(*self.controller.merged_state)
        measured = s.effort(names, effort) if s.measured else None
        step = s.observe(t, q, qd, command, measured)
        if step.started or step.ended:
            self.event(step, stamp)
        r = s.monitor.r
        if not np.isfinite(r).all():
            return
        self.torque_msg.header.stamp = stamp
        self.torque_msg.effort = r.tolist()
        self.torque_pub.publish(self.torque_msg)
        contact = step.contact
        if contact is None or not contact.link:
            return
        F = s.wrench(q, contact)
        w = self.wrench_msg
        w.header.stamp, w.header.frame_id = stamp, contact.link
        w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = (float(x) for x in F[:3])
        w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = (float(x) for x in F[3:])
        self.wrench_pub.publish(w)

    def event(self, step: ContactStep, stamp: Any) -> None:
        """A contact started or ended: ``~/contact`` and one log line."""
        s = self.supervisor
        contact = step.contact if step.started else None
        self.event_pub.publish(String(data=s.event_json(contact, "start" if step.started
                                                         else "end")))
        if contact is not None:
            self.last_link = contact.link
            reaction = f": reaction '{s.reaction}' latched until ~/rearm_contact" \
                if s.latched is not None else ""
            self.node.get_logger().warning(
                f"contact on link '{contact.link}' (joint '{contact.joint}', |r| "
                f"{contact.peak:.3g}){reaction}", throttle_duration_sec=0.5)
        else:
            self.node.get_logger().info("contact ended", throttle_duration_sec=0.5)

    def on_rearm(self, request: Trigger.Request, response: Trigger.Response
                 ) -> Trigger.Response:
        """``~/rearm_contact``: clear the latched reaction."""
        response.message = self.rearm()
        response.success = True
        return response

    def rearm(self) -> str:
        """Clear the latched reaction: ``~/contact`` event, one log line; the message."""
        message = self.supervisor.rearm()
        self.event_pub.publish(String(data=self.supervisor.event_json(None, "rearmed")))
        self.node.get_logger().info(message)
        return message

    def on_parameters_set(self, params: list[Parameter[Any]]) -> None:
        """After an accepted change: ``contact.rearm`` set ``true`` re-arms, then is set
        back to ``false`` (so that the next ``true`` re-arms again)."""
        if any(p.name == "contact.rearm" and p.value for p in params):
            self.rearm()
            self.node.set_parameters([Parameter("contact.rearm", value=False)])

    def status(self, node_name: str, hardware_id: str) -> DiagnosticStatus:
        """``<node>: contact``: WARN while a reaction is latched or states are refused."""
        s = self.supervisor
        latched = s.latched
        if latched is not None:
            level, message = DiagnosticStatus.WARN, (
                f"contact on link '{latched.link}': reaction '{s.reaction}' latched, call "
                "~/rearm_contact")
        elif s.rejected:
            level, message = DiagnosticStatus.WARN, f"states refused: {s.last_error}"
        else:
            level, message = DiagnosticStatus.OK, "monitoring"
        r = s.monitor.r
        peak = float(np.abs(r).max()) if np.isfinite(r).all() else math.nan
        values = {"contacts": str(s.contacts), "reaction": s.reaction,
                  "latched": str(latched is not None), "last_link": self.last_link,
                  "effort_source": "measured" if s.measured else "commanded",
                  "refused_states": str(s.rejected), "max_abs_r": f"{peak:.4g}"}
        return DiagnosticStatus(level=level, name=status_name(node_name, "contact"),
                                message=message, hardware_id=hardware_id,
                                values=[KeyValue(key=k, value=v) for k, v in values.items()])


__all__ = ["ContactPorts", "supervisor_for"]
