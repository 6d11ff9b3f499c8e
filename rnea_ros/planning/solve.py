"""One NLP solve of a planning problem: IPOPT (casadi, the sparse NLP of
:mod:`rnea_ros.planning.nlp`) or SciPy's SLSQP (on :mod:`rnea_ros.planning.problem`),
the fall-back from one to the other, the scaled residuals, the warm start carried to a
refined grid, and the failure message naming the violated constraint."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

from rnea_ros.planning.dense import dense_check
from rnea_ros.planning.errors import SolverError
from rnea_ros.planning.ipopt import solve_ipopt
from rnea_ros.planning.nlp import SparseNlp
from rnea_ros.planning.problem import Problem

Array = NDArray[np.float64]

# IPOPT's tolerance on its scaled KKT error: T within ~1e-4 (relative) of its converged
# value, ten times below tol_T's default. At 1e-9 the last digits cost a third of the
# iterations: Barman's RR default plan 111 -> 69, |tau_dot| <= 100 at rest 145 -> 101,
# T +5e-5 and +1.1e-4 relative.
IPOPT_TOL = 1e-6
SLSQP_TOL = 1e-9
SLSQP_FALLBACK_VARIABLES = 300  # IPOPT's infeasible stop is retried with SLSQP up to this size


class SolverWarning(UserWarning):
    """The NLP solver stopped short of convergence; its feasible iterate was returned."""


def carry_multipliers(problem: Problem, lam_g: Array, old_grid: Array) -> Array:
    """IPOPT's constraint multipliers ``lam_g`` on ``old_grid`` carried over to the rows of
    ``problem`` on its grid, a superset of old_grid (points added between): every old row
    keeps its multiplier, the added rows start at 0 (inactive). Row layout of
    :class:`SparseNlp`: grid-independent rows, then one block of N rows per grid quantity,
    then the via-time order rows."""
    nlp = SparseNlp(problem)
    N_old, N = old_grid.size, problem.grid.size
    blocks = len(nlp.blocks)
    tail = problem.n_via + 1 if problem.n_via else 0
    head = lam_g.size - N_old * blocks - tail
    at = np.searchsorted(problem.grid, old_grid)
    out = np.zeros(head + N * blocks + tail)
    out[:head] = lam_g[:head]
    for b in range(blocks):
        out[head + b * N + at] = lam_g[head + b * N_old:head + (b + 1) * N_old]
    out[out.size - tail:] = lam_g[lam_g.size - tail:]
    return out


def solve(problem: Problem, x0: Array, solver: str, max_iter: int, tol: float | None,
           warm: tuple[Array, Array] | None, from_solution: bool = False
           ) -> tuple[Array, int, str, tuple[Array, Array] | None]:
    """One NLP solve: ``(x, iterations, message, multipliers for a warm start)``, the
    message headed by the solver that ran (``IPOPT: ...``; ``SLSQP: ...`` after IPOPT's
    fall-back to SLSQP). A stop
    short of convergence with a feasible iterate returns it with a warning; an infeasible
    one raises :class:`SolverError` saying which constraint and why."""
    if solver == "ipopt":
        nlp = SparseNlp(problem)
        r = solve_ipopt(nlp, x0, max_iter=max_iter, tol=IPOPT_TOL if tol is None else tol,
                        lam_g0=None if warm is None else warm[0],
                        lam_x0=None if warm is None else warm[1], from_solution=from_solution)
        x, nit, message, success = r.x, r.nit, r.message, r.success
        multipliers: tuple[Array, Array] | None = (r.lam_g, r.lam_x)
    else:
        res = _solve_slsqp(problem, x0, max_iter, SLSQP_TOL if tol is None else tol)
        x, nit, message, success = res.x, int(res.nit), str(res.message), bool(res.success)
        multipliers = None
    eq, ineq = residuals(problem, x)
    feasible = eq <= 1e-6 and ineq >= -1e-6 and np.isfinite(x).all()
    if not feasible and solver == "ipopt" and problem.nx <= SLSQP_FALLBACK_VARIABLES:
        warnings.warn(f"rnea-plan: IPOPT stopped after {nit} iterations ({message}) at an "
                      "infeasible iterate; retrying with SLSQP from the same start",
                      SolverWarning, stacklevel=3)
        return solve(problem, x0, "slsqp", max_iter, tol, None)
    if not feasible:
        raise SolverError(failure_message(problem, x, message, nit, eq, ineq, solver))
    if not success:
        _P, _, T = problem.unpack(x)
        warnings.warn(f"rnea-plan: {solver.upper()} stopped after {nit} iterations ({message}) "
                      f"at a feasible iterate, T = {T:.6g} s: returned, possibly not optimal",
                      SolverWarning, stacklevel=3)
    return x, nit, f"{solver.upper()}: {message}", multipliers


def residuals(problem: Problem, x: Array) -> tuple[float, float]:
    """``(largest |equality residual|, smallest inequality slack)`` of the scaled NLP at x
    (feasible: ``<= 1e-6`` and ``>= -1e-6``)."""
    nlp = SparseNlp(problem)
    g = nlp.evaluate(x)[0]
    lb, ub = nlp.pattern.lb, nlp.pattern.ub
    lbx, ubx = nlp.bounds_x()
    is_eq = lb == ub
    eq = float(np.abs(g[is_eq] - lb[is_eq]).max(initial=0.0))
    slack = np.concatenate([(g - lb)[~is_eq], (ub - g)[~is_eq], x - lbx, ubx - x])
    return eq, float(np.min(slack[np.isfinite(slack)], initial=np.inf))


def _solve_slsqp(problem: Problem, x0: Array, max_iter: int, tol: float):  # type: ignore[no-untyped-def]
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * (problem.nx - 1)
    bounds.append((1e-3, None))
    for i in range(problem.n_via):
        bounds[problem.basis.m * problem.n + i] = (0.0, 1.0)
    constraints = [
        {"type": "eq", "fun": lambda x: problem.equalities(x)[0],
         "jac": lambda x: problem.equalities(x)[1]},
        {"type": "ineq", "fun": lambda x: problem.inequalities(x)[0],
         "jac": lambda x: problem.inequalities(x)[1]},
    ]
    return minimize(problem.objective, x0, jac=True, method="SLSQP", bounds=bounds,
                    constraints=constraints, options={"maxiter": max_iter, "ftol": tol})


def failure_message(problem: Problem, x: Array, message: str, nit: int, eq: float, ineq: float,
             solver: str = "slsqp") -> str:
    """Say which constraint is violated at the solver's last iterate, and why it stopped."""
    _P, _, T = problem.unpack(x)
    check, _ = dense_check(problem, x)
    quantity, joint, t = check.worst
    ratio = getattr(check, quantity)
    feasible = eq <= 1e-6 and ineq >= -1e-6
    state = ("is feasible but not optimal: raise max_iter (--max-iter) or use fewer control "
             "points" if feasible else "violates a constraint")
    return (f"solver ({solver.upper()}) stopped after {nit} iterations: {message}; its last "
            "iterate "
            f"(T = {T:.4g} s) {state}; worst constraint: the {quantity} limit of joint "
            f"'{joint}' at t = {t:.4g} s ({ratio:.4g} x the limit); boundary/waypoint "
            f"residual {eq:.2g}")


__all__ = ["IPOPT_TOL", "SLSQP_FALLBACK_VARIABLES", "SLSQP_TOL", "SolverWarning",
           "carry_multipliers", "failure_message", "residuals", "solve"]
