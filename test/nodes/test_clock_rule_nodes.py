"""The clock rule over DDS (issue 35, items 1 and 7): the rate limiter (array and
joint-state inputs), the controller and the simulator on ``use_sim_time`` while the
test's own ``/clock`` jumps back 2 s, forward 1000 s or stops.

Lockstep, whatever the machine's speed: each step publishes ``/clock`` and waits
until the node's clock reads it, then publishes one input and waits for its answer.
The steady clock the nodes bound their steps with is the test's (1 ms a step):
the limiter's ``steady_time``, the controller node's ``_monotonic``. The simulator
reads no ``/clock``: its command timeout counts its own steps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

import rnea_ros.nodes.controller as controller_node
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode
from rnea_ros.nodes.simulator import SimulatorNode
from rnea_ros.samples import sample_urdf

DT = 1e-3  # [s] steady time a step
STALL = 0.05  # [s] clock_stall_timeout in these tests
JUMP_AT = 20  # steps
STEPS = 150
START = 3600.0  # [s] /clock at step 0
CLOCKS: dict[str, Callable[[int], float]] = {
    "back 2 s": lambda k: START + k * DT - (2.0 if k >= JUMP_AT else 0.0),
    "forward 1000 s": lambda k: START + k * DT + (1000.0 if k >= JUMP_AT else 0.0),
    "stopped": lambda k: START + min(k, JUMP_AT) * DT,
}
COUNTER = {"back 2 s": "jumps_back", "forward 1000 s": "jumps_forward", "stopped": "stalls"}


class Bench:
    """One context and executor; a probe that publishes ``/clock``."""

    def __init__(self, context: Context, nodes: list[Node]) -> None:
        self.executor = SingleThreadedExecutor(context=context)
        self.probe = Node("clock_probe", context=context)
        self.clock_pub = self.probe.create_publisher(Clock, "/clock", 10)
        self.nodes = nodes
        for node in [*nodes, self.probe]:
            self.executor.add_node(node)

    def spin_until(self, done: Callable[[], bool], timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while not done():
            self.executor.spin_once(timeout_sec=0.01)
            assert time.monotonic() < end, "timed out"

    def set_clock(self, t: float, node: Node) -> None:
        """Publish ``/clock`` = ``t`` [s] and wait until ``node`` reads it."""
        ns = round(t * 1e9)
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(ns, 1_000_000_000)
        self.clock_pub.publish(msg)
        self.spin_until(lambda: node.get_clock().now().nanoseconds == ns)


@contextmanager
def bench(make: Callable[[Context], list[Node]]) -> Iterator[Bench]:
    context = Context()
    rclpy.init(context=context)
    nodes = make(context)
    b = Bench(context, nodes)
    try:
        yield b
    finally:
        b.executor.shutdown()
        for node in [*nodes, b.probe]:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def stamp_of(header, t: float) -> None:
    ns = round(t * 1e9)
    header.stamp.sec, header.stamp.nanosec = divmod(ns, 1_000_000_000)


def target(k: int) -> float:
    return 0.0 if k == 0 else (50.0 if k < JUMP_AT else -50.0)


# ----------------------------------------------------------------- rate limiter
LIMITER_CASES = [(kind, clock) for kind in ("array", "joint_state") for clock in CLOCKS]


@pytest.mark.parametrize(("kind", "clock"), LIMITER_CASES)
def test_rate_limiter_on_a_jumping_or_stopped_clock(kind: str, clock: str) -> None:
    """Every step within 100 N m/s of steady time (old main: +1000 s let 50 N m
    through at once); never held longer than the stall timeout or the clock-reset
    confirmation (old main: frozen for the 2 s /clock went back); counted and
    reported on /diagnostics."""
    steady = [0.0]

    def make(context: Context) -> list[Node]:
        node = RateLimiterNode(context=context, parameter_overrides=overrides({
            "use_sim_time": True, "joints": ["a"], "input_type": kind,
            "effort_rate_limits": [100.0], "clock_stall_timeout": STALL}))
        node.steady_time = lambda: steady[0]  # type: ignore[method-assign]
        return [node]

    with bench(make) as b:
        node = b.nodes[0]
        assert isinstance(node, RateLimiterNode)
        outputs: list[float] = []
        b.probe.create_subscription(Float64MultiArray, "/rnea_rate_limiter/output",
                                    lambda m: outputs.append(m.data[0]), 100)
        array_pub = b.probe.create_publisher(Float64MultiArray, "/rnea_rate_limiter/input", 100)
        state_pub = b.probe.create_publisher(JointState, "/rnea_rate_limiter/input_state", 100)
        pub = array_pub if kind == "array" else state_pub
        b.spin_until(lambda: pub.get_subscription_count() > 0
                     and node.output.get_subscription_count() > 0)
        for k in range(STEPS):
            steady[0] = k * DT
            plant = CLOCKS[clock](k)
            b.set_clock(plant, node)
            if kind == "array":
                array_pub.publish(Float64MultiArray(data=[target(k)]))
            else:  # stamped by a source on /clock; one whose clock stopped: its own
                msg = JointState(name=["a"], effort=[target(k)])
                stamp_of(msg.header, plant if clock != "stopped" else START + k * DT)
                state_pub.publish(msg)
            b.spin_until(lambda n=k + 1: len(outputs) == n)
        out = np.array(outputs)
        steps = np.abs(np.diff(out))
        assert steps.max() <= 100.0 * DT + 1e-9, steps.max()
        held = [k for k in range(JUMP_AT + 1, STEPS) if out[k] == out[k - 1]]
        bound = (round(STALL / DT) + 1 if clock == "stopped"
                 else node.limiter.reset_count - 1 if kind == "joint_state" else 0)
        assert len(held) <= bound, (len(held), bound)
        assert out[-1] < out[JUMP_AT - 1] - 5.0  # it went on towards -50 N m
        assert getattr(node.limiter.clock, COUNTER[clock]) == 1
        reports: list = []
        node.diagnostics.publish = reports.append  # type: ignore[method-assign]
        node.publish_diagnostics(now=steady[0])
        status = reports[-1].status[0]
        values = {kv.key: kv.value for kv in status.values}
        assert status.level == b"\x01" and "/clock" in status.message, status.message
        assert values["/clock " + COUNTER[clock].replace("_", " ")] == "1"


# ------------------------------------------------------------------- controller
URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))


def pose(k: int) -> np.ndarray:
    """Joint 2 swinging: 0.4 rad in 0.15 s (the states a robot keeps sending)."""
    q = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
    q[1] += 0.4 * math.sin(math.pi * k / STEPS)
    return q


@pytest.mark.parametrize("clock", CLOCKS)
def test_controller_on_a_jumping_or_stopped_clock(clock: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """States keep coming (the sender's stamps advance) while /clock jumps or stops:
    gravity compensation keeps following the pose (old main: frozen at the old pose's
    gravity while /clock went back or stood still), every step within 1000 N m/s of
    steady time, the event counted, logged and on /diagnostics."""
    base = time.monotonic()
    steady = [base]
    monkeypatch.setattr(controller_node, "_monotonic", lambda: steady[0])

    def make(context: Context) -> list[Node]:
        return [ControllerNode(context=context, parameter_overrides=overrides({
            "use_sim_time": True, "urdf_path": URDF, "watchdog_timeout": 10.0,
            "clock_stall_timeout": STALL, "diagnostics_period": 5.0}))]

    with bench(make) as b:
        node = b.nodes[0]
        assert isinstance(node, ControllerNode)
        commands: list[np.ndarray] = []
        b.probe.create_subscription(Float64MultiArray, "effort_controller/commands",
                                    lambda m: commands.append(np.array(m.data)), 100)
        pub = b.probe.create_publisher(JointState, "joint_states", 100)
        b.spin_until(lambda: pub.get_subscription_count() > 0
                     and node.command_pub.get_subscription_count() > 0)
        for k in range(STEPS):
            steady[0] = base + k * DT
            b.set_clock(CLOCKS[clock](k), node)
            msg = JointState(name=list(MODEL.joint_names), position=pose(k).tolist(),
                             velocity=[0.0] * MODEL.nv)
            stamp_of(msg.header, START + k * DT)
            pub.publish(msg)
            b.spin_until(lambda n=k + 1: len(commands) == n)
        c = np.array(commands)
        assert np.abs(np.diff(c, axis=0)).max() <= 1000.0 * DT + 1e-9
        late = [np.abs(c[k] - gravity_torques(MODEL, pose(k))).max()
                for k in range(JUMP_AT + round(STALL / DT) + 10, STEPS)]
        assert max(late) < 0.2, max(late)  # N m: following the pose
        rule = node.controller.plant_clock
        assert rule is not None and getattr(rule, COUNTER[clock]) == 1
        status = node.status_report.statuses(node.controller, node.messages_received,
                                             now=steady[0])[0]
        assert status.level == "warn" and "/clock" in status.message, status.message
        assert status.values["/clock " + COUNTER[clock].replace("_", " ")] == "1"


# -------------------------------------------------------------------- simulator
@pytest.mark.parametrize("clock", CLOCKS)
def test_simulator_ignores_a_foreign_clock(clock: str) -> None:
    """A simulator on ``use_sim_time`` under someone else's /clock: its state stamps
    are its own plant time (monotonic, one step apart) and its command timeout counts
    its own steps, whatever /clock does (the 0.05 s timeout begins exactly at the
    51st step after the last command)."""
    def make(context: Context) -> list[Node]:
        return [SimulatorNode(context=context, parameter_overrides=overrides({
            "use_sim_time": True, "publish_clock": False, "urdf_path": URDF,
            "lockstep": False, "wait_for_command": False, "command_timeout": STALL}))]

    with bench(make) as b:
        node = b.nodes[0]
        assert isinstance(node, SimulatorNode)
        stamps: list[float] = []
        b.probe.create_subscription(
            JointState, "joint_states",
            lambda m: stamps.append(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec), 1000)
        b.spin_until(lambda: len(stamps) > 0)
        began: list[float] = []
        step = node.timeouts.step

        def record(timed_out: bool) -> bool:
            started = step(timed_out)
            if started:
                began.append(float(node.sim.t))
            return started
        node.timeouts.step = record  # type: ignore[method-assign]
        node.on_command(Float64MultiArray(data=[0.0] * MODEL.nv))
        t_command = float(node.sim.t)
        for k in range(STEPS):
            b.set_clock(CLOCKS[clock](k), node)
        b.spin_until(lambda: node.timeouts.count == 1)
        # the tick that finds the timeout is the 51st after the command (before its step)
        assert round((began[0] - t_command) / node.sim.dt) == round(STALL / node.sim.dt)
        d = np.diff(np.array(stamps))
        assert np.all(d > 0.0) and np.allclose(d, node.sim.dt, atol=1e-6), (d.min(), d.max())
