"""arm7 point-to-point with the URDF's torque limits only (no velocity or position limits):
the default call plans and stays within every torque limit 100x finer than its grid.

Before the fix IPOPT's warm re-solve after a grid refinement (adaptive barrier from
mu_init 1e-4) wandered off the active limits to its 300-iteration limit at an infeasible
iterate, and the SLSQP retry from the start exceeded a torque limit between grid points
after 5 grid refinements: SolverError (bench/bench_plan.py, issue 25)."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar

import rnea_ros.core as rc
from rnea_ros.planning import Limits, Plan, plan_min_time
from rnea_ros.samples import sample_urdf

A0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
A1 = np.array([1.2, 0.3, -0.5, -1.2, 0.6, 2.2, -0.4])


def torque_ratio_100x_finer(plan: Plan, limits: Limits) -> NDArray[np.float64]:
    """``|tau| / limit`` at 100 points per grid interval (printed: T, iterations, worst)."""
    s = np.unique(np.concatenate([np.linspace(a, b, 101) for a, b in
                                  zip(plan.grid[:-1], plan.grid[1:], strict=True)]))
    tau, _, _ = plan.dynamics(s * plan.T)
    ratio: NDArray[np.float64] = np.abs(tau) / limits.torque
    print(f"T = {plan.T:.5f} s, {plan.iterations} iterations, {plan.solve_time:.1f} s, "
          f"worst |tau|/limit {ratio.max():.9f} (100x finer)")
    return ratio


def test_arm7_torque_only_point_to_point_plans_within_its_limits_100x_finer() -> None:
    model = rc.load_urdf(sample_urdf("arm7"))
    limits = Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no solver stop short of convergence either
        plan = plan_min_time(model, [A0, A1], limits)
    ratio = torque_ratio_100x_finer(plan, limits)
    assert ratio.max() <= 1.0 + 1e-9
    assert ratio.max() > 0.99  # minimum time: some torque is at its limit
    q, qd, _, _ = plan.spline.derivatives(np.array([0.0, plan.T]))
    assert np.allclose(q, [A0, A1], atol=1e-6) and np.allclose(qd, 0.0, atol=1e-6)


def test_arm7_torque_only_through_two_waypoints_plans_within_its_limits_100x_finer() -> None:
    """Four waypoints (two via points): main at fb24feb raised SolverError 'after 5 grid
    refinements the torque of joint 'joint2' still exceeds its limit between grid points'
    (one added grid point per violating interval moved the excess beside it each round);
    with the worst point and the two a fifth of the interval either side it plans."""
    model = rc.load_urdf(sample_urdf("arm7"))
    limits = Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)
    AV = np.array([0.6, 0.2, 0.5, -1.8, -0.4, 1.8, 0.3])
    AV2 = np.array([0.9, 0.0, 0.0, -1.5, 0.2, 2.0, 0.0])
    W = np.array([A0, AV, AV2, A1])
    plan = plan_min_time(model, W, limits)
    ratio = torque_ratio_100x_finer(plan, limits)
    assert ratio.max() <= 1.0 + 1e-9
    assert ratio.max() > 0.99
    q = plan.spline.derivatives(np.array([0.0, plan.T]))[0]
    assert np.allclose(q, [A0, A1], atol=1e-6)
    t = np.linspace(0.0, plan.T, 20001)
    path = plan.spline.derivatives(t, 0)[0]
    for via in (AV, AV2):  # passed through, at the time the solver chose
        k = int(np.argmin(np.linalg.norm(path - via, axis=1)))
        res = minimize_scalar(lambda x, v=via: float(np.linalg.norm(
            plan.spline.derivatives(np.array([x]), 0)[0][0] - v)),
            bounds=(t[max(k - 1, 0)], t[min(k + 1, t.size - 1)]), method="bounded",
            options={"xatol": 1e-12})
        assert res.fun < 1e-5, res.fun
