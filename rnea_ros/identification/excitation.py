"""Excitation trajectories for identification: finite Fourier series, optimised.

Swevers, Ganseman, Tukel, De Schutter & Van Brussel (1997), "Optimal robot
excitation and identification", IEEE Trans. Robotics and Automation 13(5): the
finite Fourier series per joint ``j`` (called (S) below; the paper is not among
the project's seed texts, so no equation numbers are cited)

    ``q_j(t) = q0_j + sum_l a_jl/(w l) sin(w l t) - b_jl/(w l) cos(w l t)``,

``l = 1..L`` harmonics of the base frequency ``w = 2 pi f``: periodic with
period ``2 pi / w``, so the data can be averaged over periods and the
velocities and accelerations are exact. Here the first harmonic's
coefficients are fixed by the others,

    ``a_j1 = -sum_{l>=2} a_jl``  (``q̇_j(0) = 0``),
    ``b_j1 = -sum_{l>=2} l b_jl``  (``q̈_j(0) = 0``),

so the motion starts, and ends every period, **at rest** at ``q(0)``: the
controller can hold the start pose and then follow it. The free variables
per joint are ``q0_j, a_j2..a_jL, b_j2..b_jL`` and ``q, q̇, q̈`` are linear in
them (:func:`basis`).

Objective (Swevers' criterion): ``log10 cond(W_b)`` of the stacked base
regressor (:mod:`~rnea_ros.identification.base`, the identification
parameter set with friction and offset) on a time grid over one period.
Constraints on the grid: positions inside the limits (minus a margin),
``|q̇| <= q̇_max``, ``|q̈| <= q̈_max`` (linear, exact Jacobians) and
``|τ| <= τ_max`` of the nominal model (Jacobian from
:func:`rnea_ros.core.rnea_derivatives_batch` chained through the basis).
SciPy SLSQP, the objective's gradient by finite differences. Every solution
is checked on a grid 10x finer; where a limit is exceeded between grid
points, those points join the grid and it is solved again (as
:mod:`rnea_ros.planning` does).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification import parameters
from rnea_ros.identification.base import BaseParameters, base_parameters
from rnea_ros.identification.errors import IdentificationError
from rnea_ros.planning.errors import InfeasibleError
from rnea_ros.planning.limits import Limits
from rnea_ros.planning.output import points_message, write_message

Array = NDArray[np.float64]

TIGHTEN = 0.02  # the grid's constraints keep this fraction inside the limits


def basis(t: Array, omega: float, harmonics: int) -> tuple[Array, Array, Array]:
    """``(Bq, Bqd, Bqdd)``, each (N, m) with ``m = 2 L - 1``: ``q_j(t) = Bq(t) @ x_j``
    (and its derivatives) for a joint's free variables ``x_j = (q0, a_2..a_L, b_2..b_L)``."""
    t = np.asarray(t, dtype=float)[:, None]
    ell = np.arange(1, harmonics + 1, dtype=float)
    wl = omega * ell
    s, c = np.sin(wl * t), np.cos(wl * t)
    # The a-part (sin / (w l)) and b-part (-cos / (w l)) of (S) and their derivatives.
    qa, qb = s / wl, -c / wl
    da, db = c, s
    dda, ddb = -wl * s, wl * c
    one, zero = np.ones_like(t), np.zeros_like(t)
    L = ell[1:]
    Bq = np.hstack([one, qa[:, 1:] - qa[:, :1], qb[:, 1:] - L * qb[:, :1]])
    Bqd = np.hstack([zero, da[:, 1:] - da[:, :1], db[:, 1:] - L * db[:, :1]])
    Bqdd = np.hstack([zero, dda[:, 1:] - dda[:, :1], ddb[:, 1:] - L * ddb[:, :1]])
    return Bq, Bqd, Bqdd


@dataclass(frozen=True)
class Fourier:
    """A finite Fourier series per joint: ``x`` (n, 2 L - 1) free variables, ``omega`` [rad/s]."""

    x: Array
    omega: float

    @property
    def harmonics(self) -> int:
        return int(self.x.shape[1] + 1) // 2

    @property
    def period(self) -> float:
        return float(2.0 * np.pi / self.omega)

    def __call__(self, t: Array) -> tuple[Array, Array, Array]:
        """``(q, qd, qdd)`` (N, n) at times ``t`` (N,)."""
        Bq, Bqd, Bqdd = basis(np.asarray(t, dtype=float), self.omega, self.harmonics)
        return Bq @ self.x.T, Bqd @ self.x.T, Bqdd @ self.x.T

    def coefficients(self) -> tuple[Array, Array, Array]:
        """``(q0 (n,), a (n, L), b (n, L))`` of (S)."""
        L = self.harmonics
        q0, a_rest, b_rest = self.x[:, 0], self.x[:, 1:L], self.x[:, L:]
        ell = np.arange(2, L + 1)
        a = np.hstack([-a_rest.sum(axis=1, keepdims=True), a_rest])
        b = np.hstack([-(b_rest * ell).sum(axis=1, keepdims=True), b_rest])
        return q0, a, b

    @property
    def start(self) -> Array:
        """``q(0)``: where the motion starts and ends each period, at rest."""
        return np.asarray(self(np.zeros(1))[0][0], dtype=np.float64)


@dataclass(frozen=True)
class Check:
    """Largest ratios to the limits on a dense grid (<= 1: within): position (distance
    from the middle of the range over its half width less the margin), velocity,
    acceleration, torque."""

    position: float
    velocity: float
    acceleration: float
    torque: float

    @property
    def ok(self) -> bool:
        return max(self.position, self.velocity, self.acceleration, self.torque) <= 1.0 + 1e-6


@dataclass
class Excitation:
    """An optimised excitation trajectory and how it was found."""

    model: RobotModel
    series: Fourier
    limits: Limits
    acceleration: Array
    margin: float
    base: BaseParameters
    cond: float  # of the base regressor on the dense grid
    cond_initial: float
    check: Check
    message: str
    iterations: int
    solve_time: float
    periods: int = 1

    @property
    def duration(self) -> float:
        return self.periods * self.series.period

    def sample(self, dt: float) -> tuple[Array, Array, Array, Array]:
        """``(t, q, qd, qdd)`` every ``dt`` over ``periods`` periods (the last point at rest)."""
        count = max(1, round(self.duration / dt))
        t = np.arange(count + 1, dtype=np.float64) * (self.duration / count)
        q, qd, qdd = self.series(t)
        return t, q, qd, qdd

    def torques(self, t: Array) -> Array:
        return rc.rnea_batch(self.model, *self.series(t))


def condition_number(model: RobotModel, base: BaseParameters, q: Array, qd: Array, qdd: Array,
                     band: float = 0.01) -> float:
    """``cond(W_b)`` of the stacked base regressor (N n, r) at the samples (Swevers' criterion)."""
    W = base.columns(parameters.regressor(model, q, qd, qdd, band)).reshape(-1, base.rank)
    s = np.linalg.svd(W, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def dense_check(model: RobotModel, series: Fourier, limits: Limits, acceleration: Array,
                margin: float, samples: int) -> tuple[Check, Array]:
    """The ratios to the limits on ``samples`` points over a period, and where each is worst."""
    t = np.linspace(0.0, series.period, samples, endpoint=False)
    q, qd, qdd = series(t)
    tau = rc.rnea_batch(model, q, qd, qdd)
    mid, half = 0.5 * (limits.lower + limits.upper), 0.5 * (limits.upper - limits.lower) - margin
    ratios = {"position": (np.abs(q - mid) / half).max(axis=1),
              "velocity": (np.abs(qd) / limits.velocity).max(axis=1),
              "acceleration": (np.abs(qdd) / acceleration).max(axis=1),
              "torque": (np.abs(tau) / limits.torque).max(axis=1)}
    worst = np.zeros(t.size, dtype=bool)
    for r in ratios.values():
        worst |= r > 1.0 + 1e-6
    return Check(**{k: float(v.max()) for k, v in ratios.items()}), t[worst]


class _Problem:
    """SLSQP callbacks on a grid of times (objective, constraints, Jacobians)."""

    def __init__(self, model: RobotModel, base: BaseParameters, grid: Array, omega: float,
                 harmonics: int, limits: Limits, acceleration: Array, margin: float,
                 band: float) -> None:
        self.model, self.base, self.n, self.band = model, base, model.nv, band
        self.B = basis(grid, omega, harmonics)
        self.m = self.B[0].shape[1]
        # 2 % inside the limits on the grid, so that the 10x finer check passes
        room = TIGHTEN * np.minimum(limits.upper - limits.lower, 1.0)
        self.lo, self.hi = limits.lower + margin + room, limits.upper - margin - room
        shrink = 1.0 - TIGHTEN
        self.vmax, self.amax = shrink * limits.velocity, shrink * acceleration
        self.tmax = shrink * limits.torque
        eye = np.eye(self.n)
        # d(q_ki)/d(x_jc) = delta_ij B[k, c]: (N n, n m), for the linear constraints.
        self.J = [np.einsum("ij,kc->kijc", eye, B).reshape(-1, self.n * self.m)
                  for B in self.B]

    def states(self, z: Array) -> tuple[Array, Array, Array]:
        x = z.reshape(self.n, self.m)
        return self.B[0] @ x.T, self.B[1] @ x.T, self.B[2] @ x.T

    def objective(self, z: Array) -> tuple[float, Array]:
        """``log10 cond(W_b)`` and its gradient: ``d log10 cond = (u_1' dW v_1 / s_1 -
        u_r' dW v_r / s_r) / ln 10`` (singular triplets from the Gram matrix), with
        ``dW`` per state component by forward differences (one batch per joint and
        derivative order: row ``k`` of ``W`` depends on sample ``k`` only)."""
        states = self.states(z)
        W = self.columns(*states)
        r = W.shape[2]
        flat = W.reshape(-1, r)
        lam, V = np.linalg.eigh(flat.T @ flat)
        lam = np.maximum(lam, 1e-300)
        s1, sr = np.sqrt(lam[-1]), np.sqrt(lam[0])
        v1, vr = V[:, -1], V[:, 0]
        u1, ur = (W @ v1) / s1, (W @ vr) / sr  # (N, n)
        grad = np.zeros((self.n, self.m))
        for order, B in enumerate(self.B):
            for j in range(self.n):
                moved = [x.copy() for x in states]
                h = 1e-6 * max(1.0, float(np.abs(moved[order][:, j]).max()))
                moved[order][:, j] += h
                dW = (self.columns(*moved) - W) / h
                g = (np.einsum("ki,kir,r->k", u1, dW, v1) / s1
                     - np.einsum("ki,kir,r->k", ur, dW, vr) / sr) / np.log(10.0)
                grad[j] += g @ B
        return float(0.5 * np.log10(lam[-1] / lam[0])), grad.ravel()

    def columns(self, q: Array, qd: Array, qdd: Array) -> Array:
        """The base regressor (N, n, r) at the samples."""
        return self.base.columns(parameters.regressor(self.model, q, qd, qdd, self.band))

    def constraints(self, z: Array) -> Array:
        q, qd, qdd = self.states(z)
        tau = rc.rnea_batch(self.model, q, qd, qdd)
        return np.concatenate([(self.hi - q).ravel(), (q - self.lo).ravel(),
                               (self.vmax - qd).ravel(), (self.vmax + qd).ravel(),
                               (self.amax - qdd).ravel(), (self.amax + qdd).ravel(),
                               (self.tmax - tau).ravel(), (self.tmax + tau).ravel()])

    def jacobian(self, z: Array) -> Array:
        q, qd, qdd = self.states(z)
        dq, dv, M = rc.rnea_derivatives_batch(self.model, q, qd, qdd)
        Bq, Bqd, Bqdd = self.B
        Jt = (np.einsum("kij,kc->kijc", dq, Bq) + np.einsum("kij,kc->kijc", dv, Bqd)
              + np.einsum("kij,kc->kijc", M, Bqdd)).reshape(-1, self.n * self.m)
        Jq, Jqd, Jqdd = self.J
        return np.vstack([-Jq, Jq, -Jqd, Jqd, -Jqdd, Jqdd, -Jt, Jt])


def initial_guess(model: RobotModel, limits: Limits, acceleration: Array, omega: float,
                  harmonics: int, margin: float, seed: int) -> Fourier:
    """Random coefficients (decaying with the harmonic) centred in the range, scaled down
    until positions, velocities and accelerations are within half their limits."""
    rng = np.random.default_rng(seed)
    n, L = model.nv, harmonics
    lo, hi = limits.lower + margin, limits.upper - margin
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    scale = np.minimum(half, 1.0)
    a = rng.uniform(-1, 1, (n, L - 1)) * scale[:, None] * omega
    b = rng.uniform(-1, 1, (n, L - 1)) * scale[:, None] * omega / np.arange(2, L + 1)
    x = np.hstack([mid[:, None], a, b])
    series = Fourier(x, omega)
    t = np.linspace(0.0, series.period, 40 * L, endpoint=False)
    for _ in range(60):
        q, qd, qdd = series(t)
        excess = np.max([np.abs(q - mid).max(axis=0) / (0.5 * half),
                         np.abs(qd).max(axis=0) / (0.5 * limits.velocity),
                         np.abs(qdd).max(axis=0) / (0.5 * acceleration)], axis=0)
        if excess.max() <= 1.0:
            break
        shrink = np.where(excess > 1.0, 0.8, 1.0)
        x = x.copy()
        x[:, 1:] *= shrink[:, None]
        # re-centre: the shrunk series moves q's mean
        series = Fourier(x, omega)
        x[:, 0] += mid - series(t)[0].mean(axis=0)
        series = Fourier(x, omega)
    return series


def design_excitation(model: RobotModel, *, limits: Limits | None = None,
                      acceleration: float | Array = 5.0, frequency: float = 0.1,
                      harmonics: int = 5, grid: int | None = None, margin: float = 0.05,
                      torque_fraction: float = 1.0, periods: int = 1, max_iter: int = 100,
                      seed: int = 0, band: float = 0.01) -> Excitation:
    """The excitation trajectory of ``model`` minimising ``log10 cond(W_b)`` (module docstring).

    ``limits``: position, velocity and torque limits (default the URDF's; the torque
    limits are scaled by ``torque_fraction``); ``acceleration`` [rad/s^2] one or per
    joint; ``frequency`` the base frequency [Hz]: the period is ``1/frequency``;
    ``grid`` points per period (default ``16 L``); ``margin`` [rad] kept from the
    position limits. Raises :class:`~rnea_ros.planning.errors.InfeasibleError` when no
    series can meet the limits (infinite position/velocity limits, a torque limit below
    the gravity load at the centre of the range) and
    :class:`~rnea_ros.identification.errors.IdentificationError` when SLSQP ends outside them.
    """
    from scipy.optimize import minimize

    model.require_one_dof(parameters.IDENTIFICATION)
    started = time.monotonic()
    n = model.nv
    limits = limits if limits is not None else Limits.from_model(model)
    limits = limits.with_(model, torque=limits.torque * torque_fraction)
    acc = np.asarray(acceleration, dtype=float)
    acc = np.full(n, float(acc)) if acc.ndim == 0 else acc
    if harmonics < 2 or frequency <= 0 or periods < 1 or acc.shape != (n,) or \
            not np.all(acc > 0) or margin < 0:
        raise IdentificationError(
            f"need harmonics >= 2, frequency > 0, periods >= 1, margin >= 0 and one or {n} "
            f"accelerations > 0 (joints {list(model.joint_names)})")
    names = model.joint_names
    for j in range(n):
        if not (np.isfinite(limits.lower[j]) and np.isfinite(limits.upper[j])):
            raise InfeasibleError(f"joint '{names[j]}' has no finite position limits: an "
                                  "excitation needs a range (give --limits lower=... upper=...)")
        if limits.upper[j] - limits.lower[j] <= 2 * margin:
            raise InfeasibleError(f"joint '{names[j]}': its range [{limits.lower[j]:g}, "
                                  f"{limits.upper[j]:g}] is not wider than twice the margin "
                                  f"{margin:g}")
    omega = 2.0 * np.pi * frequency
    base = base_parameters(model)
    series = initial_guess(model, limits, acc, omega, harmonics, margin, seed)
    rest = rc.rnea_batch(model, series.start[None, :], np.zeros((1, n)), np.zeros((1, n)))[0]
    over = np.flatnonzero(np.abs(rest) > limits.torque)
    if over.size:
        j = int(over[0])
        raise InfeasibleError(f"torque limit infeasible: holding the centre of the range needs "
                              f"|tau| = {abs(rest[j]):.4g} on joint '{names[j]}', above its "
                              f"limit {limits.torque[j]:.4g}")
    count = grid if grid is not None else 16 * harmonics
    times = np.linspace(0.0, series.period, count, endpoint=False)
    dense = 10 * count
    cond_initial = condition_number(model, base, *series(np.linspace(0.0, series.period, dense,
                                                                     endpoint=False)), band)
    iterations, message = 0, ""
    with threadpool_limits(1):  # small dense problems: threads only contend
        for _ in range(4):
            problem = _Problem(model, base, times, omega, harmonics, limits, acc, margin, band)
            result = minimize(problem.objective, series.x.ravel(), method="SLSQP", jac=True,
                              constraints=[{"type": "ineq", "fun": problem.constraints,
                                            "jac": problem.jacobian}],
                              options={"maxiter": max_iter, "ftol": 1e-5})
            iterations += int(result.nit)
            message = str(result.message)
            candidate = Fourier(result.x.reshape(n, -1), omega)
            check, bad = dense_check(model, candidate, limits, acc, margin, dense)
            if check.ok or np.all(problem.constraints(result.x) >= -1e-6):
                series = candidate
            if check.ok:
                break
            times = np.union1d(times, bad)
    check, _ = dense_check(model, series, limits, acc, margin, dense)
    for _ in range(10):  # a peak still between grid points: shrink the motion about q0
        if check.ok:
            break
        x = series.x.copy()
        x[:, 1:] *= 0.995 / max(check.velocity, check.acceleration, check.torque, 1.0)
        series = Fourier(x, omega)
        check, _ = dense_check(model, series, limits, acc, margin, dense)
    if not check.ok:
        raise IdentificationError(
            f"SLSQP ({message}) ended outside the limits on the dense check: position "
            f"{check.position:.3g}, velocity {check.velocity:.3g}, acceleration "
            f"{check.acceleration:.3g}, torque {check.torque:.3g} (ratios; try more "
            "--max-iter, a lower --frequency or fewer --harmonics)")
    t = np.linspace(0.0, series.period, dense, endpoint=False)
    return Excitation(model, series, limits, acc, margin, base,
                      condition_number(model, base, *series(t), band), cond_initial, check,
                      message, iterations, time.monotonic() - started, periods)


def trajectory_message(ex: Excitation, dt: float, program: str = "rnea-identify excite"
                       ) -> dict[str, Any]:
    """The ``trajectory_msgs/JointTrajectory`` (a dict, the fields and layout of
    :func:`rnea_ros.planning.output.trajectory_message`, read back by
    :func:`rnea_ros.planning.output.read_trajectory`) every ``dt`` over ``ex.periods``
    periods, with an ``excitation`` section (coefficients of (S), limits, checks)."""
    t, q, qd, qdd = ex.sample(dt)
    tau = rc.rnea_batch(ex.model, q, qd, qdd)
    q0, a, b = ex.series.coefficients()
    lim = ex.limits
    return points_message(ex.model.joint_names, t, q, qd, qdd, tau, "excitation", {
        "program": program, "model": "q_j(t) = q0_j + sum_l a_jl/(w l) sin(w l t) - "
        "b_jl/(w l) cos(w l t) (Swevers et al. 1997)",
        "omega": ex.series.omega, "period": ex.series.period, "periods": ex.periods,
        "step": dt, "q0": q0.tolist(), "a": a.tolist(), "b": b.tolist(),
        "start": ex.series.start.tolist(),
        "base_parameters": ex.base.rank,
        "condition_number": ex.cond, "initial_condition_number": ex.cond_initial,
        "solver": f"SLSQP: {ex.message} ({ex.iterations} iterations)",
        "limits": {"lower": lim.lower.tolist(), "upper": lim.upper.tolist(),
                   "velocity": lim.velocity.tolist(), "acceleration": ex.acceleration.tolist(),
                   "torque": lim.torque.tolist(), "margin": ex.margin},
        "dense_check": {"position": ex.check.position, "velocity": ex.check.velocity,
                        "acceleration": ex.check.acceleration, "torque": ex.check.torque}})


def write_excitation(ex: Excitation, path: Path, dt: float,
                     made_by: dict[str, Any] | None = None) -> None:
    write_message(trajectory_message(ex, dt), path, "rnea-identify excite", made_by)
