"""Node helpers: timers whose callback rclpy need not inspect at each firing."""

from __future__ import annotations

import inspect
import time

import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.experimental import EventsExecutor  # type: ignore[attr-defined]
from rclpy.node import Node

from rnea_ros.nodes.common import TimerCallback, steady_timer


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
    steady_timer(node, 0.01, lambda: fired.append(time.monotonic()))
    executor = EventsExecutor(context=context) if events else \
        SingleThreadedExecutor(context=context)  # the two make_executor may return
    try:
        executor.add_node(node)
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    assert len(fired) >= 15  # 0.3 s at 100 Hz, on a loaded machine
    assert asked and all(isinstance(obj, TimerCallback) for obj in asked)
