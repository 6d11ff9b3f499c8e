"""The simulator node when its process stalls (a loaded machine, a garbage collection;
the node tests share one process, which stalled for up to 1.1 s): the simulated robot
is frozen meanwhile, not left without commands. A real-time simulator applies no zero
effort after the stall (its drive's ``command_timeout`` counts the steps taken since the
last command), and a lockstep simulator resends no state whose answer is queued (it
waits for 0.5 s of its own timer's firings). On the wall clock, both did: the first tick
after a stall longer than ``command_timeout`` applied zero effort, a kick that the held
(frictionless) arm kept as a drift; the resend put a second state in the lockstep loop,
which broke the identification loop's tenfold check."""

from __future__ import annotations

import time

import numpy as np
import pytest

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.nodes.simulator import RESEND_AFTER
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = 0.5 * (MODEL.lower_limit + MODEL.upper_limit) + 0.3
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 2.0}  # longer than the stalls


def test_a_stall_longer_than_the_command_timeout_leaves_the_effort_on() -> None:
    simulator = {"urdf_path": URDF, "initial_positions": Q0.tolist(), "lockstep": False,
                 "command_timeout": 0.2}
    with ClosedLoop(CONTROLLER, simulator) as loop:
        node = loop.simulator
        assert node is not None and loop.run_for(0.2)
        applied: list[np.ndarray] = []
        step, on_command, last = node.sim.step, node.command_sub.callback, [-1]

        def recorded(tau: np.ndarray) -> None:
            applied.append(np.array(tau))
            step(tau)

        def command(msg: object) -> None:
            last[0] = len(applied)  # the index of the first step with it
            on_command(msg)
        node.sim.step = recorded  # type: ignore[method-assign]
        node.command_sub.callback = command
        start = len(loop.probe.recording.q)
        time.sleep(3 * node.command_timeout)  # the process stalls: no callback runs
        assert loop.run_for(0.3)
        assert len(applied) >= 300 and all(tau.any() for tau in applied)
        drift = np.abs(np.array(loop.probe.recording.q[start:]) - Q0).max()
        assert drift < 1e-6, drift  # held by gravity compensation, without a kick
        # A real silence still is one: zero effort from command_timeout after the last
        # command (in flight when the controller goes) on.
        removed = len(applied)
        loop.executor.remove_node(loop.controller)
        assert loop.run_for(2 * node.command_timeout)
        zero = [not tau.any() for tau in applied[removed:]]
        first = removed + zero.index(True)
        assert all(zero[first - removed:]) and not any(zero[:first - removed])
        assert (first - last[0]) * node.sim.dt == pytest.approx(node.command_timeout,
                                                                abs=1.5 * node.sim.dt)


def test_a_stall_puts_no_second_state_in_the_lockstep_loop() -> None:
    simulator = {"urdf_path": URDF, "initial_positions": Q0.tolist()}
    with ClosedLoop(CONTROLLER, simulator) as loop:
        assert loop.run_for(0.2)  # it returns with a state or a command in flight
        c = loop.controller.controller if loop.controller else None
        assert c is not None
        repeated, start = c.slew.bad_dt, len(loop.probe.recording.t)
        time.sleep(2 * RESEND_AFTER)  # the process stalls, the answer is queued
        assert loop.run_for(0.3)
        t = np.array(loop.probe.recording.t[start:])
        assert len(t) >= 300 and np.all(np.diff(t) > 0), "a state came twice"
        assert c.slew.bad_dt == repeated  # the controller saw no repeated stamp
        # A lost command still gets the state resent, RESEND_AFTER after the node's last
        # state (its own silence: the firings of its timer since that publish, which
        # never come early; measured from when the test noticed the loss, the wait
        # looked shorter by the command's round trip, 4 ms beside two busy loops).
        node = loop.simulator
        assert node is not None
        on_command, dropped = node.command_sub.callback, []
        publish, published = node.publish_state, []

        def recorded() -> None:
            published.append(time.monotonic())
            publish()
        node.publish_state = recorded  # type: ignore[method-assign]
        node.command_sub.callback = dropped.append
        assert loop.spin_until(lambda: bool(dropped), 1.0)
        node.command_sub.callback = on_command
        sim_time, silent_since, before = loop.sim_time, node.last_publish_wall, len(published)
        assert loop.spin_until(lambda: loop.sim_time > sim_time, 5.0)
        resent = published[before]  # the next state after the loss: the resend
        assert resent - silent_since >= RESEND_AFTER, resent - silent_since
        assert loop.run_for(0.1, wall_timeout=5.0)
