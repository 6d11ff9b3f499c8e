"""Node helpers: timers whose callback rclpy need not inspect at each firing, a
command message kept serialised, the start-up logger named like the node."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.experimental import EventsExecutor  # type: ignore[attr-defined]
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import Float64MultiArray

from rnea_ros.nodes.common import SerializedArray, TimerCallback, logger_name, steady_timer


def test_timer_callback_declares_an_empty_signature() -> None:
    calls = []
    callback = TimerCallback(lambda: calls.append(1))
    assert len(inspect.signature(callback).parameters) == 0
    callback()
    assert calls == [1]


@pytest.mark.parametrize("events", [True, False])
def test_steady_timer_fires_at_its_period_without_inspecting_the_callback(
        events: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both executors (the events executor captures inspect.signature when it is built,
    the stock one looks it up at each firing) call the callback without parameters,
    and the signature they ask for is the declared one."""
    asked = []
    signature = inspect.signature

    def spy(obj, *args, **kwargs):
        asked.append(obj)
        return signature(obj, *args, **kwargs)
    monkeypatch.setattr(inspect, "signature", spy)
    context = Context()
    rclpy.init(context=context)
    node = Node("timer_test", context=context)
    fired: list[float] = []
    created = time.monotonic()
    steady_timer(node, 0.01, lambda: fired.append(time.monotonic()))
    executor = EventsExecutor(context=context) if events else \
        SingleThreadedExecutor(context=context)  # the two make_executor may return
    try:
        executor.add_node(node)
        started = time.monotonic()
        # 15 firings (0.15 s at 100 Hz when idle): a wall budget (0.3 s) made the count
        # depend on the load (it failed in make test-stress at load 11-15 on 2 cores).
        while len(fired) < 15 and time.monotonic() < started + 60.0:
            executor.spin_once(timeout_sec=0.02)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert len(fired) >= 15
    # Never more often than its period, on any schedule (a late timer fires once, then
    # keeps its phase): at most one firing per period since it was created.
    assert len(fired) <= (fired[-1] - created) / 0.01 + 1e-9, (len(fired), fired[-1] - created)
    assert asked and all(isinstance(obj, TimerCallback) for obj in asked)


def test_serialized_array_publishes_what_is_written_in_place() -> None:
    command = SerializedArray(7)
    assert isinstance(command.payload(), bytes) and np.array_equal(command.values, np.zeros(7))
    values = np.array([1.5, -2.0, np.pi, 0.0, 1e300, -1e-300, 7.0])
    command.values[:] = values
    decoded = deserialize_message(command.payload(), Float64MultiArray)
    assert np.array_equal(decoded.data, values) and list(decoded.layout.dim) == []
    # Over DDS, to a typed subscriber.
    context = Context()
    rclpy.init(context=context)
    node = Node("serialized_test", context=context)
    received: list[np.ndarray] = []
    node.create_subscription(Float64MultiArray, "serialized_test", lambda m:
                             received.append(np.array(m.data)), 10)
    pub = node.create_publisher(Float64MultiArray, "serialized_test", 10)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        end = time.monotonic() + 5.0
        while not received and time.monotonic() < end:
            pub.publish(command.payload())
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert received and np.array_equal(received[0], values)


def test_serialized_array_falls_back_to_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the data are not the serialised message's last doubles (another
    encoding), the message itself is written and published."""
    import rnea_ros.nodes.common as common
    monkeypatch.setattr(common, "deserialize_message", lambda *_: Float64MultiArray())
    command = SerializedArray(3)
    command.values[:] = [1.0, 2.0, 3.0]
    payload = command.payload()
    assert isinstance(payload, Float64MultiArray) and list(payload.data) == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(("args", "expected"), [
    (["prog"], "rnea_controller"),
    (["prog", "--ros-args", "-r", "__ns:=/cell1"], "cell1.rnea_controller"),
    (["prog", "--ros-args", "-r", "__node:=left", "-r", "__ns:=/fleet/r2", "-p", "x:=1"],
     "fleet.r2.left"),
    (["prog", "--ros-args", "--remap", "rnea_controller:__ns:=/a", "-r", "other:__ns:=/b"],
     "a.rnea_controller"),
    (["prog", "-r", "__ns:=/not_ros", "--ros-args", "-p", "x:=1", "--", "-r", "__ns:=/no"],
     "rnea_controller"),
])
def test_start_up_logger_is_named_like_the_node(args: list[str], expected: str) -> None:
    assert logger_name("rnea_controller", args) == expected


def test_a_namespaced_node_that_cannot_start_names_its_namespace() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args",
         "-r", "__ns:=/cell1", "-p", "urdf_path:=/nonexistent/robot.urdf"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "[cell1.rnea_controller]: cannot start: cannot read URDF file" in output, output


class _TimerNode:
    """The two calls :func:`retime` makes on a node, recorded (no DDS participant)."""

    def __init__(self) -> None:
        self.created: list[object] = []
        self.destroyed: list[object] = []

    def create_timer(self, period: float, callback: object, clock: object) -> object:
        timer = type("T", (), {"timer_period_ns": round(period * 1e9),
                               "callback": callback, "clock": clock})()
        self.created.append(timer)
        return timer

    def destroy_timer(self, timer: object) -> bool:
        self.destroyed.append(timer)
        return True


def test_retime_replaces_a_timer_only_when_its_period_changes() -> None:
    """One helper for the controller's watchdog and diagnostics timers (on main each had
    its own copy of destroy / create / swap in the configured entities)."""
    from rnea_ros.nodes.common import retime
    node = _TimerNode()
    calls: list[int] = []
    timer = steady_timer(node, 0.1, lambda: calls.append(1))  # type: ignore[arg-type]
    made = ["publisher", timer, "subscription"]
    same = retime(node, timer, 0.1, lambda: calls.append(2), made)  # type: ignore[arg-type]
    assert same is timer and node.destroyed == [] and len(node.created) == 1
    fresh = retime(node, timer, 0.25, lambda: calls.append(3), made)  # type: ignore[arg-type]
    assert fresh is not timer and node.destroyed == [timer]
    assert fresh.timer_period_ns == 250_000_000  # type: ignore[attr-defined]
    assert made == ["publisher", fresh, "subscription"]  # in its place, the old one gone
    fresh.callback()  # type: ignore[attr-defined]
    assert calls == [3]
    assert retime(node, fresh, 0.5, lambda: None) is not fresh  # no list: none touched
    assert made == ["publisher", fresh, "subscription"]
