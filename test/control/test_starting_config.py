"""``rnea-config``: a starting controller file for a URDF we do not ship, loaded by the
controller unchanged, holding the robot on an independent plant (Pinocchio's ABA)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

import rnea_ros
import rnea_ros.core as rc
from rnea_ros.control.config import default_values
from rnea_ros.control.factory import build_controller
from rnea_ros.control.starting_config import main, pd_gains, reference_pose
from rnea_ros.samples import example_robot_urdf, sample_urdf
from rnea_ros.simulation.rigid import Simulator


def write(tmp_path: Path, urdf: Path, *extra: str) -> dict:
    out = tmp_path / "controller.yaml"
    assert main(["--urdf", str(urdf), "--out", str(out), *extra]) == 0
    return yaml.safe_load(out.read_text())["/**"]["ros__parameters"]


def controller(params: dict, urdf: Path, **changes):
    values = default_values()
    values.update(params, urdf_path=str(urdf), **changes)
    return build_controller(values)


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_file_is_loaded_unchanged_and_follows_the_stated_rules(tmp_path: Path,
                                                               robot: str) -> None:
    urdf = example_robot_urdf(robot)
    params = write(tmp_path, urdf)
    model = rc.load_urdf(urdf)
    assert params["joints"] == list(model.joint_names)
    assert params["mode"] == "gravity"
    assert np.allclose(params["effort_limits"], model.effort_limit, rtol=1e-3)
    assert np.allclose(params["effort_rate_limits"], model.effort_limit / 0.1, rtol=1e-3)
    M = np.diag(rc.mass_matrix(model, reference_pose(model)))
    kp, kd = np.array(params["kp"]), np.array(params["kd"])
    omega = 2 * np.pi * 3.0
    assert np.all(kp <= model.effort_limit / 0.1 * (1 + 1e-3))
    uncapped = M * omega**2 < model.effort_limit / 0.1
    assert np.allclose(kp[uncapped], (M * omega**2)[uncapped], rtol=1e-3)
    assert np.allclose(kd, 2.0 * np.sqrt(kp * M), rtol=2e-3)  # critically damped
    assert params["friction_compensation"] is False  # the URDF's is not identified
    for mode in ("gravity", "inverse_dynamics"):
        ctl, _ = controller(params, urdf, mode=mode)
        assert ctl.config.mode == mode


def test_gains_follow_the_mass_matrix_and_the_saturation_cap() -> None:
    """kp = M_ii(q_ref) w^2 where the cap does not bind, effort / e_sat where it does;
    kd keeps the damping ratio with the kp used."""
    model = rc.load_urdf(sample_urdf("arm7"))
    M = np.diag(rc.mass_matrix(model, reference_pose(model)))
    kp, kd = pd_gains(model, bandwidth=1.0, damping_ratio=0.7, saturation_error=1e-6)
    assert np.allclose(kp, M * (2 * np.pi) ** 2) and np.allclose(kd, 1.4 * M * 2 * np.pi)
    capped, _ = pd_gains(model, bandwidth=1.0, saturation_error=1.0)
    binding = model.effort_limit / 1.0 < kp
    assert binding.any() and not binding.all()
    assert np.allclose(capped[binding], model.effort_limit[binding] / 1.0)
    assert np.allclose(capped[~binding], kp[~binding])


@pytest.mark.parametrize("mode", ["gravity", "inverse_dynamics"])
def test_written_file_holds_the_robot_on_an_independent_plant(tmp_path: Path,
                                                              mode: str) -> None:
    """UR5 (example-robot-data), lockstep with Pinocchio's ABA at 1 kHz: at rest in gravity
    mode it stays; pushed (0.5 rad/s on every joint) in inverse-dynamics mode it returns
    to the pose it was holding."""
    urdf = example_robot_urdf("ur5")
    params = write(tmp_path, urdf)
    ctl, model = controller(params, urdf, mode=mode)
    sim = Simulator(urdf, model, dt=1e-3)
    q0 = reference_pose(model) + np.array([0.1, -0.4, 0.6, -0.3, 0.2, 0.1])
    push = np.zeros(model.nv) if mode == "gravity" else np.full(model.nv, 0.5)
    sim.reset(q0, push)
    names = list(model.joint_names)
    worst = 0.0
    for _ in range(3000):
        result = ctl.joint_state(names, sim.q, sim.qd, stamp=sim.t, now=sim.t)
        assert result.command is not None, result.message
        assert np.all(np.abs(result.command) <= model.effort_limit + 1e-9)
        sim.step(result.command)
        worst = max(worst, float(np.abs(sim.q - q0).max()))
    assert np.abs(sim.q - q0).max() < (1e-6 if mode == "gravity" else 1e-3), sim.q - q0
    if mode == "inverse_dynamics":
        assert 0.01 < worst < 0.1  # it was pushed away, and came back


def test_a_urdf_with_placeholder_friction_holds_on_a_plant_without_it(tmp_path: Path
                                                                       ) -> None:
    """The Unitree Z1 (example-robot-data) gives 1-2 N m of Coulomb friction and damping
    in its <dynamics>: the written file must still hold it at rest in gravity mode on a
    plant without friction (Pinocchio's ABA, lockstep at 1 kHz). With the URDF's
    friction compensated (the file before this fix) the arm drifted by radians."""
    urdf = example_robot_urdf("z1")
    params = write(tmp_path, urdf)
    ctl, model = controller(params, urdf)
    assert np.any(model.coulomb > 0) and params["friction_compensation"] is False
    sim = Simulator(urdf, model, dt=1e-3)
    q0 = reference_pose(model)
    sim.reset(q0, np.zeros(model.nv))
    names = list(model.joint_names)
    for _ in range(3000):
        result = ctl.joint_state(names, sim.q, sim.qd, stamp=sim.t, now=sim.t)
        assert result.command is not None, result.message
        sim.step(result.command)
    assert np.abs(sim.q - q0).max() < 1e-6, sim.q - q0
    text = (tmp_path / "controller.yaml").read_text()
    assert "enable once identified" in text


def test_a_joint_without_an_effort_limit_is_refused_by_name(tmp_path: Path, capsys) -> None:
    text = sample_urdf("two_link_rr").read_text()
    text = re.sub(r'effort="[^"]*"', 'effort="0"', text, count=1)
    urdf = tmp_path / "no_limit.urdf"
    urdf.write_text(text)
    out = tmp_path / "c.yaml"
    assert main(["--urdf", str(urdf), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "joints ['joint1'] have no effort limit" in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--bandwidth", "0"], "--bandwidth 0: need 0.01 to 100"),
    (["--rise-time", "nan"], "--rise-time nan: need 0.001 to 10"),
])
def test_bad_options_are_one_line(tmp_path: Path, capsys, args, message) -> None:
    out = tmp_path / "c.yaml"
    assert main(["--urdf", str(sample_urdf("arm7")), "--out", str(out), *args]) == 1
    assert message in capsys.readouterr().err and not out.exists()


def test_closed_loop_urdf_is_refused_naming_the_loop_file(tmp_path: Path, capsys) -> None:
    assert main(["--urdf", str(sample_urdf("five_bar")), "--out", str(tmp_path / "c.yaml")]) == 1
    assert "five_bar.loops.yaml closes kinematic loops" in capsys.readouterr().err


def test_version_and_header(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"rnea-config {rnea_ros.__version__}"
    write(tmp_path, sample_urdf("arm7"))
    head = (tmp_path / "controller.yaml").read_text().splitlines()[:3]
    assert head[1].startswith(f"# rnea-config {rnea_ros.__version__}: rnea-config --urdf ")
    assert "sha256:" in head[2]
