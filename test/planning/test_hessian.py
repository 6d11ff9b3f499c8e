"""The exact Hessian of the Lagrangian (rnea_ros/planning/hessian.py) against central
differences of the analytic Jacobian ``J(x)^T lam``: torque, torque-rate and internal-force
rows, a via waypoint (its sigma), at a random x and random multipliers."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
from rnea_ros.planning import Limits
from rnea_ros.planning.bspline import Basis
from rnea_ros.planning.hessian import LagrangianHessian
from rnea_ros.planning.nlp import SparseNlp
from rnea_ros.planning.problem import Problem
from rnea_ros.samples import sample_urdf


def dense(lag: LagrangianHessian, values: np.ndarray, nx: int) -> np.ndarray:
    H = np.zeros((nx, nx))
    H[lag.rows, lag.cols] = values
    return H + np.triu(H, 1).T


def finite_difference(nlp: SparseNlp, x: np.ndarray, lam: np.ndarray) -> np.ndarray:
    pat, nx = nlp.pattern, nlp.p.nx

    def grad(z: np.ndarray) -> np.ndarray:
        nlp._cache.clear()
        v = nlp.evaluate(z)[1]
        return np.bincount(pat.cols, weights=v * lam[pat.rows], minlength=nx)

    H = np.zeros((nx, nx))
    for i in range(nx):
        h = 1e-5 * max(1.0, abs(x[i]))
        e = np.zeros(nx)
        e[i] = h
        H[:, i] = (grad(x + e) - grad(x - e)) / (2 * h)
    return 0.5 * (H + H.T)


def problem(model: rc.RobotModel, waypoints: np.ndarray, limits: Limits, degree: int,
            m: int) -> Problem:
    basis = Basis(m, degree)
    n = model.nv
    return Problem(model=model, basis=basis, waypoints=waypoints, limits=limits,
                   grid=basis.grid(3), start_velocity=np.zeros(n), end_velocity=np.zeros(n),
                   zero_acceleration=degree == 4)


CASES = ["rr_torque_rate_force", "arm7_via"]


@pytest.mark.parametrize("case", CASES)
def test_hessian_matches_central_differences_of_the_jacobian(case: str) -> None:
    rng = np.random.default_rng(3)
    if case == "rr_torque_rate_force":
        from pathlib import Path
        rows = yaml.safe_load((Path(__file__).resolve().parents[1] / "data"
                               / "barman_two_link.yaml").read_text())["two_link_rr"]["rows"]
        model = rc.from_dh([rc.DHLink(**r) for r in rows], name="rr", gravity=(0, 0, -9.81))
        lim = Limits.from_model(model, torque=10.0, torque_rate=400.0, force=50.0,
                                velocity=np.inf, lower=-np.inf, upper=np.inf)
        p = problem(model, np.array([[0.0, 0.0], [1.0, -1.0]]), lim, 4, 9)
    else:
        model = rc.load_urdf(sample_urdf("arm7"))
        lim = Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)
        W = rng.uniform(-1, 1, size=(3, model.nv))
        p = problem(model, W, lim, 3, 10)
    nlp = SparseNlp(p)
    P = rng.normal(size=(p.basis.m, p.n))
    x = np.concatenate([P.ravel(), np.linspace(0, 1, p.n_via + 2)[1:-1] + 0.05, [0.7]])
    lam = rng.normal(size=nlp.pattern.ng)
    lag = LagrangianHessian(nlp)
    H = dense(lag, lag.values(x, lam), p.nx)
    H_fd = finite_difference(nlp, x, lam)
    scale = np.abs(H_fd).max()
    assert scale > 1.0
    assert np.abs(H - H_fd).max() <= 1e-4 * scale, np.abs(H - H_fd).max() / scale
    # the pattern holds every nonzero of the difference quotient
    outside = np.abs(H_fd) > 1e-8 * scale
    outside[lag.rows, lag.cols] = outside[lag.cols, lag.rows] = False
    assert not outside.any()
