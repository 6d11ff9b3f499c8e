"""Run the simulator and the controller in one process over real DDS (loopback),
with a probe node that records joint states, commands and diagnostics and
sends trajectories. Used by the demo and the node tests.

The caller must have set ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a
``ROS_DOMAIN_ID`` before rclpy was initialised (``make``, the test
configuration and the demo do).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from rnea_ros.control.trajectory import cosine_motion
from rnea_ros.nodes.controller import NODE_NAME as CONTROLLER_NAME
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.errors import LockstepError
from rnea_ros.nodes.simulator import RESEND_AFTER, SimulatorNode

__all__ = ["ARM7_GAINS", "ROCKING_BASE", "ClosedLoop", "Probe", "Recording", "cosine_motion",
           "overrides", "track_sinusoid"]

# PD gains that suit arm7 in ``inverse_dynamics`` (demo, tests).
ARM7_GAINS = {"kp": [60.0, 60.0, 60.0, 60.0, 20.0, 20.0, 10.0],
              "kd": [8.0, 8.0, 8.0, 4.0, 1.0, 1.0, 0.5]}

# A rocking, heaving base for the simulator (issue 12 §3; demo, tests): 5 deg of roll at
# 0.5 Hz and 5 cm of heave at 0.5 Hz, the IMU on the root link.
ROCKING_BASE = {"base_motion.roll_amplitude": 0.0873, "base_motion.roll_frequency": 0.5,
                "base_motion.heave_amplitude": 0.05, "base_motion.heave_frequency": 0.5,
                "imu.enable": True}


def overrides(values: Mapping[str, Any]) -> list[Parameter[Any]]:
    """``parameter_overrides`` for a node from a plain mapping."""
    return [Parameter(name, value=value) for name, value in values.items()]


@dataclass
class Recording:
    """What the probe saw: the simulator's states -- sim time [s], positions, velocities,
    applied efforts (its message order: the model's coordinates, then the mimic followers
    it publishes, if any) --, the commands, the controller's ``~/efforts`` (stamp [s] of
    the state each answers, efforts; with ``publish_effort_state``) and /diagnostics."""

    t: list[float] = field(default_factory=list)
    q: list[np.ndarray] = field(default_factory=list)
    qd: list[np.ndarray] = field(default_factory=list)
    effort: list[np.ndarray] = field(default_factory=list)
    commands: list[np.ndarray] = field(default_factory=list)
    efforts: list[tuple[float, np.ndarray]] = field(default_factory=list)
    diagnostics: list[DiagnosticArray] = field(default_factory=list)


class Probe(Node):
    """Records joint_states, commands and /diagnostics; publishes trajectories and states
    (topic names relative to ``namespace``, like the nodes')."""

    def __init__(self, context: Context, controller_name: str = CONTROLLER_NAME,
                 namespace: str = "") -> None:
        super().__init__("rnea_probe", context=context, namespace=namespace)
        self.recording = Recording()
        self.create_subscription(JointState, "joint_states", self.on_state, 100)
        self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                 lambda m: self.recording.commands.append(np.array(m.data)), 100)
        self.create_subscription(JointState, f"{controller_name}/efforts", self.on_efforts,
                                 100)
        self.create_subscription(DiagnosticArray, "/diagnostics",
                                 self.recording.diagnostics.append, 10)
        self.trajectory_pub = self.create_publisher(
            JointTrajectory, f"{controller_name}/joint_trajectory", 10)
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)

    def on_state(self, msg: JointState) -> None:
        if msg.effort:  # the simulator's states carry the applied effort; ours don't
            r = self.recording
            r.t.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
            r.q.append(np.array(msg.position))
            r.qd.append(np.array(msg.velocity))
            r.effort.append(np.array(msg.effort))

    def on_efforts(self, msg: JointState) -> None:
        self.recording.efforts.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                                       np.array(msg.effort)))

    def send_trajectory(self, names: Sequence[str], times: np.ndarray, positions: np.ndarray,
                        velocities: np.ndarray | None = None,
                        accelerations: np.ndarray | None = None) -> None:
        """Publish a trajectory that starts 'now' (zero header stamp)."""
        msg = JointTrajectory()
        msg.joint_names = list(names)
        for k, t in enumerate(times):
            point = JointTrajectoryPoint()
            point.positions = positions[k].tolist()
            if velocities is not None:
                point.velocities = velocities[k].tolist()
            if accelerations is not None:
                point.accelerations = accelerations[k].tolist()
            sec = int(t)
            point.time_from_start = Duration(sec=sec, nanosec=int((t - sec) * 1e9))
            msg.points.append(point)
        self.trajectory_pub.publish(msg)


class ClosedLoop:
    """Simulator (lockstep by default) + controller + probe on one executor."""

    def __init__(self, controller: Mapping[str, Any] | None,
                 simulator: Mapping[str, Any] | None, namespace: str = "") -> None:
        """``None`` leaves that node out (e.g. a controller fed by the probe);
        every node in ``namespace`` (several robots side by side)."""
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        # Simulated time: the simulator publishes /clock, the controller follows it.
        # In lockstep with both nodes the plant steps on the controller's stamped answers
        # (``lockstep_answers``: a watchdog's command after a stall steps nothing), unless
        # the caller says otherwise.
        sim_params = {"lockstep": True, "publish_clock": True, **(simulator or {})}
        answers = controller is not None and simulator is not None and sim_params["lockstep"]
        ctl_params = {"use_sim_time": simulator is not None,
                      **({"publish_effort_state": True} if answers else {}), **(controller or {})}
        if answers and ctl_params["publish_effort_state"]:
            sim_params = {"lockstep_answers": f"{CONTROLLER_NAME}/efforts", **sim_params}
        self.simulator = None
        if simulator is not None:
            self.simulator = SimulatorNode(context=self.context, namespace=namespace,
                                           parameter_overrides=overrides(sim_params))
        self.controller = None
        if controller is not None:
            self.controller = ControllerNode(context=self.context, namespace=namespace,
                                             parameter_overrides=overrides(ctl_params))
        self.probe = Probe(self.context, namespace=namespace)
        for node in (self.simulator, self.controller, self.probe):
            if node is not None:
                self.executor.add_node(node)
        # As ``nodes.common.run`` does for a node's process: the heap so far is frozen out
        # of the garbage collector's way. This process may hold far more than the nodes (a
        # test session: 1.1 million objects, whose full collections stalled it for up to
        # 1.1 s, longer than a watchdog's timeout); a full collection now scans only what
        # was made since.
        gc.collect()
        gc.freeze()
        if self.simulator is not None and self.controller is not None:
            # Start the lockstep loop once both directions are discovered.
            sim = self.simulator
            imu = sim.imu_pub if getattr(self.controller, "imu_sub", None) else None
            efforts = self.controller.effort_pub
            self.spin_until(lambda: sim.state_pub.get_subscription_count() >= 2
                            and sim.command_sub.get_publisher_count() >= 1
                            and (imu is None or imu.get_subscription_count() >= 1)
                            and (efforts is None or efforts.get_subscription_count() >= 1),
                            10.0)
            sim.publish_state()

    def controller_node(self) -> ControllerNode:
        """The controller node; :class:`LockstepError` when the loop has none."""
        if self.controller is None:
            raise LockstepError("this closed loop has no controller node (built with "
                                "controller=None)")
        return self.controller

    def simulator_node(self) -> SimulatorNode:
        """The simulator node; :class:`LockstepError` when the loop has none."""
        if self.simulator is None:
            raise LockstepError("this closed loop has no simulator node (built with "
                                "simulator=None): it has no simulated time to hold")
        return self.simulator

    @property
    def sim_time(self) -> float:
        return float(self.simulator_node().sim.t)

    def spin_until(self, done: Callable[[], bool], wall_timeout: float) -> bool:
        """Spin until ``done()`` or ``wall_timeout`` seconds; returns ``done()``."""
        end = time.monotonic() + wall_timeout
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        return done()

    def run_for(self, sim_seconds: float, wall_timeout: float = 60.0) -> bool:
        """Advance the simulation by ``sim_seconds``; False when simulated time stood still
        for ``wall_timeout`` seconds of wall time (the loop stalled).

        The timeout bounds a stall, not the whole run: in lockstep a busy machine slows
        the loop down without changing a number (at load 15-18 on 2 cores, 5 s of arm7
        in gravity mode took 126 s of wall time), so only a loop that stops is a failure."""
        target = self.sim_time + sim_seconds
        while self.sim_time < target - 1e-9:
            last = self.sim_time
            if not self.spin_until(lambda: self.sim_time > last, wall_timeout):  # noqa: B023
                return False
        return True

    @contextmanager
    def held(self) -> Iterator[ClosedLoop]:
        """The lockstep loop held while the block runs: the simulator leaves the executor
        (the commands that reach it wait in its queue, simulated time stands still), the
        controller and the probe go on; it rejoins when the block ends."""
        simulator = self.simulator_node()
        self.executor.remove_node(simulator)
        try:
            yield self
        finally:
            self.executor.add_node(simulator)

    def take_last_state(self, wall_timeout: float = 10.0) -> float:
        """In :meth:`held`: spin until the controller has taken the simulator's last state
        (its answer then waits in the simulator's queue); returns that state's time.
        Before the loop ran, the first state (published once both sides were discovered)
        may have been lost: it is published again while the controller has taken none
        (no command is in flight then), as the simulator's resend would."""
        ctl, sim = self.controller_node().controller, self.simulator_node()
        now = self.sim_time
        end = time.monotonic() + wall_timeout
        while time.monotonic() < end:
            if self.spin_until(lambda: ctl.last_state_time is not None
                               and abs(ctl.last_state_time - now) < 1e-9,
                               min(RESEND_AFTER, end - time.monotonic())):
                return now
            if ctl.last_state_time is None:
                sim.publish_state()
        raise LockstepError(f"the controller did not take the simulator's state at "
                            f"{now:.3f} s within {wall_timeout:g} s (wall clock)")

    def send_trajectory_held(self, names: Sequence[str], times: np.ndarray,
                             positions: np.ndarray, velocities: np.ndarray | None = None,
                             accelerations: np.ndarray | None = None,
                             wall_timeout: float = 10.0) -> float:
        """Hand the controller a trajectory ("start now") with the loop held: it takes the
        simulator's last state, then the trajectory, which starts at that state's time;
        returns that start. The same simulated time on any schedule: sent into the running
        loop, a trajectory starts at whichever state the controller saw last when it
        arrived (a loaded machine: a few steps later). :class:`LockstepError` when the
        controller takes neither within ``wall_timeout`` seconds (wall clock) each."""
        ctl = self.controller_node().controller
        with self.held():
            start = self.take_last_state(wall_timeout)
            previous = ctl.reference.trajectory
            self.probe.send_trajectory(names, times, positions, velocities, accelerations)
            if not self.spin_until(lambda: ctl.reference.trajectory is not None
                                   and ctl.reference.trajectory is not previous,
                                   wall_timeout):
                raise LockstepError("the controller did not take the trajectory within "
                                    f"{wall_timeout:g} s (rejected: {dict(ctl.rejected)})")
        return start

    def set_controller_parameters(self, values: Mapping[str, Any]) -> list[SetParametersResult]:
        return list(self.controller_node().set_parameters(overrides(values)))

    def close(self) -> None:
        self.executor.shutdown()
        for node in (self.simulator, self.controller, self.probe):
            if node is not None:
                node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def __enter__(self) -> ClosedLoop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def track_sinusoid(loop: ClosedLoop, q0: np.ndarray, amplitude: float, omega: float,
                   seconds: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Send :func:`cosine_motion` from ``q0`` (the controller's reference joints: a
    closed-loop robot's active ones) with the loop held
    (:meth:`ClosedLoop.send_trajectory_held`), run ``seconds``; returns the sample times after
    the start, the tracking errors (samples, len(q0)) and the start time."""
    T = np.arange(0.0, seconds + 1.0, 0.01)
    start = loop.send_trajectory_held(loop.controller_node().controller.reference_names, T,
                                      *cosine_motion(q0, amplitude, omega, T))
    loop.run_for(seconds, wall_timeout=30 + 10 * seconds)
    t = np.array(loop.probe.recording.t)
    mask = t > start + 0.01
    # The reference's joints come first in the simulator's joint states (closed loops:
    # active then passive joints; elastic robots: links then motors; mimic followers last).
    error = np.array(loop.probe.recording.q)[mask][:, :q0.size] - \
        cosine_motion(q0, amplitude, omega, t[mask] - start)[0]
    return t[mask], error, start
