"""Hessian of the Lagrangian of :class:`~rnea_ros.planning.nlp.SparseNlp` for IPOPT.

IPOPT's L-BFGS approximation needs 50-190 iterations per solve on arm7 (the curvature of
the torque limits, quadratic in the joint velocities, is what moves the optimum); with
this Hessian, 12-55. ``sum_i lambda_i d^2 g_i / dx^2`` (x = [P, sigma, T]):

* grid rows (torque, torque rate, squared internal force at grid point k): a function of
  the state ``S_r = B^(r)(s_k) P / T^r`` (r = 0..3) only. Its state Hessian
  ``H_S = d^2 (sum_j w_kj y_kj) / dS^2`` (``w``: multiplier / limit) is the forward
  difference of the analytic state gradient ``sum_j w_kj J_r[k, j, :]`` (the same RNEA
  sensitivities as the Jacobian, :mod:`rnea_ros.planning.sensitivities`), one perturbed
  state coordinate at a time for every grid point at once; only the coordinates the output
  is nonlinear in are perturbed (torque and torque rate are linear in qdd and qddd, so
  those columns follow by symmetry), then the chain rule to the grid point's ``degree + 1``
  supporting control points and T (eq. 4.15, second order: ``d S_r / dT = -r S_r / T``,
  ``d^2 S_r / dT^2 = r (r + 1) S_r / T^2``, ``d^2 S_r / dP dT = -r B^(r) / T^(r+1)``);
* via rows ``B(sigma_i) P = w_i``: ``B''(sigma_i) P`` and ``B'(sigma_i)``;
* every other row is linear; the objective T too (Barman's weighted objective keeps the
  L-BFGS approximation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.planning import sensitivities as sens

Array = NDArray[np.float64]
Int = NDArray[np.int64]

# state orders each grid quantity is nonlinear in (tau and tau_dot are linear in qdd, qddd)
NONLINEAR = {"tau": (0, 1), "tau_dot": (0, 1), "force2": (0, 1, 2)}
ORDERS = {"tau": 3, "tau_dot": 4, "force2": 3}
FD_STEP = 1e-7  # relative forward-difference step on the state coordinates


def state_jacobians(model: Any, kind: str, S: list[Array]) -> list[Array]:
    """``[J_r]`` (N, n, n): d y / d S_r of grid quantity ``kind`` at states S."""
    if kind == "tau":
        return list(rc.rnea_derivatives_batch(model, *S[:3]))
    if kind == "tau_dot":
        return list(sens.torque_rate(model, *S)[1:])
    W, dWq, dWv, dWa = sens.wrenches(model, *S[:3])
    F = W[:, :, :3]
    return [2 * np.einsum("kic,kicj->kij", F, d[:, :, :3]) for d in (dWq, dWv, dWa)]


class LagrangianHessian:
    """The upper triangle of the Hessian of the Lagrangian: fixed pattern, values at (x, lam)."""

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        p = nlp.p
        nx, n, m = p.nx, p.n, p.basis.m
        self.N, d1 = nlp.support.shape
        local = (nlp.support[:, :, None] * n + np.arange(n)).reshape(self.N, d1 * n)
        self.gidx = np.hstack([local, np.full((self.N, 1), nx - 1)])  # (N, L)
        mask = np.zeros((nx, nx), dtype=bool)
        for row in self.gidx:
            mask[np.ix_(row, row)] = True
        mn = m * n
        for i in range(p.n_via):
            mask[mn + i, :mn] = mask[:mn, mn + i] = True
            mask[mn + i, mn + i] = True
        mask = np.triu(mask)
        cols, rows = np.nonzero(mask.T)  # column-major: by column, rows ascending
        self.rows, self.cols = rows, cols
        self.nnz = rows.size
        pos = np.full((nx, nx), -1, dtype=np.int64)
        pos[rows, cols] = np.arange(self.nnz)
        a, b = self.gidx[:, :, None], self.gidx[:, None, :]
        self._upper = a <= b  # (N, L, L)
        shape = self._upper.shape
        self._grid_pos = pos[np.broadcast_to(a, shape), np.broadcast_to(b, shape)][self._upper]
        self._via_pos = [(pos[np.arange(mn), mn + i], int(pos[mn + i, mn + i]))
                         for i in range(p.n_via)]
        ng = nlp.pattern.ng
        self.grid_start = ng - self.N * len(nlp.blocks) - (p.n_via + 1 if p.n_via else 0)
        self.via_start = 2 * n * (3 if p.zero_acceleration else 2)

    def values(self, x: Array, lam: Array) -> Array:
        """(nnz,) ``sum_i lam_i d^2 g_i / dx^2`` in the order of ``(rows, cols)``."""
        out = np.zeros(self.nnz)
        H = self._grid(x, lam)
        if H is not None:
            out += np.bincount(self._grid_pos, weights=H[self._upper], minlength=self.nnz)
        self._via(x, lam, out)
        return out

    def _via(self, x: Array, lam: Array, out: Array) -> None:
        p = self.nlp.p
        P, sigma, _T = p.unpack(x)
        n = p.n
        for i, (cross, diag) in enumerate(self._via_pos):
            li = lam[self.via_start + i * n:self.via_start + (i + 1) * n]  # (n,)
            b1 = p.basis.matrix([sigma[i]], 1)[0]
            b2 = p.basis.matrix([sigma[i]], 2)[0]
            out[cross] += np.outer(b1, li).ravel()  # d2 / dsigma dP[a, j] = lam_j B'_a
            out[diag] += float(li @ (b2 @ P))

    def _grid(self, x: Array, lam: Array) -> Array | None:
        """(N, L, L) local Hessians of the grid rows' part of the Lagrangian."""
        nlp = self.nlp
        if not nlp.blocks:
            return None
        p = nlp.p
        n, N = p.n, self.N
        _P, _, T = p.unpack(x)
        S = p.states(x)
        limit = {"tau": p.limits.torque, "tau_dot": p.limits.torque_rate,
                 "force2": p.limits.force**2}
        weights: dict[str, Array] = {}
        for b, (kind, j, _lo, _hi) in enumerate(nlp.blocks):
            w = weights.setdefault(kind, np.zeros((N, n)))
            rows = slice(self.grid_start + b * N, self.grid_start + (b + 1) * N)
            w[:, j] = lam[rows] / limit[kind][j]
        d1 = nlp.support.shape[1]
        L = d1 * n + 1
        H = np.zeros((N, L, L))
        Bl = nlp._local_bases  # (N, d1) B^(r) on the supporting control points
        eye = np.eye(n)
        for kind, w in weights.items():
            R = ORDERS[kind]
            Bt = np.stack([Bl[r] / T**r for r in range(R)], axis=1)  # (N, R, d1)
            # Z (N, R n, L): d S / d z, z = (local P, T); dS_r/dT = -r S_r / T
            Z = np.empty((N, R * n, L))
            Z[:, :, :-1] = (Bt[:, :, None, :, None] * eye[None, None, :, None, :]).reshape(
                N, R * n, L - 1)
            r_ = np.arange(R)
            Z[:, :, -1] = (-r_[None, :, None] * np.stack(S[:R], 1) / T).reshape(N, R * n)
            G, HS = self._state_hessian(kind, S[:R], w, x)  # (N, R, n), (N, R n, R n)
            H += np.matmul(Z.transpose(0, 2, 1), np.matmul(HS, Z))
            # second derivatives of S itself: d2 S_r / dP dT = -r Bt_r / T,
            # d2 S_r / dT2 = r (r + 1) S_r / T^2
            HPT = -np.einsum("kra,krj->kaj", Bt * (r_[None, :, None] / T), G).reshape(N, L - 1)
            H[:, :-1, -1] += HPT
            H[:, -1, :-1] += HPT
            H[:, -1, -1] += np.einsum("krj,krj->k", G * (r_ * (r_ + 1))[None, :, None],
                                      np.stack(S[:R], 1)) / T**2
        return H

    def _state_hessian(self, kind: str, S: list[Array], w: Array,
                       x: Array) -> tuple[Array, Array]:
        """``(G (N, R, n), H_S (N, R n, R n))``: gradient and Hessian of
        ``sum_j w_kj y_kj`` in the state S at x, per grid point (forward differences of G)."""
        model = self.nlp.p.model
        R, (N, n) = len(S), S[0].shape

        def jacobians(states: list[Array], J: list[Array] | None = None
                      ) -> tuple[Array, list[Array]]:
            J = state_jacobians(model, kind, states) if J is None else J
            return np.stack([np.matmul(w[:, None, :], Jr)[:, 0] for Jr in J], axis=1), J

        cached = self.nlp.torque_jacobians
        G, J = jacobians(S, cached[1] if kind == "tau" and cached is not None
                         and cached[0] == x.tobytes() else None)
        HS = np.zeros((N, R, n, R, n))
        nonlinear = NONLINEAR[kind]
        # tau: only q is perturbed; the qd columns follow from the q passes (below)
        perturbed = (0,) if kind == "tau" else nonlinear
        dM = np.empty((N, n, n, n)) if kind == "tau" else None  # [k, c, a, b] d M_ab / dq_c
        for r in perturbed:
            for i in range(n):
                h = FD_STEP * (1.0 + np.abs(S[r][:, i]))
                shifted = list(S)
                shifted[r] = S[r].copy()
                shifted[r][:, i] += h
                Gi, Ji = jacobians(shifted)
                HS[:, :, :, r, i] = (Gi - G) / h[:, None, None]
                if dM is not None:
                    dM[:, i] = (Ji[2] - J[2]) / h[:, None, None]
        if dM is not None:
            self._tau_velocity_columns(HS, dM, w)
        H = HS.reshape(N, R * n, R * n)
        c = len(nonlinear) * n  # the nonlinear orders come first (0, 1[, 2])
        H[:, :c, :c] = 0.5 * (H[:, :c, :c] + H[:, :c, :c].transpose(0, 2, 1))
        H[:, :c, c:] = H[:, c:, :c].transpose(0, 2, 1)  # linear orders: by symmetry
        H[:, c:, c:] = 0.0
        return G, H

    @staticmethod
    def _tau_velocity_columns(HS: Array, dM: Array, w: Array) -> None:
        """The qd columns of the torque rows' state Hessian ``HS`` (N, 3, n, 3, n) from its q
        columns and ``dM`` (N, n, n, n) ``d M_ab / d q_c`` at [k, c, a, b], without
        perturbing qd: the q-qd block is the transpose of the qd-q block (mixed partials);
        the qd-qd block, constant in qd since tau is quadratic in it, is twice the
        Christoffel symbols of the first kind contracted with w:
        ``d^2 (w^T tau) / dqd_a dqd_b = sum_i w_i (dM_ia/dq_b + dM_ib/dq_a - dM_ab/dq_i)``
        (the Lagrange form ``tau_i = M_ia qdd_a + c_iab qd_a qd_b + g_i``, c_iab =
        (dM_ia/dq_b + dM_ib/dq_a - dM_ab/dq_i) / 2; the drive's viscous and Coulomb
        friction are linear or piecewise constant in qd: no curvature); the qdd-qd block
        is 0 (M depends on q only). Halves the RNEA-derivative passes (n + 1, not 2n + 1)."""
        wdM = HS[:, 2, :, 0, :]  # [k, a, b] = sum_i w_i dM_ia / dq_b
        HS[:, 0, :, 1, :] = HS[:, 1, :, 0, :].transpose(0, 2, 1)
        HS[:, 1, :, 1, :] = (wdM + wdM.transpose(0, 2, 1)
                             - np.einsum("ki,kiab->kab", w, dM))
