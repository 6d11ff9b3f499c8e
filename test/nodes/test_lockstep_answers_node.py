"""The simulator node's ``lockstep_answers`` (issue 35 §11): a typed refusal without
``lockstep``; in a loop, the watchdog's commands are counted on ``/diagnostics`` as
answers to no waiting state, and step nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import rclpy
from rclpy.context import Context

from rnea_ros.nodes.harness import ClosedLoop, overrides
from rnea_ros.nodes.simulator import SimulatorNode
from rnea_ros.parameter_errors import ParameterError

URDF = "package://rnea_ros/urdf/arm7.urdf"


@pytest.fixture
def context() -> Iterator[Context]:
    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def test_stamped_answers_without_lockstep_are_refused_by_name(context: Context) -> None:
    with pytest.raises(ParameterError) as error:
        SimulatorNode(context=context, parameter_overrides=overrides(
            {"urdf_path": URDF, "lockstep_answers": "rnea_controller/efforts"}))
    assert "parameter 'lockstep_answers': needs 'lockstep: true'" in str(error.value)


def test_the_watchdogs_commands_are_counted_and_step_nothing() -> None:
    controller = {"urdf_path": URDF, "watchdog_timeout": 0.1, "watchdog_grace": 0.1}
    with ClosedLoop(controller, {"urdf_path": URDF}) as loop:
        sim, ctl = loop.simulator_node(), loop.controller_node()
        assert sim.answers is not None and loop.run_for(0.05)
        with loop.held():  # no state reaches the controller: its watchdog acts
            began = time.monotonic()
            assert loop.spin_until(lambda: ctl.controller.stale_events >= 1
                                   and time.monotonic() - began > 0.5, 30.0)
            at = loop.sim_time
        assert loop.run_for(0.05)
        assert sim.answers.ignored >= 3  # each stale command: no waiting state
        assert abs(loop.sim_time - at - 0.05) < 1e-9
        assert loop.spin_until(lambda: any(
            kv.key == "lockstep answers ignored (no waiting state)" and int(kv.value) >= 3
            for array in loop.probe.recording.diagnostics for status in array.status
            for kv in status.values), 10.0)


def test_answers_on_the_wall_clock_step_nothing_and_say_why() -> None:
    """A controller left on the wall clock (no ``use_sim_time``) with the simulator on
    stamped answers: its answers are stamped after every simulated state, the loop stays
    at its first state, and the simulator counts them as from another clock."""
    controller = {"urdf_path": URDF, "use_sim_time": False}
    with ClosedLoop(controller, {"urdf_path": URDF}) as loop:
        sim = loop.simulator_node()
        assert sim.answers is not None
        assert loop.spin_until(lambda: sim.answers is not None and sim.answers.foreign >= 3,
                               30.0)
        assert loop.sim_time == 0.0 and sim.answers.ignored == sim.answers.foreign
