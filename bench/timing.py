"""Best-of timings shared by the bench scripts: each measures ours against a peer in
the same process, interleaved, so that a load that drifts during the run (a shared
machine) weighs on both alike; the minimum over repeats is the least disturbed run."""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any


def best_time(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Best per-call time [s] of ``fn`` over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def best_times(fns: Sequence[Callable[[], Any]], number: int, repeat: int = 7,
               timer: Callable[[], float] = time.perf_counter) -> list[float]:
    """Best per-call time [s] of each of ``fns`` over ``repeat`` runs of ``number``
    calls, the functions alternating within each repeat; ``timer``: wall
    (``perf_counter``) or the process's CPU time (``process_time``)."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], timeit.timeit(fn, number=number, timer=timer) / number)
    return best


def best_pair(ours: Callable[[], Any], theirs: Callable[[], Any], number: int,
              repeat: int = 15) -> tuple[float, float]:
    """Best per-call times [s] of ``ours`` and ``theirs`` (:func:`best_times`)."""
    a, b = best_times((ours, theirs), number, repeat)
    return a, b
