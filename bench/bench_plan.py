"""Planning bench: Barman (2020) ch. IV numbers, torque-rate sweep, T against an independent
multiple-shooting optimum (test/planning/rr_reference.py), solve times (cold and warm), and
arm7 minimum time against TOPP-RA (PyPI ``toppra``) fairly: same path (our initial path, and
our final path), same torque-only limits, 1000+ grid points, constant-acceleration output,
every result checked 10x finer than its grid. Run: ``python bench/bench_plan.py`` (minutes;
``--arm7``: the TOPP-RA part only, ``--reference``: the independent-optimum table only)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import toppra
import toppra.algorithm
import toppra.constraint
import yaml

import rnea_ros.core as rc
from rnea_ros.planning import Limits, SolverError, plan_min_time
from rnea_ros.planning.bspline import Basis
from rnea_ros.planning.optimize import initial_guess
from rnea_ros.planning.problem import Problem
from rnea_ros.samples import sample_urdf

DATA = Path(__file__).resolve().parents[1] / "test" / "data"
ROBOTS = yaml.safe_load((DATA / "barman_two_link.yaml").read_text())
THESIS = yaml.safe_load((DATA / "barman_ch4_planning.yaml").read_text())
A0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8])
A1 = np.array([1.2, 0.3, -0.5, -1.2, 0.6, 2.2, -0.4])
AV = np.array([0.6, 0.2, 0.5, -1.8, -0.4, 1.8, 0.3])


def barman(name: str, gravity: tuple[float, float, float]) -> rc.RobotModel:
    return rc.from_dh([rc.DHLink(**r) for r in ROBOTS[name]["rows"]], name=name, gravity=gravity)


def timed(f, *args, **kwargs):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t0


def timed_cpu(f, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``(out, wall [s], CPU [s])``: the CPU time of this process, the solve time an idle
    machine would see (the dev machine is shared: wall times there run 2-10x the CPU). It
    counts MUMPS's OpenMP threads too, which spin on a loaded machine: run with
    OMP_NUM_THREADS=1 for stable numbers (arm7 through a waypoint 3.6 s vs 3.7-11 s, at
    fb24feb). Issue 25's targets, ``PYTHONPATH=$PWD OMP_NUM_THREADS=1 python
    bench/bench_plan.py --arm7`` (2026-11-27, branch plan8): arm7 through a waypoint (3
    waypoints) 1.79 s CPU warm, 82 iterations (main fb24feb: 2.80 s, 114), point to point
    1.53 s, 85 (2.77 s, 159); ``--reference``: the RR default plan 0.27 s (< 0.5 s)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def thesis() -> None:
    ref = THESIS["rr_min_time"]
    rr = barman("two_link_rr", (0.0, 0.0, -9.81))
    lim = Limits.from_model(rr, torque=10.0, velocity=np.inf, lower=-np.inf, upper=np.inf)
    plan_min_time(rr, [ref["start"], ref["goal"]], lim, control_points=12)  # compile
    print("RR minimum time (eq. 4.16-4.17), thesis T = 0.392 s")
    for m, g in ((12, 4), (20, 4), (24, 8), (30, 8)):
        p, dt = timed(plan_min_time, rr, [ref["start"], ref["goal"]], lim, control_points=m,
                      grid_per_interval=g)
        print(f"  m = {m:2d} control points, {g} grid/interval: T = {p.T:.4f} s "
              f"({100 * (p.T / ref['T'] - 1):+.2f} %), solve {dt:.2f} s, worst dense "
              f"|tau|/limit {p.check.torque:.6f}")
    print("RR with |tau_dot| limited (degree 4, 20 control points, torque from and to zero)")
    plan_min_time(rr, [ref["start"], ref["goal"]], lim.with_(rr, torque_rate=1000.0),
                  zero_acceleration=True, degree=4, control_points=8)  # compile the tau_dot rows
    for rate in (np.inf, 1000.0, 400.0, 200.0, 100.0):
        p, dt = timed(plan_min_time, rr, [ref["start"], ref["goal"]],
                      lim.with_(rr, torque_rate=rate), zero_acceleration=True, degree=4,
                      control_points=20)
        print(f"  tau_dot_max = {rate:6.0f} N m/s: T = {p.T:.4f} s, solve {dt:.2f} s, worst "
              f"dense |tau|/limit {p.check.torque:.4f}, |tau_dot|/limit {p.check.torque_rate:.4f}")
    ref = THESIS["pr_multi_objective"]
    pr = barman("two_link_pr", (-9.81, 0.0, 0.0))
    lim = Limits.from_model(pr, torque=10.0, velocity=np.inf, lower=-np.inf, upper=np.inf)
    print("PR multi-objective (eq. 4.18-4.19), thesis T = 0.5585 s at u = 0.01")
    for u in (0.0, 0.002, 0.005, 0.01):
        p, dt = timed(plan_min_time, pr, [ref["start"], ref["goal"]], lim, weight=u,
                      control_points=16)
        tau = p.dynamics(np.linspace(0, p.T, 400))[0]
        energy = float(np.trapezoid(np.sum(tau**2, axis=1), dx=p.T / 399))
        print(f"  u = {u:5.3f}: T = {p.T:.4f} s, int (f1^2 + tau2^2) dt = {energy:7.2f}, "
              f"peak |f1| {np.abs(tau[:, 0]).max():.2f} N, solve {dt:.2f} s")


def dense_ratios(model: rc.RobotModel, q, qd, qdd, qddd, tau_max, rate_max):  # type: ignore[no-untyped-def]
    tau, tau_dot = rc.rnea_time_derivative_batch(model, q, qd, qdd, qddd)
    return np.abs(tau / tau_max).max(), np.abs(tau_dot / rate_max).max()


def toppra_time(model: rc.RobotModel, path_q: np.ndarray, limits: Limits,
                grid: int = 1000):  # type: ignore[no-untyped-def]
    """TOPP-RA on the path ``path_q`` (samples at s = linspace(0, 1)), torque (and velocity)
    limits, ``grid + 1`` grid points, constant-acceleration output (piecewise-constant
    path acceleration between grid points: no spline overshoot)."""
    n = model.nv
    ss = np.linspace(0, 1, path_q.shape[0])
    path = toppra.SplineInterpolator(ss, path_q)
    constraints = []
    if np.isfinite(limits.velocity).all():
        constraints.append(toppra.constraint.JointVelocityConstraint(
            np.stack([-limits.velocity, limits.velocity], axis=1)))
    constraints.append(toppra.constraint.JointTorqueConstraint(
        lambda q, qd, qdd: rc.rnea(model, q, qd, qdd),
        np.stack([-limits.torque, limits.torque], axis=1), np.zeros(n),
        discretization_scheme=toppra.constraint.DiscretizationType.Interpolation))
    algo = toppra.algorithm.TOPPRA(constraints, path, gridpoints=np.linspace(0, 1, grid + 1),
                                   parametrizer="ParametrizeConstAccel")
    return algo.compute_trajectory(0, 0), grid + 1


def initial_path(model: rc.RobotModel, waypoints: np.ndarray, limits: Limits) -> np.ndarray:
    """Our planner's initial geometric path (B-spline through the waypoints), 2001 samples."""
    basis = Basis(12 * (len(waypoints) - 1) + 4, 3)
    n = model.nv
    problem = Problem(model=model, basis=basis, waypoints=waypoints, limits=limits,
                      grid=basis.grid(4), start_velocity=np.zeros(n), end_velocity=np.zeros(n))
    P0 = problem.unpack(initial_guess(problem, None))[0]
    return basis.matrix(np.linspace(0, 1, 2001)) @ P0


def report_toppra(label: str, model: rc.RobotModel, q_path: np.ndarray, limits: Limits,
                  ours: float | None) -> None:
    (traj, grid), dt = timed(toppra_time, model, q_path, limits)
    if traj is None:
        print(f"  {label:28s} TOPP-RA failed")
        return
    t = np.linspace(0, traj.duration, 20 * grid + 1)
    q, qd, qdd = (traj(t, r) for r in range(3))
    tr = np.abs(rc.rnea_batch(model, q, qd, qdd) / limits.torque).max()
    ratio = "" if ours is None else f", ours / TOPP-RA = {ours / traj.duration:.5f}"
    print(f"  {label:28s} TOPP-RA T = {traj.duration:.4f} s ({grid} grid points, const. accel.)"
          f", solve {dt:5.2f} s, worst |tau|/limit {tr:.4f}{ratio}")


def arm7() -> None:
    model = rc.load_urdf(sample_urdf("arm7"))
    limits = Limits.from_model(model, velocity=np.inf, lower=-np.inf, upper=np.inf)
    plan_min_time(model, [A0, A1], limits, control_points=8)  # compile
    print(f"arm7 ({model.name}), URDF torque limits only; ours checked 10x finer than its grid")
    for label, wps in (("point-to-point", np.array([A0, A1])),
                       ("through a waypoint", np.array([A0, AV, A1]))):
        try:
            p, dt = timed(plan_min_time, model, wps, limits)
            _, dt2, cpu2 = timed_cpu(plan_min_time, model, wps, limits)
        except SolverError as exc:  # point-to-point failed before f059c8e (issue 25)
            print(f"  {label:28s} ours FAILED: {exc}")
            report_toppra(f"{label}, our initial path", model,
                          initial_path(model, wps, limits), limits, None)
            continue
        print(f"  {label:28s} ours T = {p.T:.4f} s, solve {dt:5.2f} s cold, {dt2:5.2f} s warm "
              f"({cpu2:5.2f} s CPU), "
              f"{p.iterations} iterations, {p.knot_refinements} knot refinements "
              f"({p.refinement_stop}), worst |tau|/limit {p.check.torque:.6f}")
        report_toppra(f"{label}, our initial path", model, initial_path(model, wps, limits),
                      limits, None)
        final = p.spline.derivatives(np.linspace(0, 1, 2001) * p.T, 0)[0]
        report_toppra(f"{label}, our final path", model, final, limits, p.T)


def rr_toppra() -> None:
    """TOPP-RA on Barman's RR (torque-only), on our initial and on our final path."""
    ref = THESIS["rr_min_time"]
    rr = barman("two_link_rr", (0.0, 0.0, -9.81))
    lim = Limits.from_model(rr, torque=10.0, velocity=np.inf, lower=-np.inf, upper=np.inf)
    W = np.array([ref["start"], ref["goal"]])
    p = plan_min_time(rr, W, lim)
    print(f"RR (|tau| <= 10 N m only): ours T = {p.T:.4f} s")
    report_toppra("RR, our initial path", rr, initial_path(rr, W, lim), lim, None)
    final = p.spline.derivatives(np.linspace(0, 1, 2001) * p.T, 0)[0]
    report_toppra("RR, our final path", rr, final, lim, p.T)


def reference() -> None:
    """T against the independent multiple-shooting optimum (N = 200) on Barman's RR."""
    import sys as _sys

    _sys.path.insert(0, str(DATA.parent / "planning"))
    import rr_reference

    ref = THESIS["rr_min_time"]
    rr = barman("two_link_rr", (0.0, 0.0, -9.81))
    lim = Limits.from_model(rr, torque=10.0, velocity=np.inf, lower=-np.inf, upper=np.inf)
    print("RR default call (IPOPT, adaptive knots) against multiple shooting (N = 200, IPOPT)")
    print("  | tau_dot limit | end torque | T ours [s] | T reference [s] | gap | last change "
          "of T | cold [s] | warm [s] | warm CPU [s] | iterations |")
    for rate, end in ((None, "rest"), (400.0, "rest"), (400.0, "free"), (100.0, "rest"),
                      (100.0, "free"), (50.0, "free")):
        limits = lim if rate is None else lim.with_(rr, torque_rate=rate)
        za = None if rate is None else end == "rest"
        p, dt = timed(plan_min_time, rr, [ref["start"], ref["goal"]], limits,
                      zero_acceleration=za)
        _, dt2, cpu2 = timed_cpu(plan_min_time, rr, [ref["start"], ref["goal"]], limits,
                                 zero_acceleration=za)
        T_ref = rr_reference.min_time(ref["start"], ref["goal"], 10.0, rate, end, N=200)
        print(f"  | {'none' if rate is None else f'{rate:g} N m/s'} | "
              f"{'-' if rate is None else end} | {p.T:.6f} | {T_ref:.6f} | "
              f"{100 * (p.T / T_ref - 1):+.3f} % | {p.T_change:.1e} | {dt:.2f} | {dt2:.2f} | "
              f"{cpu2:.2f} | "
              f"{p.iterations} |")


if __name__ == "__main__":
    import sys

    if "--reference" in sys.argv:
        reference()
    elif "--arm7" in sys.argv:
        rr_toppra()
        arm7()
    else:
        thesis()
        reference()
        rr_toppra()
        arm7()
