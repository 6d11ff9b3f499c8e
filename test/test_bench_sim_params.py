"""bench/bench_sim.py starts the simulator node with values its parameter table accepts
(a refused one stops the node at start-up, and the bench's node part measured nothing:
``command_timeout:=1000.0`` against the table's 10 s safety bound)."""

from __future__ import annotations

from types import ModuleType

import pytest
from bench_scripts import load_bench

from rnea_ros.parameters import check, load_table


def _bench_sim() -> ModuleType:
    return load_bench("bench_sim.py")


@pytest.mark.parametrize("engine", ["pinocchio", "mujoco"])
def test_simulator_parameters_within_the_table(engine: str) -> None:
    table = load_table("simulator")
    params = _bench_sim().simulator_parameters(engine)
    assert set(params) <= set(table), sorted(set(params) - set(table))
    check(table, params)  # raises ParameterError naming the parameter and its bound
