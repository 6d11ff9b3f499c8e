"""The NLP of :mod:`rnea_ros.planning.problem` in sparse, two-sided form for IPOPT.

One constraint vector ``lb <= g(x) <= ub`` and its Jacobian as fixed-pattern
triplets ``(rows, cols, values)``: the pattern is computed once per grid
(:meth:`SparseNlp.pattern`), the values at every x (:meth:`SparseNlp.evaluate`).
Position limits become bounds on the control points (convex hull, as in the
SLSQP form). Rows, each scaled by its limit:

* boundary and via equalities (Barman 2020 eq. 4.13 at s = 0, 1, sigma_i);
* ``|D1 P / v_max| <= (1 - MARGIN) T`` on the velocity control points;
* ``|tau / tau_max| <= 1 - margin``, ``|tau_dot / tau_dot_max| <= 1 - margin``,
  ``|F|^2 / F_max^2 <= 1 - margin`` on the grid, with the chain rule eq. 4.15
  evaluated on each grid point's ``degree + 1`` supporting control points only
  (a B-spline's local support: the Jacobian has ``(degree + 1) n + 1`` entries
  per row, whatever the number of control points);
* ``sigma_{i+1} - sigma_i >= gap`` (via times in order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.planning import sensitivities as sens
from rnea_ros.planning.errors import PlanningInternalError
from rnea_ros.planning.problem import MARGIN, Problem

Array = NDArray[np.float64]
Int = NDArray[np.int64]


@dataclass
class Pattern:
    """Fixed sparsity of the constraint Jacobian: ``(rows, cols)`` of each value."""

    rows: Int
    cols: Int
    lb: Array
    ub: Array

    @property
    def ng(self) -> int:
        return int(self.lb.size)


class SparseNlp:
    """``g(x)``, ``dg/dx`` (triplets) and the bounds of :class:`Problem` for IPOPT."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self._cache: dict[str, object] = {}
        # (x.tobytes(), [dtau/dq, dtau/dqd, M]) of the last evaluation: the Hessian at the
        # same x (IPOPT's order: g and its Jacobian, then the Hessian) reuses them
        self.torque_jacobians: tuple[bytes, list[Array]] | None = None
        self.pattern = self._pattern()
        # (2, m) B^(r) at s = 0 and 1, r = 0, 1, 2: fixed per basis (scipy's BSpline is slow
        # to build: computing them at every evaluation took a quarter of its time)
        self._ends = [problem.basis.matrix([0.0, 1.0], r) for r in range(3)]
        # (N, degree + 1) B^(r) on each grid point's supporting control points, r = 0..3
        self._local_bases = [np.take_along_axis(B, self.support, axis=1) for B in problem.B]

    # --- support of each grid point ---------------------------------------------------------
    def _support(self) -> Int:
        """(N, degree + 1) indices of the control points acting on each grid point."""
        p = self.p
        d, m = p.basis.degree, p.basis.m
        mask = np.any([np.abs(B) > 0 for B in p.B], axis=0)
        start = np.minimum(np.argmax(mask, axis=1), m - d - 1)
        idx = start[:, None] + np.arange(d + 1)
        outside = mask.copy()
        np.put_along_axis(outside, idx, False, axis=1)
        if outside.any():  # cannot happen for a clamped B-spline; guard the pattern
            raise PlanningInternalError(
                "grid point supported by more than degree + 1 control points")
        out: Int = idx.astype(np.int64)
        return out

    def _grid_blocks(self) -> list[tuple[str, int, float, float]]:
        """(quantity, joint, lb, ub) of the grid constraint blocks, in row order."""
        p, lim = self.p, self.p.limits
        out: list[tuple[str, int, float, float]] = []
        bound = 1.0 - p.margin
        for j in map(int, np.flatnonzero(np.isfinite(lim.torque))):
            out.append(("tau", j, -bound, bound))
        for j in map(int, np.flatnonzero(np.isfinite(lim.torque_rate))):
            out.append(("tau_dot", j, -bound, bound))
        for j in map(int, np.flatnonzero(np.isfinite(lim.force))):
            out.append(("force2", j, -np.inf, bound))
        return out

    def _pattern(self) -> Pattern:
        p = self.p
        m, n, nx = p.basis.m, p.n, p.nx
        mn = m * n
        rows: list[Int] = []
        cols: list[Int] = []
        lb: list[Array] = []
        ub: list[Array] = []
        r = 0

        def add(rr: Int, cc: Int, lo: Array, hi: Array) -> None:
            nonlocal r
            rows.append(rr + r)
            cols.append(cc)
            lb.append(lo)
            ub.append(hi)
            r += lo.size

        joint = np.arange(n)
        full = (np.arange(m)[:, None] * n + joint).T  # (n, m) column of P[a, j]
        # boundary: n rows each for q, T qd (with T), [T^2 qdd]; dense over P's columns of j
        for e in range(2):
            for order in ((0, 1, 2) if p.zero_acceleration else (0, 1)):
                rr = np.repeat(joint, m + (order == 1))
                cc = full if order != 1 else np.hstack([full, np.full((n, 1), nx - 1)])
                target = p.waypoints[0 if e == 0 else -1] if order == 0 else np.zeros(n)
                add(rr, cc.ravel(), target, target)
        for i in range(p.n_via):  # via: b(sigma_i) P = w_i, every control point and sigma_i
            cc = np.hstack([full, np.full((n, 1), mn + i)])
            add(np.repeat(joint, m + 1), cc.ravel(), p.waypoints[i + 1], p.waypoints[i + 1])
        D1 = p.D1
        for j in map(int, np.flatnonzero(np.isfinite(p.limits.velocity))):
            k = D1.shape[0]
            for lo, hi in ((-np.inf, 0.0), (0.0, np.inf)):  # C/v - (1-M) T <= 0 <= C/v + (1-M)T
                rr = np.repeat(np.arange(k), 3)
                cc = np.stack([np.arange(k) * n + j, (np.arange(k) + 1) * n + j,
                               np.full(k, nx - 1)], axis=1).ravel()
                add(rr, cc, np.full(k, lo), np.full(k, hi))
        self.support = self._support()
        N, d1 = self.support.shape
        local = (self.support[:, :, None] * n + joint).reshape(N, d1 * n)  # (N, (d+1) n)
        local = np.hstack([local, np.full((N, 1), nx - 1)])
        self.blocks = self._grid_blocks()
        for _q, _j, lo, hi in self.blocks:
            add(np.repeat(np.arange(N), local.shape[1]), local.ravel(),
                np.full(N, lo), np.full(N, hi))
        if p.n_via:
            gap = 0.5 / p.basis.intervals
            k = p.n_via + 1
            rr = np.concatenate([np.arange(k - 1), np.arange(1, k)])
            cc = np.concatenate([mn + np.arange(k - 1), mn + np.arange(k - 1)])
            add(rr, cc, np.full(k, gap), np.full(k, np.inf))
        return Pattern(np.concatenate(rows), np.concatenate(cols),
                       np.concatenate(lb), np.concatenate(ub))

    # --- values -----------------------------------------------------------------------------
    def bounds_x(self) -> tuple[Array, Array]:
        """Variable bounds: position limits on the control points, sigma in [0, 1], T >= 1e-3."""
        p = self.p
        m = p.basis.m
        lbx = np.concatenate([np.tile(p.limits.lower, m), np.zeros(p.n_via), [1e-3]])
        ubx = np.concatenate([np.tile(p.limits.upper, m), np.ones(p.n_via), [np.inf]])
        return lbx, ubx

    def evaluate(self, x: Array) -> tuple[Array, Array]:
        """``(g (ng,), values (nnz,))`` at x, in the order of :attr:`pattern`."""
        key = x.tobytes()
        if self._cache.get("key") == key:
            return self._cache["out"]  # type: ignore[return-value]
        p = self.p
        P, sigma, T = p.unpack(x)
        m, n = p.basis.m, p.n
        g: list[Array] = []
        v: list[Array] = []
        ends = self._ends
        for e in range(2):
            vel = p.start_velocity if e == 0 else p.end_velocity
            for order in ((0, 1, 2) if p.zero_acceleration else (0, 1)):
                b = ends[order][e]
                val = b @ P
                jac = np.broadcast_to(b, (n, m))
                if order == 1:
                    g.append(val - T * vel)
                    jac = np.hstack([jac, -vel[:, None]])
                else:
                    g.append(val)
                v.append(jac.ravel())
        for i in range(p.n_via):
            b = p.basis.matrix([sigma[i]], 0)[0]
            b1 = p.basis.matrix([sigma[i]], 1)[0]
            g.append(b @ P)
            v.append(np.hstack([np.broadcast_to(b, (n, m)), (b1 @ P)[:, None]]).ravel())
        C = p.D1 @ P
        k = C.shape[0]
        D1 = p.D1
        dC = np.stack([D1[np.arange(k), np.arange(k)], D1[np.arange(k), np.arange(k) + 1]], 1)
        for j in map(int, np.flatnonzero(np.isfinite(p.limits.velocity))):
            vm = p.limits.velocity[j]
            for sign in (-1.0, 1.0):
                g.append(C[:, j] / vm + sign * (1.0 - MARGIN) * T)
                v.append(np.hstack([dC / vm, np.full((k, 1), sign * (1.0 - MARGIN))]).ravel())
        self._grid(x, g, v)
        if p.n_via:
            s = np.concatenate([[0.0], sigma, [1.0]])
            g.append(np.diff(s))
            v.append(np.concatenate([np.ones(p.n_via), -np.ones(p.n_via)]))
        out = (np.concatenate(g), np.concatenate(v))
        self._cache.update(key=key, out=out)
        return out

    def _grid(self, x: Array, g: list[Array], v: list[Array]) -> None:
        """Grid rows: values and local chain rule (eq. 4.15) on the supporting control points."""
        if not self.blocks:
            return
        p = self.p
        _P, _, T = p.unpack(x)
        S = p.states(x)
        lim = p.limits
        Bl = self._local_bases  # (N, d + 1) each
        wanted = {q for q, *_ in self.blocks}
        found: dict[str, tuple[Array, Array, Array]] = {}
        if "tau" in wanted:
            tau, dq, dv, M = sens.torque(p.model, *S[:3])
            self.torque_jacobians = (x.tobytes(), [dq, dv, M])  # the Hessian's, at this x
            found["tau"] = (tau, *_local((dq, dv, M), Bl[:3], S[:3], T))
        if "tau_dot" in wanted:
            td, *jac = sens.torque_rate(p.model, *S)
            found["tau_dot"] = (td, *_local(jac, Bl, S, T))
        if "force2" in wanted:
            W, dWq, dWv, dWa = sens.wrenches(p.model, *S[:3])
            F = W[:, :, :3]
            jac = [2 * np.einsum("kic,kicj->kij", F, d[:, :, :3]) for d in (dWq, dWv, dWa)]
            found["force2"] = (np.einsum("kic,kic->ki", F, F), *_local(jac, Bl[:3], S[:3], T))
        limit = {"tau": lim.torque, "tau_dot": lim.torque_rate, "force2": lim.force**2}
        for q, j, _lo, _hi in self.blocks:
            y, dP, dT = found[q]
            scale = limit[q][j]
            g.append(y[:, j] / scale)
            v.append(np.hstack([dP[:, j], dT[:, j, None]]).ravel() / scale)


def _local(jacobians: list[Array] | tuple[Array, ...], bases: list[Array], states: list[Array],
           T: float) -> tuple[Array, Array]:
    """eq. 4.15 on the local support: ``(dy/dP (N, p, (d+1) n), dy/dT (N, p))`` from
    ``J_r`` (N, p, n), local ``B^(r)`` (N, d + 1) and ``q^(r)`` (N, n)."""
    N, p, n = jacobians[0].shape
    d1 = bases[0].shape[1]
    dP = np.zeros((N, p, d1, n))
    dT = np.zeros((N, p))
    for r, (J, B, x) in enumerate(zip(jacobians, bases, states, strict=True)):
        dP += np.einsum("kij,ka->kiaj", J, B) / T**r
        if r:
            dT -= r * np.einsum("kij,kj->ki", J, x) / T
    return dP.reshape(N, p, d1 * n), dT
