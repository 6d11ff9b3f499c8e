"""Running statistics: residuals per joint and limit violations as time ranges."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


class PairStats:
    """Running residual statistics of ``a - b`` per joint, and the correlation of a and b."""

    def __init__(self, n: int) -> None:
        self.count = np.zeros(n)
        self.sums = {k: np.zeros(n) for k in ("r", "r2", "abs", "a", "b", "ab", "a2", "b2")}
        self.max = np.zeros(n)

    def add(self, a: Array, b: Array) -> None:
        ok = np.isfinite(a) & np.isfinite(b)
        a, b = np.where(ok, a, 0.0), np.where(ok, b, 0.0)
        r = a - b
        self.count += ok.sum(axis=0)
        for key, value in (("r", r), ("r2", r * r), ("abs", np.abs(r)), ("a", a), ("b", b),
                           ("ab", a * b), ("a2", a * a), ("b2", b * b)):
            self.sums[key] += value.sum(axis=0)
        if len(r):
            self.max = np.maximum(self.max, np.abs(r).max(axis=0))

    def table(self) -> dict[str, Array]:
        n = np.maximum(self.count, 1)
        s = self.sums
        cov = s["ab"] / n - s["a"] * s["b"] / n**2
        var_a = s["a2"] / n - (s["a"] / n) ** 2
        var_b = s["b2"] / n - (s["b"] / n) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = cov / np.sqrt(var_a * var_b)
        none = self.count == 0  # no pair: no statistic (NaN), never "RMS 0"
        out = {"rms": np.sqrt(s["r2"] / n), "mae": s["abs"] / n, "max": self.max.copy(),
               "bias": s["r"] / n, "correlation": corr}
        for value in out.values():
            value[none] = np.nan
        return {"samples": self.count, **out}


@dataclass
class Violation:
    joint: str
    kind: str  # "effort" or "effort_rate"
    start: float
    end: float
    peak: float
    limit: float


class ViolationTracker:
    """Time ranges where ``|x| > limit``, per joint, with the peak value."""

    def __init__(self, joints: Sequence[str], limits: Array, kind: str) -> None:
        self.joints, self.limits, self.kind = list(joints), limits, kind
        self.open: dict[int, Violation] = {}
        self.done: list[Violation] = []

    def add(self, t: Array, x: Array) -> None:
        over = np.abs(x) > self.limits
        last = len(t) - 1
        for j in range(len(self.joints)):
            edges = np.diff(np.concatenate([[0], over[:, j].astype(np.int8), [0]]))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
            if len(starts) == 0 or starts[0] != 0:
                self._finish(j)  # a run open from the previous chunk ended at its edge
            for s, e in zip(starts, ends, strict=True):
                segment = x[s:e + 1, j]
                peak = float(segment[np.argmax(np.abs(segment))])
                v = self.open.get(j) if s == 0 else None
                if v is None:
                    self._finish(j)
                    v = self.open[j] = Violation(self.joints[j], self.kind, float(t[s]),
                                                 float(t[e]), peak, float(self.limits[j]))
                v.end = float(t[e])
                if abs(peak) > abs(v.peak):
                    v.peak = peak
                if e != last:
                    self._finish(j)

    def _finish(self, j: int) -> None:
        if j in self.open:
            self.done.append(self.open.pop(j))

    def close(self) -> list[Violation]:
        self.done.extend(self.open.values())
        self.open.clear()
        return sorted(self.done, key=lambda v: (v.start, v.joint))


def rate_and_jitter(sums: Sequence[float]) -> tuple[float, float]:
    """Rate [Hz] and jitter (std of the period) [s] from ``(count, sum, sum of squares)``."""
    count, total, squares = sums
    if not count:
        return math.nan, math.nan
    mean = total / count
    return 1.0 / mean, math.sqrt(max(squares / count - mean**2, 0.0))


def sequential_sum(start: float, values: Array) -> float:
    """``start + v0 + v1 + ...`` added in order, as a Python loop adds them (same rounding:
    a running sum over batches equals the sum over single messages)."""
    if values.size == 0:
        return start
    return float(np.cumsum(np.concatenate([[start], values]))[-1])
