"""bench/bench_time_scaling.py runs to its numbers: the controllers drop an identical
resend of a joint state (no command), so the bench must not give them the state of a
leg's start twice (it stopped on ``assert result.command is not None``)."""

from __future__ import annotations

from types import ModuleType

from bench_scripts import load_bench


def _bench() -> ModuleType:
    return load_bench("bench_time_scaling.py", with_its_folder=True)  # imports neighbours


def test_one_timed_pass_gives_a_time_per_state() -> None:
    bench = _bench()
    scaled, plain, updates, stats = bench.run(1, False)
    assert scaled.size == plain.size == updates.size == bench.STATES
    assert (scaled > 0).all() and (plain > 0).all()
    assert 0 < updates.mean() < 0.5  # the speed search runs on a fraction of the states
    assert stats is None
