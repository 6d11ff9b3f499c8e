"""``rnea-sample``: each sample directory runs through the tool it is for, as its printed
next command says, with the result the sample was made to show."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.tools.sample import HEAVY, HEAVY_LINKS, heavier, main

TOOLS = {"rnea-bag": "rnea_ros.tools.bag.cli", "rnea-fleet": "rnea_ros.tools.fleet.cli",
         "rnea-identify": "rnea_ros.identification.cli"}


def next_command(capsys, what: str, out: Path) -> list[str]:
    assert main([what, str(out)]) == 0
    printed = capsys.readouterr().out
    return shlex.split(printed.strip().splitlines()[-1])


def run(command: list[str]) -> int:
    import importlib

    return int(importlib.import_module(TOOLS[command[0]]).main(command[1:]))


def test_bag_sample_runs_through_rnea_bag(tmp_path: Path, capsys) -> None:
    command = next_command(capsys, "bag", tmp_path / "s")
    assert command[0] == "rnea-bag"
    assert run(command) == 0
    printed = capsys.readouterr().out
    rms = [float(x) for x in re.findall(r"RMS ([\d.]+)", printed)]
    assert len(rms) == 7 and all(0.45 < r < 1.5 for r in rms)  # the 0.5 N m noise (+ spike)
    assert (tmp_path / "s" / "bag_report" / "report.md").is_file()


def test_identify_sample_identifies_the_heavier_arm(tmp_path: Path, capsys) -> None:
    command = next_command(capsys, "identify", tmp_path / "s")
    assert run(command) == 0
    printed = capsys.readouterr().out
    pairs = np.array(re.findall(r"joint\d\s+([\d.e+-]+) -> ([\d.e+-]+)", printed), dtype=float)
    assert pairs.shape == (7, 2)
    assert pairs[1, 0] > 1.0 and np.all(pairs[:, 1] < 0.1)  # down to the 0.05 N m noise
    identified = load_urdf(tmp_path / "s" / "identified" / "robot_identified.urdf",
                           inertia_check="warn")
    prior = load_urdf(tmp_path / "s" / "arm7.urdf")
    assert identified.mass.sum() > prior.mass.sum()  # it found the extra mass


def test_fleet_sample_flags_the_wearing_joint(tmp_path: Path, capsys) -> None:
    command = next_command(capsys, "fleet", tmp_path / "s")
    assert command[:2] == ["rnea-fleet", "analyse"]
    assert run(command) == 2  # 2: finished, some bags failed (the broken ones, on purpose)
    assert "flagged: r1/joint3" in capsys.readouterr().out


def test_heavier_scales_mass_and_inertia_of_the_named_links() -> None:
    from rnea_ros.samples import sample_urdf

    text = sample_urdf("arm7").read_text()
    base = load_urdf(sample_urdf("arm7"))
    from rnea_ros.core.model.urdf import parse_urdf

    heavy = parse_urdf(heavier(text, HEAVY_LINKS, HEAVY))
    for k, name in enumerate(base.body_names):
        factor = HEAVY if name in HEAVY_LINKS else 1.0
        assert np.isclose(heavy.mass[k], factor * base.mass[k]), name
        assert np.allclose(heavy.inertia[k], factor * base.inertia[k]), name


@pytest.mark.parametrize("setup", ["file", "full"])
def test_an_existing_place_is_refused_in_one_line(tmp_path: Path, capsys, setup: str) -> None:
    out = tmp_path / "x"
    if setup == "file":
        out.write_text("keep")
    else:
        out.mkdir()
        (out / "keep").write_text("keep")
    assert main(["bag", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rnea-sample: error:") and err.count("\n") == 1
    assert (out.read_text() if setup == "file" else (out / "keep").read_text()) == "keep"
