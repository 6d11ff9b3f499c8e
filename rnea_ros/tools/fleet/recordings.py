"""One recording, one point: copies of a recording found among a robot's bags.

A recording is identified by its robot and its first stamp (``start``, the first
joint state's time, to the microsecond as in ``bags.parquet``): a bag uploaded twice,
a truncated copy beside the whole one, or the same bag under two paths start at the
same stamp. Of such copies the most complete one is kept: an ``ok`` bag before a
``partial`` one, then the most samples, the longest duration, and the first path in
sort order; the others get ``duplicate_of`` (that bag's path) and stay in
``bags.parquet`` and the report, listed as duplicates, but enter no trend
(:mod:`~rnea_ros.tools.fleet.drift`). Without this, a truncated copy entered a
trend as a second point of its day with a residual over another part of the motion
(issue 37: two healthy joints flagged as wearing).

A failed bag (no stamp) is never a duplicate: it is listed as failed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any


def recording(row: dict[str, Any]) -> tuple[str, int] | None:
    """``(robot, first stamp [us])``, or None for a bag without a stamp (failed)."""
    start = row["start"]
    if row["status"] == "error" or not math.isfinite(start):
        return None
    return str(row["robot"]), round(start * 1e6)


def duplicates(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (one per robot, bag and joint) with ``duplicate_of`` set on each row:
    '' for the bag kept of its recording, the kept bag's path for a copy."""
    bags: dict[tuple[str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        key = recording(row)
        if key is not None:
            bags[key].setdefault(row["bag"], row)  # one row stands for its bag
    copy_of: dict[tuple[str, str], str] = {}
    for (robot, _), copies in bags.items():
        if len(copies) < 2:
            continue
        kept = min(copies.values(), key=_rank)["bag"]
        for bag in copies:
            if bag != kept:
                copy_of[(robot, bag)] = kept
    return [{**row, "duplicate_of": copy_of.get((row["robot"], row["bag"]), "")}
            for row in rows]


def _rank(row: dict[str, Any]) -> tuple[bool, int, float, str]:
    """Sort key, the most complete copy first."""
    duration = row["duration"] if math.isfinite(row["duration"]) else -math.inf
    return row["status"] != "ok", -int(row["samples"]), -duration, str(row["bag"])
