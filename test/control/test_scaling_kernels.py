"""The compiled time scaling (rnea_ros.control._rate_limit_jit) against the numpy
implementation it replaced, kept below as a reference copy (``OldTimeScaling``:
rnea_ros/control/rate_limit.py at commit 19c0c05, unchanged but for names; the
trajectory's ``old_derivatives`` is in test_trajectory.py): the same speeds,
targets, constraints and scaled references on random trajectories whose torque
and torque-rate limits bind; and
its parts against independent computations (brute-force grid, mass_matrix, RNEA
with and without gravity)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_trajectory import old_derivatives

from rnea_ros.control._rate_limit_jit import (
    NONE_BINDING,
    W_A,
    W_A_DOT,
    W_G,
    W_G_DOT,
    grid_search,
    mass_times,
)
from rnea_ros.control.config import default_values, load_model
from rnea_ros.control.rate_limit import TimeScaling
from rnea_ros.control.trajectory import JointTrajectory
from rnea_ros.core._layout import GW_COLS
from rnea_ros.core.dynamics._gfd_jit import gfd_pass
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.gfd import rnea_time_derivative, rnea_time_derivative_batch
from rnea_ros.core.model.robot_model import RobotModel

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
TOLERANCE = 1e-12  # relative to the largest magnitude of each quantity over a run


# ----------------------------------------------------------------- reference copy (19c0c05)
class OldTimeScaling:
    """TimeScaling at 19c0c05 (numpy feasible-speed grid, per-state jerk bound)."""

    def __init__(self, model, tau_max, tau_dot_max, *, min_speed=0.05, max_acceleration=5.0,
                 max_jerk=100.0, horizon=0.25, points=16, margin=0.9, update_period=0.005):
        self.model = model
        self.rigid = model.without_friction()
        self.tau_max, self.tau_dot_max = tau_max, tau_dot_max
        self.min_speed, self.max_acceleration, self.max_jerk = min_speed, max_acceleration, \
            max_jerk
        self.offsets = np.linspace(0.0, horizon, points)
        self.margin, self.update_period = margin, update_period
        self.grid = np.linspace(1.0, min_speed, 60)
        self.s = 0.0
        self.speed, self.acceleration = 1.0, 0.0
        self.target = 1.0
        self.constraint = "none"
        self.t_prev = None
        self.last_update = -math.inf

    def restart(self, s, t, trajectory):
        self.s, self.t_prev = s, t
        self.target, self.constraint = self.feasible_speed(trajectory)
        self.last_update = t
        D = old_derivatives(trajectory, np.array([s]))[:, 0]
        if not (np.any(np.abs(D[1]) > 1e-9) or np.any(np.abs(D[2]) > 1e-9)):
            self.speed, self.acceleration = self.target, 0.0

    def feasible_speed(self, trajectory):
        D = old_derivatives(trajectory, self.s + self.offsets)
        model, m, n = self.model, len(self.offsets), self.model.nv
        zero_g = np.zeros(3)
        A, A_dot = rnea_time_derivative_batch(self.rigid, D[0], D[1], D[2], D[3], gravity=zero_g)
        still = np.zeros((m, n))
        moving, moving_dot = rnea_time_derivative_batch(self.rigid, D[0], D[1], still, still)
        no_g, no_g_dot = rnea_time_derivative_batch(self.rigid, D[0], D[1], still, still,
                                                    gravity=zero_g)
        G = moving - no_g + model.coulomb * np.sign(D[1])
        G_dot = moving_dot - no_g_dot
        S = self.grid[:, None, None]
        Fv = model.viscous
        tau = A * S**2 + Fv * D[1] * S + G
        tau_dot = A_dot * S**3 + Fv * D[2] * S**2 + G_dot * S
        over_tau = np.abs(tau) > self.margin * self.tau_max
        over_rate = np.abs(tau_dot) > self.margin * self.tau_dot_max
        bad = (over_tau | over_rate).reshape(len(self.grid), -1).any(axis=1)
        if not bad.any():
            return 1.0, "none"
        first_ok = int(np.argmax(~bad)) if (~bad).any() else len(self.grid) - 1
        binding = max(first_ok - 1, 0)
        joint = int(np.argwhere(over_rate[binding] | over_tau[binding])[0, 1])
        kind = "effort_rate" if over_rate[binding, :, joint].any() else "effort"
        return float(self.grid[first_ok]), f"{kind} {model.joint_names[joint]}"

    def _jerk_bounds(self, D):
        q, q1, q2, q3 = D
        sd, sdd = self.speed, self.acceleration
        _, rate = rnea_time_derivative(self.model, q, q1 * sd, q2 * sd**2 + q1 * sdd,
                                       q3 * sd**3 + 3 * q2 * sd * sdd)
        b = mass_matrix(self.model, q) @ q1
        lo, hi = -math.inf, math.inf
        for i in np.flatnonzero(np.abs(b) > 1e-9):
            a1 = (-self.tau_dot_max[i] - rate[i]) / b[i]
            a2 = (self.tau_dot_max[i] - rate[i]) / b[i]
            lo, hi = max(lo, min(a1, a2)), min(hi, max(a1, a2))
        return lo, hi

    def advance(self, t, trajectory):
        dt = 0.0 if self.t_prev is None else t - self.t_prev
        if math.isfinite(dt) and dt > 0.0:
            if t - self.last_update >= self.update_period:
                self.target, self.constraint = self.feasible_speed(trajectory)
                self.last_update = t
            if self.s >= trajectory.end_time:
                self.target = 1.0
            omega = 15.0
            jerk = omega**2 * (self.target - self.speed) - 2 * omega * self.acceleration
            jerk = min(max(jerk, -self.max_jerk), self.max_jerk)
            if self.s < trajectory.end_time:
                lo, hi = self._jerk_bounds(old_derivatives(trajectory,
                                                           np.array([self.s]))[:, 0])
                jerk = min(max(jerk, lo), hi) if lo <= hi else 0.5 * (lo + hi)
            acc = min(max(self.acceleration + jerk * dt, -self.max_acceleration),
                      self.max_acceleration)
            speed = self.speed + acc * dt
            if speed < self.min_speed or speed > 1.0:
                speed, acc = min(max(speed, self.min_speed), 1.0), 0.0
            self.speed, self.acceleration = speed, acc
            self.s += speed * dt
            self.t_prev = t
        elif self.t_prev is None:
            self.t_prev = t
        D = old_derivatives(trajectory, np.array([self.s]))[:, 0]
        return D[0], D[1] * self.speed, D[2] * self.speed**2 + D[1] * self.acceleration


# ----------------------------------------------------------------- helpers
def arm7(friction: bool) -> RobotModel:
    values = default_values()
    values.update(urdf_path=URDF)
    model = load_model(values)
    if friction:  # viscous and Coulomb friction in the prediction (friction_compensation)
        from dataclasses import replace

        rng = np.random.default_rng(3)
        model = replace(model, viscous=rng.uniform(0.5, 3.0, model.nv),
                        coulomb=rng.uniform(0.2, 2.0, model.nv))
    return model


def random_trajectory(rng: np.random.Generator, n: int, start: float) -> JointTrajectory:
    """3-6 waypoints around Q0 over 0.3-1.2 s: quintic, cubic or Catmull-Rom segments."""
    K = int(rng.integers(3, 7))
    times = start + np.concatenate([[0.0], np.cumsum(rng.uniform(0.08, 0.3, K - 1))])
    P = Q0[:n] + rng.uniform(-0.9, 0.9, (K, n))
    P[0] = Q0[:n]
    kind = rng.integers(0, 3)
    V = rng.uniform(-2.0, 2.0, (K, n)) if kind > 0 else None
    A = rng.uniform(-8.0, 8.0, (K, n)) if kind == 2 else None
    if V is not None:
        V[0] = V[-1] = 0.0
    if A is not None:
        A[0] = A[-1] = 0.0
    return JointTrajectory(times, P, V, A)


def peaks(model: RobotModel, traj: JointTrajectory) -> tuple[np.ndarray, np.ndarray]:
    """max |tau| and |tau_dot| per joint along the unscaled trajectory."""
    D = old_derivatives(traj, np.linspace(traj.times[0], traj.end_time, 200))
    tau, rate = rnea_time_derivative_batch(model, D[0], D[1], D[2], D[3])
    return np.abs(tau).max(axis=0), np.abs(rate).max(axis=0)


def relative(ours, reference) -> float:
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    scale = max(float(np.abs(reference).max()), 1e-300)
    return float(np.abs(ours - reference).max()) / scale


# ----------------------------------------------------------------- equivalence
@pytest.mark.parametrize("seed,friction", [(0, False), (1, True), (2, False), (3, True)])
def test_compiled_time_scaling_equals_the_numpy_implementation(seed: int, friction: bool) -> None:
    """Random trajectories, limits set to 35-70 % of what the unscaled motion needs
    (torque rate) and 85-110 % (torque): both implementations step through the same
    1 kHz stream (with jittered, repeated and backwards stamps and a trajectory
    replaced on the way) and must agree on every speed, target, constraint and
    scaled reference."""
    rng = np.random.default_rng(seed)
    model = arm7(friction)
    n = model.nv
    records: dict[str, list[list]] = {k: [[], []] for k in
                                      ("ref", "s", "speed", "acc", "target", "update")}
    constraints: set[str] = set()
    slowed = 0
    for run in range(3):
        traj = random_trajectory(rng, n, 0.0)
        tau_peak, rate_peak = peaks(model, traj)
        tau_max = np.maximum(tau_peak * rng.uniform(0.85, 1.1, n), 1.0)
        rate_max = np.maximum(rate_peak * rng.uniform(0.35, 0.7, n), 1.0)
        min_speed = float(rng.uniform(0.05, 0.3))
        old = OldTimeScaling(model, tau_max, rate_max, min_speed=min_speed)
        new = TimeScaling(model, tau_max, rate_max, min_speed=min_speed)
        for ts in (old, new):
            ts.restart(0.0, 0.0, traj)
        t = 0.0
        for k in range(2500):
            event = rng.integers(0, 40)
            t += {0: 0.0, 1: -2e-3, 2: 3e-3}.get(int(event), 1e-3 * rng.uniform(0.8, 1.2))
            if k == 900:  # a new trajectory, from where the path is now
                traj = random_trajectory(rng, n, t)
                for ts in (old, new):
                    ts.restart(t, t, traj)
            a, b = old.advance(t, traj), new.advance(t, traj)
            for key, x, y in (("ref", np.array(a), np.array(b)), ("s", old.s, new.s),
                              ("speed", old.speed, new.speed),
                              ("acc", old.acceleration, new.acceleration),
                              ("target", old.target, new.target),
                              ("update", old.last_update, new.last_update)):
                records[key][0].append(x)
                records[key][1].append(y)
            assert new.constraint == old.constraint, (run, k)
            constraints.add(new.constraint)
            slowed += new.speed < 0.99
    for key, (x, y) in records.items():
        assert relative(y, x) <= TOLERANCE, key
    assert records["target"][0] == records["target"][1]  # grid values: exactly
    # The limits did bind: both kinds of constraint, and real slowing down.
    kinds = {c.split()[0] for c in constraints}
    assert {"effort_rate", "effort", "none"} <= kinds, constraints
    assert slowed > 1000


def test_the_grid_search_finds_the_first_feasible_grid_speed() -> None:
    """Against the numpy grid (60, m, n) on random look-ahead values, including
    non-monotone feasibility (a constraint satisfied at the fastest speed and not at
    a slower one, where the numpy code raised IndexError: now the fastest wins)."""
    rng = np.random.default_rng(7)
    m, n = 16, 5
    S = np.linspace(1.0, 0.05, 60)[:, None, None]
    grid = np.ascontiguousarray(np.stack([S, S**2, S**3]).reshape(3, -1))
    found = {"none": 0, "index": 0, "slowest": 0, "non_monotone": 0}
    for trial in range(400):
        W = np.zeros((m, 8, n))
        W[:, :4] = rng.normal(size=(m, 4, n))
        for row, scale in ((W_A, 30.0), (W_A_DOT, 300.0), (W_G, 10.0), (W_G_DOT, 20.0)):
            W[:, row] = rng.normal(0.0, scale, (m, n))
        Fv = rng.uniform(0, 2, n)
        A, Ad, G, Gd = (W[:, r] for r in (W_A, W_A_DOT, W_G, W_G_DOT))
        D1, D2 = W[:, 1], W[:, 2]
        if trial % 4 == 0:  # tau(1) = 0 at (0, 0), |tau| = |G| (1 - S^2) > limit below it
            G[0, 0] = 1000.0
            A[0, 0] = -(Fv[0] * D1[0, 0] + G[0, 0])
        factor = np.exp(rng.uniform(np.log(0.05), np.log(2.0), 2))  # of the load at S = 1
        tau_max = np.abs(A + Fv * D1 + G).max(axis=0) * factor[0] + 1e-3
        rate_max = np.abs(Ad + Fv * D2 + Gd).max(axis=0) * factor[1] + 1e-3
        if trial % 4 == 0:  # all within at S = 1
            tau_max[1:] = np.abs(A + Fv * D1 + G).max(axis=0)[1:] * 1.5
            tau_max[0] = 0.5 * abs(G[0, 0])
            rate_max = np.abs(Ad + Fv * D2 + Gd).max(axis=0) * 1.5
        limits = np.stack([rng.uniform(0, 1, n), Fv, tau_max, rate_max])
        over_tau = np.abs(A * S**2 + Fv * D1 * S + G) > limits[2]
        over_rate = np.abs(Ad * S**3 + Fv * D2 * S**2 + Gd * S) > limits[3]
        bad = (over_tau | over_rate).reshape(60, -1).any(axis=1)
        first_ok, joint, rate = grid_search(W, limits, grid)
        if not bad[0]:
            assert first_ok == NONE_BINDING
            found["non_monotone" if bad.any() else "none"] += 1
            continue
        expected = int(np.argmax(~bad)) if (~bad).any() else 59
        found["index" if (~bad).any() else "slowest"] += 1
        binding = expected - 1
        assert first_ok == expected
        assert joint == int(np.argwhere(over_rate[binding] | over_tau[binding])[0, 1])
        assert rate == bool(over_rate[binding, :, joint].any())
    assert min(found.values()) > 5, found


def test_mass_times_and_gravity_part_against_mass_matrix_and_rnea() -> None:
    """M(q) x on the poses of gfd_pass against mass_matrix @ x; the gravity part
    (g(q), dg/dq q') against RNEA's tau and tau_dot with gravity minus without."""
    from rnea_ros.control._rate_limit_jit import gravity_part

    model = arm7(True)
    rigid = model.without_friction()
    rng = np.random.default_rng(5)
    n = model.nv
    for _ in range(20):
        q, qd, qdd, qddd, x = (rng.uniform(-2, 2, n) for _ in range(5))
        work = np.empty((n, GW_COLS))
        tau, tau_dot, out = np.empty(n), np.empty(n), np.empty(n)
        gfd_pass(model.kernel_floats, q, qd, qdd, qddd, qddd, model.gravity, work[:0],
                 work[:0], work[:0], False, False, tau, tau_dot, tau_dot, work)
        mass_times(model.kernel_floats, x, work, out)
        M = mass_matrix(model, q)
        assert relative(out, M @ x) < 1e-13
        gravity_part(rigid.kernel_floats, qd, model.gravity, work, tau, tau_dot)
        with_g = rnea_time_derivative(rigid, q, qd, np.zeros(n), np.zeros(n))
        without = rnea_time_derivative(rigid, q, qd, np.zeros(n), np.zeros(n), gravity=np.zeros(3))
        assert relative(tau, with_g[0] - without[0]) < 1e-12
        assert relative(tau_dot, with_g[1] - without[1]) < 1e-12
