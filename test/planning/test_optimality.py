"""The planner's T against an independent optimum (issue 25, item 2).

Barman's RR (ch. IV, |tau| <= 10 N m) with and without torque-rate limits, the torque
free or at rest at both ends: the default call (IPOPT, adaptive knots) lands within
0.3 % of a direct multiple-shooting solve (test/planning/rr_reference.py: closed-form
dynamics, N = 200 RK4 intervals, casadi's IPOPT; shares no code with the planner), and
stays within its limits 100x finer than its grid. 48 uniform control points solve."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
from rnea_ros.planning import Limits, plan_min_time

HERE = Path(__file__).resolve().parent
ROBOTS = yaml.safe_load((HERE.parent / "data" / "barman_two_link.yaml").read_text())
THESIS = yaml.safe_load((HERE.parent / "data" / "barman_ch4_planning.yaml").read_text())
REF = THESIS["rr_min_time"]

rr_reference = pytest.importorskip("rr_reference")  # test/planning on sys.path (rootdir)


def rr() -> rc.RobotModel:
    return rc.from_dh([rc.DHLink(**r) for r in ROBOTS["two_link_rr"]["rows"]],
                      name="two_link_rr", gravity=(0.0, 0.0, -9.81))


def limits(model: rc.RobotModel, rate: float | None) -> Limits:
    lim = Limits.from_model(model, torque=REF["torque_bound"], velocity=np.inf,
                            lower=-np.inf, upper=np.inf)
    return lim if rate is None else lim.with_(model, torque_rate=rate)


def within_limits_100x(plan) -> None:  # type: ignore[no-untyped-def]
    s = np.unique(np.concatenate([np.linspace(a, b, 101) for a, b in
                                  zip(plan.grid[:-1], plan.grid[1:], strict=True)]))
    tau, tau_dot, _ = plan.dynamics(s * plan.T)
    assert np.abs(tau).max() <= plan.limits.torque.max() * (1 + 1e-9)
    if np.isfinite(plan.limits.torque_rate).any():
        assert np.abs(tau_dot).max() <= plan.limits.torque_rate.max() * (1 + 1e-9)


def test_closed_form_reference_dynamics_are_the_rnea_of_the_rr() -> None:
    model = rr()
    rng = np.random.default_rng(1)
    for q, v, a in rng.normal(size=(5, 3, 2)):
        assert np.allclose(rr_reference.inverse_dynamics(q, v, a), rc.rnea(model, q, v, a),
                           atol=1e-12)


PROBLEMS = [(None, "rest"), (400.0, "rest"), (400.0, "free"), (100.0, "rest"),
            (100.0, "free"), (50.0, "free")]


@pytest.mark.parametrize(("rate", "end"), PROBLEMS)
def test_default_plan_is_within_0p3_percent_of_the_independent_optimum(rate, end) -> None:
    model = rr()
    T_ref = rr_reference.min_time(REF["start"], REF["goal"], REF["torque_bound"], rate,
                                  end, N=200)
    plan = plan_min_time(model, [REF["start"], REF["goal"]], limits(model, rate),
                         zero_acceleration=(end == "rest") if rate else None)
    gap = plan.T / T_ref - 1.0
    print(f"rate={rate} end={end}: T={plan.T:.6f} ref={T_ref:.6f} gap={100 * gap:+.3f} % "
          f"refinements={plan.knot_refinements} last change={plan.T_change:.2e} "
          f"({plan.refinement_stop}) spans={plan.spline.basis.intervals} "
          f"iterations={plan.iterations} time={plan.solve_time:.1f} s")
    assert abs(gap) <= 3e-3, (plan.T, T_ref)
    assert plan.refinement_stop in ("tol_T", "max_intervals", "max_knot_refinements")
    assert plan.refinement_stop != "tol_T" or plan.T_change < 1e-3
    within_limits_100x(plan)


@pytest.mark.parametrize("rate", [None, 50.0])
def test_48_uniform_control_points_solve(rate) -> None:
    """SLSQP stopped here with 'Positive directional derivative for linesearch'."""
    model = rr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no solver warning: IPOPT converges
        plan = plan_min_time(model, [REF["start"], REF["goal"]], limits(model, rate),
                             control_points=48, zero_acceleration=False)
    assert plan.T < (0.3925 if rate is None else 0.47)
    within_limits_100x(plan)
