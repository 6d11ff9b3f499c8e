"""``report.html``: one self-contained page (plots embedded as PNG data, no network).

Per robot: flagged joints first (red), then a small-multiples figure, one row per
joint (flagged first): residual RMS, and fitted extra friction (Coulomb [N m],
viscous x velocity RMS [N m]) against the bag's date. Then the failed and partial
bags with their reason, and, with ``--reports``, relative links to the per-bag
``rnea-bag`` reports.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rnea_ros.tools.fleet.cache import write_atomic

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:2px 6px}
.flag{color:#b00;font-weight:bold}.err{color:#b00}img{max-width:100%}"""


def write_report(path: Path, rows: list[dict[str, Any]], trends: list[dict[str, Any]],
                 summary: dict[str, Any]) -> None:
    """Write ``path`` (HTML) from the bag rows, the drift rows and the run summary."""
    out = path.parent
    by_robot: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_robot[row["robot"]].append(row)
    flagged = defaultdict(list)
    for t in trends:
        if t["flagged"]:
            flagged[t["robot"]].append(t)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>rnea-fleet report"
             f"</title><style>{STYLE}</style></head><body><h1>rnea-fleet report</h1>",
             f"<p>{summary['bags']} bags of {len(by_robot)} robots: {summary['analysed']} "
             f"analysed, {summary['cached']} from the cache, {summary['failed']} failed, "
             f"{summary['partial']} partial. Flagged joints: "
             f"{', '.join(summary['flagged']) or 'none'}. "
             "Tables: <code>bags.parquet</code>, <code>drift.parquet</code>.</p>"]
    for robot in sorted(by_robot, key=lambda r: (not flagged[r], r)):
        parts.append(_robot(robot, by_robot[robot], flagged[robot], out))
    parts.append("</body></html>")
    write_atomic(path, "\n".join(parts).encode())


def _robot(robot: str, rows: list[dict[str, Any]], flags: list[dict[str, Any]],
           out: Path) -> str:
    e = html.escape
    parts = [f"<h2>{e(robot)}</h2>"]
    if flags:
        items = "".join(f"<li class='flag'>{e(f['joint'])}: {e(f['metric'])} rises "
                        f"{100 * f['relative_per_day']:.1f} %/day of its residual RMS "
                        f"({f['bags']} bags over {f['days']:.0f} days)</li>" for f in flags)
        parts.append(f"<p>Flagged:</p><ul>{items}</ul>")
    else:
        parts.append("<p>No joint flagged.</p>")
    good = [r for r in rows if r["status"] != "error"]
    if good:
        order = list(dict.fromkeys(f["joint"] for f in flags))
        order += [j for j in dict.fromkeys(r["joint"] for r in good) if j not in order]
        parts.append(f"<img alt='{e(robot)} trends' src='data:image/png;base64,"
                     f"{_plot(robot, good, order, {f['joint'] for f in flags})}'>")
    bad = {r["bag"]: r for r in rows if r["status"] != "ok"}
    if bad:
        items = "".join(f"<tr><td class='{'err' if r['status'] == 'error' else ''}'>"
                        f"{e(r['status'])}</td><td>{e(r['bag'])}</td><td>{e(r['message'])}"
                        "</td></tr>" for r in bad.values())
        parts.append("<h3>Failed and partial bags</h3><table><tr><th>status</th><th>bag"
                     f"</th><th>reason</th></tr>{items}</table>")
    links = {r["bag"]: r.get("report") for r in rows  # a failed bag has no report
             if r.get("report") and r["status"] != "error"}
    if links:
        items = "".join(
            f"<li><a href='{e(os.path.relpath(Path(str(d)) / 'report.md', out))}'>"
            f"{e(Path(b).name)}</a></li>" for b, d in links.items())
        parts.append(f"<h3>Per-bag rnea-bag reports</h3><ul>{items}</ul>")
    return "\n".join(parts)


def _plot(robot: str, rows: list[dict[str, Any]], joints: list[str], flagged: set[str]
          ) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(joints), 2, figsize=(11, 1.6 * len(joints) + 0.8),
                             sharex=True, squeeze=False)
    for k, joint in enumerate(joints):
        points = sorted(((r["start"], r) for r in rows if r["joint"] == joint
                         and math.isfinite(r["start"])), key=lambda p: p[0])
        dates = [datetime.fromtimestamp(s, tz=timezone.utc) for s, _ in points]
        left, right = axes[k]
        left.plot(dates, [r["rms"] for _, r in points], "o-", ms=3)
        right.plot(dates, [r["coulomb"] for _, r in points], "o-", ms=3, label="Coulomb")
        right.plot(dates, [r["viscous"] * r["velocity_rms"] for _, r in points], "s-", ms=3,
                   label="viscous × v RMS")
        color = "#b00" if joint in flagged else "black"
        left.set_ylabel(joint + (" ⚑" if joint in flagged else ""), color=color, fontsize=8)
        for ax in (left, right):
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
            if joint in flagged:
                ax.set_facecolor("#fff0f0")
        if k == 0:
            left.set_title("residual RMS (model − measured)", fontsize=9)
            right.set_title("fitted extra friction [torque]", fontsize=9)
            right.legend(fontsize=7, loc="upper left")
    fig.suptitle(robot, fontsize=10)
    locator = matplotlib.dates.AutoDateLocator()  # type: ignore[no-untyped-call]
    for ax in axes[-1]:
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(
            matplotlib.dates.ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]
    height = fig.get_figheight()
    fig.subplots_adjust(left=0.08, right=0.98, top=1 - 0.6 / height, bottom=0.5 / height,
                        hspace=0.15, wspace=0.18)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()
