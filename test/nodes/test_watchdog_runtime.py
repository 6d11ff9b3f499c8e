"""Issue 35 over DDS: the controller node's watchdog follows runtime changes, and
stamps that advance much slower than time are stale (rnea_ros.control.freshness).

1. ``watchdog_timeout`` / ``watchdog_grace`` set at runtime through the node's
   parameter service (``ros2 param set``): the watchdog timer's period follows
   (old main: fixed at start-up, 20 ms, so a timeout lowered to 4 ms reacted up to
   24 ms late; a start at 1 ms kept a 4 kHz timer after raising it to 10 s). The
   reaction is measured on the node's own timer period with looks at every phase on
   an explicit clock: at most timeout + grace + timeout/4, whatever the schedule.
2. A driver re-sending its state with the stamp +1 us per message, in real time:
   rejected (``slow_stamps``), the watchdog's stale command (``zero``) follows and
   ``/diagnostics`` says why; stamps on the real time again recover (old main: every
   state accepted, the watchdog never acted).
3. ``use_sim_time`` with ``/clock`` at 1/20 of the (test's) steady clock and states
   stamped on it: never slow; the same stream to a node off ``/clock`` is.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

import rnea_ros.nodes.controller as controller_node
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import overrides
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
START = 100.0  # [s]


class Bench:
    """A controller node, a probe (publishers, a parameter client) and one executor."""

    def __init__(self, **values: object) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = ControllerNode(context=self.context, parameter_overrides=overrides({
            "urdf_path": URDF, "diagnostics_period": 5.0, **values}))
        self.probe = Node("watchdog_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        for n in (self.node, self.probe):
            self.executor.add_node(n)
        self.commands: list[np.ndarray] = []
        self.probe.create_subscription(Float64MultiArray, "effort_controller/commands",
                                       lambda m: self.commands.append(np.array(m.data)), 100)
        self.states = self.probe.create_publisher(JointState, "joint_states", 100)
        self.clock = self.probe.create_publisher(Clock, "/clock", 10)
        self.spin_until(lambda: self.states.get_subscription_count() > 0
                        and self.node.command_pub.get_subscription_count() > 0)

    def spin_until(self, done: Callable[[], bool], timeout: float = 20.0) -> None:
        end = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < end, "timed out"
            self.executor.spin_once(timeout_sec=0.005)

    def set(self, **values: float) -> None:
        """``ros2 param set``: through the node's parameter service."""
        client = AsyncParameterClient(self.probe, self.node.get_fully_qualified_name())
        self.spin_until(lambda: client.services_are_ready())
        future = client.set_parameters([Parameter(k, value=v) for k, v in values.items()])
        self.spin_until(future.done)
        results = future.result().results
        assert all(r.successful for r in results), [r.reason for r in results]

    def send(self, t: float, q: np.ndarray = Q0) -> None:
        """One state stamped ``t``; returns once the controller has handled it."""
        c = self.node.controller
        before = c.accepted + sum(c.rejected.values())
        msg = JointState(name=list(MODEL.joint_names), position=q.tolist(),
                         velocity=[0.0] * MODEL.nv)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(t * 1e9), 1_000_000_000)
        self.states.publish(msg)
        self.spin_until(lambda: c.accepted + sum(c.rejected.values()) > before)

    def set_clock(self, t: float) -> None:
        ns = round(t * 1e9)
        msg = Clock()
        msg.clock.sec, msg.clock.nanosec = divmod(ns, 1_000_000_000)
        self.clock.publish(msg)
        self.spin_until(lambda: self.node.get_clock().now().nanoseconds == ns)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.try_shutdown(context=self.context)


def watchdog_timer(node: ControllerNode):
    """The node's timer that calls its watchdog (exactly one, destroyed ones gone)."""
    (timer,) = [t for t in node.timers
                if getattr(t.callback, "function", None) == node.on_watchdog]
    return timer


def reaction(node: ControllerNode, last: float) -> float:
    """A state accepted at steady ``last`` [s], then silence: the watchdog looked at on
    the node's timer period from the next multiple of it; the time to the stale command."""
    c = node.controller
    c.joint_state(MODEL.joint_names, Q0, [0.0] * MODEL.nv, START + last, now=last)
    period = watchdog_timer(node).timer_period_ns * 1e-9
    look = math.ceil(last / period) * period
    while c.watchdog(now=look) is None:
        look += period
        assert look - last < 30.0
    c.stale = False
    return look - last


@pytest.mark.parametrize(("start", "changes"), [
    ({}, {"watchdog_timeout": 0.004, "watchdog_grace": 0.0}),
    ({}, {"watchdog_timeout": 0.008, "watchdog_grace": 0.002}),
    ({}, {"watchdog_timeout": 0.001, "watchdog_grace": 0.0}),  # the safety minimum
    ({"watchdog_timeout": 0.001, "watchdog_grace": 0.0},
     {"watchdog_timeout": 10.0, "watchdog_grace": 1.0}),  # the safety maxima
    ({}, {"watchdog_grace": 0.001}),
])
def test_watchdog_period_follows_a_runtime_change(start, changes) -> None:
    b = Bench(**start)
    try:
        b.set(**changes)
        c = b.node.controller
        timeout, grace = c.config.watchdog_timeout, c.config.watchdog_grace
        assert (timeout, grace) == (changes.get("watchdog_timeout", 0.1),
                                    changes.get("watchdog_grace", 0.1))
        period = watchdog_timer(b.node).timer_period_ns * 1e-9
        assert period <= min(0.02, timeout / 4) + 1e-12, period
        assert period >= min(0.02, timeout / 4, grace if grace else 1.0) - 1e-12, period
        base = time.monotonic()
        for phase in np.linspace(0.0, 0.02, 9):
            r = reaction(b.node, base + phase)
            assert timeout + grace < r <= timeout + grace + timeout / 4 + 1e-9, (phase, r)
        if timeout + grace < 1.0:  # the real timer at that period: a silence on DDS acted on
            b.send(START + base + 0.03)
            assert c.accepted == 10 and not c.stale
            b.spin_until(lambda: c.stale)
    finally:
        b.close()


def test_stamps_advancing_one_microsecond_a_message_are_stale_over_dds() -> None:
    b = Bench(watchdog_timeout=0.1, watchdog_grace=0.1, stale_behavior="zero")
    c = b.node.controller
    try:
        now = time.time()
        for k in range(5):
            b.send(now + k * 1e-3)
        assert c.accepted == 5
        stuck, k, began = now + 4e-3, 0, time.monotonic()
        # The driver is stuck: its stamp +1 us per message, sent every ~1 ms (and the
        # pose keeps moving: the controller must not command from it).
        while not (c.stale and np.abs(b.commands[-1]).max() == 0.0):
            k += 1
            q = Q0.copy()
            q[1] += 0.1 * math.sin(k * 1e-3)
            b.send(stuck + k * 1e-6, q)
            b.executor.spin_once(timeout_sec=0.001)
            assert time.monotonic() - began < 20.0, (c.accepted, dict(c.rejected))
        slow = c.rejected["slow_stamps"]
        assert slow > 0 and c.stale_events == 1
        assert c.accepted + slow == 5 + k  # accepted until it was behind, then rejected
        status = b.node.status_report.statuses(c, b.node.messages_received)[0]
        assert status.level == "error", status.message
        assert status.message == "watchdog: joint-state stamps advancing too slowly"
        assert int(status.values["rejected: slow_stamps"]) == slow
        b.send(time.time())  # the driver back on the real time: accepted, fresh
        assert not c.stale and c.rejected["slow_stamps"] == slow
    finally:
        b.close()


@pytest.mark.parametrize("sim_time", [True, False])
def test_a_slow_simulation_on_sim_time_is_never_stale(sim_time: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """/clock at 1/20 of the steady clock (1 ms a step, 20 ms of steady time), the states
    stamped on it: on use_sim_time every state is a command (the stamps keep pace with
    /clock); off it the same stream is behind the steady clock at 0.05 < min_ratio 0.5:
    rejected once 0.1 s behind: 0.5 x 20 ms - 1 ms = 9 ms a step, the 12th step."""
    steady = [time.monotonic()]
    monkeypatch.setattr(controller_node, "_monotonic", lambda: steady[0])
    b = Bench(use_sim_time=sim_time, watchdog_timeout=10.0)
    c = b.node.controller
    try:
        for k in range(300):
            steady[0] += 0.02
            t = START + k * 1e-3
            if sim_time:
                b.set_clock(t)
            b.send(t)
        if sim_time:
            assert c.accepted == 300 and not c.rejected, dict(c.rejected)
        else:
            assert c.rejected["slow_stamps"] == 300 - c.accepted
            assert c.accepted == 12, c.accepted
    finally:
        b.close()
