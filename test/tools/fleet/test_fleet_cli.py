"""rnea-fleet on a generated fleet: the wearing joint and only it flagged, bad bags listed,
a cached second run, a Dask LocalCluster giving identical rows, a SIGKILLed run resumed."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rnea_ros.tools.fleet import main
from rnea_ros.tools.fleet.synthetic import WORN, write_fleet

BAD = {"empty.mcap": "seems to be empty", "random.mcap": "File magic is invalid",
       "other_robot": "lack 5 of the robot's 7 joints"}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fleet(tmp_path_factory.mktemp("fleet"), days=3, duration=1.5)


@pytest.fixture(scope="module")
def local(fleet: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first run, on the local pool (2 workers)."""
    out = tmp_path_factory.mktemp("local")
    assert main(["analyse", str(fleet), "--out", str(out), "--workers", "2", "--quiet"]) == 2
    return out


def table(path: Path) -> list[dict[str, Any]]:
    """The rows, NaN as the string 'nan' (NaN != NaN would fail equal tables)."""
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in pq.read_table(path).to_pylist()]


def summary(out: Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def fleet_root(out: Path) -> Path:
    return Path(summary(out)["manifest"]).parent


def test_the_wearing_joint_and_only_it_is_flagged(local: Path) -> None:
    flagged = {(r["robot"], r["joint"]) for r in table(local / "drift.parquet") if r["flagged"]}
    assert flagged == {WORN}
    assert summary(local)["flagged"] == ["/".join(WORN)]
    rows = table(local / "bags.parquet")
    worn = sorted((r["start"], r["coulomb"]) for r in rows if (r["robot"], r["joint"]) == WORN)
    assert [c for _, c in worn] == sorted(c for _, c in worn)  # rises day by day
    assert worn[-1][1] > 0.1 and worn[0][1] < 0.02  # 0.03 N m/day over 6 days, from 0


def test_bad_bags_are_error_rows_with_one_line_and_the_cut_one_is_partial(
        local: Path) -> None:
    rows = table(local / "bags.parquet")
    status = {Path(r["bag"]).name: (r["status"], r["message"]) for r in rows
              if r["robot"] != "r4"}
    for name, reason in BAD.items():
        assert status[name][0] == "error" and reason in status[name][1], status[name]
        assert "\n" not in status[name][1]
    topic = [r for r in rows if r["robot"] == "r4"]
    assert len(topic) == 1 and topic[0]["status"] == "error"
    assert "topic '/arm/joint_states' is not in the bag" in topic[0]["message"]
    assert status["cut.mcap"][0] == "partial" and "truncated" in status["cut.mcap"][1].lower()
    assert all(status[f"day{d:02d}"] == ("ok", "") for d in range(3))
    assert status["before1.bag"] == ("ok", "") and status["before2"] == ("ok", "")  # ROS 1, db3
    s = summary(local)
    assert (s["bags"], s["analysed"], s["cached"], s["failed"], s["partial"]) == (13, 13, 0, 4, 1)
    ok_rows = [r for r in rows if r["status"] == "ok"]
    assert len(ok_rows) == 8 * 7 and all(r["samples"] == 750 for r in ok_rows)
    assert all(r["start"].year == 2026 and abs(r["duration"] - 1.498) < 1e-6 for r in ok_rows)
    cut = next(r for r in rows if Path(r["bag"]).name == "cut.mcap")  # day00's first 60 %
    assert cut["duplicate_of"] == str(fleet_root(local) / "r2" / "day00")
    assert s["duplicates"] == [{"robot": "r2", "bag": cut["bag"], "copy_of": cut["duplicate_of"]}]
    page = (local / "robots" / "r2.html").read_text()  # the overview links each robot's page
    assert all(name in page for name in BAD) and page.count("<svg") == 3 * 7
    overview = (local / "report.html").read_text()
    assert all(f"href='robots/{r}.html'" in overview for r in ("r1", "r2", "r3", "r4"))
    assert "http" not in page + overview  # self-contained


def test_second_run_is_all_cached_and_a_touched_bag_is_redone(
        fleet: Path, local: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = table(local / "bags.parquet")
    assert main(["analyse", str(fleet), "--out", str(local), "--quiet"]) == 2
    s = summary(local)
    assert (s["analysed"], s["cached"]) == (0, 13)
    assert table(local / "bags.parquet") == before
    err = capsys.readouterr().err
    assert "robot 'r3': no bag matches" in err
    assert all(f"failed: r2: {fleet.parent / 'r2' / name}" in err for name in BAD)
    bag = next((fleet.parent / "r1" / "day01").glob("*.mcap"))
    os.utime(bag, ns=(time.time_ns(), time.time_ns()))
    assert main(["analyse", str(fleet), "--out", str(local), "--quiet"]) == 2
    s = summary(local)
    assert (s["analysed"], s["cached"]) == (1, 12)
    again = table(local / "bags.parquet")
    changed = [r["bag"] for r, b in zip(again, before, strict=True) if r["key"] != b["key"]]
    assert set(changed) == {str(bag.parent)}  # the touched bag's rows, new keys
    assert [{**r, "key": ""} for r in again] == [{**r, "key": ""} for r in before]


def test_a_dask_local_cluster_gives_identical_rows(fleet: Path, local: Path,
                                                  tmp_path: Path) -> None:
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code = main(["analyse", str(fleet), "--out", str(tmp_path), "--quiet",
                     "--scheduler", cluster.scheduler_address])
    assert code == 2
    assert table(tmp_path / "bags.parquet") == table(local / "bags.parquet")
    assert table(tmp_path / "drift.parquet") == table(local / "drift.parquet")
    assert summary(tmp_path)["engine"] == cluster.scheduler_address


def test_a_run_killed_halfway_resumes_without_redoing_or_duplicating(
        fleet: Path, local: Path, tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; from rnea_ros.tools.fleet import main; "
               "sys.exit(main(sys.argv[1:]))", "analyse", str(fleet), "--out", str(tmp_path),
               "--workers", "1", "--quiet"]
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    cache = tmp_path / "cache"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(cache.glob("*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)  # the run and its worker processes
    run.wait()
    finished = list(cache.glob("*.json"))
    assert 3 <= len(finished) < 13, "killed too late to test a resume"
    assert all(json.loads(f.read_text())["key"] == f.stem for f in finished)  # whole files
    assert not (tmp_path / "bags.parquet").exists()
    assert main(["analyse", str(fleet), "--out", str(tmp_path), "--quiet"]) == 2
    s = summary(tmp_path)
    assert (s["analysed"], s["cached"]) == (13 - len(finished), len(finished))
    assert table(tmp_path / "bags.parquet") == table(local / "bags.parquet")


def test_a_cache_write_in_progress_is_never_taken_for_a_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a result is being written, ``cache/*.json`` holds only whole results: the
    temporary ended in ``.json`` (``.<key>.json.<random>.tmp.json``), so a run killed
    mid-write left a file the killed-run test above took for a result (make test beside
    two busy loops)."""
    from rnea_ros.tools import files
    from rnea_ros.tools.fleet.cache import Cache

    cache, seen, replace = Cache(tmp_path), [], os.replace

    def recording_replace(source: str, target: str) -> None:
        seen.append(sorted(p.name for p in cache.folder.glob("*.json")))
        replace(source, target)

    monkeypatch.setattr(files.os, "replace", recording_replace)
    cache.put({"key": "k1"})
    cache.put({"key": "k2"})
    assert seen == [[], ["k1.json"]]
    assert sorted(p.name for p in cache.folder.iterdir()) == ["k1.json", "k2.json"]


@pytest.mark.parametrize(("manifest", "message"), [
    ("robots: {}", "needs a 'robots:' mapping"),
    ("robots: {r1: {bags: '*.mcap'}}", "robot 'r1': missing key 'urdf'"),
    ("robots: {r1: {urdf: nothere.urdf, bags: '*.mcap'}}", "key 'urdf': file"),
    ("robots: {r1: {urdf: URDF, bags: '*.mcap', window: fast}}", "key 'window': expected"),
    ("robots: {r1: {urdf: URDF, bags: '*.mcap', colour: red}}", "unknown key 'colour'"),
    ("robots: [", "is not YAML"),
])
def test_bad_manifests_are_one_line_usage_errors(manifest: str, message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from rnea_ros.samples import sample_urdf

    path = tmp_path / "fleet.yaml"
    path.write_text(manifest.replace("URDF", str(sample_urdf("arm7"))))
    assert main(["analyse", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_since_keeps_the_later_bags_and_the_failed_ones(local: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(local, tmp_path / "out")
    fleet = Path(summary(local)["manifest"])
    assert main(["analyse", str(fleet), "--out", str(tmp_path / "out"), "--quiet",
                 "--since", "2026-05-31"]) == 2
    rows = table(tmp_path / "out" / "bags.parquet")
    kept = {Path(r["bag"]).name for r in rows}
    assert kept == {"day01", "day02", *BAD, "day00"}  # r4's error row is r1/day00
    assert summary(tmp_path / "out")["analysed"] == 0
    flagged = [r for r in table(tmp_path / "out" / "drift.parquet") if r["flagged"]]
    assert flagged == []  # 2 bags left per robot: no trend has support


def drift_rows(values: list[float], se: float, days: float = 1.0) -> list[dict[str, Any]]:
    return [{"robot": "r", "joint": "j", "status": "ok", "start": k * days * 86400.0,
             "rms": 0.05, "samples": 10**6, "viscous": 0.0, "viscous_se": se,
             "coulomb": c, "coulomb_se": se, "velocity_rms": 1.0}
            for k, c in enumerate(values)]


@pytest.mark.parametrize(("values", "se", "flagged"), [
    ([0.0, 0.01, 0.02], 0.001, True),           # 20 %/day of the RMS, beyond the noise
    ([0.0, 0.01], 0.001, False),                # 2 bags: no support
    ([0.0, 0.01, 0.02], 0.01, False),           # within the bags' noise
    ([0.0, 0.0001, 0.0002], 0.00001, False),    # 0.2 %/day: under the threshold
    ([0.02, 0.01, 0.0], 0.001, False),          # falling
    ([0.0, 0.01, 0.02, 0.0, 0.01], 0.001, False),  # no trend (the interval holds 0)
])
def test_the_flag_rule(values: list[float], se: float, flagged: bool) -> None:
    from rnea_ros.tools.fleet.drift import drift

    rows = {r["metric"]: r for r in drift(drift_rows(values, se))}
    assert rows["coulomb"]["flagged"] is flagged
    assert not rows["viscous"]["flagged"] and not rows["rms"]["flagged"]


def test_reports_are_linked_for_the_bags_that_have_one(tmp_path: Path) -> None:
    """``--reports``: each analysed bag's rnea-bag report is written and linked (relative)
    from the robot's page, linked from report.html; a bag that failed has none and no
    link."""
    import re

    from rnea_ros.samples import load_robot, sample_urdf
    from rnea_ros.tools.synthetic_bag import write_bag

    write_bag(tmp_path / "r" / "good", load_robot("arm7"), duration=1.0, seed=1)
    (tmp_path / "r" / "bad.mcap").write_bytes(b"not a bag" * 10)
    manifest = tmp_path / "fleet.yaml"
    manifest.write_text(f"robots:\n  r: {{urdf: {sample_urdf('arm7')}, bags: r/*}}\n")
    out = tmp_path / "out"
    assert main(["analyse", str(manifest), "--out", str(out), "--reports", "--workers", "1",
                 "--quiet"]) == 2
    assert re.findall(r"href='([^']+)'", (out / "report.html").read_text()) == [
        "robots/r.html"]
    page = (out / "robots" / "r.html").read_text()
    links = [link for link in re.findall(r"href='([^']+)'", page) if link != "../report.html"]
    assert len(links) == 1, links
    report = out / "robots" / links[0]
    assert report.is_file() and report.name == "report.md"
    assert "bad.mcap" in page  # listed as failed
