"""Embedded simulator node, for machines without Gazebo (and for our tests).

Integrates the robot with Pinocchio's ABA (not our code, see
:mod:`rnea_ros.simulation`), subscribes the effort topic of gz_ros2_control's
forward command controller (``effort_controller/commands``,
``std_msgs/Float64MultiArray`` in ``joints`` order) and publishes
``joint_states`` (position, velocity, applied effort; stamped with the
simulated time; commands of the wrong length or non-finite are rejected,
efforts clamped to the URDF limits, both counted on ``/diagnostics``) and,
when ``publish_clock`` is set, ``/clock`` (global) so that ``use_sim_time`` works.
With ``elastic_file`` it simulates a robot with elastic joints
(:class:`rnea_ros.simulation.ElasticSimulator`): link and motor states, the
motors published as ``<joint>_motor``. Topic names are relative
(``<namespace>/joint_states``) except ``/clock`` and ``/diagnostics``.

``lockstep: false`` (default): a timer steps the simulation at ``rate`` in
real time with the last command (zero effort once ``command_timeout`` has
passed without one); with ``wait_for_command`` the robot stays still, like a
robot with its brakes on, until the first command arrives.
``lockstep: true``: each received command advances the simulation by one step
and publishes the new state, so a controller that answers every state closes
the loop at full speed and deterministically; the state is (re)sent when no
command came for 0.5 s, which also starts the loop.
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
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.control.config import (
    ParameterSpec,
    load_model,
    per_joint,
    resolve_path,
    urdf_source,
)
from rnea_ros.core.elastic.model import elastic_model
from rnea_ros.core.errors import ParameterError, RneaError
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.nodes.common import declare, run, steady_timer
from rnea_ros.simulation import INTEGRATORS, ElasticSimulator, Simulator

NODE_NAME = "rnea_simulator"

SIMULATOR_PARAMETERS: dict[str, ParameterSpec] = {
    "robot_description": ParameterSpec("", "URDF XML of the robot; empty: read urdf_path", True),
    "urdf_path": ParameterSpec("", "URDF file when robot_description is empty", True),
    "inertia_check": ParameterSpec("strict", "'strict' or 'warn' for non-physical inertias",
                                   True),
    "elastic_file": ParameterSpec(
        "", "YAML side file with elastic joints and motors: simulate link and motor states "
        "(RK4, our recursive forward dynamics); motors published as '<joint>_motor'", True),
    "joints": ParameterSpec([""], "joints of the effort command array, in order; [''] = all",
                            True),
    "rate": ParameterSpec(1000.0, "integration rate [Hz]", True),
    "integrator": ParameterSpec("semi_implicit", "'semi_implicit' (symplectic Euler) or 'rk4'",
                                True),
    "damping": ParameterSpec([0.0], "viscous joint damping, per joint or one [N m s/rad]", True),
    "friction": ParameterSpec([0.0], "Coulomb joint friction, per joint or one [N m]", True),
    "initial_positions": ParameterSpec([0.0], "initial q, per joint or one [rad or m]", True),
    "gravity": ParameterSpec([0.0, 0.0, -9.81], "gravity in the base frame [m/s^2]", True),
    "payload.link": ParameterSpec("", "link carrying a payload; empty: none"),
    "payload.mass": ParameterSpec(0.0, "payload mass [kg]"),
    "payload.com": ParameterSpec([0.0, 0.0, 0.0], "payload COM in the link frame [m]"),
    "payload.inertia": ParameterSpec([0.0] * 6, "payload inertia about its COM: xx yy zz xy xz "
                                     "yz [kg m^2]"),
    "publish_clock": ParameterSpec(False, "publish /clock with the simulated time", True),
    "lockstep": ParameterSpec(False, "advance one step per received command", True),
    "command_timeout": ParameterSpec(0.5, "apply zero effort after this long without a "
                                     "command (real-time mode) [s]", True),
    "wait_for_command": ParameterSpec(True, "hold still (brakes on, time stopped) until the "
                                      "first command arrives (real-time mode)", True),
}


class SimulatorNode(Node):
    """rclpy adapter around :class:`rnea_ros.simulation.Simulator`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        v = declare(self, SIMULATOR_PARAMETERS)
        model = load_model(v).replace(gravity=np.array(v["gravity"], dtype=np.float64))
        names = [j for j in v["joints"] if j] or list(model.joint_names)
        self.command_index = np.array([model.joint_index(j) for j in names])
        if v["integrator"] not in INTEGRATORS:
            raise ParameterError(f"parameter 'integrator' is '{v['integrator']}'; valid: "
                                 f"{INTEGRATORS}")
        if not float(v["rate"]) > 0.0:
            raise ParameterError("parameter 'rate' must be > 0 Hz")
        self.values = v
        self.urdf = urdf_source(v)
        self.links = model
        self.n = model.nv
        self.sim = self.make_simulator(v, model)
        self.sim.reset(per_joint(v, "initial_positions", model.nv, -math.inf))
        self.tau = np.zeros(model.nv)
        self.last_command_wall = -np.inf
        self.command_timeout = float(v["command_timeout"])
        self.wait_for_command = bool(v["wait_for_command"])
        self.rejected = 0
        self.clamped = 0
        self.effort_limit = model.effort_limit[self.command_index]  # inf when absent
        self.lockstep = bool(v["lockstep"])
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if v["publish_clock"] \
            else None
        self.command_sub = self.create_subscription(
            Float64MultiArray, "effort_controller/commands", self.on_command, 10)
        self.add_on_set_parameters_callback(self.on_set_parameters)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        steady_timer(self, 1.0, self.publish_diagnostics)
        self.last_publish_wall = -np.inf
        if self.lockstep:
            steady_timer(self, 0.05, self.resend)
        else:
            steady_timer(self, self.sim.dt, self.on_tick)

    def make_simulator(self, v: dict[str, Any], model: RobotModel
                       ) -> Simulator | ElasticSimulator:
        payload = None
        if v["payload.link"]:
            payload = Payload(v["payload.link"], float(v["payload.mass"]),
                              tuple(v["payload.com"]), tuple(v["payload.inertia"]))
            with_payload(model, payload)  # validates
        if v["elastic_file"]:  # our forward dynamics: Pinocchio has no geared rotors
            links = model.replace(viscous=per_joint(v, "damping", model.nv),
                                  coulomb=per_joint(v, "friction", model.nv))
            if payload is not None:
                links = with_payload(links, payload)
            elastic = elastic_model(links, resolve_path(str(v["elastic_file"])))
            return ElasticSimulator(elastic, dt=1.0 / float(v["rate"]))
        return Simulator(self.urdf, model, dt=1.0 / float(v["rate"]), integrator=v["integrator"],
                         damping=per_joint(v, "damping", model.nv, -math.inf),
                         friction=per_joint(v, "friction", model.nv, -math.inf),
                         payload=payload)

    def on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        """Runtime payload changes (an object picked up); other parameters are read-only."""
        values = dict(self.values)
        values.update({p.name: p.value for p in params})
        try:
            sim = self.make_simulator(values, self.links)
        except (RneaError, ValueError, TypeError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        if isinstance(sim, ElasticSimulator) and isinstance(self.sim, ElasticSimulator):
            sim.x, sim.t0 = self.sim.x.copy(), self.sim.t
        elif isinstance(sim, Simulator) and isinstance(self.sim, Simulator):
            sim.reset(self.sim.q, self.sim.qd, self.sim.t)
        sim.effort = self.sim.effort
        self.sim, self.values = sim, values
        return SetParametersResult(successful=True)

    def on_command(self, msg: Float64MultiArray) -> None:
        data = np.asarray(msg.data, dtype=np.float64)
        if data.shape != self.command_index.shape or not np.all(np.isfinite(data)):
            self.rejected += 1
            self.get_logger().warning(f"rejected effort command of {data.size} values "
                                      f"(expected {self.command_index.size} finite)",
                                      throttle_duration_sec=1.0)
            return
        # Like a drive: the effort is clamped to the URDF limits (counted).
        clamped = np.clip(data, -self.effort_limit, self.effort_limit)
        self.clamped += int(np.count_nonzero(clamped != data))
        self.tau = np.zeros(self.n)
        self.tau[self.command_index] = clamped
        self.last_command_wall = time.monotonic()
        if self.lockstep:
            self.sim.step(self.tau)
            self.publish_state()

    def on_tick(self) -> None:
        if self.wait_for_command and self.last_command_wall == -np.inf:
            self.publish_state()  # brakes on until a controller answers
            return
        if time.monotonic() - self.last_command_wall > self.command_timeout:
            self.tau = np.zeros(self.n)
        self.sim.step(self.tau)
        self.publish_state()

    def resend(self) -> None:
        now = time.monotonic()
        if now - max(self.last_command_wall, self.last_publish_wall) > 0.5:
            self.publish_state()

    def publish_state(self) -> None:
        sec = int(self.sim.t)
        nanosec = round((self.sim.t - sec) * 1e9)
        if nanosec >= 1_000_000_000:
            sec, nanosec = sec + 1, nanosec - 1_000_000_000
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        sim = self.sim
        if isinstance(sim, ElasticSimulator):
            # Links then motors; effort: a link's applied torque (an elastic joint's spring),
            # a motor's torque.
            m = sim.model
            q, theta, qd, thetad = sim.state
            link_effort = sim.effort.copy()
            link_effort[m.elastic_joints] = m.spring_torque(q, theta, qd, thetad)
            msg.name = list(m.links.joint_names + m.motor_names)
            msg.position = np.r_[q, theta].tolist()
            msg.velocity = np.r_[qd, thetad].tolist()
            msg.effort = np.r_[link_effort, sim.effort[m.elastic_joints]].tolist()
        else:
            msg.name = list(sim.model.joint_names)
            msg.position = sim.q.tolist()
            msg.velocity = sim.qd.tolist()
            msg.effort = sim.effort.tolist()
        self.state_pub.publish(msg)
        self.last_publish_wall = time.monotonic()
        if self.clock_pub is not None:
            clock = Clock()
            clock.clock = msg.header.stamp
            self.clock_pub.publish(clock)


    def publish_diagnostics(self) -> None:
        values = {"simulated time [s]": f"{self.sim.t:.3f}", "rejected commands":
                  str(self.rejected), "clamped efforts": str(self.clamped)}
        diverged = getattr(self.sim, "diverged", 0)
        if isinstance(self.sim, Simulator):
            values.update({"steps at a joint limit": str(self.sim.stops),
                           "diverged steps (not taken)": str(diverged)})
        if diverged:
            level, message = DiagnosticStatus.ERROR, "integration diverged: state held at rest"
        elif self.rejected:
            level, message = DiagnosticStatus.WARN, "rejecting some commands"
        else:
            level, message = DiagnosticStatus.OK, "ok"
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: simulation",
                                  message=message,
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        self.diagnostics_pub.publish(DiagnosticArray(status=[status]))


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros simulator``."""
    return run(NODE_NAME, SimulatorNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
