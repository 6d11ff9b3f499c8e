"""The fleet report at scale (issue 37), built from a generated 1000-robot table (no
bags): an overview under 10 MB, flagged, failed and silent robots first and linked,
per-robot pages with a y-range shared across robots, the noise band, the threshold
and units on every axis."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rnea_ros.tools.fleet.synthetic import fleet_tables


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fleet_tables(tmp_path_factory.mktemp("t1000"), robots=1000, days=8)


def states(page: str) -> list[tuple[str, str]]:
    """(robot, state) of the overview's rows, in order."""
    return re.findall(r"<tr><td data-v='(\w+)'><a href='robots/\w+\.html'>\w+</a></td>"
                      r"<td class='[\w-]+' data-v='\d'>([\w ]+)</td>", page)


def test_the_overview_is_small_and_lists_every_robot_worst_first(fleet: Path) -> None:
    out = fleet.parent
    assert fleet.stat().st_size < 10 * 2**20  # measured: ~0.4 MB
    page = fleet.read_text()
    rows = states(page)
    assert len(rows) == 1000 and len({r for r, _ in rows}) == 1000
    order = [s for _, s in rows]
    summary = json.loads((out / "summary.json").read_text())
    worn = {f"robot{k:04d}" for k in range(1000) if k % 97 == 5}
    flagged = {r.split("/")[0] for r in summary["flagged"]}
    assert flagged == worn  # the wearing joints, and nothing else
    n_flag = len(flagged)
    failed = {f"robot{k:04d}" for k in range(1000) if k % 250 == 2} - flagged
    silent = {f"robot{k:04d}" for k in range(1000) if k % 333 == 1}
    assert order[:n_flag] == ["flagged"] * n_flag
    assert {r for r, s in rows[:n_flag]} == flagged
    assert rows[n_flag:n_flag + len(failed)] == [(r, "failed") for r in sorted(failed)]
    start = n_flag + len(failed)
    assert rows[start:start + len(silent)] == [(r, "silent") for r in sorted(silent)]
    assert "No joint flagged" not in page
    for robot, _ in rows:  # every robot linked to its page
        assert (out / "robots" / f"{robot}.html").is_file()
    assert "<script>" in page and "http" not in page  # sortable, self-contained
    assert summary["version"] in page


def test_robot_pages_share_scales_draw_noise_and_threshold_with_units(fleet: Path) -> None:
    out = fleet.parent
    pages = {r: (out / "robots" / f"{r}.html").read_text()
             for r in ("robot0005", "robot0010", "robot0252", "robot0001", "robot0003")}
    worn, healthy = pages["robot0005"], pages["robot0010"]

    def ticks(page: str, joint: str) -> list[list[str]]:
        """The y tick labels of the joint's three panels."""
        block = page.split(f"<b>{joint}</b>")[1].split("</div>")[0]
        return [re.findall(r"text-anchor='end'>([^<]+)</text>", svg)[:3]
                for svg in block.split("<svg")[1:]]

    assert ticks(worn, "joint3") == ticks(healthy, "joint3")  # the same y-ranges
    assert ticks(worn, "joint1") == ticks(healthy, "joint1")
    for title in ("residual RMS [N m]", "extra Coulomb friction [N m]",
                  "extra viscous friction [N m s/rad]"):
        assert healthy.count(title) == 7  # one panel per joint, its unit on the axis
    assert healthy.count("date (UTC)") == 21
    assert healthy.count("<title>noise band") == 21 and healthy.count("<title>threshold") == 21
    assert "class='flag'" in worn.split("<b>joint3</b>")[1].split("</div>")[0]
    assert "class='flag'" not in healthy
    assert "Every bag of this robot failed" in pages["robot0252"]
    assert pages["robot0252"].count("File magic is invalid") == 8 and "<svg" not in \
        pages["robot0252"]
    assert "glob matched nothing" in pages["robot0001"]
    assert "duplicate" in pages["robot0003"] and "a copy of /fleet/robot0003/day07" in \
        pages["robot0003"]
    assert all(len(p) < 200_000 for p in pages.values())


def test_a_robot_gone_from_the_manifest_loses_its_page(tmp_path: Path) -> None:
    from rnea_ros.tools.fleet.report import report_from_tables

    out = fleet_tables(tmp_path, robots=6, days=3).parent
    assert (out / "robots" / "robot0005.html").is_file()
    summary = json.loads((out / "summary.json").read_text())
    (out / "robots" / "gone.html").write_text("an old robot's page")
    (out / "robots" / "notes.txt").write_text("not a page")
    report_from_tables(out)
    assert not (out / "robots" / "gone.html").exists()
    assert (out / "robots" / "notes.txt").exists() and summary["robots"] == 6
    assert sorted(p.stem for p in (out / "robots").glob("*.html")) == [
        f"robot{k:04d}" for k in range(6)]


def test_the_metrics_come_from_one_table(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A drift metric is one row of ``drift.METRIC_TABLE``: a row added there (the
    residual bias, a torque) gets its trend rows in ``drift.parquet``, its panel with
    its title and unit on every joint of every robot page and its place in the
    overview's prose, with nothing else changed (main stated the metrics three
    times: ``METRICS``, ``plot.TITLES``, a tuple in ``report.py``)."""
    from rnea_ros.tools.fleet import drift
    from rnea_ros.tools.fleet.tables import read_rows

    table = (*drift.METRIC_TABLE, drift.Metric("bias", "residual bias"))
    monkeypatch.setattr(drift, "METRIC_TABLE", table)
    out = fleet_tables(tmp_path, robots=6, days=3).parent
    trends = read_rows(out / "drift.parquet")
    assert {t["metric"] for t in trends} == {m.name for m in table}
    page = (out / "robots" / "robot0000.html").read_text()
    njoints = page.count("<div><b>")
    assert njoints == 7
    for m in table:
        title = f"{m.title} [{m.unit('N m')}]"
        assert page.count(title) == njoints, title
    assert page.split("<b>joint1</b>")[1].split("</div>")[0].count("<svg") == len(table)
    assert "residual bias [% of its residual RMS per day]" in (out / "report.html").read_text()


def test_the_effort_unit_follows_the_joint_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """``rnea-bag`` and ``rnea-fleet`` take a joint's effort unit from one rule,
    which reads the joint's record (a displacement: N), not its name (main compared
    the name with 'prismatic', in two places)."""
    from rnea_ros.core.model import joints
    from rnea_ros.tools.bag.report import effort_unit

    monkeypatch.setitem(joints.JOINT_KINDS, "slider",
                        joints.JointKind("slider", 1, 1, prismatic=True))
    assert [effort_unit(t) for t in ("revolute", "continuous", "prismatic", "slider")] == \
        ["N m", "N m", "N", "N"]
