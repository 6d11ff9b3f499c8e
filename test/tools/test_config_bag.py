"""``rnea-config --bag`` (issue 39 §3): limits and friction from a recording.

Friction against a truth the estimator never sees: the bag's efforts are Pinocchio's
inverse dynamics (an independent engine) plus a viscous and Coulomb friction chosen
here, plus noise; the limits against the recorded maxima; the sample bag of
``rnea-sample bag`` end to end (its 80 N m spike capped at the URDF's 87 N m); bags
without the URDF's joints or without efforts refused in one line naming what is missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rnea_ros.control.config import load_model
from rnea_ros.control.starting_config import main as rnea_config
from rnea_ros.core import load_urdf
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.tools.bag.errors import BagError
from rnea_ros.tools.config_bag import (
    MIN_SPEED,
    fit_friction,
    propose,
    read_recording,
)
from rnea_ros.tools.sample import write_bag_sample
from rnea_ros.tools.synthetic_bag import write_bag, write_recording

ROOT = Path(__file__).resolve().parents[2]
ARM7 = ROOT / "urdf" / "arm7.urdf"
VISCOUS = np.array([2.0, 3.0, 1.5, 1.0, 0.3, 0.2, 0.1])   # N m s/rad, the truth
COULOMB = np.array([1.0, 2.0, 0.8, 0.5, 0.2, 0.1, 0.05])  # N m
NOISE = 0.05  # N m


def params(path: Path) -> dict:
    return yaml.safe_load(path.read_text())["/**"]["ros__parameters"]


@pytest.fixture(scope="module")
def friction_bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """arm7 moving (sums of sines), efforts = Pinocchio RNEA + the friction above."""
    model = load_urdf(ARM7)
    oracle = PinocchioOracle(str(ARM7), model)

    def torques(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        rigid = np.array([oracle.rnea(*s) for s in zip(q, qd, qdd, strict=True)])
        return rigid + VISCOUS * qd + COULOMB * np.sign(qd)

    path = tmp_path_factory.mktemp("bags") / "arm7_friction"
    write_bag(path, model, duration=20.0, rate=200.0, noise=NOISE, inverse_dynamics=torques,
              seed=3, commands=False)
    return path


def test_friction_and_limits_from_a_recording(friction_bag: Path) -> None:
    model = load_urdf(ARM7)
    rec = read_recording(friction_bag, model)
    p = propose(model, rec, margin=1.25)
    assert p.friction_source == ["bag"] * 7
    assert np.allclose(p.viscous, VISCOUS, rtol=0.03, atol=0.02), p.viscous
    assert np.allclose(p.coulomb, COULOMB, rtol=0.03, atol=0.02), p.coulomb
    effort_max = np.abs(rec.effort).max(axis=0)
    assert np.array_equal(p.effort_max, effort_max)
    assert np.allclose(p.effort_limits, np.minimum(1.25 * effort_max, model.effort_limit))
    assert np.all(p.effort_limits <= model.effort_limit)
    # the rate: scipy's Savitzky-Golay derivative of the recorded effort (0.05 s at
    # 200 Hz: 11 samples, order 4), its largest magnitude times the margin
    from scipy.signal import savgol_filter

    rate = savgol_filter(rec.effort, 11, 4, deriv=1, delta=0.005, axis=0, mode="interp")
    assert np.allclose(p.rate_max, np.abs(rate).max(axis=0), rtol=1e-9)
    assert np.allclose(p.rate_limits, 1.25 * p.rate_max)


def test_a_joint_that_does_not_move_both_ways_keeps_the_urdf_friction() -> None:
    qd = np.full(500, 0.3)  # only ahead
    why = fit_friction(qd, 0.5 * qd + 0.1)
    assert isinstance(why, str) and "0 back" in why and str(MIN_SPEED) in why
    rng = np.random.default_rng(0)
    qd = rng.uniform(-1, 1, 2000)
    assert fit_friction(qd, 0.01 * rng.normal(size=qd.size)) == pytest.approx((0, 0),
                                                                               abs=2e-3)
    why = fit_friction(qd, -2.0 * qd)  # a model that disagrees: negative, significant
    assert isinstance(why, str) and "negative" in why


def test_the_sample_bag_end_to_end(tmp_path: Path) -> None:
    """rnea-sample bag (arm7, 0.5 N m noise, an 80 N m spike on joint2 at 12 s, no
    friction): the file and its drive file load in the controller unchanged."""
    write_bag_sample(tmp_path)
    urdf, out = tmp_path / "arm7.urdf", tmp_path / "arm7_controller.yaml"
    assert rnea_config(["--urdf", str(urdf), "--bag", str(tmp_path / "arm7_run"),
                        "--out", str(out)]) == 0
    values = params(out)
    drives = tmp_path / "arm7_controller_drives.yaml"
    assert Path(values["drives_file"]) == drives.resolve()
    assert values["effort_limits"][1] == 87.0  # 1.2 x 80 capped at the URDF's
    assert all(limit <= urdf_limit for limit, urdf_limit in
               zip(values["effort_limits"], load_urdf(urdf).effort_limit, strict=True))
    model = load_model({"urdf_path": str(urdf), "drives_file": values["drives_file"],
                        "inertia_check": "strict"})
    assert np.all(model.viscous < 0.05) and np.all(model.coulomb < 0.05)  # truth: none
    assert "spike" not in out.read_text() and "1.2 x the recorded max" in out.read_text()
    # never over an existing output without --force, nothing written on refusal
    assert rnea_config(["--urdf", str(urdf), "--bag", str(tmp_path / "arm7_run"),
                        "--out", str(tmp_path / "other.yaml"), "--drives-out",
                        str(drives)]) == 1
    assert not (tmp_path / "other.yaml").exists()


def test_bad_bags_are_refused_naming_what_is_missing(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    other = tmp_path / "two_link"
    write_bag(other, load_urdf(ROOT / "urdf" / "two_link_rr.urdf"), duration=0.5,
              rate=100.0, commands=False)
    out = tmp_path / "x.yaml"
    assert rnea_config(["--urdf", str(ARM7), "--bag", str(other), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "the bag's joints" in err
    assert "missing: 'joint3', 'joint4'" in err
    assert not out.exists()
    with pytest.raises(BagError, match=r"carry no efforts"):
        silent = tmp_path / "no_effort"
        names = list(load_urdf(ARM7).joint_names)
        write_recording(silent, names, [(1.0 + 0.01 * k, [0.0] * 7, [0.0] * 7, [])
                                        for k in range(50)], [])
        read_recording(silent, load_urdf(ARM7))
    assert rnea_config(["--urdf", str(ARM7), "--bag", str(silent), "--out", str(out)]) == 1
    assert "no efforts" in capsys.readouterr().err and not out.exists()
