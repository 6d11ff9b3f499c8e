"""The controller as a managed node (issue 39), driven over DDS through its
``lifecycle_msgs`` services (``~/change_state``, ``~/get_state``,
``~/get_available_transitions``) with the simulator in lockstep: nothing is commanded
before activate, the first command is bumpless (the gravity torque at the pose of
activation, Pinocchio's), deactivate publishes one final command (``hold``: gravity at
the last pose) and then nothing, a second activate resumes bumplessly, cleanup
releases the model, a failing configure (an unknown joint in ``joints``) is reported
and recoverable, and an exception in a callback ends in error processing.

Every step is ordered by the lockstep loop or by a service's answer, never by a sleep:
the waits below are for a bounded number of the simulator's resends (one per
``RESEND_AFTER`` of silence), and what they assert holds on any schedule."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetAvailableTransitions, GetState
from rclpy.node import Node

from rnea_ros.nodes.harness import ARM7_GAINS, ClosedLoop
from rnea_ros.nodes.simulator import RESEND_AFTER
from rnea_ros.samples import sample_urdf

URDF = sample_urdf("arm7")
PIN = pin.buildModelFromUrdf(str(URDF))
Q0 = np.array([0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1])
NODE = "/rnea_controller"
CONTROLLER = {"urdf_path": str(URDF), "autostart": "unconfigured", "watchdog_timeout": 1.0,
              "mode": "inverse_dynamics", **ARM7_GAINS}


def gravity(q: np.ndarray) -> np.ndarray:
    """Pinocchio's g(q) for arm7."""
    return np.asarray(pin.computeGeneralizedGravity(PIN, PIN.createData(), q))


class Lifecycle:
    """A client of one node's lifecycle services, spun by the loop's executor."""

    def __init__(self, loop: ClosedLoop, node: str = NODE) -> None:
        self.loop = loop
        self.client = Node("lifecycle_client", context=loop.context)
        loop.executor.add_node(self.client)
        self.change = self.client.create_client(ChangeState, f"{node}/change_state")
        self.get = self.client.create_client(GetState, f"{node}/get_state")
        self.available = self.client.create_client(GetAvailableTransitions,
                                                   f"{node}/get_available_transitions")
        for client in (self.change, self.get, self.available):
            assert loop.spin_until(client.service_is_ready, 30.0), client.srv_name

    def call(self, client: Any, request: Any) -> Any:
        future = client.call_async(request)
        assert self.loop.spin_until(future.done, 60.0), client.srv_name
        return future.result()

    def transition(self, transition_id: int) -> bool:
        return bool(self.call(self.change, ChangeState.Request(
            transition=Transition(id=transition_id))).success)

    def state(self) -> str:
        return str(self.call(self.get, GetState.Request()).current_state.label)

    def transitions(self) -> set[str]:
        answer = self.call(self.available, GetAvailableTransitions.Request())
        return {t.transition.label for t in answer.available_transitions}


def own_status(recording: Any) -> Any:
    """The controller's last main status on /diagnostics."""
    statuses = controller_statuses(recording)
    assert statuses, "no /diagnostics from the controller"
    return statuses[-1]


def values(status: Any) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def wait_resends(loop: ClosedLoop, count: int = 2) -> None:
    """Spin until the controller (not active) has taken ``count`` more of the simulator's
    states (its resends: the state sent again after RESEND_AFTER without a command), then
    until it has reported on /diagnostics after them. On any schedule: a fixed wall
    interval (``count * RESEND_AFTER + 1.2`` s, before issue 35) need not hold a resend
    or a report on a busy machine."""
    node = loop.controller_node()
    taken = node.inactive_states + count
    assert loop.spin_until(lambda: node.inactive_states >= taken, 60.0 + count * RESEND_AFTER), \
        f"the controller took {node.inactive_states - taken + count} of {count} states"
    reports = len(controller_statuses(loop.probe.recording))
    assert loop.spin_until(
        lambda: len(controller_statuses(loop.probe.recording)) > reports, 60.0), \
        "no /diagnostics from the controller after the states"


def controller_statuses(recording: Any) -> list[Any]:
    """The controller's main statuses on /diagnostics, oldest first."""
    return [s for array in recording.diagnostics for s in array.status
            if s.name.endswith("rnea_controller")]


@pytest.fixture
def loop() -> Iterator[ClosedLoop]:
    with ClosedLoop(CONTROLLER, {"urdf_path": str(URDF),
                                 "initial_positions": Q0.tolist()}) as closed:
        yield closed


def test_configure_activate_deactivate_activate_cleanup(loop: ClosedLoop) -> None:
    life, rec = Lifecycle(loop), loop.probe.recording
    node = loop.controller
    assert node is not None
    assert life.state() == "unconfigured" and "configure" in life.transitions()
    wait_resends(loop)
    assert rec.commands == [], "commanded while unconfigured"
    status = own_status(rec)
    assert values(status)["lifecycle_state"] == "unconfigured"

    assert life.transition(Transition.TRANSITION_CONFIGURE)
    assert life.state() == "inactive" and "activate" in life.transitions()
    rec.diagnostics.clear()
    wait_resends(loop)
    assert rec.commands == [], "commanded while inactive"
    assert values(own_status(rec))["lifecycle_state"] == "inactive"
    assert node.inactive_states >= 1  # the simulator's states came, and were not answered

    # activate: the first command answers the pose the robot is in (Q0, at rest): the
    # reference holds it, so the command is g(Q0), no jump (bumpless)
    assert life.transition(Transition.TRANSITION_ACTIVATE)
    assert life.state() == "active"
    assert loop.run_for(0.5)
    first = rec.commands[0]
    np.testing.assert_allclose(first, gravity(Q0), rtol=1e-9, atol=1e-9)
    assert np.abs(np.array(rec.q) - Q0).max() < 1e-3  # held where it was activated
    # (its next report: 0.5 s of simulated time need not span a diagnostics period)
    assert loop.spin_until(lambda: values(own_status(rec))["lifecycle_state"] == "active",
                           60.0)

    # deactivate with the loop held: the answer to the last state, then one final
    # command (stale_behavior 'hold': gravity at that last pose), then nothing
    with loop.held():
        loop.take_last_state()
        assert loop.spin_until(lambda: len(rec.commands) >= len(rec.t), 10.0)
        before, q_last = len(rec.commands), rec.q[-1]
        assert life.transition(Transition.TRANSITION_DEACTIVATE)
        assert loop.spin_until(lambda: len(rec.commands) > before, 10.0)
    np.testing.assert_allclose(rec.commands[before], gravity(q_last), rtol=1e-9, atol=1e-9)
    assert life.state() == "inactive"
    count = len(rec.commands)
    wait_resends(loop)
    assert len(rec.commands) == count == before + 1, "commanded after deactivate"

    # activate again: bumpless from the pose now (the reference was released)
    states = len(rec.q)
    assert life.transition(Transition.TRANSITION_ACTIVATE)
    assert loop.run_for(0.3)
    resumed = rec.commands[count]
    q_now = rec.q[states - 1]  # the state the first command after activation answered
    np.testing.assert_allclose(resumed, gravity(q_now), rtol=1e-6, atol=1e-6)
    assert np.abs(np.array(rec.q[states:]) - q_now).max() < 1e-3

    # deactivate, cleanup: the model released, the node unconfigured, still reporting
    assert life.transition(Transition.TRANSITION_DEACTIVATE)
    assert life.transition(Transition.TRANSITION_CLEANUP)
    assert life.state() == "unconfigured" and node.controller is None
    count = len(rec.commands)
    rec.diagnostics.clear()
    wait_resends(loop)
    assert len(rec.commands) == count
    assert values(own_status(rec))["lifecycle_state"] == "unconfigured"
    # and configure + activate once more works from the released state
    assert life.transition(Transition.TRANSITION_CONFIGURE)
    assert life.transition(Transition.TRANSITION_ACTIVATE)
    assert loop.run_for(0.2) and len(rec.commands) > count


def test_a_callback_error_ends_in_error_processing(loop: ClosedLoop) -> None:
    """An exception in the joint-state callback: a final command (hold), error
    processing, unconfigured with the reason on /diagnostics; configure recovers."""
    life, rec = Lifecycle(loop), loop.probe.recording
    node = loop.controller
    assert node is not None
    assert life.transition(Transition.TRANSITION_CONFIGURE)
    assert life.transition(Transition.TRANSITION_ACTIVATE)
    assert loop.run_for(0.2)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected fault")

    with loop.held():
        loop.take_last_state()
        assert loop.spin_until(lambda: len(rec.commands) >= len(rec.t), 10.0)
        before, q_last = len(rec.commands), rec.q[-1]
        node.controller.joint_state = broken  # type: ignore[method-assign]
    assert loop.spin_until(lambda: node.state_label == "unconfigured", 10.0)
    assert loop.spin_until(lambda: len(rec.commands) > before, 5.0)
    np.testing.assert_allclose(rec.commands[before], gravity(q_last), rtol=1e-9, atol=1e-9)
    rec.diagnostics.clear()
    wait_resends(loop)
    assert len(rec.commands) == before + 1
    status = own_status(rec)
    assert status.level == DiagnosticStatus.ERROR
    assert "injected fault" in status.message and "RuntimeError" in status.message
    assert life.state() == "unconfigured"
    assert life.transition(Transition.TRANSITION_CONFIGURE)
    assert life.state() == "inactive"


def test_a_failing_configure_is_reported_and_recoverable(tmp_path: Path) -> None:
    """An unknown joint in ``joints`` (the URDF being edited lacks it): configure fails,
    the node stays unconfigured, the reason (the joint, the valid ones) logged and on
    /diagnostics; with the file fixed the same node configures."""
    urdf = tmp_path / "my_arm.urdf"
    text = URDF.read_text()
    urdf.write_text(text.replace('name="joint7"', 'name="wrist_roll"'))
    joints = [f"joint{k}" for k in range(1, 8)]
    assert 'name="joint7"' in text
    with ClosedLoop({"urdf_path": str(urdf), "joints": joints, "autostart": "unconfigured",
                     "diagnostics_period": 0.1}, None) as loop:
        life, rec = Lifecycle(loop), loop.probe.recording
        assert not life.transition(Transition.TRANSITION_CONFIGURE)
        assert life.state() == "unconfigured"
        assert loop.controller is not None and loop.controller.controller is None
        rec.diagnostics.clear()
        assert loop.spin_until(lambda: any(
            "joint7" in s.message for a in rec.diagnostics for s in a.status), 10.0)
        status = own_status(rec)
        assert status.level == DiagnosticStatus.ERROR and "configure failed" in status.message
        assert "wrist_roll" in status.message  # the valid options are listed
        assert values(status)["lifecycle_state"] == "unconfigured"
        urdf.write_text(text)
        assert life.transition(Transition.TRANSITION_CONFIGURE)
        assert life.state() == "inactive"
        assert loop.controller.controller is not None


def test_autostart_inactive_configures_only() -> None:
    """``autostart: inactive`` (the launch files' ``start_inactive:=true``): the model
    loaded and the kernels warm, nothing commanded until activate."""
    with ClosedLoop({**CONTROLLER, "autostart": "inactive"},
                    {"urdf_path": str(URDF), "initial_positions": Q0.tolist()}) as loop:
        life = Lifecycle(loop)
        assert life.state() == "inactive"
        wait_resends(loop, 1)
        assert loop.probe.recording.commands == []
        assert life.transition(Transition.TRANSITION_ACTIVATE)
        assert loop.run_for(0.1) and loop.probe.recording.commands
