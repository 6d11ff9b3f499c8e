"""Planning bench: Barman (2020) ch. IV numbers, torque-rate sweep, and arm7 minimum time
against TOPP-RA (PyPI ``toppra``) on the same initial geometric path, both checked 10x finer
than their grids. Run: ``python bench/bench_plan.py`` (about a minute)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import toppra
import toppra.algorithm
import toppra.constraint
import yaml

import rnea_ros.core as rc
from rnea_ros.planning import Limits, plan_min_time
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


def toppra_on_initial_path(model: rc.RobotModel, waypoints: np.ndarray, limits: Limits):  # type: ignore[no-untyped-def]
    """TOPP-RA time-parametrising our planner's initial geometric path (B-spline in s)."""
    basis = Basis(12 * (len(waypoints) - 1) + 4, 3)
    n = model.nv
    problem = Problem(model=model, basis=basis, waypoints=waypoints, limits=limits,
                      grid=basis.grid(4), start_velocity=np.zeros(n), end_velocity=np.zeros(n))
    P0 = problem.unpack(initial_guess(problem, None))[0]
    ss = np.linspace(0, 1, 201)
    path = toppra.SplineInterpolator(ss, basis.matrix(ss) @ P0)
    vel = toppra.constraint.JointVelocityConstraint(np.stack([-limits.velocity,
                                                               limits.velocity], axis=1))
    trq = toppra.constraint.JointTorqueConstraint(
        lambda q, qd, qdd: rc.rnea(model, q, qd, qdd),
        np.stack([-limits.torque, limits.torque], axis=1), np.zeros(n),
        discretization_scheme=toppra.constraint.DiscretizationType.Interpolation)
    algo = toppra.algorithm.TOPPRA([vel, trq], path)  # default: spline parametrizer
    traj = algo.compute_trajectory(0, 0)
    grid = algo.problem_data.gridpoints.size if algo.problem_data else 0
    return traj, grid


def arm7() -> None:
    model = rc.load_urdf(sample_urdf("arm7"))
    rate = 1000.0  # N m/s, the controller's default effort_rate_limits
    limits = Limits.from_model(model)
    plan_min_time(model, [A0, A1], limits)  # compile
    print(f"arm7 ({model.name}), URDF limits; dense check 10x finer than each grid; "
          f"|tau_dot| against {rate:g} N m/s")
    for label, wps, m in (("point-to-point", np.array([A0, A1]), None),
                          ("through a waypoint", np.array([A0, AV, A1]), 18)):
        for lim in (limits, limits.with_(model, torque_rate=rate)):
            p, dt = timed(plan_min_time, model, wps, lim, control_points=m)
            t = np.linspace(0, p.T, 20 * p.grid.size)
            tr, rr = dense_ratios(model, *p.spline.derivatives(t), lim.torque, rate)
            tag = "ours" if np.isinf(lim.torque_rate).all() else f"ours, |tau_dot| <= {rate:g}"
            print(f"  {label:18s} {tag:25s} T = {p.T:.4f} s, solve {dt:5.2f} s, worst "
                  f"|tau|/limit {tr:.6f}, |tau_dot|/{rate:g} {rr:.3f}")
        (traj, grid), dt = timed(toppra_on_initial_path, model, wps, limits)
        if traj is None:
            print(f"  {label:18s} TOPP-RA failed")
            continue
        t = np.linspace(0, traj.duration, 10 * grid + 1)
        q, qd, qdd = (traj(t, r) for r in range(3))  # its spline has no 3rd derivative:
        tau = rc.rnea_batch(model, q, qd, qdd)       # tau_dot by differences of tau
        tr = np.abs(tau / limits.torque).max()
        rr = np.abs(np.gradient(tau, t, axis=0) / rate).max()
        print(f"  {label:18s} {'TOPP-RA (same path)':25s} T = {traj.duration:.4f} s, solve "
              f"{dt:5.2f} s, worst |tau|/limit {tr:.4f}, |tau_dot|/{rate:g} {rr:.3f} "
              f"({grid} grid points)")


if __name__ == "__main__":
    import sys

    if "--arm7" not in sys.argv:
        thesis()
    arm7()
