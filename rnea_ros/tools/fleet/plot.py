"""Small SVG panels of one metric of one robot-joint against date, for the report pages.

Hand-written SVG (no plotting library, a few kB a panel): 1000 robots' pages are
written in seconds and each is light to load. A panel draws, in a y-range shared by
every robot for that (joint, metric) (:func:`shared_scales`), the bags' values as dots
(a value beyond the range as a triangle on its edge), and from the trend's level at
the first bag:

* the **noise band**: ``level ± SIGMAS sqrt(2) noise``, the rise over the span the
  flag rule needs before a trend counts (:mod:`~rnea_ros.tools.fleet.drift`);
* the **threshold**: the line rising at ``threshold * reference`` per day (divided by
  the median velocity RMS for the viscous coefficient), the slowest flagged rise;
* the Theil-Sen trend (dashed; red when flagged).

Units on both axes: the date (UTC) and the metric's unit (``drift.Metric.unit``:
``N m`` or ``N``; the viscous coefficient ``N m s/rad`` or ``N s/m``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from rnea_ros.tools.fleet.drift import DAY, SIGMAS, Metric

W, H = 300, 120  # panel size [px]
LEFT, RIGHT, TOP, BOTTOM = 52, 8, 16, 22  # margins [px]


def shared_scales(rows: Iterable[dict[str, Any]], metrics: Sequence[str]
                  ) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (joint, metric), the y-range shared by every robot: from the 0.5th to the
    99.5th percentile of all bags' values (one outlying robot does not flatten the
    others; its points beyond are drawn on the edge), widened by 10 %, 0 included."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        for metric in metrics:
            v = row[metric]
            if math.isfinite(v):
                values[(row["joint"], metric)].append(v)
    scales = {}
    for key, vs in values.items():
        lo, hi = np.percentile(vs, [0.5, 99.5])
        lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
        pad = 0.1 * (hi - lo) if hi > lo else 1.0
        scales[key] = (lo - pad if lo < 0 else lo, hi + pad)
    return scales


def panel(points: Sequence[tuple[float, float]], *, metric: Metric, unit: str,
          y_range: tuple[float, float], x_range: tuple[float, float],
          trend: dict[str, Any] | None, threshold: float, per_unit: float) -> str:
    """One SVG panel; ``points`` are ``(start [s since the epoch], value)``,
    ``per_unit`` the torque of one unit of the metric (the median velocity RMS for
    the viscous coefficient, else 1)."""
    x0, x1 = x_range
    y0, y1 = y_range
    x1 = x1 if x1 > x0 else x0 + DAY
    y1 = y1 if y1 > y0 else y0 + 1.0

    def px(t: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (t - x0) / (x1 - x0)

    def py(v: float) -> float:
        v = min(max(v, y0), y1)
        return H - BOTTOM - (H - TOP - BOTTOM) * (v - y0) / (y1 - y0)

    flagged = bool(trend and trend["flagged"])
    parts = [f"<svg width='{W}' height='{H}' "
             f"class='{'flag' if flagged else ''}'>",
             f"<rect x='{LEFT}' y='{TOP}' width='{W - LEFT - RIGHT}' "
             f"height='{H - TOP - BOTTOM}' fill='{'#fff0f0' if flagged else '#fff'}' "
             "stroke='#999'/>",
             f"<text x='{LEFT}' y='11' font-size='10'>{metric.title} [{unit}]</text>"]
    parts += _guides(points, trend, threshold, per_unit, px, py, x0)
    for t, v in points:
        if not math.isfinite(v):
            continue
        x, y = px(t), py(v)
        if y0 <= v <= y1:
            parts.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='2.5' fill='#036'/>")
        else:  # beyond the shared range: a triangle on the edge, pointing out
            d = -5 if v > y1 else 5
            parts.append(f"<path d='M{x - 4:.1f},{y - d:.1f}h8l-4,{d}z' fill='#b00'/>")
    parts += _axes(px, py, x0, x1, y0, y1, unit)
    parts.append("</svg>")
    return "".join(parts)


def _guides(points: Sequence[tuple[float, float]], trend: dict[str, Any] | None,
            threshold: float, per_unit: float, px: Any, py: Any, x0: float) -> list[str]:
    """The noise band, the threshold line and the trend line (see the module)."""
    finite = [(t, v) for t, v in points if math.isfinite(v)]
    if not finite or trend is None:
        return []
    ts = np.array([t for t, _ in finite])
    vs = np.array([v for _, v in finite])
    first, last = float(ts.min()), float(ts.max())
    slope = trend["slope_per_day"]
    level = float(np.median(vs - (slope * (ts - first) / DAY if math.isfinite(slope)
                                  else 0.0)))
    half = SIGMAS * math.sqrt(2.0) * trend["noise"]
    out = []
    if half > 0 and math.isfinite(half):
        top, bottom = py(level + half), py(level - half)
        out.append(f"<rect x='{px(first):.1f}' y='{top:.1f}' "
                   f"width='{max(px(last) - px(first), 1.0):.1f}' "
                   f"height='{max(bottom - top, 0.5):.1f}' fill='#9c9' opacity='0.35'>"
                   f"<title>noise band ±{half:.3g}</title></rect>")
    reference = trend["reference"]
    if math.isfinite(reference) and per_unit > 0 and math.isfinite(per_unit):
        rate = threshold * reference / per_unit  # the metric's units per day
        end = level + rate * (last - first) / DAY
        out.append(f"<line x1='{px(first):.1f}' y1='{py(level):.1f}' x2='{px(last):.1f}' "
                   f"y2='{py(end):.1f}' stroke='#e80' stroke-width='1.5'>"
                   f"<title>threshold {threshold:g}/day: {rate:.3g} per day</title></line>")
    if math.isfinite(slope):
        end = level + slope * (last - first) / DAY
        color = "#b00" if trend["flagged"] else "#666"
        out.append(f"<line x1='{px(first):.1f}' y1='{py(level):.1f}' x2='{px(last):.1f}' "
                   f"y2='{py(end):.1f}' stroke='{color}' stroke-dasharray='4 3'/>")
    return out


def _axes(px: Any, py: Any, x0: float, x1: float, y0: float, y1: float, unit: str
          ) -> list[str]:
    """Three y ticks (in ``unit``: the ends and 0, or the middle) and up to four date
    ticks (UTC, month-day)."""
    out = []
    for v in (y0, 0.0 if y0 < 0 < y1 else 0.5 * (y0 + y1), y1):
        out.append(f"<text x='{LEFT - 3}' y='{py(v) + 3:.1f}' font-size='9' "
                   f"text-anchor='end'>{v:.3g}</text>")
    days = max((x1 - x0) / DAY, 1.0)
    step = max(1, math.ceil(days / 4)) * DAY
    t = math.ceil(x0 / DAY) * DAY
    while t <= x1:
        label = datetime.fromtimestamp(t, tz=timezone.utc).strftime("%m-%d")
        out.append(f"<text x='{px(t):.1f}' y='{H - 8}' font-size='9' "
                   f"text-anchor='middle'>{label}</text>")
        t += step
    out.append(f"<text x='{W - RIGHT}' y='{H - 1}' font-size='8' text-anchor='end'>"
               f"date (UTC) · y in {unit}</text>")
    return out
