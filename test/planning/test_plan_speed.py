"""What makes ``rnea-plan`` on arm7 through a waypoint fast (issue 25: 3 waypoints in < 2 s
CPU), each checked on its own: the initial guess's T is the smallest (to 0.35 %) that meets
the limits, grid refinement adds three points per violating interval, a small dense excess
is removed by stretching T instead of a re-solve, the Hessian reuses the NLP's torque
Jacobians; and the whole plan within an IPOPT iteration budget (deterministic for a given
input; main at fb24feb needed 114 iterations and 4 grid refinements plus a back-off)."""

from __future__ import annotations

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.planning import Limits, dense, plan_min_time, solve
from rnea_ros.planning import optimize as opt
from rnea_ros.planning.bspline import Basis
from rnea_ros.planning.hessian import LagrangianHessian
from rnea_ros.planning.nlp import SparseNlp
from rnea_ros.planning.problem import Problem
from rnea_ros.samples import sample_urdf

A0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
A1 = np.array([1.2, 0.3, -0.5, -1.2, 0.6, 2.2, -0.4])
AV = np.array([0.6, 0.2, 0.5, -1.8, -0.4, 1.8, 0.3])


def arm7() -> tuple[rc.RobotModel, Limits]:
    model = rc.load_urdf(sample_urdf("arm7"))
    return model, Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)


def problem(model: rc.RobotModel, limits: Limits, waypoints: np.ndarray, m: int = 20,
            start_velocity: np.ndarray | None = None) -> Problem:
    basis = Basis(m, 3)
    zero = np.zeros(model.nv)
    return Problem(model=model, basis=basis, waypoints=waypoints, limits=limits,
                   grid=basis.grid(4), start_velocity=zero if start_velocity is None
                   else start_velocity, end_velocity=zero)


def test_initial_guess_T_is_the_smallest_that_meets_the_limits_to_0p35_percent() -> None:
    """Before: the first of 0.2 (K - 1) * 1.25^k that held (up to 25 % above the smallest;
    arm7 point to point 0.488 s against 0.393 s)."""
    model, limits = arm7()
    for W in (np.array([A0, A1]), np.array([A0, AV, A1])):
        p = problem(model, limits, W)
        x = opt.initial_guess(p, None)
        slow = x.copy()
        slow[-1] = 1e4 * x[-1]
        room = np.minimum(0.05, 0.5 * p.inequalities(slow)[0])
        assert np.all(p.inequalities(x)[0] >= room - 1e-12)
        faster = x.copy()
        faster[-1] = x[-1] / 1.0036
        assert not np.all(p.inequalities(faster)[0] >= room - 1e-12), x[-1]


def test_grid_refinement_adds_the_peak_and_a_fifth_of_the_interval_either_side() -> None:
    grid = np.array([0.0, 1.0, 2.0])
    dense_t = np.linspace(0.0, 2.0, 21)
    ratio = np.full(21, 0.5)
    ratio[6] = 1.01  # interval 0: its peak at dense index 6, neighbours 4 and 8
    ratio[11] = 1.02  # interval 1: the peak beside its grid point (10): only 13 after it
    ratio[18] = 0.9  # below the limit: nothing
    out = dense._interval_peaks(grid, dense_t, ratio)
    assert np.flatnonzero(out).tolist() == [4, 6, 8, 11, 13]


def solved(model: rc.RobotModel, limits: Limits, W: np.ndarray) -> tuple[Problem, np.ndarray]:
    """A verified solution on 12 control points (no knot refinement)."""
    p = problem(model, limits, W, m=12)
    solved = opt._solve_refining_grid(p, opt.initial_guess(p, None), "ipopt", 1000, None, 5)
    assert solved.check is not None and solved.check.ok()
    return p, solved.x


def test_small_dense_excess_is_removed_by_stretching_T() -> None:
    """A plan run 0.05 % too fast exceeds its torque limits by a little: _stretch finds a
    factor within (1, 1 + 4 excess] that leaves the worst dense ratio at most 1 - excess,
    keeping the path (control points) and every boundary condition."""
    model, limits = arm7()
    p, x = solved(model, limits, np.array([A0, A1]))
    fast = x.copy()
    fast[-1] *= 0.9995
    check = opt.dense_check(p, fast)[0]
    excess = check.torque - 1.0
    assert 0.0 < excess < 1e-3
    out = opt._stretch(p, fast, excess)
    assert out is not None
    assert np.array_equal(out[:-1], fast[:-1])
    assert fast[-1] < out[-1] <= fast[-1] * (1.0 + 4.0 * excess)
    after = opt.dense_check(p, out)[0]
    assert after.ok() and after.torque <= 1.0 - excess
    eq, ineq = solve.residuals(p, out)
    assert eq <= 1e-6 and ineq >= -1e-6


def test_no_stretch_with_a_nonzero_boundary_velocity() -> None:
    """Stretching T would change a nonzero start velocity: the back-off re-solve stays."""
    model, limits = arm7()
    p = problem(model, limits, np.array([A0, A1]), start_velocity=np.full(model.nv, 0.1))
    x = opt.initial_guess(p, None)
    assert opt._stretch(p, x, 1e-4) is None


def test_hessian_with_the_nlp_torque_jacobians_equals_the_one_without() -> None:
    model, limits = arm7()
    p = problem(model, limits, np.array([A0, AV, A1]))
    rng = np.random.default_rng(5)
    nlp = SparseNlp(p)
    x = opt.initial_guess(p, None)
    x[:-2] += 0.01 * rng.normal(size=x.size - 2)
    lam = rng.normal(size=nlp.pattern.ng)
    lag = LagrangianHessian(nlp)
    assert nlp.torque_jacobians is None
    cold = lag.values(x, lam)
    nlp.evaluate(x)
    assert nlp.torque_jacobians is not None and nlp.torque_jacobians[0] == x.tobytes()
    assert np.array_equal(lag.values(x, lam), cold)
    other = x.copy()
    other[0] += 1e-3  # a different x: the cached Jacobians are not used
    nlp.evaluate(other)
    assert np.array_equal(lag.values(x, lam), cold)


@pytest.mark.parametrize(("waypoints", "budget", "T_main"), [
    ("via", 100, 0.323676),  # main: 114 iterations
    ("p2p", 130, 0.197381),  # main: 159
])
def test_arm7_plans_within_an_iteration_budget_and_the_T_of_main(waypoints: str, budget: int,
                                                                  T_main: float) -> None:
    model, limits = arm7()
    W = np.array([A0, AV, A1]) if waypoints == "via" else np.array([A0, A1])
    plan = plan_min_time(model, W, limits)
    print(f"{waypoints}: T = {plan.T:.6f} s, {plan.iterations} iterations, "
          f"{plan.knot_refinements} knot refinements ({plan.refinement_stop})")
    assert plan.iterations <= budget
    assert plan.T <= T_main * 1.001
    s = np.unique(np.concatenate([np.linspace(a, b, 101) for a, b in
                                  zip(plan.grid[:-1], plan.grid[1:], strict=True)]))
    tau = plan.dynamics(s * plan.T)[0]
    assert np.abs(tau / limits.torque).max() <= 1.0 + 1e-9
    q, qd, _, _ = plan.spline.derivatives(np.array([0.0, plan.T]))
    assert np.allclose(q, W[[0, -1]], atol=1e-6) and np.allclose(qd, 0.0, atol=1e-6)
