"""The tables people query: ``bags.parquet`` and ``drift.parquet`` (pyarrow), written
atomically (a temporary file renamed over the old one).

``bags.parquet``'s ``contacts`` (null: not observed, the bag lacks velocities or
efforts) and ``contact_peak`` [N m or N] are per joint: the bag's contacts isolated at
that joint; a bag's count is their sum, its worst peak their maximum."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rnea_ros.tools.files import atomic_path

BAG_COLUMNS = ("robot", "bag", "joint", "start", "duration", "samples", "rms", "bias",
               "max_abs", "peak_effort_ratio", "peak_rate_ratio", "violations", "viscous",
               "coulomb", "viscous_se", "coulomb_se", "velocity_rms", "contacts",
               "contact_peak", "unit", "status", "message", "duplicate_of", "key")
FLOATS = ("duration", "rms", "bias", "max_abs", "peak_effort_ratio", "peak_rate_ratio",
          "viscous", "coulomb", "viscous_se", "coulomb_se", "velocity_rms", "contact_peak")
TEXT = ("robot", "bag", "joint", "unit", "status", "message", "duplicate_of", "key")
RESULT_FIELDS = ("robot", "bag", "key", "status", "message", "rows")  # a task's result
# one of its rows:
ROW_FIELDS = ("joint", "start", "samples", "violations", "contacts", "unit", *FLOATS)


def bag_rows(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (robot, bag, joint); a failed bag: one row with joint '' and NaNs.
    Sorted by robot, start, bag, joint (the same table whatever the engine)."""
    rows = []
    for r in results:
        common = {"robot": r["robot"], "bag": r["bag"], "status": r["status"],
                  "message": r["message"], "key": r["key"], "report": r.get("report")}
        if not r["rows"]:
            rows.append({**common, "joint": "", "start": math.nan, "samples": 0, "unit": "",
                         "violations": 0, "contacts": None, **{k: math.nan for k in FLOATS}})
        for joint in r["rows"]:
            rows.append({**common, **joint})
    start = [(row["start"] if math.isfinite(row["start"]) else math.inf) for row in rows]
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["robot"], start[i],
                                                    rows[i]["bag"], rows[i]["joint"]))
    return [rows[i] for i in order]


def write_bags(path: Path, rows: Sequence[dict[str, Any]],
               stamp: dict[str, str] | None = None) -> None:
    """``bags.parquet``: :data:`BAG_COLUMNS`; ``stamp`` (version, command line) in the
    file's metadata (``pq.read_schema(path).metadata``)."""
    import pyarrow as pa

    columns: dict[str, Any] = {c: [row.get(c, "") if c in TEXT else row.get(c)
                                   for row in rows] for c in BAG_COLUMNS}
    starts = [None if not math.isfinite(s) else round(s * 1e6) for s in columns["start"]]
    schema = {c: pa.float64() for c in FLOATS}
    schema.update({c: pa.string() for c in TEXT})
    schema.update(samples=pa.int64(), violations=pa.int64(), contacts=pa.int64())
    arrays = {c: (pa.array(starts, pa.timestamp("us", tz="UTC")) if c == "start"
                  else pa.array(columns[c], schema[c])) for c in BAG_COLUMNS}
    _write(path, pa.table(arrays), stamp)


def write_drift(path: Path, rows: Sequence[dict[str, Any]],
                stamp: dict[str, str] | None = None) -> None:
    """``drift.parquet``, one row per (robot, joint, metric); ``stamp`` as in
    :func:`write_bags`."""
    import pyarrow as pa

    names = ("robot", "joint", "metric", "bags", "days", "slope_per_day", "low", "high",
             "reference", "relative_per_day", "noise", "flagged")
    types = [pa.string()] * 3 + [pa.int64()] + [pa.float64()] * 7 + [pa.bool_()]
    _write(path, pa.table({n: pa.array([r[n] for r in rows], t)
                           for n, t in zip(names, types, strict=True)}), stamp)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A table's rows as :func:`bag_rows` / ``drift`` make them (``start`` in seconds
    since the epoch, NaN for none): the report is built again from the tables alone."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    for row in rows:
        if "start" in row:
            row["start"] = row["start"].timestamp() if row["start"] is not None else math.nan
        for c in FLOATS:
            if c in row and row[c] is None:
                row[c] = math.nan
    return rows


def _write(path: Path, table: Any, stamp: dict[str, str] | None) -> None:
    import pyarrow.parquet as pq

    if stamp:
        table = table.replace_schema_metadata(
            {f"rnea_fleet.{k}": v for k, v in stamp.items()})
    with atomic_path(path) as temporary:  # renamed into place, or removed on failure
        pq.write_table(table, temporary)
