"""Every shipped robot, configured by its own launch files (``config/<robot>_*.yaml``),
holds in the simulator; two arms in two namespaces run at once, each wired only to
itself and each held. Simulator and controller nodes in-process over DDS (loopback)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from rnea_ros.core.errors import InertiaWarning
from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.samples import ELASTIC_ROBOTS, robot_files, shipped_robots

ROOT = Path(__file__).resolve().parents[2]
ROBOTS = shipped_robots(ROOT)
# Lockstep runs about as fast as real time; a slow wall-clock moment must not look
# like a dead robot to the watchdog here (its own tests are in test_bad_input.py).
SLOW_MACHINE = {"watchdog_timeout": 1.0}


def launch_parameters(robot: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Controller and simulator parameters exactly as sim.launch.py robot:=<robot> gives
    them (the robot's two files, its URDF), run in lockstep by the harness."""
    files = robot_files(robot, ROOT)

    def flat(params: dict, prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in params.items():
            if isinstance(value, dict):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[prefix + key] = value
        return out

    def read(path: Path) -> dict[str, Any]:
        return flat(yaml.safe_load(path.read_text())["/**"]["ros__parameters"])

    urdf = {"robot_description": files.urdf.read_text()}
    return ({**read(files.controller), **urdf, **SLOW_MACHINE},
            {**read(files.simulator), **urdf})


def drift(loop: ClosedLoop, q0: np.ndarray) -> float:
    """Largest joint deviation from the start pose over the whole run (links only)."""
    q = np.array(loop.probe.recording.q)[:, :q0.size]
    return float(np.abs(q - q0).max())


@pytest.mark.parametrize("robot", ROBOTS)
def test_every_shipped_robot_holds_in_the_simulator(robot: str) -> None:
    controller, simulator = launch_parameters(robot)
    q0 = np.array(simulator["initial_positions"])
    with ClosedLoop(controller, simulator) as loop:
        assert loop.run_for(2.0)
        c = loop.controller.controller
        assert c.commands + loop.controller.intake.shed >= 1990 and sum(c.rejected.values()) == 0
        # The elastic arm's motors start at the elastic equilibrium: it does not move.
        assert drift(loop, q0) < (1e-6 if robot in ELASTIC_ROBOTS else 1e-3), robot


@pytest.mark.parametrize("robot", ELASTIC_ROBOTS)
def test_an_elastic_arm_starts_silently_at_its_equilibrium(robot: str) -> None:
    """As launched: no InertiaWarning while the nodes start (the URDF loads strict) and
    the motors start at q + K^-1 tau_g(q) (initial_motor_positions: equilibrium), so the
    controller's first commands hold the arm still (it used to settle 0.0143 rad)."""
    controller, simulator = launch_parameters(robot)
    assert "inertia_check" not in controller and "inertia_check" not in simulator
    q0 = np.array(simulator["initial_positions"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loop = ClosedLoop(controller, simulator)
    assert not [str(w.message) for w in caught if issubclass(w.category, InertiaWarning)]
    with loop:
        assert loop.run_for(2.0)
        q = np.array(loop.probe.recording.q)
        motors = q[:, q0.size:]
        assert motors.shape[1] >= 1 and np.abs(motors - motors[0]).max() < 1e-6
        assert drift(loop, q0) < 1e-6, robot


def test_two_arms_in_two_namespaces_are_each_held() -> None:
    """arm7 in /left and stanford_arm in /right at the same time: each controller
    commands only its own simulator (crossed wiring would mix 7 and 6 joints), both
    hold. /clock is global: only the left simulator publishes it."""
    left_controller, left_simulator = launch_parameters("arm7")
    right_controller, right_simulator = launch_parameters("stanford_arm")
    with ClosedLoop(left_controller, left_simulator, namespace="left") as left, \
            ClosedLoop(right_controller, {**right_simulator, "publish_clock": False},
                       namespace="right") as right:
        loops = {"left": left, "right": right}
        for name, loop in loops.items():
            assert loop.simulator.state_pub.topic_name == f"/{name}/joint_states"
            assert loop.controller.command_pub.topic_name == f"/{name}/effort_controller/commands"
            assert loop.simulator.command_sub.get_publisher_count() == 1  # its controller only
        assert right.simulator.clock_pub is None and left.simulator.clock_pub is not None
        targets = {name: loop.sim_time + 2.0 for name, loop in loops.items()}
        while any(loop.sim_time < targets[name] for name, loop in loops.items()):
            for loop in loops.values():
                loop.executor.spin_once(timeout_sec=0.001)
        for name, loop, q0 in (("left", left, left_simulator["initial_positions"]),
                               ("right", right, right_simulator["initial_positions"])):
            c = loop.controller.controller
            handled = c.commands + loop.controller.intake.shed  # (shed: a newer state queued)
            assert handled >= 1990 and sum(c.rejected.values()) == 0, name
            assert drift(loop, np.array(q0)) < 1e-3, name
        assert len(left.probe.recording.q[-1]) == 7 and len(right.probe.recording.q[-1]) == 6
