"""rnea-bag on closed-loop robots: a synthetic five-bar bag (motion on the two motors,
elbows solved; efforts from Pinocchio's constrained dynamics, not our code) analysed
through ``main(argv)`` with the loop file found next to the URDF or given by ``--loops``."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.loop_oracle import LoopOracle
from rnea_ros.samples import load_loop_robot, sample_urdf
from rnea_ros.tools.bag import Options, analyse, main
from rnea_ros.tools.synthetic_bag import write_bag

LOOPS = load_loop_robot("five_bar")
URDF = str(sample_urdf("five_bar"))
LOOP_FILE = str(Path(URDF).with_name("five_bar.loops.yaml"))
NOISE, OFFSET = 0.02, 0.05  # N m


def truth(Q: np.ndarray, QD: np.ndarray, QDD: np.ndarray) -> np.ndarray:
    """Active torques of the five-bar from Pinocchio's constraintDynamics (friction of
    every joint included, as our model has it)."""
    oracle = LoopOracle(URDF, LOOPS)
    return np.array([oracle.active_torques(q, rc.loop_velocities(LOOPS, q, qd), qdd)
                     for q, qd, qdd in zip(Q, QD, QDD, strict=True)])


@pytest.fixture(scope="module", params=[True, False], ids=["passive", "active_only"])
def bag(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[Path, bool]:
    path = tmp_path_factory.mktemp("bags") / "five_bar"
    write_bag(path, LOOPS.tree, duration=2.0, noise=NOISE, command_offset=OFFSET,
              inverse_dynamics=truth, loops=LOOPS, passive=request.param)
    return path, request.param


def test_active_torques_match_the_injected_noise(bag: tuple[Path, bool], tmp_path: Path
                                                 ) -> None:
    path, passive = bag
    out = tmp_path / "report"
    args = [str(path), "--urdf", URDF, "--out", str(out), "--quiet", "--series", "csv"]
    if not passive:
        args += ["--loops", LOOP_FILE]  # given explicitly; found next to the URDF otherwise
    assert main(args) == 0
    analysis, stats = analyse(Options(bag=path, out=tmp_path / "again", urdf=Path(URDF),
                                      plots=False, progress=False))
    assert analysis.model.joint_names == ("left_motor", "right_motor")
    table = analysis.model_vs_measured.table()
    assert np.allclose(table["rms"], NOISE, rtol=0.1), table["rms"]
    assert np.all(np.abs(table["bias"]) < 0.005)
    command = analysis.command_vs_measured.table()
    assert np.allclose(command["bias"], OFFSET, atol=0.005)
    assert analysis.written == 2000 and not stats["warnings"]
    report = (out / "report.md").read_text()
    assert "## Closed loops" in report and "Samples whose loops did not close: 0." in report
    with open(out / "series.csv", newline="") as stream:
        rows = list(csv.reader(stream))
    header = rows[0]
    assert len(header) == 1 + 10 * 2 + 2 and header[-2:] == ["q_passive.left_elbow",
                                                             "q_passive.right_elbow"]
    solved = np.array([[float(x) for x in row[-2:]] for row in rows[1:]])
    q_active = np.array([[float(x) for x in row[1:3]] for row in rows[1:]])
    expected = rc.solve_loops_batch(LOOPS, q_active)[:, LOOPS.passive_index]
    assert np.abs(solved - expected).max() < 1e-12
    if passive:  # recorded elbows against the solved ones
        line = next(r for r in report.splitlines() if r.startswith("| left_elbow |"))
        count, worst = line.split("|")[2:4]
        assert int(count) == 2000 and float(worst) < 1e-9
    else:
        assert "records no passive joint positions" in report


def test_chunks_keep_the_assembly_mode_and_give_the_same_result(bag: tuple[Path, bool],
                                                                tmp_path: Path) -> None:
    path, _ = bag
    results = [analyse(Options(bag=path, out=tmp_path / str(chunk), urdf=Path(URDF),
                               loops=LOOP_FILE, chunk=chunk, plots=False, progress=False))[0]
               for chunk in (300, 100000)]
    a, b = (r.model_vs_measured.table() for r in results)
    for key in ("rms", "bias", "max"):
        assert np.allclose(a[key], b[key], rtol=1e-9, atol=1e-12)


def test_without_the_loops_the_tree_model_is_wrong(bag: tuple[Path, bool], tmp_path: Path
                                                   ) -> None:
    path, passive = bag
    if not passive:  # the tree needs every tree joint: the elbows are missing
        assert main([str(path), "--urdf", URDF, "--loops", "none", "--out",
                     str(tmp_path), "--quiet", "--no-plots"]) == 1
        return
    analysis, _ = analyse(Options(bag=path, out=tmp_path, urdf=Path(URDF), loops="none",
                                  plots=False, progress=False))
    rms = analysis.model_vs_measured.table()["rms"]
    assert analysis.model.nv == 4 and rms[0] > 20 * NOISE  # motors: the loop's load is missing


def test_bad_loop_files_and_passive_joints_are_one_line_errors(
        bag: tuple[Path, bool], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = bag
    bad = tmp_path / "bad.loops.yaml"
    bad.write_text(Path(LOOP_FILE).read_text().replace("link2: distal_right",
                                                       "link2: distal_rihgt"))
    assert main([str(path), "--urdf", URDF, "--loops", str(bad), "--out", str(tmp_path),
                 "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("rnea-bag: error: --loops: loop file")
    assert "'distal_rihgt' is not a link of model 'five_bar'" in err
    assert main([str(path), "--urdf", URDF, "--joints", "left_elbow", "--out", str(tmp_path),
                 "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "left_elbow not active joints of the closed-loop robot" in err
    assert "active joints: left_motor, right_motor" in err


def test_malformed_loop_yaml_is_one_line(bag: tuple[Path, bool], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = bag
    bad = tmp_path / "bad.loops.yaml"
    bad.write_text("loops: [\n  {link1: distal_left,\n")
    assert main([str(path), "--urdf", URDF, "--loops", str(bad), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rnea-bag: error: --loops: loop file")
    assert "is not valid YAML" in err and not (tmp_path / "o").exists()
