"""``rnea-identify`` as a user runs it: bags in, identified URDF, drive file and report out;
bad data refused with messages naming what cannot be identified and why."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from synthetic import fourier_motion, true_robot, true_torques, write_states_bag

import rnea_ros.core as rc
from rnea_ros.identification.cli import main
from rnea_ros.samples import load_robot, robot_urdf

URDF = robot_urdf("arm7")
RATE = 400.0
OUTPUTS = ("robot_identified.urdf", "drives_identified.yaml", "report.md")


@pytest.fixture(scope="module")
def motion():
    model = load_robot("arm7")
    truth = true_robot(model)
    t = np.arange(0.0, 60.0, 1.0 / RATE)
    q, qd, qdd = fourier_motion(model, t, seed=4)
    tau = true_torques(URDF, truth, q, qd, qdd, np.linspace(-0.2, 0.2, 7), band=0.01)
    noise = 0.005 * (tau.max(axis=0) - tau.min(axis=0))
    effort = tau + np.random.default_rng(1).normal(size=tau.shape) * noise
    return model, t, q, effort, noise


def run(tmp_path: Path, model, t, q, effort, *extra: str, storage: str = "mcap"):
    bag = tmp_path / "bag"
    write_states_bag(bag, model.joint_names, t, q, effort, storage=storage)
    out = tmp_path / "out"
    return main([str(bag), "--urdf", str(URDF), "--out", str(out), *extra]), out


def validation_rms(report: str) -> np.ndarray:
    """The 'after' column of the report's validation table."""
    table = report.split("## Torque residual RMS")[1].split("## Base parameters")[0]
    rows = re.findall(r"^\| (joint\d) \| ([\d.e+-]+) \| ([\d.e+-]+) \|", table, re.M)
    return np.array([float(r[2]) for r in rows])


def without_inertials(text: str) -> str:
    return re.sub(r"<inertial>.*?</inertial>", "", text, flags=re.S)


def test_identifies_and_writes_loadable_files(tmp_path: Path, motion, capsys) -> None:
    model, t, q, effort, noise = motion
    code, out = run(tmp_path, model, t, q, effort)
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert all((out / name).is_file() for name in (*OUTPUTS, "validation.png"))
    urdf_text = (out / "robot_identified.urdf").read_text()
    assert without_inertials(urdf_text) == without_inertials(URDF.read_text())  # rest kept
    identified = rc.load_urdf(out / "robot_identified.urdf", inertia_check="strict",
                              drives=out / "drives_identified.yaml")
    assert np.all(identified.mass > 0)
    drives = yaml.safe_load((out / "drives_identified.yaml").read_text())
    assert set(drives["joints"]) == set(model.joint_names)
    assert set(drives["identified"]["joints"]["joint1"]) == {"offset", "coulomb_positive",
                                                             "coulomb_negative"}
    report = (out / "report.md").read_text()
    for heading in ("## Torque residual RMS on the validation segment", "## Base parameters",
                    "## Drive parameters", "condition number", "![validation.png]"):
        assert heading in report
    after = validation_rms(report)
    assert after.shape == (7,)
    assert np.all(after <= 1.2 * noise)
    assert "validation torque RMS" in printed
    assert "; 0 warnings" in printed and "## Warnings" not in report  # the right URDF
    # Without a validation segment everything is fitted and the report says so.
    assert main([str(tmp_path / "bag"), "--urdf", str(URDF), "--out", str(tmp_path / "all"),
                 "--validation", "0", "--no-plots"]) == 0
    assert "No validation segment" in (tmp_path / "all" / "report.md").read_text()
    assert "fitted torque RMS" in capsys.readouterr().out


def test_too_short_bag_writes_nothing(tmp_path: Path, motion, capsys) -> None:
    model, t, q, effort, _ = motion
    code, out = run(tmp_path, model, t[:80], q[:80], effort[:80], storage="sqlite3")
    err = capsys.readouterr().err
    assert code == 1 and "too short" in err
    assert not out.exists()


def test_joint_that_never_moves_is_named(tmp_path: Path, motion, capsys) -> None:
    model, t, q, effort, _ = motion
    q = q.copy()
    q[:, 6] = 0.4  # joint7 held still (its torques are then those of the old motion:
    #                irrelevant, the point is what the data can say)
    code, out = run(tmp_path, model, t, q, effort)
    err = capsys.readouterr().err
    assert code == 1 and not out.exists()
    assert "joint 'joint7'" in err and "never moves" in err
    code, out = main([str(tmp_path / "bag"), "--urdf", str(URDF), "--out",
                      str(tmp_path / "partial"), "--partial", "--no-plots"]), tmp_path / "partial"
    assert code == 0
    report = (out / "report.md").read_text()
    assert "## Not identified from these data" in report and "never moves" in report


def test_saturated_and_nan_samples_are_excluded_and_reported(tmp_path: Path, motion,
                                                             capsys) -> None:
    model, t, q, effort, noise = motion
    effort, q = effort.copy(), q.copy()
    level = 0.8 * np.abs(effort[:, 1]).max()
    effort[:, 1] = np.clip(effort[:, 1], -level, level)  # a clipping drive
    q[1000:1003, 2] = np.nan  # dropped by the reader
    effort[5000, 4] = np.nan  # dropped here
    code, out = run(tmp_path, model, t, q, effort, "--no-plots")
    assert code == 0, capsys.readouterr().err
    report = (out / "report.md").read_text()
    assert "joint 'joint2':" in report and "saturated effort samples excluded" in report
    assert "3 joint states skipped by the reader (nan)" in report
    assert "1 samples with a non-finite position or effort were dropped" in report
    after = validation_rms(report)
    ok = np.arange(7) != 1  # joint2's validation residual includes the clipped samples
    assert np.all(after[ok] <= 1.2 * noise[ok])


def test_missing_effort_is_refused(tmp_path: Path, motion, capsys) -> None:
    model, t, q, effort, _ = motion
    effort = effort.copy()
    effort[:, 3] = np.nan
    code, out = run(tmp_path, model, t[:4000], q[:4000], effort[:4000])
    assert code == 1 and "joint4 have no finite effort" in capsys.readouterr().err
    assert not out.exists()


def test_wrong_urdf_warns_and_outputs_are_never_overwritten(tmp_path: Path, motion,
                                                            capsys) -> None:
    """arm7's bag with two_link_rr's URDF (its joints are arm7's first two): the fit leaves
    1.04 and 2.14 N m on the validation segment against 0.05 and 0.22 with arm7's URDF."""
    model, t, q, effort, _ = motion
    bag, out = tmp_path / "bag", tmp_path / "out"
    write_states_bag(bag, model.joint_names, t, q, effort)
    rr = str(robot_urdf("two_link_rr"))
    assert main([str(bag), "--urdf", rr, "--out", str(out), "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("rnea-identify: warning: the model does not explain the measured "
                              "torques: validation residual RMS above 3 x the effort noise") == 1
    assert "at 2 of 2 joints: joint1" in captured.err and "the right URDF" in captured.err
    assert "; 1 warning\n" in captured.out
    report = (out / "report.md").read_text()
    assert report.split("\n## ")[1].startswith("Warnings (1)")  # the first section
    # Not overwritten without --force, never over an input, replaced with --force.
    (out / "report.md").write_text("mine")
    assert main([str(bag), "--urdf", rr, "--out", str(out), "--no-plots"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exist: not overwritten (--force replaces)" in err
    assert (out / "report.md").read_text() == "mine"
    own = out / "robot_identified.urdf"
    text = own.read_text()
    assert main([str(bag), "--urdf", str(own), "--out", str(out), "--force"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'{own}' is the input" in err and own.read_text() == text
    assert main([str(bag), "--urdf", rr, "--out", str(out), "--no-plots", "--force"]) == 0
    assert (out / "report.md").read_text().startswith("# Identification")
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUTS)  # no temporary left


def test_closed_loop_robot_is_refused_naming_the_loop_file(tmp_path: Path, capsys) -> None:
    """The five-bar's tree fitted the passive elbows' zero effort as data (exit 0 before)."""
    from rnea_ros.samples import load_loop_robot, sample_urdf
    from rnea_ros.tools.synthetic_bag import write_bag

    loops = load_loop_robot("five_bar")
    write_bag(tmp_path / "bag", loops.tree, duration=0.5, loops=loops, passive=True)
    urdf = sample_urdf("five_bar")
    for args in ([str(tmp_path / "bag"), "--out", str(tmp_path / "out")],
                 ["excite", "--out", str(tmp_path / "x.yaml")]):
        assert main([*args, "--urdf", str(urdf)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(urdf.with_name("five_bar.loops.yaml")) in err
        assert "closed chains are not supported" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]


@pytest.mark.parametrize(("case", "message"), [
    ("--out /proc/x", "--out: cannot create directory '/proc/x'"),
    ("--out file", "exists and is not a directory"),
    ("--cutoff nan", "finite --cutoff > 0"),
    ("--band nan", "--band >= 0"),
    ("--rate inf", "--rate > 0"),
    ("effort 1e300", "implausible efforts beyond 1e+09 N m (or N): joint1 (1e+300)"),
    ("effort 0", "every recorded effort is 0: no torque was measured"),
    ("excite --out /proc/x", "excite: error: --out: cannot write in '/proc'"),
    ("excite --dt nan", "excite: error: need finite --dt >= 0.0001 s"),
    ("excite --dt 1e-12", "excite: error: need finite --dt >= 0.0001 s"),
    ("excite --harmonics 100000", "excite: error: need --harmonics 1 to 20"),
    ("excite --periods 100000", "excite: error: need --harmonics 1 to 20, --periods 1 to 1000"),
    ("excite --frequency 1e-9", "points, more than 1000000: raise --dt or --frequency"),
    ("--rate 1e9", "rate 1e+09 Hz is above the recording's sampling rate 400 Hz"),
])
def test_bad_argument_or_path_is_one_line(tmp_path: Path, motion, capsys, case: str,
                                          message: str) -> None:
    model, t, q, effort, _ = motion
    effort = effort[:4000].copy()
    if case.startswith("effort"):
        effort[:] = float(case.split()[1])
    bag = tmp_path / "bag"
    write_states_bag(bag, model.joint_names, t[:4000], q[:4000], effort)
    (tmp_path / "file").write_text("keep")
    words = case.replace("file", str(tmp_path / "file")).split()
    if words[0] == "excite":
        args = ["excite", "--urdf", str(URDF), *(["--out", str(tmp_path / "x.yaml")]
                                                if "--out" not in words else []), *words[1:]]
    else:
        args = [str(bag), "--urdf", str(URDF), *(["--out", str(tmp_path / "out")]
                                                if "--out" not in words else [])]
        args += words if case.startswith("--") else []
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert (tmp_path / "file").read_text() == "keep" and not (tmp_path / "out").exists()
