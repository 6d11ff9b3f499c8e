"""Issue 35 over DDS: joint states whose stamps stop advancing do not freeze the
command (docs/nodes.md, the clock rule: "Stamps that stop advancing").

The controller node: a robot at rest, then its driver's clock freezes while the
arm moves -- every state repeats the last stamp. Each is rejected
(``duplicate_stamp``), no command answers it, the watchdog fires (``stale_behavior:
zero``: the command leaves the held value for zero at the rate limit) and
``/diagnostics`` says why; advancing stamps recover. Whatever the schedule: the
states are sent one at a time and each answer (a command or the rejection's count)
awaited; the silence only grows, so the watchdog fires once timeout + grace of
real time have passed, however slowly the machine runs.

The rate-limiter node: a joint-state input whose stamp never advances, in lockstep
on the test's steady clock (1 ms a step): the output climbs at the rate limit.
On old main both stayed frozen at the last command.
"""

from __future__ import annotations

import time

import numpy as np
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
START = 100.0  # [s] the driver's stamps
DT = 1e-3  # [s]


def stamp_of(header, t: float) -> None:
    ns = round(t * 1e9)
    header.stamp.sec, header.stamp.nanosec = divmod(ns, 1_000_000_000)


def spin_until(executor: SingleThreadedExecutor, done, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while not done():
        if time.monotonic() > end:
            return False
        executor.spin_once(timeout_sec=0.01)
    return True


def state(q: np.ndarray, t: float) -> JointState:
    msg = JointState(name=list(MODEL.joint_names), position=q.tolist(),
                     velocity=[0.0] * MODEL.nv)
    stamp_of(msg.header, t)
    return msg


def test_controller_node_rejects_frozen_stamps_and_the_watchdog_acts() -> None:
    context = Context()
    rclpy.init(context=context)
    node = ControllerNode(context=context, parameter_overrides=overrides({
        "urdf_path": URDF, "watchdog_timeout": 0.1, "watchdog_grace": 0.1,
        "stale_behavior": "zero", "diagnostics_period": 5.0}))
    probe = Node("stamps_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, probe):
        executor.add_node(n)
    try:
        commands: list[np.ndarray] = []
        probe.create_subscription(Float64MultiArray, "effort_controller/commands",
                                  lambda m: commands.append(np.array(m.data)), 100)
        pub = probe.create_publisher(JointState, "joint_states", 100)
        assert spin_until(executor, lambda: pub.get_subscription_count() > 0
                          and node.command_pub.get_subscription_count() > 0)
        c = node.controller
        for k in range(10):  # at rest, stamps advancing: one command each
            pub.publish(state(Q0, START + k * DT))
            assert spin_until(executor, lambda n=k + 1: len(commands) == n)
        held = gravity_torques(MODEL, Q0)
        assert np.allclose(commands[-1], held, atol=1e-9)
        # The driver's clock freezes at its last stamp while the arm swings.
        frozen, sent = START + 9 * DT, 0
        answered = len(commands)
        while not (c.stale and np.abs(commands[-1]).max() == 0.0) and sent < 5000:
            q = Q0.copy()
            q[1] += 0.3 * min((sent + 1) / 100, 1.0)  # moving from the first (an identical
            # resend of the merged sample is counted apart, as resent)
            before = c.rejected["duplicate_stamp"]
            pub.publish(state(q, frozen))
            sent += 1
            assert spin_until(executor, lambda b=before: c.rejected["duplicate_stamp"] > b)
            executor.spin_once(timeout_sec=0.005)  # the watchdog's timer, when due
        assert c.rejected["duplicate_stamp"] == sent and c.accepted == 10
        assert c.stale and c.stale_events == 1, (c.stale, sent)
        stale = commands[answered:]
        # Only the watchdog answered: from the held command to zero, at the rate limit.
        assert len(stale) >= 1 and np.abs(stale[-1]).max() == 0.0
        steps = np.abs(np.diff(np.vstack([commands[answered - 1], *stale]), axis=0))
        assert steps.max() > 0.0  # not frozen
        status = node.status_report.statuses(c, node.messages_received)[0]
        assert status.level == "error", status.message
        assert status.message == "watchdog: joint-state stamps stopped advancing"
        assert status.values["rejected: duplicate_stamp"] == str(sent)
        # The clock runs again: accepted, commands computed, the stale state cleared.
        count = len(commands)
        q = Q0.copy()
        q[1] += 0.3
        pub.publish(state(q, frozen + DT))
        assert spin_until(executor, lambda: c.accepted == 11)
        assert not c.stale
        assert spin_until(executor, lambda: len(commands) > count)
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
        rclpy.try_shutdown(context=context)


def test_rate_limiter_node_tracks_through_frozen_stamps() -> None:
    context = Context()
    rclpy.init(context=context)
    node = RateLimiterNode(context=context, parameter_overrides=overrides({
        "joints": ["a"], "input_type": "joint_state", "effort_rate_limits": [100.0]}))
    steady = [1000.0]
    node.steady_time = lambda: steady[0]  # type: ignore[method-assign]
    node.receipt_time = lambda: steady[0]  # type: ignore[method-assign]
    probe = Node("stamps_limiter_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, probe):
        executor.add_node(n)
    try:
        outputs: list[float] = []
        probe.create_subscription(Float64MultiArray, "/rnea_rate_limiter/output",
                                  lambda m: outputs.append(m.data[0]), 100)
        pub = probe.create_publisher(JointState, "/rnea_rate_limiter/input_state", 100)
        assert spin_until(executor, lambda: pub.get_subscription_count() > 0
                          and node.output.get_subscription_count() > 0)
        for k in range(100):  # 0 N m, then 50 N m asked, the stamp frozen at START
            steady[0] = 1000.0 + k * DT
            msg = JointState(name=["a"], effort=[0.0 if k == 0 else 50.0])
            stamp_of(msg.header, START)
            pub.publish(msg)
            assert spin_until(executor, lambda n=k + 1: len(outputs) == n)
        # 100 N m/s x 1 ms a step: 0.1 N m a step (old main: 0 for ever)
        assert np.allclose(np.diff(outputs), 0.1, atol=1e-9), outputs[:5]
        assert node.limiter.duplicate_stamps == 99
        reports: list = []
        node.diagnostics.publish = reports.append  # type: ignore[method-assign]
        node.publish_diagnostics(now=steady[0])
        status = reports[-1].status[0]
        values = {kv.key: kv.value for kv in status.values}
        assert status.level == b"\x01" and "stamps not advancing" in status.message
        assert values["duplicate stamps"] == "99"
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
        rclpy.try_shutdown(context=context)
