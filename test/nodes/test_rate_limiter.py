"""The standalone torque-rate limiter node over DDS."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode


@pytest.fixture
def setup():
    context = Context()
    rclpy.init(context=context)
    limiter = RateLimiterNode(context=context, parameter_overrides=overrides(
        {"joints": ["a", "b"], "input_type": "joint_state", "effort_rate_limits": [1000.0, 500.0],
         "effort_limits": [8.0]}))
    probe = Node("probe", context=context)
    outputs: list[np.ndarray] = []
    probe.create_subscription(Float64MultiArray, "/rnea_rate_limiter/output",
                              lambda m: outputs.append(np.array(m.data)), 100)
    pub = probe.create_publisher(JointState, "/rnea_rate_limiter/input_state", 100)
    # The node's receipt clock, made to advance with the stamps (a real-time sender) unless
    # send() says otherwise, and its steady clock with it (the clock rule bounds a step
    # by both): deterministic steps whatever the scheduling of this machine.
    receipt = [0.0]
    limiter.receipt_time = lambda: receipt[0]
    limiter.steady_time = lambda: receipt[0]
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(limiter)
    executor.add_node(probe)
    deadline = time.monotonic() + 10
    while pub.get_subscription_count() == 0 or limiter.output.get_subscription_count() == 0:
        executor.spin_once(timeout_sec=0.01)
        assert time.monotonic() < deadline

    def send(t: float, effort, names=("b", "extra", "a"), received: float | None = None) -> None:
        receipt[0] = max(receipt[0], t) if received is None else received
        msg = JointState()
        msg.header.stamp.sec = int(t)
        msg.header.stamp.nanosec = round((t - int(t)) * 1e9)
        msg.name = list(names)
        values = {"a": effort[0], "b": effort[1], "extra": 99.0}
        msg.effort = [values.get(n, 0.0) for n in names]
        before = len(outputs) + sum(limiter.rejected.values())
        pub.publish(msg)
        end = time.monotonic() + 5
        while len(outputs) + sum(limiter.rejected.values()) == before:
            executor.spin_once(timeout_sec=0.01)
            assert time.monotonic() < end
    yield limiter, outputs, send
    executor.shutdown()
    limiter.destroy_node()
    probe.destroy_node()
    rclpy.try_shutdown(context=context)


def test_step_input_is_ramped_and_clipped(setup) -> None:
    limiter, outputs, send = setup
    send(1.0, [0.0, 0.0])
    for k in range(1, 21):
        send(1.0 + k * 1e-3, [10.0, -10.0])
    out = np.array(outputs)
    assert np.allclose(out[1], [1.0, -0.5]) and np.allclose(out[5], [5.0, -2.5])
    assert np.allclose(out[-1], [8.0, -8.0])  # effort limit 8
    assert np.all(np.abs(np.diff(out, axis=0)) <= np.array([1.0, 0.5]) + 1e-9)
    assert limiter.slew.limited > 0


def test_zero_and_negative_dt_hold_the_previous_command(setup) -> None:
    limiter, outputs, send = setup
    send(2.0, [0.0, 0.0])
    send(2.001, [5.0, 0.0])
    send(2.001, [5.0, 0.0])  # same stamp
    send(1.5, [5.0, 0.0])  # backwards
    assert np.allclose([o[0] for o in outputs], [0.0, 1.0, 1.0, 1.0], atol=1e-9)
    assert limiter.slew.bad_dt == 2
    send(2.003, [5.0, 0.0])
    assert outputs[-1][0] == pytest.approx(3.0)


def test_bad_messages_are_rejected_and_counted(setup) -> None:
    limiter, outputs, send = setup
    send(3.0, [np.nan, 0.0])
    send(3.001, [0.0, 0.0], names=("a",))
    assert limiter.rejected["non_finite"] == 1 and limiter.rejected["missing_joints"] == 1
    assert outputs == []


@pytest.mark.parametrize(("params", "message"), [
    (["-p", "joints:=[a]", "-p", "effort_rate_limits:=[0.0]"], "effort_rate_limits"),
    (["-p", "joints:=[a]", "-p", "effort_rate_limits:=[-5.0]"], "effort_rate_limits"),
    ([], "parameter 'joints'"),
    (["-p", "joints:=[a]", "-p", "input_type:=wrench"], "parameter 'input_type'"),
])
def test_bad_limits_are_refused_at_start_up(params, message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "rnea_ros.nodes.rate_limiter", "--ros-args",
                             *params], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ), check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1 and message in output and "Traceback" not in output


# Issue 22 §2: stamps cannot loosen the limit; the node's receipt clock bounds each step.
# (stamp, receipt) pairs, receipts 1 ms apart.
ATTACKS = {
    "single future stamp": [(5.0, 100.0), (5.9, 100.001)] + [
        (5.9 + k * 1e-3, 100.001 + k * 1e-3) for k in range(1, 10)],
    "stamps 0.9 s apart": [(5.0 + 0.9 * k, 100.0 + k * 1e-3) for k in range(21)],
    "bag at --rate 10": [(5.0 + 1e-2 * k, 100.0 + k * 1e-3) for k in range(21)],
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_stamps_cannot_loosen_the_limit(setup, attack: str) -> None:
    limiter, outputs, send = setup
    for k, (t, received) in enumerate(ATTACKS[attack]):
        send(t, [0.0, 0.0] if k == 0 else [8.0, -8.0], received=received)
    out = np.array(outputs)
    assert len(out) == len(ATTACKS[attack])
    steps = np.abs(np.diff(out, axis=0))
    assert np.all(steps <= np.array([1.0, 0.5]) + 1e-9), steps.max(axis=0)  # 1 ms each
    assert limiter.slew.limited > 0 and np.all(np.abs(out[-1]) > 0.0)


def test_array_input_is_timed_by_the_receipt_clock(setup) -> None:
    limiter, _, _ = setup
    receipt = iter([10.0, 10.001, 10.001, 10.003])
    now = [0.0]

    def read() -> float:
        now[0] = next(receipt)
        return now[0]
    limiter.receipt_time = read
    limiter.steady_time = lambda: now[0]
    for data in ([0.0, 0.0], [5.0, 5.0], [5.0, 5.0], [5.0, 5.0]):
        limiter.on_array(Float64MultiArray(data=data))
    assert limiter.slew.bad_dt == 1  # no time has passed
    assert np.allclose(limiter.slew.previous, [3.0, 1.5])


def test_diagnostics_name_the_node_fully_and_clear_after_the_window() -> None:
    """Issue 22 §5, as for the controller and simulator: two limiters in two namespaces
    publish two distinct statuses (the fully-qualified node name); one NaN input warns
    for ``diagnostics_window`` seconds, then the status is OK again, the total kept."""
    context = Context()
    rclpy.init(context=context)
    nodes = [RateLimiterNode(context=context, namespace=ns, parameter_overrides=overrides(
        {"joints": ["a", "b"], "diagnostics_window": 2.0})) for ns in ("/left", "/right")]
    try:
        reports: list = []
        for node in nodes:
            node.diagnostics.publish = reports.append  # type: ignore[method-assign]
            node.publish_diagnostics(now=0.0)
        assert [r.status[0].name for r in reports] == ["/left/rnea_rate_limiter",
                                                      "/right/rnea_rate_limiter"]
        assert all(r.status[0].hardware_id == "a, b" for r in reports)
        left = nodes[0]
        left.on_array(Float64MultiArray(data=[np.nan, 0.0]))
        levels = []
        for now in (1.0, 2.5, 3.5):
            left.publish_diagnostics(now=now)
            status = reports[-1].status[0]
            values = {kv.key: kv.value for kv in status.values}
            levels.append(status.level)
            assert values["rejected: non_finite"] == "1"
        assert levels == [b"\x01", b"\x01", b"\x00"], levels  # WARN, WARN, OK
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
