"""Running statistics: residuals per joint and limit violations as time ranges."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

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
    """One interval over a limit, of one joint: times in the bag's clock [s]."""

    joint: str
    kind: str  # "effort" or "effort_rate"
    start: float
    end: float
    peak: float  # the largest |value| in the interval, signed
    limit: float
    peak_time: float = math.nan  # [s] when the peak is reached
    threshold: float = math.nan  # what was tested at the peak: limit (+ a noise margin)


class ViolationTracker:
    """Time ranges where ``|x| > threshold`` (by default the limit), per joint, with the
    peak value. Runs of one joint closer than ``merge`` seconds (end to start) are one
    interval: a value chattering about its threshold is reported once."""

    def __init__(self, joints: Sequence[str], limits: Array, kind: str,
                 merge: float = 0.0) -> None:
        self.joints, self.limits, self.kind, self.merge = list(joints), limits, kind, merge
        self.open: dict[int, Violation] = {}
        self.done: list[Violation] = []
        self.last: dict[int, Violation] = {}  # the joint's latest finished interval

    def add(self, t: Array, x: Array, threshold: Array | None = None) -> None:
        """``t`` (N,) [s], ``x`` (N, n); ``threshold`` (N, n) or (n,), default the limits."""
        bound = self.limits if threshold is None else threshold
        over = np.abs(x) > bound
        bound = np.broadcast_to(bound, x.shape)
        last = len(t) - 1
        for j in range(len(self.joints)):
            edges = np.diff(np.concatenate([[0], over[:, j].astype(np.int8), [0]]))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
            if len(starts) == 0 or starts[0] != 0:
                self._finish(j)  # a run open from the previous chunk ended at its edge
            for s, e in zip(starts, ends, strict=True):
                k = s + int(np.argmax(np.abs(x[s:e + 1, j])))
                peak, at, level = float(x[k, j]), float(t[k]), float(bound[k, j])
                v = self.open.get(j) if s == 0 else None
                if v is None:
                    self._finish(j)
                    v = self._reopen(j, float(t[s]))
                if v is None:
                    v = self.open[j] = Violation(self.joints[j], self.kind, float(t[s]),
                                                 float(t[e]), peak, float(self.limits[j]),
                                                 at, level)
                v.end = float(t[e])
                if abs(peak) > abs(v.peak):
                    v.peak, v.peak_time, v.threshold = peak, at, level
                if e != last:
                    self._finish(j)

    def _reopen(self, j: int, start: float) -> Violation | None:
        """The joint's last interval if it ended less than ``merge`` before ``start``."""
        v = self.last.get(j)
        if v is None or start - v.end >= self.merge:
            return None
        self.done.remove(v)
        self.open[j] = v
        return v

    def _finish(self, j: int) -> None:
        if j in self.open:
            v = self.open.pop(j)
            self.done.append(v)
            self.last[j] = v

    def close(self) -> list[Violation]:
        for j in list(self.open):
            self._finish(j)
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


def utc(t: float) -> str:
    """A stamp [s since the epoch] as ISO 8601 UTC, with the seconds; a stamp before 1973
    is no wall-clock time (a simulation's clock) and says so."""
    when = datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="milliseconds")
    text = when.replace("+00:00", "Z")
    return text if t >= 1e8 else f"{text} ({t:.6f} s: not wall-clock time, simulated?)"
