"""IPOPT (casadi's bundled build) on :class:`~rnea_ros.planning.nlp.SparseNlp`.

casadi only carries the solver: ``g(x)`` and its exact sparse Jacobian come from
our numpy/numba code (the RNEA sensitivities, chain rule eq. 4.15) through
:class:`casadi.Callback` objects that declare the Jacobian's sparsity, so IPOPT
factorises a sparse KKT system. The Hessian of the Lagrangian: our own
(:mod:`rnea_ros.planning.hessian`, forward differences of the analytic state gradients)
from EXACT_HESSIAN_MIN_DOF joints on, IPOPT's limited-memory (L-BFGS) approximation below
that and with Barman's weighted objective. docs/design.md says why casadi, not cyipopt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.planning.errors import PlanningInternalError
from rnea_ros.planning.hessian import LagrangianHessian
from rnea_ros.planning.nlp import SparseNlp

Array = NDArray[np.float64]


@dataclass
class IpoptResult:
    """IPOPT's answer: the last iterate, its multipliers and how it stopped."""

    x: Array
    lam_g: Array
    lam_x: Array
    success: bool
    nit: int
    message: str


def _casadi() -> Any:
    try:
        import casadi
    except ImportError as exc:  # pragma: no cover - the planning extra installs it
        from rnea_ros.planning.errors import SolverError

        raise SolverError("the IPOPT solver needs casadi (pip install 'rnea_ros[planning]'); "
                          "or pass solver='slsqp'") from exc
    return casadi


def _buffer(view: Any) -> Array:
    """A casadi buffer (memoryview of a Function input's or output's nonzeros) as a float
    array, without a copy."""
    return np.frombuffer(view, dtype=np.float64)


def _with_jacobian(name: str, nx: int, out: Any, value: Any, jac: Any,
                   jacobian: Any) -> tuple[Any, list[Any]]:
    """A casadi Function ``x (nx,) -> value(x)`` (sparsity ``out``) whose Jacobian is our
    own: ``jacobian(x)``, the nonzeros of sparsity ``jac`` in casadi's (column-major)
    order (declared, so casadi keeps the pattern instead of taking the Jacobian as dense).
    Both are evaluated through ``eval_buffer`` (casadi's copy-free interface: the x and
    output buffers are numpy views; building DMs from numpy took a fifth of a RR plan).
    Returns it and the Python objects casadi must not outlive."""
    ca = _casadi()

    class Jacobian(ca.Callback):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            ca.Callback.__init__(self)
            self.construct(f"{name}_jac", {})

        def get_n_in(self) -> int:
            return 2  # x and the nominal output

        def get_n_out(self) -> int:
            return 1

        def get_sparsity_in(self, i: int) -> Any:
            return ca.Sparsity.dense(nx, 1) if i == 0 else out

        def get_sparsity_out(self, i: int) -> Any:
            return jac

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: Any, res: Any) -> int:
            _buffer(res[0])[:] = jacobian(_buffer(arg[0]))
            return 0

    class Value(ca.Callback):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            ca.Callback.__init__(self)
            self.jac = Jacobian()
            self.construct(name, {})

        def get_n_in(self) -> int:
            return 1

        def get_n_out(self) -> int:
            return 1

        def get_sparsity_in(self, i: int) -> Any:
            return ca.Sparsity.dense(nx, 1)

        def get_sparsity_out(self, i: int) -> Any:
            return out

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: Any, res: Any) -> int:
            _buffer(res[0])[:] = value(_buffer(arg[0]))
            return 0

        def has_jacobian(self) -> bool:
            return True

        def get_jacobian(self, name: str, inames: list[str], onames: list[str],
                         opts: dict[str, Any]) -> Any:
            return self.jac

        def has_jac_sparsity(self, oind: int, iind: int) -> bool:
            return True

        def get_jac_sparsity(self, oind: int, iind: int, symmetric: bool) -> Any:
            return jac

    f = Value()
    return f, [f, f.jac]


def _callbacks(nlp: SparseNlp) -> tuple[Any, Any]:
    """``(g, keep)``: a casadi Function x -> g(x) with an exact sparse Jacobian, and the
    Python objects casadi must not outlive."""
    ca = _casadi()
    pat = nlp.pattern
    nx, ng = nlp.p.nx, pat.ng
    # casadi's column-compressed storage of the fixed pattern, and where our values go in it
    order = np.lexsort((pat.rows, pat.cols))
    csc_rows, csc_cols = pat.rows[order], pat.cols[order]
    if np.any((np.diff(csc_cols) == 0) & (np.diff(csc_rows) == 0)):
        raise PlanningInternalError("duplicate entries in the Jacobian pattern")
    colind = np.searchsorted(csc_cols, np.arange(nx + 1)).tolist()
    sparsity = ca.Sparsity(ng, nx, colind, csc_rows.tolist())

    return _with_jacobian("plan_g", nx, ca.Sparsity.dense(ng, 1),
                          lambda x: nlp.evaluate(x)[0], sparsity,
                          lambda x: nlp.evaluate(x)[1][order])


def _objective(nlp: SparseNlp) -> tuple[Any, Any]:
    """Barman's eq. 4.18 ``(1 - u) T + u T int sum tau^2 ds`` as a Callback with its exact
    gradient (:meth:`Problem.objective`)."""
    ca = _casadi()
    problem = nlp.p
    nx = problem.nx
    return _with_jacobian("plan_f", nx, ca.Sparsity.dense(1, 1),
                          lambda x: problem.objective(x)[0], ca.Sparsity.dense(1, nx),
                          lambda x: problem.objective(x)[1])


def _hessian(nlp: SparseNlp) -> tuple[Any, list[Any]]:
    """IPOPT's ``hess_lag``: ``(x, p, lam_f, lam_g) ->`` the upper triangle of the Hessian of
    the Lagrangian (:class:`~rnea_ros.planning.hessian.LagrangianHessian`; objective T:
    linear), and the Python objects casadi must not outlive."""
    ca = _casadi()
    lag = LagrangianHessian(nlp)
    nx, ng = nlp.p.nx, nlp.pattern.ng
    colind = np.searchsorted(lag.cols, np.arange(nx + 1)).tolist()
    sparsity = ca.Sparsity(nx, nx, colind, lag.rows.tolist())
    inputs = [ca.Sparsity.dense(nx, 1), ca.Sparsity(0, 0), ca.Sparsity.dense(1, 1),
              ca.Sparsity.dense(ng, 1)]

    class Hessian(ca.Callback):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            ca.Callback.__init__(self)
            self.construct("plan_hess_lag", {})

        def get_n_in(self) -> int:
            return 4

        def get_n_out(self) -> int:
            return 1

        def get_sparsity_in(self, i: int) -> Any:
            return inputs[i]

        def get_sparsity_out(self, i: int) -> Any:
            return sparsity

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: Any, res: Any) -> int:
            _buffer(res[0])[:] = lag.values(_buffer(arg[0]), _buffer(arg[3]))
            return 0

    h = Hessian()
    return h, [h]


# The exact Hessian of the Lagrangian (hessian.py) from this many joints on, L-BFGS below.
# Measured (CPU s warm, one BLAS thread): arm7 through a via point 565 -> 196 iterations,
# 13.1 -> 5.6 s; point to point 324 -> 192, 4.2 -> 4.1 s (T 0.1981 -> 0.1975: a better
# optimum); Barman's RR hardly needs fewer iterations (69 -> 63) and each costs more (the
# Hessian 3 ms against 1 ms for the Jacobian): default plan 0.33 -> 0.40 s, so it keeps L-BFGS.
EXACT_HESSIAN_MIN_DOF = 3

# IPOPT's initial barrier on a re-solve warm-started with multipliers (a grid refinement or
# back-off): 1e-6, or with the exact Hessian 1e-7, the barrier its solves end at (tol 1e-6):
# Newton steps on the exact Hessian converge at it directly, where 1e-6 spent ~7 iterations
# per re-solve first converging at 1e-6 (T pushed 7e-4 off the active limits) and then
# coming back. arm7 through a waypoint (CPU s warm, one thread): 114 -> 100 iterations, T
# 0.323676 -> 0.323595 (the back-off re-solve 15 -> 1); point to point 159 -> 154, T
# 0.197381 -> 0.197376. 1e-8 was worse (grid re-solves 18 -> 39, a second back-off), and
# with L-BFGS (Barman's RR) 1e-6 stays.
WARM_MU = 1e-6
WARM_MU_EXACT = 1e-7

FEASIBLE = 1e-6  # an iterate within this of every (scaled) constraint and bound is feasible


def _tracker(nlp: SparseNlp) -> Any:
    """IPOPT's iteration callback: keeps the feasible iterate of smallest objective.

    IPOPT's L-BFGS can crawl on a flat objective (arm7, torque limits only: T falls by
    1e-5 per iteration) and stop at its iteration limit on an iterate 1e-5 outside a
    constraint, after passing through many feasible ones; :func:`solve_ipopt` returns the
    best of those instead of throwing them away (issue 25)."""
    ca = _casadi()
    nx, ng = nlp.p.nx, nlp.pattern.ng
    lb, ub = nlp.pattern.lb, nlp.pattern.ub
    lbx, ubx = nlp.bounds_x()
    sizes = {"x": (nx, 1), "f": (1, 1), "g": (ng, 1), "lam_x": (nx, 1), "lam_g": (ng, 1),
             "lam_p": (0, 1)}

    class Tracker(ca.Callback):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            ca.Callback.__init__(self)
            self.best: tuple[float, Array] | None = None
            self.construct("plan_iterates", {})

        def get_n_in(self) -> int:
            return int(ca.nlpsol_n_out())

        def get_n_out(self) -> int:
            return 1

        def get_name_in(self, i: int) -> str:
            return str(ca.nlpsol_out(i))

        def get_name_out(self, i: int) -> str:
            return "stop"

        def get_sparsity_in(self, i: int) -> Any:
            return ca.Sparsity.dense(*sizes[str(ca.nlpsol_out(i))])

        def get_sparsity_out(self, i: int) -> Any:
            return ca.Sparsity.dense(1, 1)

        def has_eval_buffer(self) -> bool:
            return True

        def eval_buffer(self, arg: Any, res: Any) -> int:
            x, f, g = _buffer(arg[0]), float(_buffer(arg[1])[0]), _buffer(arg[2])
            worst = max(float(np.max(np.concatenate([lb - g, g - ub, lbx - x, x - ubx]),
                                     initial=-np.inf)), 0.0)
            if worst <= FEASIBLE and np.isfinite(x).all() and (
                    self.best is None or f < self.best[0]):
                self.best = (f, x.copy())
            _buffer(res[0])[0] = 0.0
            return 0

    return Tracker()


def solve_ipopt(nlp: SparseNlp, x0: Array, *, max_iter: int, tol: float,
                lam_g0: Array | None = None, lam_x0: Array | None = None,
                from_solution: bool = False) -> IpoptResult:
    """Solve from x0: warm-started with the multipliers when given and of the right size;
    ``from_solution``: x0 is a solution of a nearby problem (a small initial barrier)."""
    ca = _casadi()
    problem = nlp.p
    x = ca.MX.sym("x", problem.nx)
    g_fun, keep = _callbacks(nlp)
    if problem.weight == 0.0:
        f = x[problem.nx - 1]
    else:
        f_fun, keep_f = _objective(nlp)
        keep += keep_f
        f = f_fun(x)
    warm = (lam_g0 is not None and lam_x0 is not None and lam_g0.size == nlp.pattern.ng
            and lam_x0.size == problem.nx)
    # L-BFGS history 2, not 6: the iterations hardly change (the active constraints carry
    # the curvature), each is cheaper (fewer low-rank solves): RR 0.62 -> 0.54 s warm
    ipopt: dict[str, Any] = {  # RNEA_IPOPT_PRINT=5: IPOPT's iteration log, for debugging
        "hessian_approximation": "limited-memory", "limited_memory_max_history": 2,
        "max_iter": int(max_iter), "tol": tol, "acceptable_tol": 1e-6,
        "constr_viol_tol": 1e-8, "print_level": int(os.environ.get("RNEA_IPOPT_PRINT", "0")),
        "sb": "yes", "nlp_scaling_method": "gradient-based",
        "print_timing_statistics": os.environ.get("RNEA_IPOPT_TIMING", "no"),
        # MUMPS ordering AMF: its default (auto) took 2.3x the CPU on arm7 (7 joints, 800
        # grid rows: 55 -> 22 ms per iteration), same iterates; no change on the RR
        "mumps_pivot_order": 2,
        # adaptive from a cold start; from a solution of a nearby problem monotone with a
        # small mu_init (below): a larger barrier pushed the iterate off the active limits
        # (RR default plan 175 -> 110 iterations; arm7 torque-only: 300 iterations,
        # infeasible -> 99, solved)
        "mu_strategy": "monotone" if warm or from_solution else "adaptive",
    }
    exact = problem.weight == 0.0 and problem.n >= EXACT_HESSIAN_MIN_DOF
    if warm:
        ipopt.update(warm_start_init_point="yes", warm_start_bound_push=1e-9,
                     warm_start_mult_bound_push=1e-9,
                     mu_init=WARM_MU_EXACT if exact else WARM_MU)
    elif from_solution:
        ipopt.update(mu_init=1e-6, bound_push=1e-6, bound_frac=1e-6)
    tracker = _tracker(nlp)
    opts = {"ipopt": ipopt, "print_time": False, "error_on_fail": False,
            "iteration_callback": tracker}
    if exact:
        opts["hess_lag"], keep_h = _hessian(nlp)
        keep += keep_h
        ipopt["hessian_approximation"] = "exact"
    solver = ca.nlpsol("rnea_plan", "ipopt", {"x": x, "f": f, "g": g_fun(x)}, opts)
    lbx, ubx = nlp.bounds_x()
    args: dict[str, Any] = {"x0": x0, "lbx": lbx, "ubx": ubx,
                            "lbg": nlp.pattern.lb, "ubg": nlp.pattern.ub}
    if warm:
        args.update(lam_g0=lam_g0, lam_x0=lam_x0)
    sol = solver(**args)
    stats = solver.stats()
    del keep
    x_out = np.asarray(sol["x"]).ravel()
    message = str(stats["return_status"])
    success = bool(stats["success"])
    if not success and tracker.best is not None and not _feasible(nlp, x_out):
        x_out = tracker.best[1]  # the last iterate is infeasible: the best feasible one
        message += f"; best feasible iterate returned (objective {tracker.best[0]:.6g})"
    return IpoptResult(x=x_out, lam_g=np.asarray(sol["lam_g"]).ravel(),
                       lam_x=np.asarray(sol["lam_x"]).ravel(), success=success,
                       nit=int(stats["iter_count"]), message=message)


def _feasible(nlp: SparseNlp, x: Array) -> bool:
    """x within FEASIBLE of every scaled constraint and bound."""
    g = nlp.evaluate(x)[0]
    lbx, ubx = nlp.bounds_x()
    excess = np.concatenate([nlp.pattern.lb - g, g - nlp.pattern.ub, lbx - x, x - ubx])
    return bool(np.isfinite(x).all() and np.max(excess, initial=-np.inf) <= FEASIBLE)
