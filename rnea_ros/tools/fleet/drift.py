"""Trends over days: which robot-joint needs more and more torque than the model.

For every (robot, joint, metric) with ``metric`` one of :data:`METRIC_TABLE`: ``rms``
(model - measured residual RMS), ``coulomb`` and ``viscous`` (fitted extra friction), over the bags
analysed (``ok`` or ``partial``) with a finite value:

* ``slope_per_day``: the Theil-Sen slope (median of pairwise slopes; robust to a
  few outlying bags) of the metric against the bag's start in days, with its 95 %
  confidence interval ``low``..``high`` (Sen 1968, :func:`theil_sen`: what
  ``scipy.stats.theilslopes`` returns, to the bit, without importing ``scipy.stats``);
* ``relative_per_day``: that slope as torque, over the joint's ``reference``: the
  median residual RMS of the robot-joint over its bags [N m or N]. A viscous slope
  becomes torque times the median velocity RMS; RMS and Coulomb slopes are torques.
  Relative to the model's own error scale, a healthy joint's noise does not look
  like a trend, and a friction starting from zero has a finite relative rate.

The rule: a robot-joint-metric is **flagged** when it has at least
:data:`MIN_BAGS` (3) bags on at least 2 distinct days, ``relative_per_day >
threshold`` (default :data:`THRESHOLD`: 1 % of the joint's residual RMS per day,
about 30 % a month), and the rise has statistical support: the lower end of the
95 % interval is above 0, and the rise over the span (``slope_per_day * days``)
exceeds :data:`SIGMAS` (3) standard errors of the difference of two bags' values
(``3 sqrt(2) se``, ``se`` the bags' median standard error ``noise``: the friction
fit's, or ``rms / sqrt(2 samples)`` for the RMS), so that short, noisy bags do not
make a trend out of their scatter.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

THRESHOLD = 0.01  # relative rise per day
MIN_BAGS = 3
SIGMAS = 3.0


@dataclass(frozen=True)
class Metric:
    """One drift metric, the one place that states it: ``name`` (its column in
    ``bags.parquet`` and its ``metric`` in ``drift.parquet``), ``title`` (the report's
    panel title and prose) and ``per_speed``: a coefficient per unit of joint speed
    (viscous friction: its unit is the effort's per rad/s or m/s, its torque the
    coefficient times the median velocity RMS), else a torque in the effort's unit.
    A metric other than ``rms`` has its standard error in the column ``NAME_se``."""

    name: str
    title: str
    per_speed: bool = False

    def unit(self, effort_unit: str) -> str:
        """The metric's unit for a joint whose effort is in ``effort_unit`` (N m or N)."""
        if not self.per_speed:
            return effort_unit
        return "N s/m" if effort_unit == "N" else "N m s/rad"


# The drift metrics, in the report's panel order; every other list of them is derived.
METRIC_TABLE = (Metric("rms", "residual RMS"), Metric("coulomb", "extra Coulomb friction"),
                Metric("viscous", "extra viscous friction", per_speed=True))
METRICS = tuple(m.name for m in METRIC_TABLE)
DAY = 86400.0


def drift(rows: Iterable[dict[str, Any]], threshold: float = THRESHOLD
          ) -> list[dict[str, Any]]:
    """One row per (robot, joint, metric); see the module docstring."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if trended(row):
            groups[(row["robot"], row["joint"])].append(row)
    out = []
    for (robot, joint), bags in sorted(groups.items()):
        rms = np.array([b["rms"] for b in bags], dtype=np.float64)
        reference = float(np.nanmedian(rms)) if np.isfinite(rms).any() else math.nan
        v_rms = np.array([b.get("velocity_rms", math.nan) for b in bags], dtype=np.float64)
        speed = float(np.nanmedian(v_rms)) if np.isfinite(v_rms).any() else math.nan
        for metric in METRIC_TABLE:
            out.append(_trend(robot, joint, metric.name, bags, reference,
                              speed if metric.per_speed else 1.0, threshold))
    return out


def trended(row: dict[str, Any]) -> bool:
    """A bag row that enters the trends: read whole, not a copy, with a stamp."""
    return (row["status"] == "ok" and not row.get("duplicate_of")
            and math.isfinite(row["start"]))


def _trend(robot: str, joint: str, metric: str, bags: list[dict[str, Any]],
           reference: float, torque_per_unit: float, threshold: float) -> dict[str, Any]:
    x = np.array([b["start"] / DAY for b in bags], dtype=np.float64)
    y = np.array([b[metric] for b in bags], dtype=np.float64)
    se = np.array([_standard_error(b, metric) for b in bags], dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, se = x[ok], y[ok], se[ok]
    noise = float(np.nanmedian(se)) if np.isfinite(se).any() else 0.0
    row: dict[str, Any] = {
        "robot": robot, "joint": joint, "metric": metric, "bags": len(x),
        "days": float(x.max() - x.min()) if len(x) else 0.0, "slope_per_day": math.nan,
        "low": math.nan, "high": math.nan, "reference": reference,
        "relative_per_day": math.nan, "noise": noise, "flagged": False,
    }
    if len(x) < MIN_BAGS or len(np.unique(np.round(x))) < 2:
        return row
    slope, low, high = theil_sen(y, x, 0.95)
    relative = slope * torque_per_unit / reference if reference > 0 else math.nan
    row.update(slope_per_day=slope, low=low, high=high, relative_per_day=relative,
               flagged=bool(relative > threshold and low > 0
                            and slope * row["days"] > SIGMAS * math.sqrt(2.0) * noise))
    return row


def theil_sen(y: NDArray[np.float64], x: NDArray[np.float64], confidence: float = 0.95
              ) -> tuple[float, float, float]:
    """Theil-Sen slope of ``y`` (N,) against ``x`` (N,), N >= 2, and its ``confidence``
    interval ``(slope, low, high)``: the median of the slopes of all pairs with distinct
    ``x``, and the interval of Sen (1968), eq. 2.6 (the ranks of the sorted slopes
    ``(n_s -/+ z sigma) / 2`` around the median, ``sigma^2`` Kendall's variance with its
    tie corrections for repeated ``x`` and ``y``, ``z`` the normal quantile); NaN ends
    when the ranks fall outside the slopes.

    The same arithmetic as ``scipy.stats.theilslopes(y, x, alpha=confidence)`` (scipy
    1.17, ``method='separate'``; test_fleet_drift_theilsen.py checks the bits): the
    report's only use of ``scipy.stats``, whose import cost a run 0.26 s of serial CPU
    after the last bag (docs/performance.md, issue 40, fifth pass)."""
    dx = x[:, np.newaxis] - x
    dy = y[:, np.newaxis] - y
    pairs = dx > 0
    slopes = np.sort(dy[pairs] / dx[pairs])
    if not slopes.size:
        return math.nan, math.nan, math.nan
    z = NormalDist().inv_cdf(min(confidence, 1.0 - confidence) / 2.0)
    n = len(y)
    ties = sum(k * (k - 1) * (2 * k + 5) for k in (*_repeats(x), *_repeats(y)))
    variance = (1 / 18.0) * (n * (n - 1) * (2 * n + 5) - ties)
    if not variance >= 0:  # ties in both x and y beyond Kendall's formula: no interval
        return float(np.median(slopes)), math.nan, math.nan
    sigma = math.sqrt(variance)
    upper = min(int(np.round((slopes.size - z * sigma) / 2.0)), slopes.size - 1)
    lower = max(int(np.round((slopes.size + z * sigma) / 2.0)) - 1, 0)
    return float(np.median(slopes)), float(slopes[lower]), float(slopes[upper])


def _repeats(values: NDArray[np.float64]) -> list[int]:
    """How often each value that occurs more than once occurs."""
    _, counts = np.unique(values, return_counts=True)
    return [int(c) for c in counts if c > 1]


def _standard_error(bag: dict[str, Any], metric: str) -> float:
    """One bag's standard error of ``metric``."""
    if metric == "rms":
        return float(bag["rms"]) / math.sqrt(2.0 * max(int(bag["samples"]), 1))
    return float(bag.get(f"{metric}_se", math.nan))
