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
