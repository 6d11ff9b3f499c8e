"""Issue 35 §2: a backlog of joint states is shed to the newest one.

A Gough-Stewart controller (its launch parameters, fed by the probe) given a burst of
out-of-reach states, each costing a pose solve up to its budget: on the old main the
executor handled every queued state in turn (one callback each, the watchdog's timer
queued behind a flood of them: 1.3-2.1 s without a command at 30 000 states/s). Now the
first callback takes the whole backlog, handles the newest state only and counts the
others as shed (``/diagnostics``); states naming other joints (a state split over two
publishers) are each kept. Deterministic: the burst is known to be queued (a witness
node on its own executor has received it) before the controller's executor spins."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from test_closed_loop_robots import controller_status, publish_until_command, state
from test_multi_robot import launch_parameters

from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.nodes.shedding import KINDS, NewestOnly, joint_names

ROBOT = "gough_stewart"
ACTIVE = [f"leg{k}_slide" for k in range(1, 7)]
GOOD = np.array([0.02, -0.01, 0.03, 0.0, -0.02, 0.01])
BURST = 10  # the state subscription's depth (KEEP_LAST): all of a burst stays queued


class Witness:
    """A node of the same context on an executor of its own, counting the joint states
    it receives: once it has the burst, so has the controller's (unspun) subscription."""

    def __init__(self, fed: ClosedLoop) -> None:
        self.node = Node("rnea_witness", context=fed.context)
        self.count = 0
        self.node.create_subscription(JointState, "joint_states", self.on_state, 100)
        self.executor = SingleThreadedExecutor(context=fed.context)
        self.executor.add_node(self.node)

    def on_state(self, msg: JointState) -> None:
        self.count += 1

    def wait_for(self, count: int, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while self.count < count and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        assert self.count >= count, f"the witness got {self.count} of {count} states"
        time.sleep(0.05)  # (the controller's reader is served by the same DDS thread)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture
def fed():
    controller, _ = launch_parameters(ROBOT)
    params = {**controller, "watchdog_timeout": 0.3, "diagnostics_period": 0.1}
    with ClosedLoop(params, None) as loop:
        witness = Witness(loop)
        loop.spin_until(lambda: loop.probe.state_pub.get_subscription_count() >= 2, 10.0)
        publish_until_command(loop, state(1.0, GOOD, ACTIVE))
        witness.wait_for(1)
        yield loop, witness
        witness.close()


def spin_until_taken(loop: ClosedLoop) -> None:
    """Spin the controller's executor one callback at a time until one of them took
    joint states."""
    node = loop.controller
    before = node.messages_received
    end = time.monotonic() + 10.0
    while node.messages_received == before and time.monotonic() < end:
        loop.executor.spin_once(timeout_sec=0.01)


def test_a_burst_of_unreachable_states_costs_one_solve_the_rest_shed(fed) -> None:
    """BURST out-of-reach states queued: one callback takes them all, solves the newest
    (one rejection), sheds BURST - 1, and /diagnostics reports them; the next good
    state gives a command."""
    loop, witness = fed
    node, c = loop.controller, loop.controller.controller
    taken, solves = node.messages_received, len(c.platform.solve_us)
    rejected = sum(c.rejected.values())
    seen = witness.count
    rng = np.random.default_rng(35)
    for k in range(BURST):  # random strokes within the limits, out of every leg's reach
        bad = np.array([0.12, 0.12, 0.12, -0.12, -0.12, -0.12]) - rng.uniform(0, 0.01, 6)
        loop.probe.state_pub.publish(state(1.1 + 0.001 * k, bad, ACTIVE))
    witness.wait_for(seen + BURST)
    spin_until_taken(loop)
    assert node.messages_received - taken == BURST, "one callback took the backlog"
    assert len(c.platform.solve_us) - solves == 1, "one pose solve, for the newest state"
    assert sum(c.rejected.values()) - rejected == 1, c.rejected
    assert node.intake.shed == BURST - 1
    assert loop.spin_until(
        lambda: controller_status(loop)[1].get("shed (a newer state was queued)")
        == str(BURST - 1), 5.0), controller_status(loop)[1]
    publish_until_command(loop, state(1.2, GOOD + 0.001, ACTIVE))
    assert node.intake.shed == BURST - 1


def test_states_naming_other_joints_are_kept(fed) -> None:
    """A backlog of two kinds of state (all joints; three of them, as a second
    publisher would send): the newest of each is handled, in the order they came."""
    loop, witness = fed
    node, c = loop.controller, loop.controller.controller
    accepted, shed = c.accepted, node.intake.shed
    seen = witness.count
    for k in range(4):
        loop.probe.state_pub.publish(state(1.1 + 0.002 * k, GOOD + 1e-4 * k, ACTIVE))
        loop.probe.state_pub.publish(state(1.101 + 0.002 * k, GOOD[:3], ACTIVE[:3]))
    witness.wait_for(seen + 8)
    spin_until_taken(loop)
    assert c.accepted - accepted == 2, "the newest full state and the newest partial one"
    assert node.intake.shed - shed == 6
    assert np.allclose(c._q[:3], GOOD[:3]) and np.allclose(c._q[3:6], (GOOD + 3e-4)[3:])


class FakeSubscription:
    """A subscription's handle and types, its queue a list (NewestOnly's unit test)."""

    def __init__(self, queued: list[JointState]) -> None:
        self.queued, self.msg_type, self.raw = list(queued), JointState, False
        self.handle = self

    def take_message(self, msg_type: type, raw: bool) -> tuple[JointState, None] | None:
        return (self.queued.pop(0), None) if self.queued else None


def named(*names: str) -> JointState:
    msg = JointState()
    msg.name = list(names)
    return msg


def test_newest_only_keeps_at_most_kinds_and_counts_everything() -> None:
    """Nothing queued: the message itself. A backlog of more kinds than KINDS: the
    newest KINDS kinds, oldest first; every message counted as taken, handled or shed."""
    first = named("a")
    intake = NewestOnly(FakeSubscription([]), joint_names)  # type: ignore[arg-type]
    assert intake.newest(first) == [first] and (intake.taken, intake.shed) == (1, 0)
    queue = [named(f"j{k % (KINDS + 2)}") for k in range(3 * (KINDS + 2))]
    intake = NewestOnly(FakeSubscription(queue), joint_names)  # type: ignore[arg-type]
    kept = intake.newest(first)
    assert kept == queue[-KINDS:]
    assert intake.taken == len(queue) + 1 and intake.shed == intake.taken - KINDS
