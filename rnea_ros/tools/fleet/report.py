"""The fleet report: an overview page and one page per robot, self-contained (no network).

Built from the tables alone (:func:`write_report` takes the rows of ``bags.parquet``
and ``drift.parquet``; :func:`report_from_tables` reads them back), so it scales with
the fleet, not with its bags:

* ``report.html``, the overview: the run's numbers, its version and command line,
  then one row per robot of the manifest (robot × joint): its state, bag counts, last
  bag, and per joint the fastest relative rise of its metrics [% of its residual
  RMS per day], flagged cells in red. Rows are sorted flagged, failed (every bag
  failed), silent (no bag), with errors, no trend (fewer than 3 bags read whole),
  then ok; a click on a column head sorts by it. Each robot links to its page. About
  1 kB per robot: a 1000-robot overview is ~1 MB (docs/scale.md).
* ``robots/NAME.html``, one per robot (the page of a robot no longer in the manifest
  is removed): its flagged joints, its trends (bags, slope,
  relative rise, noise), small-multiple SVG panels per joint and metric against date
  (:mod:`~rnea_ros.tools.fleet.plot`: a y-range shared by all robots per joint and
  metric, the noise band, the threshold, units on every axis), its failed, partial and
  duplicate bags with the reason, and links to per-bag ``rnea-bag`` reports.
"""

from __future__ import annotations

import html
import math
import os
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from rnea_ros.tools.fleet import drift as metrics  # metrics.METRIC_TABLE: the one list
from rnea_ros.tools.fleet.cache import write_atomic
from rnea_ros.tools.fleet.drift import MIN_BAGS, trended
from rnea_ros.tools.fleet.plot import panel, shared_scales

STYLE = """body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;
font-size:85%}td,th{border:1px solid #ccc;padding:1px 5px;text-align:right}
th{background:#eee;cursor:pointer;position:sticky;top:0}td:first-child,td:nth-child(2)
{text-align:left}.flagged{color:#b00;font-weight:bold}.failed,.err{color:#b00}
.silent{color:#a60}td.flag{background:#fdd;color:#b00;font-weight:bold}
.stamp{color:#666;font-size:80%}svg{margin:2px}td{white-space:nowrap}"""
SORT = """document.querySelectorAll('th').forEach((h,i)=>h.onclick=()=>{const b=h.closest(
'table').tBodies[0],r=[...b.rows],d=h.dataset.d=h.dataset.d==='1'?'-1':'1',v=x=>{const
s=x.cells[i].dataset.v??x.cells[i].textContent,n=parseFloat(s);return isNaN(n)?s:n};
r.sort((a,c)=>{const p=v(a),q=v(c);return(p<q?-1:p>q?1:0)*d});b.append(...r)})"""
STATES = ("flagged", "failed", "silent", "errors", "no trend", "ok")  # the overview's order


def write_report(out: Path, rows: list[dict[str, Any]], trends: list[dict[str, Any]],
                 summary: dict[str, Any], robots: Sequence[str]) -> None:
    """Write ``out/report.html`` and ``out/robots/NAME.html`` for every robot of
    ``robots`` (the manifest's, in its order) from the bag rows, the drift rows and the
    run summary (``summary["drift_threshold"]``, counts, ``version``, ``command``)."""
    by_robot: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_robot[row["robot"]].append(row)
    trends_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in trends:
        trends_of[t["robot"]].append(t)
    names = list(dict.fromkeys([*robots, *by_robot]))
    joints = list(dict.fromkeys(r["joint"] for r in rows if r["joint"]))
    states = {name: state(by_robot[name], trends_of[name]) for name in names}
    order = sorted(names, key=lambda n: (STATES.index(states[n]), n))
    write_atomic(out / "report.html",
                 _overview(order, states, by_robot, trends_of, joints, summary).encode())
    pages = out / "robots"
    pages.mkdir(exist_ok=True)
    good = [r for r in rows if trended(r)]
    scales = shared_scales(good, [m.name for m in metrics.METRIC_TABLE])
    days = [r["start"] for r in good]
    x_range = (min(days), max(days)) if days else (0.0, 1.0)
    for name in names:
        page = _robot_page(name, states[name], by_robot[name], trends_of[name], out,
                           scales, x_range, summary)
        write_atomic(pages / f"{name}.html", page.encode())
    for old in pages.glob("*.html"):  # a robot no longer in the manifest
        if old.stem not in names:
            old.unlink()


def state(rows: list[dict[str, Any]], trends: list[dict[str, Any]]) -> str:
    """A robot's state in the overview, one of :data:`STATES`."""
    bags = {r["bag"]: r for r in rows}
    if any(t["flagged"] for t in trends):
        return "flagged"
    if not bags:
        return "silent"
    if all(r["status"] == "error" for r in bags.values()):
        return "failed"
    if any(r["status"] == "error" for r in bags.values()):
        return "errors"
    if not trends or max(t["bags"] for t in trends) < MIN_BAGS:
        return "no trend"
    return "ok"


def _head(title: str, summary: dict[str, Any]) -> str:
    e = html.escape
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{e(title)}</h1>"
            f"<p class='stamp'>rnea-fleet {e(str(summary.get('version', '?')))}: "
            f"<code>{e(str(summary.get('command', '?')))}</code></p>")


def _overview(order: list[str], states: dict[str, str],
              by_robot: dict[str, list[dict[str, Any]]],
              trends_of: dict[str, list[dict[str, Any]]], joints: list[str],
              summary: dict[str, Any]) -> str:
    e = html.escape
    count = {s: sum(states[n] == s for n in order) for s in STATES}
    parts = [_head("rnea-fleet report", summary),
             f"<p>{len(order)} robots: " + ", ".join(f"{count[s]} {s}" for s in STATES) +
             f". {summary['bags']} bags: {summary['analysed']} analysed, {summary['cached']} "
             f"from the cache, {summary['failed']} failed, {summary['partial']} partial, "
             f"{len(summary.get('duplicates', []))} duplicates. Flagged joints: "
             f"{e(', '.join(summary['flagged'][:50]) or 'none')}"
             f"{' …' if len(summary['flagged']) > 50 else ''}. "
             f"Drift threshold {summary['drift_threshold']:g} of the residual RMS per day."
             " Tables: <code>bags.parquet</code>, <code>drift.parquet</code>.</p>"
             "<p>Per joint: the fastest rise of its "
             + ", ".join(m.title for m in metrics.METRIC_TABLE) +
             " [% of its residual RMS per day]; red: flagged. Click a column head "
             "to sort; a robot's name opens its page.</p><table><thead><tr><th>robot</th>"
             "<th>state</th><th>bags</th><th>trended</th><th>failed</th><th>partial</th>"
             "<th>duplicates</th><th>contacts</th><th>last bag (UTC)</th>"
             + "".join(f"<th>{e(j)} [%/day]</th>" for j in joints) + "</tr></thead><tbody>"]
    for name in order:
        parts.append(_overview_row(name, states[name], by_robot[name], trends_of[name],
                                   joints))
    parts.append(f"</tbody></table><script>{SORT}</script></body></html>")
    return "\n".join(parts)


def _overview_row(name: str, robot_state: str, rows: list[dict[str, Any]],
                  trends: list[dict[str, Any]], joints: list[str]) -> str:
    e = html.escape
    bags = {r["bag"]: r for r in rows}
    trended_bags = {r["bag"] for r in rows if trended(r)}
    starts = [r["start"] for r in bags.values() if math.isfinite(r["start"])]
    last = (datetime.fromtimestamp(max(starts), tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
            if starts else "")
    cells = [f"<td data-v='{e(name)}'><a href='robots/{e(name)}.html'>{e(name)}</a></td>",
             f"<td class='{robot_state.replace(' ', '-')}' "
             f"data-v='{STATES.index(robot_state)}'>{robot_state}</td>",
             f"<td>{len(bags)}</td><td>{len(trended_bags)}</td>",
             f"<td>{sum(r['status'] == 'error' for r in bags.values())}</td>",
             f"<td>{sum(r['status'] == 'partial' for r in bags.values())}</td>",
             f"<td>{sum(bool(r.get('duplicate_of')) for r in bags.values())}</td>",
             f"<td>{contact_count(rows)}</td>", f"<td>{last}</td>"]
    worst: dict[str, tuple[float, bool]] = {}
    for t in trends:
        rise = t["relative_per_day"]
        if math.isfinite(rise):
            before = worst.get(t["joint"], (-math.inf, False))
            worst[t["joint"]] = (max(before[0], rise), before[1] or bool(t["flagged"]))
    for joint in joints:
        rise, flag = worst.get(joint, (math.nan, False))
        text = f"{100 * rise:.2f}" if math.isfinite(rise) else ""
        cells.append(f"<td{' class=flag' if flag else ''} data-v='"
                     f"{100 * rise if math.isfinite(rise) else -1e9:.4g}'>{text}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _robot_page(name: str, robot_state: str, rows: list[dict[str, Any]],
                trends: list[dict[str, Any]], out: Path,
                scales: dict[tuple[str, str], tuple[float, float]],
                x_range: tuple[float, float], summary: dict[str, Any]) -> str:
    e = html.escape
    threshold = float(summary["drift_threshold"])
    parts = [_head(f"rnea-fleet: {name}", summary),
             f"<p><a href='../report.html'>← fleet overview</a> · state: "
             f"<span class='{robot_state.replace(' ', '-')}'>{robot_state}</span></p>"]
    if robot_state == "silent":
        parts.append("<p class='silent'>No bag of this robot: its glob matched nothing "
                     "(or none is in the --since window).</p>")
    if robot_state == "failed":
        parts.append("<p class='failed'>Every bag of this robot failed: no trend (the "
                     "reasons below).</p>")
    flags = [t for t in trends if t["flagged"]]
    if flags:
        items = "".join(f"<li class='flagged'>{e(f['joint'])}: {e(f['metric'])} rises "
                        f"{100 * f['relative_per_day']:.1f} %/day of its residual RMS "
                        f"({f['bags']} bags over {f['days']:.0f} days)</li>" for f in flags)
        parts.append(f"<p>Flagged:</p><ul>{items}</ul>")
    good = [r for r in rows if trended(r)]
    if good:
        parts.append(_panels(good, trends, scales, x_range, threshold, flags))
        parts.append(_trend_table(trends))
    parts.append(_contact_table(rows))
    parts.append(_bag_table(rows))
    links = {r["bag"]: r.get("report") for r in rows  # a failed bag has no report
             if r.get("report") and r["status"] != "error"}
    if links:
        items = "".join(
            f"<li><a href='{e(os.path.relpath(Path(str(d)) / 'report.md', out / 'robots'))}'>"
            f"{e(Path(b).name)}</a></li>" for b, d in links.items())
        parts.append(f"<h3>Per-bag rnea-bag reports</h3><ul>{items}</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _panels(good: list[dict[str, Any]], trends: list[dict[str, Any]],
            scales: dict[tuple[str, str], tuple[float, float]],
            x_range: tuple[float, float], threshold: float,
            flags: list[dict[str, Any]]) -> str:
    """One row of panels per joint (one per metric of ``METRIC_TABLE``), flagged first."""
    e = html.escape
    trend = {(t["joint"], t["metric"]): t for t in trends}
    joints = list(dict.fromkeys([*(f["joint"] for f in flags), *(r["joint"] for r in good)]))
    parts = ["<h3>Trends</h3><p>Dots: bags read whole (one per recording); shared y-range "
             "per joint and metric across the fleet (a triangle: beyond it); green: noise "
             "band; orange: the threshold rise; dashed: the Theil-Sen trend.</p>"]
    for joint in joints:
        mine = sorted((r for r in good if r["joint"] == joint), key=lambda r: r["start"])
        unit = next((r.get("unit") for r in mine if r.get("unit")), "") or "N m"
        speeds = [r["velocity_rms"] for r in mine if math.isfinite(r["velocity_rms"])]
        speed = float(np.median(speeds)) if speeds else math.nan
        row = [f"<div><b>{e(joint)}</b><br>"]
        for m in metrics.METRIC_TABLE:
            row.append(panel([(r["start"], r[m.name]) for r in mine], metric=m,
                             unit=m.unit(unit),
                             y_range=scales.get((joint, m.name), (0.0, 1.0)),
                             x_range=x_range, trend=trend.get((joint, m.name)),
                             threshold=threshold, per_unit=speed if m.per_speed else 1.0))
        parts.append("".join(row) + "</div>")
    return "\n".join(parts)


def _trend_table(trends: list[dict[str, Any]]) -> str:
    e = html.escape
    items = "".join(
        f"<tr><td>{e(t['joint'])}</td><td>{e(t['metric'])}</td><td>{t['bags']}</td>"
        f"<td>{t['days']:.1f}</td><td>{t['slope_per_day']:.3g}</td>"
        f"<td>{100 * t['relative_per_day']:.2f}</td><td>{t['noise']:.3g}</td>"
        f"<td{' class=flag' if t['flagged'] else ''}>{'yes' if t['flagged'] else ''}</td>"
        "</tr>" for t in trends)
    return ("<h3>Trend table</h3><table><thead><tr><th>joint</th><th>metric</th><th>bags"
            "</th><th>days</th><th>slope [unit/day]</th><th>rise [%/day]</th><th>noise "
            f"[unit]</th><th>flagged</th></tr></thead><tbody>{items}</tbody></table>")


def _counted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose contacts were observed, of bags read whole or in part, not copies."""
    return [r for r in rows if r["status"] != "error" and not r.get("duplicate_of")
            and r.get("contacts") is not None]


def contact_count(rows: list[dict[str, Any]]) -> str:
    """A robot's contacts over its bags ('' when none could be observed)."""
    counted = _counted(rows)
    return str(sum(int(r["contacts"]) for r in counted)) if counted else ""


def _contact_table(rows: list[dict[str, Any]]) -> str:
    """Contacts per day (UTC, of the bag's start): bags observed, contacts, the worst
    peak, and the joints they were isolated at (rnea-bag's ``contacts.csv``)."""
    e = html.escape
    days: dict[str, dict[str, Any]] = {}
    for r in _counted(rows):
        if not math.isfinite(r["start"]):
            continue
        day = datetime.fromtimestamp(r["start"], tz=timezone.utc).strftime("%Y-%m-%d")
        d = days.setdefault(day, {"bags": set(), "count": 0, "peak": math.nan,
                                  "joints": {}, "unit": set()})
        d["bags"].add(r["bag"])
        if r["contacts"]:
            d["count"] += int(r["contacts"])
            d["peak"] = float(np.fmax(d["peak"], r["contact_peak"]))
            d["joints"][r["joint"]] = d["joints"].get(r["joint"], 0) + int(r["contacts"])
            d["unit"].add(r.get("unit") or "N m")
    if not days:
        return ("<h3>Contacts</h3><p>None observed: no bag with recorded velocities and "
                "efforts.</p>")
    items = "".join(
        f"<tr><td>{day}</td><td>{len(d['bags'])}</td><td>{d['count']}</td>"
        f"<td>{'' if math.isnan(d['peak']) else format(d['peak'], '.4g')}</td>"
        f"<td>{e(' / '.join(sorted(d['unit'])))}</td><td>"
        f"{e(', '.join(f'{j} {n}' for j, n in sorted(d['joints'].items())))}</td></tr>"
        for day, d in sorted(days.items()))
    return ("<h3>Contacts per day</h3><p>From the momentum observer (rnea-bag's "
            "<code>contacts.csv</code>, default thresholds unless the fleet's options "
            "give them); a bag's contacts by the joint they were isolated at.</p><table>"
            "<thead><tr><th>day (UTC)</th><th>bags</th><th>contacts</th><th>worst peak</th>"
            "<th>unit</th><th>joints</th></tr></thead>"
            f"<tbody>{items}</tbody></table>")


def _bag_table(rows: list[dict[str, Any]]) -> str:
    """The bags not in the trends: failed, partial and duplicates, with the reason."""
    e = html.escape
    bad = {r["bag"]: r for r in rows if not trended(r)}
    if not bad:
        return ""
    items = []
    for r in bad.values():
        kind = "duplicate" if r.get("duplicate_of") else r["status"]
        why = (f"a copy of {r['duplicate_of']} ({r['samples']} samples)"
               if r.get("duplicate_of") else r["message"])
        items.append(f"<tr><td class='{'err' if kind == 'error' else ''}'>{e(kind)}</td>"
                     f"<td>{e(r['bag'])}</td><td>{e(why)}</td></tr>")
    return ("<h3>Bags not in the trends: failed, partial, duplicates</h3><table><thead>"
            f"<tr><th>kind</th><th>bag</th><th>reason</th></tr></thead><tbody>"
            f"{''.join(items)}</tbody></table>")


def report_from_tables(out: Path) -> None:
    """Write the report again from ``out``'s ``bags.parquet``, ``drift.parquet`` and
    ``summary.json`` (no bag read)."""
    import json

    from rnea_ros.tools.fleet.tables import read_rows

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    rows = read_rows(out / "bags.parquet")
    robots = list(dict.fromkeys([*(r["robot"] for r in rows), *summary.get("silent", [])]))
    write_report(out, rows, read_rows(out / "drift.parquet"), summary, robots)
