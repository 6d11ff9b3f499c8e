"""Excitation trajectories (Swevers 1997 finite Fourier series): the series and its
derivatives, at rest at the start and end of every period; the optimiser lowers
cond(W_b) and stays inside the limits on a grid 10x finer than its own, with the torques
checked by Pinocchio; ``rnea-identify excite`` writes a JointTrajectory the controller
reads, and refuses what no series can meet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from rnea_ros.identification import parameters
from rnea_ros.identification.base import base_parameters
from rnea_ros.identification.cli import main
from rnea_ros.identification.excitation import (
    Fourier,
    _Problem,
    basis,
    condition_number,
    design_excitation,
    initial_guess,
)
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.planning import Limits
from rnea_ros.planning.output import read_trajectory
from rnea_ros.samples import load_robot, robot_urdf


def test_series_is_swevers_and_starts_and_ends_each_period_at_rest() -> None:
    rng = np.random.default_rng(0)
    series = Fourier(rng.normal(size=(3, 7)), omega=2 * np.pi * 0.3)
    q0, a, b = series.coefficients()
    t = np.linspace(0.0, 2 * series.period, 301)
    wl = series.omega * np.arange(1, 5)
    # the series written out, independently of the basis
    direct = q0 + (np.sin(np.outer(t, wl))[:, None, :] * (a / wl)
                   - np.cos(np.outer(t, wl))[:, None, :] * (b / wl)).sum(axis=2)
    q, qd, qdd = series(t)
    np.testing.assert_allclose(q, direct, atol=1e-12)
    h = 1e-6  # derivatives by central differences
    qp, qdp, _ = series(t + h)
    qm, qdm, _ = series(t - h)
    np.testing.assert_allclose(qd, (qp - qm) / (2 * h), atol=1e-6)
    np.testing.assert_allclose(qdd, (qdp - qdm) / (2 * h), atol=1e-5)
    for k in (0, 150, 300):  # t = 0, T, 2T
        np.testing.assert_allclose(qd[k], 0.0, atol=1e-12)
        np.testing.assert_allclose(qdd[k], 0.0, atol=1e-12)
        np.testing.assert_allclose(q[k], series.start, atol=1e-12)
    assert basis(t, series.omega, 4)[0].shape == (t.size, 7)


def test_objective_gradient_matches_finite_differences() -> None:
    model = load_robot("arm7")
    base = base_parameters(model)
    limits = Limits.from_model(model)
    series = initial_guess(model, limits, np.full(7, 5.0), 2 * np.pi * 0.25, 3, 0.05, 1)
    grid = np.linspace(0.0, series.period, 30, endpoint=False)
    problem = _Problem(model, base, grid, series.omega, 3, limits, np.full(7, 5.0), 0.05, 0.01)
    z = series.x.ravel()
    value, grad = problem.objective(z)
    assert value == pytest.approx(np.log10(condition_number(model, base, *series(grid))),
                                  rel=1e-9)
    fd = np.array([(problem.objective(z + 1e-6 * e)[0] - problem.objective(z - 1e-6 * e)[0])
                   / 2e-6 for e in np.eye(z.size)])
    np.testing.assert_allclose(grad, fd, atol=1e-4 * np.abs(fd).max())
    jac = problem.jacobian(z)  # the constraint Jacobian (torques through rnea derivatives)
    fdc = np.array([(problem.constraints(z + 1e-6 * e) - problem.constraints(z - 1e-6 * e))
                    / 2e-6 for e in np.eye(z.size)]).T
    np.testing.assert_allclose(jac, fdc, atol=1e-5 * np.abs(fdc).max())


@pytest.mark.parametrize("robot", ["two_link_rr", "arm7"])
def test_design_lowers_cond_and_stays_within_limits_10x_finer(robot: str) -> None:
    model = load_robot(robot)
    limits = Limits.from_model(model, velocity=0.7 * model.velocity_limit)
    ex = design_excitation(model, limits=limits, acceleration=4.0, frequency=0.25, harmonics=4,
                           torque_fraction=0.6, margin=0.05)
    assert ex.cond < 0.2 * ex.cond_initial, (ex.cond, ex.cond_initial)
    # Independent check on a grid 10x finer than the optimiser's (16 L per period), torques
    # by Pinocchio.
    t = np.linspace(0.0, ex.series.period, 10 * 16 * 4 + 7)
    q, qd, qdd = ex.series(t)
    oracle = PinocchioOracle(robot_urdf(robot), model)
    tau = np.array([oracle.rnea(*s) for s in zip(q, qd, qdd, strict=True)])
    assert np.all(q >= model.lower_limit + 0.05 - 1e-9)
    assert np.all(q <= model.upper_limit - 0.05 + 1e-9)
    assert np.all(np.abs(qd) <= 0.7 * model.velocity_limit * (1 + 1e-6))
    assert np.all(np.abs(qdd) <= 4.0 * (1 + 1e-6))
    assert np.all(np.abs(tau) <= 0.6 * model.effort_limit * (1 + 1e-6))
    # It uses the room it has: some limit is (nearly) reached.
    c = ex.check
    assert max(c.position, c.velocity, c.acceleration, c.torque) > 0.9
    # The condition number is that of the base regressor's SVD.
    W = ex.base.columns(parameters.regressor(model, q, qd, qdd, 0.01)).reshape(-1, ex.base.rank)
    s = np.linalg.svd(W, compute_uv=False)
    assert s[0] / s[-1] == pytest.approx(ex.cond, rel=0.05)


def test_cli_writes_a_joint_trajectory_at_rest_at_both_ends(tmp_path: Path, capsys) -> None:
    out = tmp_path / "traj.yaml"
    code = main(["excite", "--urdf", str(robot_urdf("two_link_rr")), "--out", str(out),
                 "--frequency", "0.5", "--harmonics", "3", "--periods", "2", "--dt", "0.01"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "cond of the base regressor" in printed
    names, t, q, qd, qdd = read_trajectory(out)
    assert names == ["joint1", "joint2"]
    assert t[-1] == pytest.approx(4.0) and np.allclose(np.diff(t), 0.01)
    for k in (0, -1):
        np.testing.assert_allclose(qd[k], 0.0, atol=1e-9)
        np.testing.assert_allclose(qdd[k], 0.0, atol=1e-9)
    np.testing.assert_allclose(q[0], q[-1], atol=1e-9)
    msg = yaml.safe_load(out.read_text())
    section = msg["excitation"]
    assert section["periods"] == 2 and len(section["a"][0]) == 3
    assert max(section["dense_check"].values()) <= 1.0 + 1e-6
    model = load_robot("two_link_rr")
    # The effort column is the nominal model's inverse dynamics.
    import rnea_ros.core as rc

    effort = np.array([p["effort"] for p in msg["points"]])
    np.testing.assert_allclose(effort, rc.rnea_batch(model, q, qd, qdd), atol=1e-9)
    # What the controller follows between the points (quintic Hermite) is the series itself.
    from rnea_ros.control.trajectory import JointTrajectory

    traj = JointTrajectory(times=t, positions=q, velocities=qd, accelerations=qdd)
    dense = np.linspace(0.0, t[-1], 2001)
    followed = np.array([traj.sample(s)[0] for s in dense])
    q0, a, b = (np.array(section[k]) for k in ("q0", "a", "b"))
    wl = section["omega"] * np.arange(1, 4)
    series = q0 + (np.sin(np.outer(dense, wl))[:, None, :] * (a / wl)
                   - np.cos(np.outer(dense, wl))[:, None, :] * (b / wl)).sum(axis=2)
    np.testing.assert_allclose(followed, series, atol=1e-9)


def test_cli_refuses_what_no_series_can_meet(tmp_path: Path, capsys) -> None:
    urdf = str(robot_urdf("two_link_rr"))
    out = tmp_path / "x.yaml"
    assert main(["excite", "--urdf", urdf, "--out", str(out), "--limits", "lower=-inf",
                 "upper=inf"]) == 1
    err = capsys.readouterr().err
    assert "joint 'joint1' has no finite position limits" in err
    assert main(["excite", "--urdf", urdf, "--out", str(out), "--acceleration", "1", "2",
                 "3"]) == 1
    assert "--acceleration needs one value or 2" in capsys.readouterr().err
    assert main(["excite", "--urdf", urdf, "--out", str(out), "--harmonics", "1"]) == 1
    assert "harmonics >= 2" in capsys.readouterr().err
    arm = str(robot_urdf("arm7"))
    assert main(["excite", "--urdf", arm, "--out", str(out), "--limits", "torque=1"]) == 1
    err = capsys.readouterr().err
    assert "torque limit infeasible" in err and "joint2" in err
    assert not out.exists()
