"""bench/bench_time_scaling.py runs to its numbers: the controllers drop an identical
resend of a joint state (no command), so the bench must not give them the state of a
leg's start twice (it stopped on ``assert result.command is not None``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # the script imports its directory's modules
    try:
        spec = importlib.util.spec_from_file_location("bench_time_scaling_under_test",
                                                      BENCH / "bench_time_scaling.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_one_timed_pass_gives_a_time_per_state() -> None:
    bench = _bench()
    scaled, plain, updates, stats = bench.run(1, False)
    assert scaled.size == plain.size == updates.size == bench.STATES
    assert (scaled > 0).all() and (plain > 0).all()
    assert 0 < updates.mean() < 0.5  # the speed search runs on a fraction of the states
    assert stats is None
