"""bench/bench_sim.py starts the simulator node with values its parameter table accepts
(a refused one stops the node at start-up, and the bench's node part measured nothing:
``command_timeout:=1000.0`` against the table's 10 s safety bound)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from rnea_ros.parameters import check, load_table

BENCH_SIM = Path(__file__).resolve().parents[1] / "bench" / "bench_sim.py"


def _bench_sim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_sim_under_test", BENCH_SIM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("engine", ["pinocchio", "mujoco"])
def test_simulator_parameters_within_the_table(engine: str) -> None:
    table = load_table("simulator")
    params = _bench_sim().simulator_parameters(engine)
    assert set(params) <= set(table), sorted(set(params) - set(table))
    check(table, params)  # raises ParameterError naming the parameter and its bound
