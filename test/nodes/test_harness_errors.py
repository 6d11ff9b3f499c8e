"""The lockstep harness (rnea_ros.nodes.harness.ClosedLoop) fails with a typed error
naming what failed: a node the call needs is missing, or the controller did not take
the simulator's state or a trajectory within the wall-clock timeout. Nodes are stand-ins
here (the harness's bookkeeping, not DDS, is under test)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from rnea_ros.core.errors import RneaError
from rnea_ros.nodes.errors import LockstepError, NodeError
from rnea_ros.nodes.harness import ClosedLoop


class Executor:
    """Spins nothing: no node ever answers."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []

    def spin_once(self, timeout_sec: float) -> None:
        pass

    def add_node(self, node: Any) -> None:
        self.nodes.append(node)

    def remove_node(self, node: Any) -> None:
        self.nodes.remove(node)


def loop(controller: bool, simulator: bool, taken: float | None = None) -> ClosedLoop:
    """A ClosedLoop of stand-ins: a simulator at t = 0.5 s that counts its publishes, a
    controller that last took the state at ``taken`` and never takes a trajectory."""
    out = ClosedLoop.__new__(ClosedLoop)
    out.executor = Executor()  # type: ignore[assignment]
    sim = SimpleNamespace(sim=SimpleNamespace(t=0.5), published=0)
    sim.publish_state = lambda: setattr(sim, "published", sim.published + 1)
    out.simulator = sim if simulator else None  # type: ignore[assignment]
    if simulator:
        out.executor.add_node(sim)
    ctl = SimpleNamespace(last_state_time=taken, rejected={"stale": 2},
                          reference=SimpleNamespace(trajectory=None))
    out.controller = SimpleNamespace(controller=ctl) if controller else None  # type: ignore[assignment]
    out.probe = SimpleNamespace(send_trajectory=lambda *a: None)  # type: ignore[assignment]
    return out


def test_lockstep_errors_are_the_node_layers_and_runtime_errors() -> None:
    assert issubclass(LockstepError, NodeError) and issubclass(NodeError, RneaError)
    assert issubclass(LockstepError, RuntimeError)  # what the harness raised before


def test_a_state_the_controller_never_takes_is_a_lockstep_error() -> None:
    run = loop(controller=True, simulator=True)
    with pytest.raises(LockstepError, match=r"did not take the simulator's state at "
                                            r"0\.500 s within 0\.05 s"):
        run.take_last_state(wall_timeout=0.05)
    assert run.simulator.published >= 1  # type: ignore[union-attr]  # resent meanwhile


def test_a_trajectory_the_controller_never_takes_is_a_lockstep_error() -> None:
    run = loop(controller=True, simulator=True, taken=0.5)
    T = np.array([0.0, 1.0])
    with pytest.raises(LockstepError, match=r"did not take the trajectory within 0\.05 s "
                                            r"\(rejected: \{'stale': 2\}\)"):
        run.send_trajectory_held(["j1"], T, np.zeros((2, 1)), wall_timeout=0.05)
    assert run.executor.nodes == [run.simulator]  # type: ignore[attr-defined]  # rejoined


@pytest.mark.parametrize(("controller", "simulator", "missing"),
                         [(False, True, "no controller"), (True, False, "no simulator")])
def test_a_missing_node_is_named(controller: bool, simulator: bool, missing: str) -> None:
    run = loop(controller, simulator, taken=0.5)
    with pytest.raises(LockstepError, match=missing):
        run.send_trajectory_held(["j1"], np.array([0.0, 1.0]), np.zeros((2, 1)),
                                 wall_timeout=0.05)
