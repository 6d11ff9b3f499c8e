"""Identification and robots with mimic joints: the bag reader takes the coordinates
(followers in the bag ignored), and every entry point refuses a mimic model with one
clear message before reading any data (one body per joint is assumed throughout)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.core.errors import ModelError
from rnea_ros.identification.base import base_parameters
from rnea_ros.identification.cli import main
from rnea_ros.identification.data import read_bag
from rnea_ros.identification.excitation import design_excitation
from rnea_ros.identification.pipeline import Settings, read_and_identify
from rnea_ros.samples import robot_urdf
from rnea_ros.tools.synthetic_bag import write_bag

URDF = robot_urdf("arm7_gripper")
MODEL = rc.load_urdf(URDF)
REFUSAL = "identification (rnea-identify: one body and one regressor column block per joint)" \
    " supports 1-DoF joints without mimic only; model 'arm7_gripper' has 'finger_joint2' (mimic)"


@pytest.fixture(scope="module")
def bag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gripper") / "bag"
    write_bag(path, MODEL, duration=0.3, noise=0.0, commands=False)  # with finger_joint2
    return path


def test_read_bag_gives_the_coordinates_and_ignores_the_follower(bag: Path) -> None:
    recording = read_bag(bag, MODEL)
    assert recording.q.shape == (300, 8) and recording.skipped == {"nan": 0, "missing": 0}
    # The synthetic motion's known start: write_bag's sinusoids at t = 0.
    rng = np.random.default_rng(0)
    amp, _, phase = rng.uniform(0.2, 0.6, 8), rng.uniform(1.0, 4.0, 8), rng.uniform(0, 6, 8)
    mid = np.where(np.isfinite(MODEL.lower_limit),
                   0.5 * (MODEL.lower_limit + MODEL.upper_limit), 0.0)
    assert np.allclose(recording.q[0], mid + amp * np.sin(phase), atol=1e-12)


def test_every_entry_point_refuses_a_mimic_model_by_name(bag: Path, tmp_path: Path) -> None:
    for call in (lambda: base_parameters(MODEL),
                 lambda: design_excitation(MODEL, max_iter=1),
                 lambda: read_and_identify(tmp_path / "no-bag", MODEL, Settings(), urdf="")):
        with pytest.raises(ModelError) as error:
            call()
        assert str(error.value) == REFUSAL


def test_the_cli_refuses_a_mimic_urdf_in_one_line(bag: Path, tmp_path: Path, capsys) -> None:
    assert main([str(bag), "--urdf", str(URDF), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"rnea-identify: error: {REFUSAL}"
    assert not (tmp_path / "out").exists()
    assert main(["excite", "--urdf", str(URDF), "--out", str(tmp_path / "e.yaml")]) == 1
    assert REFUSAL in capsys.readouterr().err
