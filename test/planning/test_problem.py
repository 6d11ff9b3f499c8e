"""The NLP's analytic gradients (chain rule eq. 4.15 on the RNEA sensitivities) against
central differences of the same functions, with every kind of constraint active."""

from __future__ import annotations

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.planning.bspline import Basis
from rnea_ros.planning.limits import Limits
from rnea_ros.planning.problem import Problem
from rnea_ros.samples import sample_urdf


def _problem(name: str, weight: float) -> tuple[Problem, np.ndarray]:
    model = rc.load_urdf(sample_urdf(name))
    n = model.nv
    rng = np.random.default_rng(3)
    W = rng.uniform(-0.8, 0.8, size=(3, n))
    limits = Limits.from_model(model, torque=50.0, torque_rate=300.0, force=80.0,
                               lower=-np.inf, upper=np.inf, velocity=3.0)
    basis = Basis(9, 4)
    problem = Problem(model=model, basis=basis, waypoints=W, limits=limits,
                      grid=basis.grid(3), start_velocity=rng.normal(size=n),
                      end_velocity=np.zeros(n), zero_acceleration=True, weight=weight)
    x = np.concatenate([rng.normal(size=basis.m * n), [0.45], [1.3]])
    return problem, x


def _fd(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:  # type: ignore[no-untyped-def]
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h * max(1.0, abs(x[i]))
        cols.append((f(x + e) - f(x - e)) / (2 * e[i]))
    return np.array(cols).T


@pytest.mark.parametrize("name", ["two_link_pr", "arm7"])
def test_constraint_and_objective_gradients_match_central_differences(name: str) -> None:
    problem, x = _problem(name, weight=0.3)
    for fun in (problem.equalities, problem.inequalities):
        _value, jac = fun(x)
        fd = _fd(lambda y, fun=fun: fun(y)[0], x)
        scale = max(1.0, np.abs(fd).max())
        assert np.abs(jac - fd).max() <= 2e-6 * scale
    _, grad = problem.objective(x)
    fd = _fd(lambda y: np.array([problem.objective(y)[0]]), x)[0]
    assert np.allclose(grad, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_grid_values_are_the_dynamics_of_the_spline() -> None:
    problem, x = _problem("two_link_rr", weight=0.0)
    q, qd, qdd, qddd = problem.states(x)
    v = problem.values(x)
    tau, tau_dot = rc.rnea_time_derivative_batch(problem.model, q, qd, qdd, qddd)
    assert np.allclose(v.tau, tau, atol=1e-10) and np.allclose(v.tau_dot, tau_dot, atol=1e-9)
    force = np.array([np.linalg.norm(rc.rnea_with_wrenches(problem.model, *s)[1][:, :3],
                                     axis=1) ** 2 for s in zip(q, qd, qdd, strict=True)])
    assert np.allclose(v.force2, force, rtol=1e-10)


def test_a_waypoint_on_a_position_limit_still_gives_the_minimum_time() -> None:
    """Stanford arm from its prismatic joint's lower limit (q3 = 0): the initial
    guess once slowed down forever (no room to give at a position limit) and SLSQP
    stopped at T = 5.7 s with no limit active; the minimum time has one binding."""
    from rnea_ros.planning.optimize import plan_min_time

    model = rc.load_urdf(sample_urdf("stanford_arm"), inertia_check="warn")
    W = np.array([[0, 0, 0, 0, 0, 0], [0.5, -0.3, 0.1, 0.4, 0.2, 0.3]], float)
    plan = plan_min_time(model, W)
    assert max(plan.check.velocity, plan.check.torque) > 0.99, plan.check
    assert plan.T < 0.2, plan.T


@pytest.mark.parametrize("name", ["two_link_pr", "arm7"])
def test_sparse_ipopt_jacobian_matches_central_differences_on_nonuniform_knots(name) -> None:
    """The triplets fed to IPOPT (local support of each grid point, eq. 4.15) are the whole
    Jacobian: every entry outside the declared pattern is zero by central differences."""
    import scipy.sparse as sp

    from rnea_ros.planning.nlp import SparseNlp

    problem, x = _problem(name, weight=0.0)
    basis = Basis.from_breaks([0.0, 0.1, 0.15, 0.5, 0.9, 1.0], 4)
    problem = Problem(model=problem.model, basis=basis, waypoints=problem.waypoints,
                      limits=problem.limits, grid=basis.grid(3),
                      start_velocity=problem.start_velocity, end_velocity=problem.end_velocity,
                      zero_acceleration=True)
    x = np.concatenate([x[:basis.m * problem.n], [0.45], [1.3]])
    nlp = SparseNlp(problem)
    _g, values = nlp.evaluate(x)
    pat = nlp.pattern
    jac = sp.coo_matrix((values, (pat.rows, pat.cols)), shape=(pat.ng, problem.nx)).toarray()
    fd = _fd(lambda y: nlp.evaluate(y)[0], x)
    assert np.abs(jac - fd).max() <= 2e-6 * max(1.0, np.abs(fd).max())
    assert pat.rows.size < 0.5 * pat.ng * problem.nx  # sparse indeed


def test_knot_refinement_capped_below_a_quarter_of_its_spans_is_not_made() -> None:
    """A refinement with room for fewer than MIN_REFINED_SHARE of the spans it wants would
    halve only the earliest ones (arm7 through a via point: 1 of 17, T rose, 48 wasted
    IPOPT iterations): _refine_knots declines it, and makes it with room for a quarter."""
    import math

    from rnea_ros.planning.optimize import MIN_REFINED_SHARE, _refine_knots, initial_guess

    model = rc.load_urdf(sample_urdf("arm7"))
    lim = Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)
    basis = Basis(16, 3)
    W = np.array([[0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8], [1.2, 0.3, -0.5, -1.2, 0.6, 2.2, -0.4]])
    problem = Problem(model=model, basis=basis, waypoints=W, limits=lim, grid=basis.grid(4),
                      start_velocity=np.zeros(7), end_velocity=np.zeros(7))
    x = initial_guess(problem, None)
    x[-1] *= 0.3  # faster: torques cross their limits, the active set switches
    full = _refine_knots(problem, x, 64)
    assert full is not None
    wanted = full[0].basis.intervals - basis.intervals
    assert wanted >= 5  # so that one span of room is below a quarter
    assert _refine_knots(problem, x, basis.intervals + 1) is None
    room = math.ceil(MIN_REFINED_SHARE * wanted)
    capped = _refine_knots(problem, x, basis.intervals + room)
    assert capped is not None and capped[0].basis.intervals == basis.intervals + room
