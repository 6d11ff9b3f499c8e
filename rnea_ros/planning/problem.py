"""The minimum-time NLP of Barman (2020) eq. 4.16-4.19, extended, on a B-spline.

Design variables ``x = [vec(P) (m n), sigma (K - 2), T]``: control points
(row-major: control point, joint), the normalised times at which the path
passes the intermediate waypoints, and the duration (the knots scale with it,
eq. 4.14). Objective ``T`` (eq. 4.16), or Barman's multi-objective eq. 4.18
``int_0^T (1 - u) + u sum_j tau_j^2 dt = (1 - u) T + u T int_0^1 sum tau^2 ds``
(trapezoidal rule on the constraint grid).

Constraints, every one scaled by its limit (SLSQP form ``c_eq = 0``, ``c_in >= 0``):

* boundary: ``q(0), q(T)``; ``T qd = B' P``; optionally ``T^2 qdd = B'' P``; via
  waypoints ``B(sigma_i) P = w_i`` with ``0 < sigma_1 < ... < 1``;
* positions and velocities on the spline's (derivative) control points: the
  convex-hull property makes them hold at every instant, not only on a grid;
* ``|tau| <= tau_max``, ``|tau_dot| <= tau_dot_max``, ``|F_j|^2 <= F_max^2`` on a
  grid in ``s`` with analytic gradients (chain rule eq. 4.15 on the RNEA
  sensitivities, :mod:`rnea_ros.planning.sensitivities`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.planning import sensitivities as sens
from rnea_ros.planning.bspline import Basis
from rnea_ros.planning.chain_rule import chain_rule
from rnea_ros.planning.limits import Limits

Array = NDArray[np.float64]

MARGIN = 1e-6  # grid constraints at (1 - MARGIN) of the limit: the solver's tolerance


@dataclass
class GridValues:
    """Values and Jacobians (w.r.t. x) of the grid quantities at one x."""

    tau: Array                     # (N, n)
    dtau: Array                    # (N, n, nx)
    tau_dot: Array | None = None   # (N, n)
    dtau_dot: Array | None = None  # (N, n, nx)
    force2: Array | None = None    # (N, n) squared internal force norms
    dforce2: Array | None = None   # (N, n, nx)


@dataclass
class Problem:
    """The NLP's functions for :func:`scipy.optimize.minimize` (SLSQP), cached per x."""

    model: RobotModel
    basis: Basis
    waypoints: Array                 # (K, n)
    limits: Limits
    grid: Array                      # (N,) normalised times s
    start_velocity: Array
    end_velocity: Array
    zero_acceleration: bool = False
    weight: float = 0.0              # Barman's u (eq. 4.18); 0: minimum time
    margin: float = MARGIN           # grid constraints at (1 - margin) of their limit
    _cache: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.set_grid(self.grid)
        self.D1 = self.basis.derivative_control_matrix(1)

    # --- layout -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.model.nv

    @property
    def n_via(self) -> int:
        return int(self.waypoints.shape[0]) - 2

    @property
    def nx(self) -> int:
        return self.basis.m * self.n + self.n_via + 1

    def unpack(self, x: Array) -> tuple[Array, Array, float]:
        mn = self.basis.m * self.n
        return x[:mn].reshape(self.basis.m, self.n), x[mn:mn + self.n_via], float(x[-1])

    def set_grid(self, grid: Array) -> None:
        self.grid = np.unique(np.clip(grid, 0.0, 1.0))
        self.B = [self.basis.matrix(self.grid, r) for r in range(4)]
        w = np.zeros_like(self.grid)  # trapezoid weights on [0, 1]
        h = np.diff(self.grid)
        w[:-1] += h / 2
        w[1:] += h / 2
        self.weights = w
        self._cache.clear()

    # --- grid quantities --------------------------------------------------------------------
    def states(self, x: Array) -> list[Array]:
        P, _, T = self.unpack(x)
        return [B @ P / T**r for r, B in enumerate(self.B)]

    def values(self, x: Array) -> GridValues:
        key = x.tobytes()
        if self._cache.get("key") == key:
            return self._cache["values"]  # type: ignore[return-value]
        _P, _, T = self.unpack(x)
        S = self.states(x)
        mn = self.basis.m * self.n

        def widen(dP: Array, dT: Array) -> Array:
            out = np.zeros((*dP.shape[:2], self.nx))
            out[:, :, :mn], out[:, :, -1] = dP, dT
            return out

        tau, dq, dv, M = sens.torque(self.model, *S[:3])
        out = GridValues(tau=tau, dtau=widen(*chain_rule((dq, dv, M), self.B[:3], S[:3], T)))
        if np.isfinite(self.limits.torque_rate).any():
            td, *jac = sens.torque_rate(self.model, *S)
            out.tau_dot, out.dtau_dot = td, widen(*chain_rule(jac, self.B, S, T))
        if np.isfinite(self.limits.force).any():
            W, dWq, dWv, dWa = sens.wrenches(self.model, *S[:3])
            F = W[:, :, :3]
            jac = [2 * np.einsum("kic,kicj->kij", F, d[:, :, :3]) for d in (dWq, dWv, dWa)]
            out.force2 = np.einsum("kic,kic->ki", F, F)
            out.dforce2 = widen(*chain_rule(jac, self.B[:3], S[:3], T))
        self._cache.update(key=key, values=out)
        return out

    # --- objective --------------------------------------------------------------------------
    def objective(self, x: Array) -> tuple[float, Array]:
        T = float(x[-1])
        grad = np.zeros(self.nx)
        if self.weight == 0.0:
            grad[-1] = 1.0
            return T, grad
        u = self.weight
        v = self.values(x)
        energy = float(self.weights @ np.sum(v.tau**2, axis=1))  # int_0^1 sum tau^2 ds
        denergy = 2 * np.einsum("k,ki,kix->x", self.weights, v.tau, v.dtau)
        grad += u * T * denergy
        grad[-1] += (1 - u) + u * energy
        return (1 - u) * T + u * T * energy, grad

    # --- equality constraints ---------------------------------------------------------------
    def equalities(self, x: Array) -> tuple[Array, Array]:
        P, sigma, T = self.unpack(x)
        m, n = self.basis.m, self.n
        rows: list[Array] = []
        jacs: list[Array] = []
        ends = self.basis.matrix([0.0, 1.0], 0)
        ends1 = self.basis.matrix([0.0, 1.0], 1)
        ends2 = self.basis.matrix([0.0, 1.0], 2)
        for e, (q_end, v_end) in enumerate(((self.waypoints[0], self.start_velocity),
                                            (self.waypoints[-1], self.end_velocity))):
            rows.append(ends[e] @ P - q_end)
            jacs.append(self._row_jac(ends[e]))
            rows.append(ends1[e] @ P - T * v_end)
            j = self._row_jac(ends1[e])
            j[:, -1] = -v_end
            jacs.append(j)
            if self.zero_acceleration:
                rows.append(ends2[e] @ P)
                jacs.append(self._row_jac(ends2[e]))
        for i in range(self.n_via):
            b = self.basis.matrix([sigma[i]], 0)[0]
            b1 = self.basis.matrix([sigma[i]], 1)[0]
            rows.append(b @ P - self.waypoints[i + 1])
            j = self._row_jac(b)
            j[:, m * n + i] = b1 @ P
            jacs.append(j)
        return np.concatenate(rows), np.vstack(jacs)

    def _row_jac(self, b: Array) -> Array:
        """(n, nx) Jacobian of ``b @ P`` (n,) for a basis row b (m,)."""
        j = np.zeros((self.n, self.nx))
        j[:, :self.basis.m * self.n] = np.kron(b, np.eye(self.n))
        return j

    # --- inequality constraints -------------------------------------------------------------
    def inequalities(self, x: Array) -> tuple[Array, Array]:
        P, sigma, T = self.unpack(x)
        m, n, nx = self.basis.m, self.n, self.nx
        lim = self.limits
        rows: list[Array] = []
        jacs: list[Array] = []
        eye_p = np.eye(m * n).reshape(m, n, m * n)
        for j in range(n):  # positions on control points (convex hull)
            for bound, sign in ((lim.lower[j], 1.0), (lim.upper[j], -1.0)):
                if np.isfinite(bound):
                    rows.append(sign * (P[:, j] - bound))
                    jac = np.zeros((m, nx))
                    jac[:, :m * n] = sign * eye_p[:, j]
                    jacs.append(jac)
        C = self.D1 @ P  # velocity control points, in per-unit-s
        for j in map(int, np.flatnonzero(np.isfinite(lim.velocity))):
            for sign in (1.0, -1.0):
                rows.append((1.0 - MARGIN) * T - sign * C[:, j] / lim.velocity[j])
                jac = np.zeros((C.shape[0], nx))
                jac[:, :m * n] = -sign * np.einsum("ra,ab->rb", self.D1, eye_p[:, j]) \
                    / lim.velocity[j]
                jac[:, -1] = 1.0 - MARGIN
                jacs.append(jac)
        v = self.values(x)
        self._grid_rows(rows, jacs, v.tau, v.dtau, lim.torque, square=False)
        if v.tau_dot is not None and v.dtau_dot is not None:
            self._grid_rows(rows, jacs, v.tau_dot, v.dtau_dot, lim.torque_rate, square=False)
        if v.force2 is not None and v.dforce2 is not None:
            self._grid_rows(rows, jacs, v.force2, v.dforce2, lim.force, square=True)
        if self.n_via:  # 0 < sigma_1 < ... < sigma_K-2 < 1, by one grid step at least
            gap = 0.5 / self.basis.intervals
            s = np.concatenate([[0.0], sigma, [1.0]])
            rows.append(np.diff(s) - gap)
            jac = np.zeros((self.n_via + 1, nx))
            for i in range(self.n_via):
                jac[i, m * n + i] += 1.0
                jac[i + 1, m * n + i] -= 1.0
            jacs.append(jac)
        return np.concatenate(rows), np.vstack(jacs)

    def _grid_rows(self, rows: list[Array], jacs: list[Array], y: Array, dy: Array,
                   limit: Array, square: bool) -> None:
        for j in np.flatnonzero(np.isfinite(limit)):
            scale = limit[j] ** 2 if square else limit[j]
            bound = 1.0 - self.margin
            rows.append(bound - y[:, j] / scale)
            jacs.append(-dy[:, j] / scale)
            if not square:
                rows.append(bound + y[:, j] / scale)
                jacs.append(dy[:, j] / scale)
