"""bench/bench_sim.py notices at once that the simulator node it measures has exited
(e.g. a refused parameter) and says why: its exit status and the last lines of its
stderr. Before, it waited 60 s for joint states from the dead node, then printed "no
joint_states received"."""

from __future__ import annotations

import tempfile
import time

import pytest
from test_bench_sim_params import _bench_sim

GIVE_UP = 30.0  # [s] well below the bench's 60 s start timeout, on any schedule


def test_a_node_that_exits_at_start_up_fails_the_bench_at_once_with_its_message(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench_sim()
    refused = {**bench.simulator_parameters("pinocchio"), "command_timeout": 1000.0}
    monkeypatch.setattr(bench, "simulator_parameters", lambda engine: refused)
    error = getattr(bench, "NodeExitedError", AssertionError)  # (main has none)
    started = time.monotonic()
    with tempfile.TemporaryFile() as log, pytest.raises(error) as caught:
        bench.node_jitter("pinocchio", 1.0, log)
    elapsed = time.monotonic() - started
    message = str(caught.value)
    print(f"failed after {elapsed:.1f} s: {message}")
    assert "exited with status 1" in message, message
    assert "cannot start" in message and "command_timeout" in message, message
    assert elapsed < GIVE_UP, elapsed
