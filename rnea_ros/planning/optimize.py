"""``plan_min_time``: minimum-time (or Barman's multi-objective) joint trajectories.

Barman (2020) ch. IV, eq. 4.13-4.19, solved by IPOPT (casadi, on the sparse NLP of
:mod:`rnea_ros.planning.nlp`; the default, ``solver="ipopt"``) or SciPy's SLSQP
(``solver="slsqp"``, and the fallback when IPOPT stops infeasible on a small
problem; see docs/design.md for the choice) on the problem of
:mod:`rnea_ros.planning.problem`:

1. check the input (:func:`rnea_ros.planning.limits.check_waypoints`);
2. initial guess: a path through the waypoints (piecewise linear in joint
   space, smoothstep time law, via times by chord length) slowed down until
   it meets every limit (to within 0.35 % of the smallest such T);
3. solve on a grid of ``grid_per_interval`` points per knot interval;
4. check the solution 10x finer (:func:`dense_check`); where a grid
   constraint is exceeded between grid points, add the worst point of each such
   interval and two beside it to the grid and re-solve from the solution (at most
   ``refine`` times, IPOPT warm-started with its multipliers); once the excess is
   below 1e-3 of the limit, stretch T just enough (the same path, slower) or, when
   that cannot be (nonzero boundary velocities), tighten the grid constraints by
   twice it and re-solve, so the returned trajectory is within every limit on the
   dense grid too; with
   adaptive knots only the basis kept at the end is checked and refined so
   (the previous basis if that fails).
"""

from __future__ import annotations

import itertools
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.planning.bspline import Basis, JointSpline
from rnea_ros.planning.dense import DenseCheck, dense_check
from rnea_ros.planning.errors import PlanningError, SolverError
from rnea_ros.planning.limits import Limits, check_waypoints, joint_forces
from rnea_ros.planning.nlp import SparseNlp
from rnea_ros.planning.problem import Problem
from rnea_ros.planning.solve import (
    SolverWarning,
    carry_multipliers,
)
from rnea_ros.planning.solve import solve as _solve  # (a module attribute: tests patch it)

Array = NDArray[np.float64]

SOLVERS = ("ipopt", "slsqp")


@dataclass(frozen=True, eq=False)
class Plan:
    """A planned trajectory: the spline, its duration and how it was obtained."""

    model: RobotModel
    spline: JointSpline
    limits: Limits
    weight: float
    iterations: int
    solve_time: float   # [s] wall clock of the whole plan_min_time call
    grid: Array         # final constraint grid (normalised time)
    check: DenseCheck
    message: str
    T_change: float = float("nan")  # relative change of T at the last knot refinement
    knot_refinements: int = 0       # rounds of adaptive knot refinement made
    refinement_stop: str = "off"    # why they stopped: tol_T, max_knot_refinements,
    #                                 max_intervals, failed (the coarser plan kept) or off

    @property
    def T(self) -> float:
        return self.spline.T

    def sample(self, dt: float) -> tuple[Array, Array, Array, Array]:
        """``(t, q, qd, qdd)`` at a fixed step (T always included)."""
        t, (q, qd, qdd, _) = self.spline.sample(dt)
        return t, q, qd, qdd

    def dynamics(self, t: Array) -> tuple[Array, Array, Array]:
        """``(tau, tau_dot, |F|)`` (N, n) at times t: torques, rates, internal force norms."""
        q, qd, qdd, qddd = self.spline.derivatives(t)
        tau, tau_dot = rc.rnea_time_derivative_batch(self.model, q, qd, qdd, qddd)
        return tau, tau_dot, joint_forces(self.model, q, qd, qdd)


def plan_min_time(model: RobotModel, waypoints: object, limits: Limits | None = None, *,
                  start_velocity: object | None = None, end_velocity: object | None = None,
                  zero_acceleration: bool | None = None, weight: float = 0.0,
                  control_points: int | None = None, degree: int | None = None,
                  grid_per_interval: int = 4, max_iter: int = 1000, tol: float | None = None,
                  T_guess: float | None = None, refine: int = 5,
                  solver: str = "ipopt", tol_T: float | None = 1e-3,
                  max_knot_refinements: int = 4, max_intervals: int | None = None) -> Plan:
    """Minimum-time trajectory through ``waypoints`` (K >= 2, n) within ``limits``.

    ``weight`` is Barman's ``u`` of eq. 4.18 (0: minimum time, eq. 4.16).
    Boundary velocities default to zero; ``zero_acceleration`` (default: when
    a torque-rate limit is set, so the torque starts and ends at its rest
    value) also fixes the boundary accelerations to zero. ``degree`` defaults
    to 3 (cubic, Barman's), 4 with a torque-rate limit (continuous torque
    rate). Raises :class:`~rnea_ros.planning.errors.InfeasibleError` or
    :class:`~rnea_ros.planning.errors.SolverError` with the reason.

    ``solver``: ``"ipopt"`` (casadi's IPOPT on the sparse NLP, default) or
    ``"slsqp"`` (SciPy, dense; small problems). ``tol``: the solver's convergence
    tolerance (default: IPOPT_TOL on IPOPT's scaled KKT error, SLSQP_TOL on SLSQP's
    ftol). A solver that stops short of convergence at a feasible iterate returns it
    with a :class:`SolverWarning`.

    Adaptive resolution (when ``control_points`` is not given and ``tol_T`` is
    not None): after the first solve, the knot spans where the set of active
    grid constraints changes (a switch, the ends of a ramp) are halved, the
    solution is carried over exactly (knot insertion) and the NLP re-solved,
    until T changes by less than ``tol_T`` (relative) between two rounds, at
    most ``max_knot_refinements`` rounds or ``max_intervals`` knot spans (default:
    64, and at most MAX_ADAPTIVE_VARIABLES control-point coordinates: IPOPT's
    iterations slow down steeply with the size, arm7's 50 spans took minutes).
    ``Plan.T_change`` reports the last relative change.
    """
    started = time.perf_counter()
    if solver not in SOLVERS:
        raise PlanningError(f"unknown solver '{solver}'; valid: {list(SOLVERS)}")
    model.require_one_dof("rnea-plan (the torque-rate and joint-force sensitivities)",
                          mimic=True)
    limits = Limits.from_model(model) if limits is None else limits
    W = np.atleast_2d(np.asarray(waypoints, dtype=float))
    if W.ndim != 2 or W.shape[1] != model.nv or W.shape[0] < 2:
        raise PlanningError(f"waypoints must be (K >= 2, {model.nv}) for joints "
                            f"{list(model.joint_names)}, got shape {W.shape}")
    check_waypoints(model, W, limits)
    rate_limited = bool(np.isfinite(limits.torque_rate).any())
    degree = (4 if rate_limited else 3) if degree is None else degree
    # 12 spans for one segment, 8 per segment through waypoints (SLSQP's QP is dense)
    m = control_points or ((12 if W.shape[0] == 2 else 8 * (W.shape[0] - 1)) + degree + 1)
    basis = Basis(m, degree)
    zero = np.zeros(model.nv)
    problem = Problem(
        model=model, basis=basis, waypoints=W, limits=limits,
        grid=basis.grid(grid_per_interval),
        start_velocity=_vector(model, start_velocity, zero, "start_velocity"),
        end_velocity=_vector(model, end_velocity, zero, "end_velocity"),
        zero_acceleration=rate_limited if zero_acceleration is None else zero_acceleration,
        weight=float(weight))
    x = initial_guess(problem, T_guess)
    adaptive = control_points is None and tol_T is not None
    # Adaptive: every basis is solved once on its uniform grid and only the plan kept at the
    # end is refined until the dense check passes (the grid points added on a coarse basis
    # are dropped with it); a kept plan whose check fails falls back to the one before.
    solved = _solve_refining_grid(problem, x, solver, max_iter, tol, refine, verify=not adaptive)
    x, iterations, message = solved.x, solved.iterations, solved.message
    kept = [(problem, solved)]
    change, rounds = float("nan"), 0
    if max_intervals is None:
        max_intervals = min(64, MAX_ADAPTIVE_VARIABLES // model.nv - degree)
    stop = "max_knot_refinements" if adaptive else "off"
    while adaptive and rounds < max_knot_refinements:
        refined = _refine_knots(problem, x, max_intervals)
        if refined is None:
            stop = "max_intervals"
            break
        T_old = float(x[-1])
        try:
            new = _solve_refining_grid(refined[0], refined[1], solver, max_iter, tol, refine,
                                       from_solution=True, verify=False)
        except SolverError as exc:  # keep the coarser plan
            _warn_refinement_failed(rounds + 1, exc)
            stop = "failed"
            break
        rounds += 1
        iterations += new.iterations
        if float(new.x[-1]) <= T_old * (1 + 1e-9):  # a finer basis contains the coarser
            problem, x, message = refined[0], new.x, new.message
            kept.append((problem, new))
        change = abs(T_old - float(new.x[-1])) / T_old
        if tol_T is not None and change < tol_T:
            stop = "tol_T"
            break
    while solved.check is None:  # verify the plan kept, or fall back to the one before
        problem, solved = kept.pop()
        try:
            solved = _verify(problem, solved, solver, max_iter, tol, refine)
        except SolverError as exc:
            if not kept:
                raise
            warnings.warn(f"rnea-plan: the plan of knot refinement {len(kept)} failed ({exc}); "
                          "falling back to the previous resolution", SolverWarning, stacklevel=2)
            stop = "failed"
            continue
        iterations += solved.iterations
        x, message = solved.x, solved.message
    check = solved.check
    P, _, T = problem.unpack(x)
    return Plan(model=model, spline=JointSpline(problem.basis, P, T), limits=limits,
                weight=weight, iterations=iterations,
                solve_time=time.perf_counter() - started, grid=problem.grid, check=check,
                message=str(message), T_change=change, knot_refinements=rounds,
                refinement_stop=stop)


MAX_ADAPTIVE_VARIABLES = 150  # adaptive knots stop at this many control-point coordinates
# A refinement capped by max_intervals to fewer than this share of the spans it would halve
# is not made (it would halve only the earliest ones): arm7 through a via point could add
# 1 of 17 spans, its T rose and the round was rejected after 48 IPOPT iterations (5.6 -> 3.6
# s CPU, same T); point to point adds 5 of 13 and lowers T by 0.75 %, so it stays.
MIN_REFINED_SHARE = 0.25
ACTIVE = 1e-3  # a grid constraint within this fraction of its limit counts as active


def _refine_knots(problem: Problem, x: Array, max_intervals: int) -> tuple[Problem, Array] | None:
    """Halve the knot spans where the active set of the grid constraints changes (a torque
    switching bound, a ramp starting or ending), and the spans at both ends; carry the
    spline over exactly (knot insertion: the finer basis contains the coarser spline).
    None when the basis has ``max_intervals`` spans, or room for fewer than
    MIN_REFINED_SHARE of the spans to halve."""
    basis = problem.basis
    u = basis.inner
    if basis.intervals >= max_intervals:
        return None
    nlp = SparseNlp(problem)
    g = nlp.evaluate(x)[0]
    N = problem.grid.size
    start = g.size - N * len(nlp.blocks) - (problem.n_via + 1 if problem.n_via else 0)
    signature = np.zeros((N, 0), dtype=int)
    for b, (_q, _j, lo, hi) in enumerate(nlp.blocks):
        y = g[start + b * N:start + (b + 1) * N]
        col = (y > hi - ACTIVE).astype(int) - (y < lo + ACTIVE).astype(int)
        signature = np.hstack([signature, col[:, None]])
    changed = np.flatnonzero(np.any(signature[1:] != signature[:-1], axis=1))
    s_mid = 0.5 * (problem.grid[changed] + problem.grid[changed + 1])
    spans = set(np.clip(np.searchsorted(u, s_mid, side="right") - 1, 0, basis.intervals - 1)
                .tolist())
    spans |= {0, basis.intervals - 1}
    room = max_intervals - basis.intervals
    if room < MIN_REFINED_SHARE * len(spans):
        return None
    spans_list = sorted(spans)[:room]
    if not spans_list:
        return None
    new = np.sort(np.concatenate([u, 0.5 * (u[spans_list] + u[np.add(spans_list, 1)])]))
    fine = Basis.from_breaks(new, basis.degree)
    s = np.unique(np.concatenate([np.linspace(a, b, 3 * basis.degree + 2)
                                  for a, b in itertools.pairwise(new)]))
    P, sigma, T = problem.unpack(x)
    P_new = np.linalg.lstsq(fine.matrix(s), basis.matrix(s) @ P, rcond=None)[0]
    per = max(1, round((problem.grid.size - 1) / basis.intervals))
    refined = replace(problem, basis=fine, grid=fine.grid(per), _cache={})
    return refined, np.concatenate([P_new.ravel(), sigma, [T]])


@dataclass
class _Solved:
    """One basis solved: x, IPOPT's multipliers (warm start), its check (None: not made)."""

    x: Array
    iterations: int
    message: str
    warm: tuple[Array, Array] | None
    check: DenseCheck | None = None


def _warn_refinement_failed(round_: int, exc: SolverError) -> None:
    warnings.warn(f"rnea-plan: knot refinement {round_} failed ({exc}); returning the plan "
                  "of the previous resolution", SolverWarning, stacklevel=3)


def _solve_refining_grid(problem: Problem, x: Array, solver: str, max_iter: int,
                         tol: float | None, refine: int, from_solution: bool = False,
                         verify: bool = True) -> _Solved:
    """Solve; ``verify``: then refine the grid until the dense check passes (:func:`_verify`)."""
    x, nit, message, warm = _solve(problem, x, solver, max_iter, tol, None, from_solution)
    solved = _Solved(x, nit, message, warm)
    if not verify:
        return solved
    checked = _verify(problem, solved, solver, max_iter, tol, refine)
    checked.iterations += nit
    return checked


def _verify(problem: Problem, solved: _Solved, solver: str, max_iter: int,
            tol: float | None, refine: int) -> _Solved:
    """While the dense check finds a limit exceeded between grid points, re-solve from the
    solution (at most ``refine`` times): with those points added to the grid, or, once the
    excess is below 1e-3 of the limit, T stretched (:func:`_stretch`, no re-solve) or else
    the grid constraints backed off by twice it (IPOPT warm-started with its multipliers,
    the added rows' at 0). Returns the checked solution; ``iterations``: those of the
    re-solves."""
    x, message, warm, iterations = solved.x, solved.message, solved.warm, 0
    for attempt in range(refine + 1):
        check, extra = dense_check(problem, x)
        if check.ok():
            return _Solved(x, iterations, message, warm, check)
        if attempt == refine:
            break
        excess = check.ratio - 1.0
        if 0.0 < excess < 1e-3:
            stretched = _stretch(problem, x, excess)
            if stretched is not None:  # checked again at the top of the loop
                x = stretched
                continue
            # back off only: same rows, a warm start with multipliers
            problem.margin = max(problem.margin, problem.margin + 2.0 * excess)
            problem.set_grid(problem.grid)
        else:
            old_grid = problem.grid
            problem.set_grid(np.concatenate([problem.grid, extra]))
            if warm is not None:  # the old rows keep their multipliers, the new start at 0
                warm = (carry_multipliers(problem, warm[0], old_grid), warm[1])
        x, nit, message, warm = _solve(problem, x, solver, max_iter, tol, warm, True)
        iterations += nit
    quantity, joint, t = check.worst
    raise SolverError(f"after {refine} grid refinements the {quantity} of joint '{joint}' "
                      f"still exceeds its limit between grid points (t = {t:.4g} s); "
                      "raise grid_per_interval")


STRETCH_BISECTIONS = 8


def _stretch(problem: Problem, x: Array, excess: float) -> Array | None:
    """x with T stretched by the smallest factor in (1, 1 + 4 excess] (to 2^-8 of that
    range) for which the dense check's worst ratio is at most 1 - excess (the room the
    back-off by twice the excess leaves, for the samples between the dense ones), or None
    (then the grid constraints are backed off and the NLP re-solved). A slower traversal
    of the same path: the velocity-linear and -quadratic terms of the torque fall by 1/k and
    1/k^2, its gravity and Coulomb parts stay, so an excess of 1e-3 or less goes at a cost in
    T of about the excess (the back-off re-solve cost about as much, and 1-16 IPOPT
    iterations). Only with zero boundary velocities (then a stretch keeps every boundary
    and via equality)."""
    if np.any(problem.start_velocity) or np.any(problem.end_velocity):
        return None
    T = float(x[-1])

    def stretched(k: float) -> Array:
        out: Array = x.copy()
        out[-1] = k * T
        return out

    def below(k: float) -> bool:
        c = dense_check(problem, stretched(k))[0]
        return c.ok() and c.ratio <= 1.0 - excess

    lo, hi = 1.0, 1.0 + 4.0 * excess
    if not below(hi):
        return None
    for _ in range(STRETCH_BISECTIONS):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return stretched(hi)


def _vector(model: RobotModel, value: object | None, default: Array, name: str) -> Array:
    if value is None:
        return default
    v = np.asarray(value, dtype=float)
    if v.shape != (model.nv,) or not np.all(np.isfinite(v)):
        raise PlanningError(f"{name} must be {model.nv} finite values (joints "
                            f"{list(model.joint_names)}), got {v.tolist()}")
    return v


# The initial guess's T: the first of T0 * 1.25^k that meets the limits, then this many
# bisections (geometric) down to within 0.35 % of the smallest that does. arm7 point to
# point (CPU s warm, one thread): T0 0.488 -> 0.393 s, 162 -> 96 IPOPT iterations, 2.8 ->
# 1.7 s, T 0.19738 -> 0.19408 (the solve lands in a better local optimum); through a
# waypoint 0.781 -> 0.749 s, about the same (100 -> 103 iterations, same T).
INITIAL_BISECTIONS = 6


def initial_guess(problem: Problem, T_guess: float | None) -> Array:
    """Path through the waypoints, stopping at each, slowed until every limit holds."""
    W, basis = problem.waypoints, problem.basis
    chord = np.linalg.norm(np.diff(W, axis=0), axis=1) + 1e-9
    sigma = np.concatenate([[0.0], np.cumsum(chord) / chord.sum()])
    greville = np.convolve(basis.knots[1:-1], np.ones(basis.degree) / basis.degree, "valid")
    seg = np.clip(np.searchsorted(sigma, greville, side="right") - 1, 0, len(W) - 2)
    u = (greville - sigma[seg]) / (sigma[seg + 1] - sigma[seg])
    smooth = u**3 * (10 - 15 * u + 6 * u**2)  # zero velocity and acceleration at each end
    P = W[seg] + smooth[:, None] * (W[seg + 1] - W[seg])
    T = T_guess or 0.2 * (len(W) - 1)
    x = np.concatenate([P.ravel(), sigma[1:-1], [T]])
    if T_guess:
        return x
    # Slow down until the grid constraints hold with some room: 0.05, or half of what
    # they keep at a crawl (a waypoint on a position limit, a static load near the
    # torque limit have no room to give whatever the speed).
    x[-1] = 1e4 * T
    room = np.minimum(0.05, 0.5 * problem.inequalities(x)[0])

    def holds(T: float) -> bool:
        x[-1] = T
        return bool(np.all(problem.inequalities(x)[0] >= room - 1e-12))

    grew = False
    for _ in range(60):
        if holds(T):
            break
        T, grew = 1.25 * T, True
    else:
        return x
    lo, hi = T / 1.25, T
    # (minimum time only: a weighted objective (u > 0) prefers a slower motion, and from the
    # smallest T its L-BFGS solves ran out of iterations on the PR of eq. 4.18-4.19)
    tighten = grew and problem.weight == 0.0
    for _ in range(INITIAL_BISECTIONS if tighten else 0):  # lo failed: the smallest that holds
        mid = float(np.sqrt(lo * hi))
        lo, hi = (lo, mid) if holds(mid) else (mid, hi)
    x[-1] = hi
    return x
