"""Adaptive knots solve every basis once on its uniform grid and refine the grid (the
dense check) only on the plan kept at the end. When that finer plan fails (its solve, or
its dense check after ``refine`` grid refinements), plan_min_time falls back to the
coarser basis, now verified: a plan within its limits 100x finer, with a SolverWarning
and ``refinement_stop == "failed"``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
import rnea_ros.planning.optimize as opt
from rnea_ros.core.errors import SolverError
from rnea_ros.planning import Limits, plan_min_time

DATA = Path(__file__).resolve().parents[1] / "data"
ROBOTS = yaml.safe_load((DATA / "barman_two_link.yaml").read_text())
REF = yaml.safe_load((DATA / "barman_ch4_planning.yaml").read_text())["rr_min_time"]
FIRST_SPANS = 13  # the default call's first basis (one segment: 16 cubic control points)


def rr() -> tuple[rc.RobotModel, Limits]:
    model = rc.from_dh([rc.DHLink(**r) for r in ROBOTS["two_link_rr"]["rows"]],
                       name="two_link_rr", gravity=(0.0, 0.0, -9.81))
    return model, Limits.from_model(model, torque=10.0, velocity=np.inf, lower=-np.inf,
                                    upper=np.inf)


def within_limits_100x_finer(plan: opt.Plan, limits: Limits) -> float:
    s = np.unique(np.concatenate([np.linspace(a, b, 101) for a, b in
                                  zip(plan.grid[:-1], plan.grid[1:], strict=True)]))
    ratio = float((np.abs(plan.dynamics(s * plan.T)[0]) / limits.torque).max())
    assert ratio <= 1.0 + 1e-9
    return ratio


def fail_on_finer_bases(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Make ``optimize.<name>`` raise SolverError on every basis finer than the first;
    returns the span counts it was called with."""
    real = getattr(opt, name)
    calls: list[int] = []

    def failing(problem, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(problem.basis.intervals)
        if problem.basis.intervals > FIRST_SPANS:
            raise SolverError("injected failure")
        return real(problem, *args, **kwargs)

    monkeypatch.setattr(opt, name, failing)
    return calls


@pytest.mark.parametrize("stage", ["_solve", "_verify"])
def test_failed_finer_plan_falls_back_to_the_verified_coarse_plan(
        monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    model, limits = rr()
    calls = fail_on_finer_bases(monkeypatch, stage)
    with pytest.warns(opt.SolverWarning, match="knot refinement 1 failed"):  # at last 1
        plan = plan_min_time(model, [REF["start"], REF["goal"]], limits)
    assert any(c > FIRST_SPANS for c in calls)  # the failure was reached
    assert plan.refinement_stop == "failed"
    assert plan.spline.basis.intervals == FIRST_SPANS
    assert plan.check.ok()
    assert within_limits_100x_finer(plan, limits) > 0.99  # minimum time: at its limit
    q, qd, _, _ = plan.spline.derivatives(np.array([0.0, plan.T]))
    assert np.allclose(q, [REF["start"], REF["goal"]], atol=1e-6)
    assert np.allclose(qd, 0.0, atol=1e-6)
    assert 0.392 < plan.T < 0.40  # the coarse optimum, at most 2 % above the thesis'


def test_the_coarse_plan_is_verified_only_when_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dense check's grid refinement runs once, on the finest basis kept."""
    model, limits = rr()
    real = opt._verify
    verified: list[int] = []

    def counting(problem, *args, **kwargs):  # type: ignore[no-untyped-def]
        verified.append(problem.basis.intervals)
        return real(problem, *args, **kwargs)

    monkeypatch.setattr(opt, "_verify", counting)
    plan = plan_min_time(model, [REF["start"], REF["goal"]], limits)
    assert verified == [plan.spline.basis.intervals]
    assert plan.spline.basis.intervals > FIRST_SPANS and plan.check.ok()
    within_limits_100x_finer(plan, limits)
