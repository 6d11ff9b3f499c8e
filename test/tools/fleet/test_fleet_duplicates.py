"""Recordings counted once (issue 37): a truncated re-upload of a recording (same
stamps, 60 % of it) beside the whole one is listed as a duplicate and enters no trend.

The fleet: 7 arm7s x 4 days, ``r1``'s ``joint3`` wearing; ``h5`` re-uploaded the first
60 % of its day-0 bag. On main the copy entered ``h5``'s trends as a second point of
day 0 and ``h5/joint7`` was flagged as wearing (its residual RMS); the whole bags alone
flag only ``r1/joint3``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rnea_ros.tools.fleet import main
from rnea_ros.tools.fleet.drift import drift
from rnea_ros.tools.fleet.recordings import duplicates
from rnea_ros.tools.fleet.synthetic import WORN, write_fleet


def test_a_truncated_copy_is_a_duplicate_and_only_the_wearing_joint_is_flagged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = write_fleet(tmp_path / "fleet", days=4, spacing=1.0, duration=1.5,
                           bad=False, robots=7, copy=("h5", 0))
    out = tmp_path / "out"
    assert main(["analyse", str(manifest), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    flagged = {(r["robot"], r["joint"]) for r in pq.read_table(out / "drift.parquet")
               .to_pylist() if r["flagged"]}
    assert flagged == {WORN}
    copy, whole = tmp_path / "fleet" / "h5" / "copy00.mcap", tmp_path / "fleet" / "h5" / "day00"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duplicates"] == [{"robot": "h5", "bag": str(copy), "copy_of": str(whole)}]
    assert f"duplicate: h5: {copy}: a copy of {whole}" in err
    rows = pq.read_table(out / "bags.parquet").to_pylist()
    copies = [r for r in rows if r["bag"] == str(copy)]
    assert len(copies) == 7 and all(r["duplicate_of"] == str(whole) for r in copies)
    assert all(r["status"] == "partial" and 0 < r["samples"] < 0.65 * 750 for r in copies)
    assert all(r["duplicate_of"] == "" for r in rows if r["bag"] != str(copy))
    h5 = [r for r in pq.read_table(out / "drift.parquet").to_pylist() if r["robot"] == "h5"]
    assert {r["bags"] for r in h5} == {4}  # one point per recording
    page = (out / "robots" / "h5.html").read_text()
    assert "duplicate" in page and f"a copy of {whole}" in page


def rows_of(bags: list[tuple[str, float, str, int, float]]) -> list[dict[str, object]]:
    """Rows of one joint: (bag, start [s], status, samples, rms)."""
    return [{"robot": "r", "joint": "j", "bag": b, "start": s, "status": st, "samples": n,
             "duration": n / 1000.0, "rms": rms, "viscous": 0.0, "viscous_se": 1e-3,
             "coulomb": 0.0, "coulomb_se": 1e-3, "velocity_rms": 1.0}
            for b, s, st, n, rms in bags]


@pytest.mark.parametrize(("copies", "kept"), [
    ([("a", "partial", 600), ("b", "ok", 1000)], "b"),      # the whole one, listed 2nd
    ([("a", "ok", 900), ("b", "ok", 1000)], "b"),           # the most samples
    ([("b", "ok", 1000), ("a", "ok", 1000)], "a"),          # a tie: the first path
    ([("a", "ok", 100), ("b", "partial", 1000)], "a"),      # whole before partial
])
def test_the_most_complete_copy_is_kept(copies: list[tuple[str, str, int]], kept: str
                                        ) -> None:
    rows = duplicates(rows_of([(b, 5.0, st, n, 0.05) for b, st, n in copies]
                              + [("c", 6.0, "ok", 1000, 0.05)]))
    assert {r["bag"]: r["duplicate_of"] for r in rows} == {
        **{b: ("" if b == kept else kept) for b, _, _ in copies}, "c": ""}


def test_a_copy_never_moves_a_trend_and_a_failed_bag_is_no_duplicate() -> None:
    days = [(f"d{k}", k * 86400.0, "ok", 1000, 0.05 + 1e-4 * (k % 2)) for k in range(5)]
    copies = [(f"d{k}.copy", k * 86400.0, "partial", 600, 0.08) for k in (3, 4)]
    failed = [("bad1", math.nan, "error", 0, math.nan), ("bad2", math.nan, "error", 0,
                                                         math.nan)]
    alone = {t["metric"]: t for t in drift(duplicates(rows_of(days)))}
    both = {t["metric"]: t for t in drift(duplicates(rows_of(days + copies + failed)))}
    assert both == alone and not both["rms"]["flagged"] and both["rms"]["bags"] == 5
    assert [r["duplicate_of"] for r in duplicates(rows_of(failed))] == ["", ""]


def test_byte_identical_copies_are_analysed_once_and_each_listed_under_its_own_path(
        tmp_path: Path) -> None:
    """Two bag folders with the same files (``cp -a``: same names, sizes, times) have one
    content key. Each is a row set of its own under its own path, the copy a duplicate
    of the original, and the bag is analysed once: the table held the copy's rows twice
    and the original's not at all, after analysing the same bag twice."""
    import shutil

    from rnea_ros.samples import sample_urdf

    write_fleet(tmp_path / "fleet", days=2, spacing=1.0, duration=1.0, bad=False)
    original, copy = tmp_path / "fleet" / "r1" / "day00", tmp_path / "fleet" / "r1" / "dup00"
    shutil.copytree(original, copy)  # (copy2: the files' times kept)
    manifest = tmp_path / "fleet" / "copies.yaml"
    manifest.write_text(f"robots:\n  r1: {{urdf: {sample_urdf('arm7')}, bags: r1/*}}\n")
    out = tmp_path / "out"
    assert main(["analyse", str(manifest), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    per_bag: dict[str, list[dict[str, object]]] = {}
    for r in pq.read_table(out / "bags.parquet").to_pylist():
        per_bag.setdefault(str(r["bag"]), []).append(r)
    assert sorted(per_bag) == sorted(str(tmp_path / "fleet" / "r1" / b)
                                     for b in ("day00", "day01", "dup00"))
    assert {len(rows) for rows in per_bag.values()} == {7}  # arm7: a row per joint, once
    assert all(r["duplicate_of"] == str(original) for r in per_bag[str(copy)])
    assert all(r["duplicate_of"] == "" for r in per_bag[str(original)])
    assert (summary["bags"], summary["analysed"]) == (3, 2)
