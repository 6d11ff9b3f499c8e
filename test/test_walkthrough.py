"""docs/walkthrough.md shows what the commands print now.

The page includes recorded outputs (docs/walkthrough/*.txt, written by
docs/walkthrough/generate.sh, which also takes the screenshots with chromium): each
``rnea-sample`` + tool pair is rerun here in a scratch directory and its output must be
the recorded one, line for line in any order (the sample data are seeded). Timings are not in
these outputs. The pictures the page shows must exist.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rnea_ros.commands import run

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "docs" / "walkthrough"

STEPS = {
    "bag": (["rnea-sample", "bag", "sample_bag"],
            ["rnea-bag", "sample_bag/arm7_run", "--urdf", "sample_bag/arm7.urdf",
             "--out", "sample_bag/bag_report"], 0),
    "fleet": (["rnea-sample", "fleet", "sample_fleet"],
              ["rnea-fleet", "analyse", "sample_fleet/fleet.yaml",
               "--out", "sample_fleet/fleet_report"], 2),
    "identify": (["rnea-sample", "identify", "sample_id"],
                 ["rnea-identify", "sample_id/arm7_heavy", "--urdf", "sample_id/arm7.urdf",
                  "--out", "sample_id/identified"], 0),
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_recorded_output_is_current(step: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    sample, tool, code = STEPS[step]
    monkeypatch.chdir(tmp_path)
    assert run(sample[0], sample[1:]) == 0
    sample_out = capfd.readouterr()
    assert (sample_out.out + sample_out.err) == (RECORDED / f"sample-{step}.txt").read_text()
    assert run(tool[0], tool[1:]) == code
    printed = capfd.readouterr()
    text = (printed.out + printed.err).replace(f"{tmp_path}/", "")
    # stdout and stderr interleave differently under a capture: compare the lines as a set
    recorded = (RECORDED / f"{step}.txt").read_text().splitlines()
    assert sorted(text.splitlines()) == sorted(recorded)


def test_the_page_pictures_and_outputs_exist() -> None:
    page = (ROOT / "docs" / "walkthrough.md").read_text()
    pictures = re.findall(r"!\[[^\]]*\]\((walkthrough/[^)]+)\)", page)
    assert len(pictures) >= 4
    for name in pictures:
        assert (ROOT / "docs" / name).stat().st_size > 10_000, name
    for step in STEPS:
        assert f'--8<-- "docs/walkthrough/{step}.txt"' in page


def test_recorded_dask_output_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    """The Dask step (docs/walkthrough/dask_fleet.py: a loopback LocalCluster, then
    ``rnea-fleet --scheduler``) prints the recorded lines, the local pool's verdict."""
    monkeypatch.chdir(tmp_path)
    assert run("rnea-sample", ["fleet", "sample_fleet"]) == 0
    capfd.readouterr()
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, str(RECORDED / "dask_fleet.py"), "sample_fleet/fleet.yaml",
         "sample_fleet/fleet_report_dask"],
        capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 2, done.stderr  # 2: a flagged joint (as the local pool)
    text = (done.stdout + done.stderr).replace(f"{tmp_path}/", "")
    recorded = (RECORDED / "fleet-dask.txt").read_text().splitlines()
    assert sorted(text.splitlines()) == sorted(recorded)
    local = (RECORDED / "fleet.txt").read_text().replace("fleet_report/", "fleet_report_dask/")
    assert sorted(local.splitlines()) == sorted(recorded)
    assert (tmp_path / "sample_fleet" / "fleet_report_dask" / "report.html").is_file()
    page = (ROOT / "docs" / "walkthrough.md").read_text()
    assert '--8<-- "docs/walkthrough/fleet-dask.txt"' in page
