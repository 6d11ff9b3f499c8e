"""Issue 35: destroying the nodes releases the DDS participant.

rclpy's ``LifecycleNode.destroy_node`` left the lifecycle state machine, which holds the
rcl node: the controller's and the rate limiter's participant (5 UDP sockets) stayed in
the process after ``destroy_node`` and ``rclpy.shutdown`` until a garbage collection
reached the node object, never after the harness's ``gc.freeze()``. Counted here by the
process's UDP sockets (test/dds_sockets.py), with the garbage collector off: the
release must not wait for it."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest
import rclpy
from dds_sockets import udp_sockets
from rclpy.context import Context
from rclpy.node import Node
from test_multi_robot import launch_parameters

from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import ClosedLoop, overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode


@pytest.fixture
def no_gc() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def sockets_after_destroy(make: Callable[[Context], Node]) -> tuple[int, int, int]:
    """(before, with the node, after its destroy_node) UDP sockets of this process."""
    context = Context()
    rclpy.init(context=context)
    try:
        before = udp_sockets()
        node = make(context)
        alive = udp_sockets()
        node.destroy_node()
        return before, alive, udp_sockets()
    finally:
        rclpy.try_shutdown(context=context)


def arm7_controller(context: Context) -> Node:
    controller, _ = launch_parameters("arm7")
    return ControllerNode(context=context, parameter_overrides=overrides(controller))


def rate_limiter(context: Context) -> Node:
    return RateLimiterNode(context=context, parameter_overrides=overrides(
        {"joints": ["a", "b"], "effort_rate_limits": [100.0, 100.0]}))


@pytest.mark.parametrize("make", [arm7_controller, rate_limiter], ids=["controller",
                                                                       "rate_limiter"])
def test_destroying_a_managed_node_releases_its_participant(no_gc, make) -> None:
    before, alive, after = sockets_after_destroy(make)
    assert alive > before, "the node made a participant (its UDP sockets)"
    assert after == before, f"{after - before} UDP sockets left after destroy_node"


def test_shutting_down_the_context_releases_a_managed_node(no_gc) -> None:
    """A node never destroyed by hand: ``rclpy.shutdown`` destroys it, participant too."""
    context = Context()
    rclpy.init(context=context)
    before = udp_sockets()
    node = arm7_controller(context)
    assert udp_sockets() > before
    rclpy.try_shutdown(context=context)
    assert udp_sockets() == before and node.state_label == "destroyed"


def test_a_closed_loop_leaves_no_participant(no_gc) -> None:
    """Simulator, controller and probe in lockstep for a few steps, then closed."""
    controller, simulator = launch_parameters("arm7")
    before = udp_sockets()
    with ClosedLoop(controller, simulator) as loop:
        assert loop.run_for(0.01)
        assert udp_sockets() > before
    assert udp_sockets() == before
