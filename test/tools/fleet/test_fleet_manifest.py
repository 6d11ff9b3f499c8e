"""rnea-fleet's manifest and output places (issue 37): robot names are identifiers,
a key given twice is refused, every path is relative to the manifest, symlinks are
followed once, a corrupt cache entry is recomputed, a read-only --out is one line;
--version, help on every flag, tables and report stamped with version and command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rnea_ros import __version__
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.fleet import main
from rnea_ros.tools.fleet.cli import parser
from rnea_ros.tools.fleet.manifest import FleetError, load_manifest
from rnea_ros.tools.synthetic_bag import write_bag


def run(manifest: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str
        ) -> tuple[int, str]:
    code = main(["analyse", str(manifest), "--out", str(out), "--quiet", "--workers", "1",
                 *extra])
    return code, capsys.readouterr().err.strip()


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a/b", "..", "1robot", "r 1", "é"])
def test_a_robot_name_that_is_not_an_identifier_is_refused(
        name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "m" / "fleet.yaml"
    manifest.parent.mkdir()
    manifest.write_text(f"robots:\n  {json.dumps(name)}: {{urdf: {sample_urdf('arm7')}, "
                        "bags: '*.mcap'}\n")
    code, err = run(manifest, tmp_path / "m" / "out", capsys, "--reports")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert f"robot name {name!r}: a robot name is an identifier" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["fleet.yaml", "m"]  # nothing else


@pytest.mark.parametrize(("text", "message"), [
    ("robots:\n  r1: {urdf: U, bags: a}\n  r1: {urdf: U, bags: b}\n",
     "line 3: key 'r1' is given twice (first on line 2)"),
    ("robots:\n  r1: {urdf: U, bags: a, bags: b}\n", "line 2: key 'bags' is given twice"),
    ("robots: {r1: {urdf: U, bags: a}}\nrobots: {r2: {urdf: U, bags: a}}\n",
     "line 2: key 'robots' is given twice"),
])
def test_a_key_given_twice_is_refused(text: str, message: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "fleet.yaml"
    manifest.write_text(text.replace("U", str(sample_urdf("arm7"))))
    code, err = run(manifest, tmp_path / "out", capsys)
    assert code == 1 and len(err.splitlines()) == 1, err
    assert message in err and str(manifest) in err


def test_every_path_is_relative_to_the_manifest(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``loops:`` like ``urdf:`` and ``bags:``: from the manifest's folder, not the
    working directory (which here holds a decoy of the same name)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "arm.urdf").write_text(Path(sample_urdf("arm7")).read_text())
    (site / "arm.loops.yaml").write_text("loops: []\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "arm.loops.yaml").write_text("decoy\n")
    monkeypatch.chdir(elsewhere)
    (site / "fleet.yaml").write_text(
        "robots: {r1: {urdf: arm.urdf, bags: '*.mcap', loops: arm.loops.yaml}}\n")
    robot = load_manifest(site / "fleet.yaml").robots[0]
    assert robot.urdf == (site / "arm.urdf").resolve()
    assert Path(robot.options["loops"]) == (site / "arm.loops.yaml").resolve()
    (site / "fleet.yaml").write_text(
        "robots: {r1: {urdf: arm.urdf, bags: '*.mcap', loops: nothere.yaml}}\n")
    with pytest.raises(FleetError, match=r"robot 'r1', key 'loops': file .*nothere\.yaml"):
        load_manifest(site / "fleet.yaml")


def test_symlinks_are_followed_once_and_a_recording_counted_once(tmp_path: Path) -> None:
    """``bags/**`` over a symlink loop and a rosbag2 directory: the directory once (not
    also its .mcap or metadata.yaml), the loop's copies not at all; a folder of bags
    is not a bag; a symlink to a bag elsewhere is that bag, once."""
    arm = load_robot("arm7")
    bags = tmp_path / "bags"
    write_bag(bags / "r1" / "day00", arm, duration=0.1, rate=100.0)
    write_bag(tmp_path / "away" / "day01", arm, duration=0.1, rate=100.0, clock=2.0)
    (bags / "r1" / "loop").symlink_to("..", target_is_directory=True)
    (bags / "r1" / "day01").symlink_to(tmp_path / "away" / "day01", target_is_directory=True)
    (bags / "r1" / "again").symlink_to(tmp_path / "away" / "day01", target_is_directory=True)
    (tmp_path / "fleet.yaml").write_text(
        f"robots: {{r1: {{urdf: {sample_urdf('arm7')}, bags: ['bags/**', 'away/*']}}}}\n")
    robot = load_manifest(tmp_path / "fleet.yaml").robots[0]
    real = sorted(os.path.realpath(b) for b in robot.bags)
    assert real == sorted([str((bags / "r1" / "day00").resolve()),
                           str((tmp_path / "away" / "day01").resolve())]), robot.bags


@pytest.fixture
def one_bag(tmp_path: Path) -> Path:
    write_bag(tmp_path / "r1" / "day00", load_robot("arm7"), duration=0.5, rate=200.0,
              clock=1.78e9)
    manifest = tmp_path / "fleet.yaml"
    manifest.write_text(f"robots: {{r1: {{urdf: {sample_urdf('arm7')}, bags: r1/*}}}}\n")
    return manifest


def test_a_corrupt_cache_entry_is_ignored_recomputed_and_warned_about(
        one_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert run(one_bag, out, capsys)[0] == 0
    [entry] = (out / "cache").glob("*.json")
    good = json.loads(entry.read_text())
    for broken in ({k: v for k, v in good.items() if k != "rows"},
                   {**good, "rows": [{"joint": "joint1"}]}, "{not json"):
        entry.write_text(broken if isinstance(broken, str) else json.dumps(broken))
        code, err = run(one_bag, out, capsys)
        assert code == 0, err
        assert f"warning: cache entry '{entry}' ignored (" in err and "analysed again" in err
        assert json.loads((out / "summary.json").read_text())["analysed"] == 1
        assert json.loads(entry.read_text()) == good  # replaced by the recomputed result
    code, err = run(one_bag, out, capsys)  # and now a plain cached run
    assert code == 0 and "warning" not in err
    assert json.loads((out / "summary.json").read_text())["cached"] == 1


@pytest.mark.parametrize("place", ["out", "cache"])
def test_a_place_that_cannot_be_written_is_one_line_and_exit_1(
        place: str, one_bag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
        ) -> None:
    """Read-only for a root user too: the place's parent is a file."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    out = blocker / "out" if place == "out" else tmp_path / "out"
    if place == "cache":
        out.mkdir()
        (out / "cache").write_text("a file where the cache folder goes")
    code, err = run(one_bag, out, capsys)
    assert code == 1 and len(err.splitlines()) == 1, err
    folder = out if place == "out" else out / "cache"
    assert err.startswith(f"rnea-fleet: error: cannot write in '{folder}': "), err
    assert "Not a directory" in err or "File exists" in err, err


def test_version_help_on_every_flag_and_stamps(one_bag: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == \
        f"rnea-fleet {__version__}"
    analyse = parser()._subparsers._group_actions[0].choices["analyse"]  # type: ignore[union-attr]
    for action in analyse._actions:
        assert action.help, action.option_strings
        if action.option_strings and action.option_strings[0] not in ("-h",) \
                and not action.required:
            assert "default" in action.help, action.option_strings
    assert "(default: 0.01)" in analyse.format_help().replace("\n", " ").replace("  ", " ")
    out = tmp_path / "out"
    assert run(one_bag, out, capsys, "--drift-threshold", "0.02")[0] == 0
    command = f"rnea-fleet analyse {one_bag} --out {out} --quiet --workers 1 " \
        "--drift-threshold 0.02"
    for table in ("bags.parquet", "drift.parquet"):
        meta = pq.read_schema(out / table).metadata
        assert meta[b"rnea_fleet.version"].decode() == __version__
        assert meta[b"rnea_fleet.command"].decode() == command
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["version"], summary["command"]) == (__version__, command)
    for page in (out / "report.html", out / "robots" / "r1.html"):
        text = page.read_text()
        assert f"rnea-fleet {__version__}" in text and command in text
