"""The rate limiter as a managed node (issue 39), driven over DDS through its
``lifecycle_msgs`` services: no output unconfigured or inactive (inputs counted), the
limit continuing from the last output across a deactivate/activate, cleanup releasing
the limiter and its input, shutdown from active publishing nothing further, a failing
configure reported on ``/diagnostics``. The node's receipt and steady clocks advance
with the inputs (as in test_rate_limiter.py): the limited values do not depend on this
machine's scheduling."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray

from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode

NODE = "/rnea_rate_limiter"
RATE = 1000.0  # N m/s


@dataclass
class Rig:
    limiter: RateLimiterNode
    probe: Node
    executor: SingleThreadedExecutor
    pub: Any
    outputs: list[np.ndarray] = field(default_factory=list)
    diagnostics: list[DiagnosticArray] = field(default_factory=list)
    clock: list[float] = field(default_factory=lambda: [100.0])

    def spin_until(self, done: Callable[[], bool], timeout: float = 30.0) -> bool:
        import time
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        return done()

    def call(self, srv: Any, name: str, request: Any) -> Any:
        client = self.probe.create_client(srv, f"{NODE}/{name}")
        assert self.spin_until(client.service_is_ready), name
        future = client.call_async(request)
        assert self.spin_until(future.done, 30.0), name
        self.probe.destroy_client(client)
        return future.result()

    def transition(self, transition_id: int) -> bool:
        return bool(self.call(ChangeState, "change_state",
                              ChangeState.Request(transition=Transition(id=transition_id))
                              ).success)

    def state(self) -> str:
        return str(self.call(GetState, "get_state", GetState.Request()).current_state.label)

    def transitions(self) -> set[str]:
        answer = self.call(GetAvailableTransitions, "get_available_transitions",
                           GetAvailableTransitions.Request())
        return {t.transition.label for t in answer.available_transitions}

    def send(self, value: float, dt: float = 0.01) -> None:
        """One input [value, value], ``dt`` s after the last on the node's clocks; spun
        until the node has taken it (an output, or counted as inactive)."""
        self.clock[0] += dt
        before = len(self.outputs) + self.limiter.inactive_inputs
        self.pub.publish(Float64MultiArray(data=[value, value]))
        assert self.spin_until(
            lambda: len(self.outputs) + self.limiter.inactive_inputs > before)
        self.spin_until(lambda: False, 0.05)  # (an output after it, if any, arrives too)

    def status(self) -> DiagnosticStatus:
        self.diagnostics.clear()
        assert self.spin_until(lambda: any(s.name.endswith("rnea_rate_limiter")
                                           for a in self.diagnostics for s in a.status))
        return [s for a in self.diagnostics for s in a.status
                if s.name.endswith("rnea_rate_limiter")][-1]


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


@pytest.fixture
def make_rig() -> Iterator[Callable[..., Rig]]:
    made: list[tuple[Context, SingleThreadedExecutor, list[Node]]] = []

    def make(**params: Any) -> Rig:
        context = Context()
        rclpy.init(context=context)
        limiter = RateLimiterNode(context=context, parameter_overrides=overrides({
            "joints": ["a", "b"], "effort_rate_limits": [RATE], "autostart": "unconfigured",
            "diagnostics_period": 0.1, **params}))
        probe = Node("probe", context=context)
        executor = SingleThreadedExecutor(context=context)
        rig = Rig(limiter, probe, executor,
                  probe.create_publisher(Float64MultiArray, f"{NODE}/input", 100))
        probe.create_subscription(Float64MultiArray, f"{NODE}/output",
                                  lambda m: rig.outputs.append(np.array(m.data)), 100)
        probe.create_subscription(DiagnosticArray, "/diagnostics", rig.diagnostics.append, 10)
        limiter.receipt_time = lambda: rig.clock[0]  # type: ignore[method-assign]
        limiter.steady_time = lambda: rig.clock[0]  # type: ignore[method-assign]
        executor.add_node(limiter)
        executor.add_node(probe)
        made.append((context, executor, [limiter, probe]))
        return rig

    yield make
    for context, executor, nodes in made:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_rate_limiter_lifecycle(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig()
    assert rig.state() == "unconfigured" and "configure" in rig.transitions()
    assert values(rig.status())["lifecycle_state"] == "unconfigured"
    assert rig.pub.get_subscription_count() == 0  # no input before configure

    assert rig.transition(Transition.TRANSITION_CONFIGURE)
    assert rig.state() == "inactive"
    assert rig.spin_until(lambda: rig.pub.get_subscription_count() == 1
                          and rig.limiter.output.get_subscription_count() == 1)
    rig.send(5.0)
    assert rig.outputs == [] and rig.limiter.inactive_inputs == 1
    status = rig.status()
    assert status.level == DiagnosticStatus.WARN and status.message.startswith("inactive")

    assert rig.transition(Transition.TRANSITION_ACTIVATE)
    rig.send(0.0)
    rig.send(100.0)  # limited: 0 + RATE * 0.01
    np.testing.assert_allclose(rig.outputs, [[0.0, 0.0], [10.0, 10.0]])
    assert values(rig.status())["lifecycle_state"] == "active"

    assert rig.transition(Transition.TRANSITION_DEACTIVATE)
    rig.send(100.0)
    assert len(rig.outputs) == 2 and rig.limiter.inactive_inputs == 2  # nothing out

    assert rig.transition(Transition.TRANSITION_ACTIVATE)
    rig.send(100.0)  # the limit continues from the last output (10), 0.02 s ago: no step
    assert len(rig.outputs) == 3
    np.testing.assert_allclose(rig.outputs[-1], [10.0 + RATE * 0.02] * 2)

    assert rig.transition(Transition.TRANSITION_DEACTIVATE)
    assert rig.transition(Transition.TRANSITION_CLEANUP)
    assert rig.state() == "unconfigured" and rig.limiter.limiter is None
    assert rig.spin_until(lambda: rig.pub.get_subscription_count() == 0)

    assert rig.transition(Transition.TRANSITION_CONFIGURE)
    assert rig.transition(Transition.TRANSITION_ACTIVATE)
    rig.send(1.0)
    assert len(rig.outputs) == 4
    assert rig.transition(Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert rig.state() == "finalized"
    rig.pub.publish(Float64MultiArray(data=[2.0, 2.0]))
    rig.diagnostics.clear()
    rig.spin_until(lambda: False, 0.5)  # (5 diagnostics periods)
    assert len(rig.outputs) == 4
    assert not [s for a in rig.diagnostics for s in a.status
                if s.name.endswith("rnea_rate_limiter")], "/diagnostics after shutdown"


def test_rate_limiter_failing_configure_is_reported(make_rig: Callable[..., Rig]) -> None:
    rig = make_rig(joints=[""])
    assert not rig.transition(Transition.TRANSITION_CONFIGURE)
    assert rig.state() == "unconfigured"
    status = rig.status()
    assert status.level == DiagnosticStatus.ERROR
    assert "configure failed" in status.message and "'joints'" in status.message
    assert values(status)["lifecycle_state"] == "unconfigured"
