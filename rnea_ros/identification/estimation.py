"""Weighted least squares of the base parameters, in bounded memory.

The observation matrix is the stacked base regressor ``W`` (one row per
sample and joint) and ``y`` the measured torques. Rows arrive in chunks; per
joint ``i`` the triangular factor of ``[W_i y_i]`` is updated by a QR of the
previous factor stacked on the new rows (a tall-skinny QR), so memory is
``O(n r^2)`` whatever the length of the recording, and nothing is squared
(no normal equations: the condition number is not squared).

With ``[W_i y_i] = Q_i [[R_i, z_i], [0, rho_i]]``, the residual of joint
``i`` at any ``x`` is ``||W_i x - y_i||^2 = ||R_i x - z_i||^2 + rho_i^2``.

Estimation (Gautier & Poignet 2001; Khalil & Dombre 2002, ch. 14):

1. ordinary least squares on all joints;
2. per joint the residual variance ``sigma_i^2 = ||y_i - W_i x||^2 / (r_i - c_i)``
   (``r_i`` rows, ``c_i`` parameters acting on joint ``i``), at least
   ``1e-7`` of the joint's RMS torque (a floor for noiseless data);
3. least squares on the rows of joint ``i`` divided by ``sigma_i``; the
   covariance of the estimate is ``(W_w^T W_w)^-1 = R_w^-1 R_w^-T`` and the
   relative standard deviation of parameter ``k`` is ``100 sigma_k / |x_k|``.

A base parameter is unidentifiable **from these data** when the weighted
observation matrix, columns scaled to unit norm, has a singular value below
``rank_tol`` times the largest: the parameters with a large share in the
corresponding singular vectors are named, and are not estimated (the
minimum-norm solution leaves them at zero; the physically consistent step
then takes them from the prior).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

Array = NDArray[np.float64]


def _triangle(stacked: Array) -> Array:
    r: Array = scipy.linalg.qr(stacked, mode="r", check_finite=False, overwrite_a=True)[0]
    return r[:min(r.shape)]


@dataclass
class Accumulator:
    """Tall-skinny QR of ``[W_i y_i]`` per joint (``r`` base parameters, ``n`` joints)."""

    n: int
    r: int
    factors: list[Array] = field(default_factory=list)
    rows: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    active: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def __post_init__(self) -> None:
        self.factors = [np.zeros((0, self.r + 1)) for _ in range(self.n)]
        self.rows = np.zeros(self.n, dtype=np.int64)
        self.active = np.zeros((self.n, self.r), dtype=bool)

    def add(self, W: Array, y: Array, valid: NDArray[np.bool_] | None = None) -> None:
        """Add samples: ``W`` (N, n, r) base regressor, ``y`` (N, n) torques;
        ``valid`` (N, n) keeps only some (sample, joint) rows."""
        for i in range(self.n):
            keep = slice(None) if valid is None else valid[:, i]
            Wi, yi = W[keep, i, :], y[keep, i]
            if Wi.shape[0] == 0:
                continue
            self.active[i] |= np.any(Wi != 0.0, axis=0)
            self.rows[i] += Wi.shape[0]
            block = np.empty((self.factors[i].shape[0] + Wi.shape[0], self.r + 1))
            block[:self.factors[i].shape[0]] = self.factors[i]
            block[self.factors[i].shape[0]:, :self.r] = Wi
            block[self.factors[i].shape[0]:, self.r] = yi
            self.factors[i] = _triangle(block)

    def residual_norms(self, x: Array) -> Array:
        """``||W_i x - y_i||^2`` per joint (n,)."""
        xe = np.append(x, -1.0)
        return np.array([float(np.sum((F @ xe) ** 2)) for F in self.factors])


@dataclass
class Estimate:
    """Weighted least-squares base parameters.

    ``x`` (r,), ``std`` (r,) standard deviations, ``sigma`` (n,) per-joint
    residual deviations (the weights are ``1 / sigma``), ``R`` (r, r) and
    ``z`` (r,) the weighted triangular system (``||R x - z||^2`` is the
    weighted residual up to a constant), ``cond`` the condition number of the
    weighted observation matrix and ``cond_scaled`` with unit-norm columns,
    ``unidentifiable`` the base-parameter indices not determined by the data.
    """

    x: Array
    std: Array
    sigma: Array
    R: Array
    z: Array
    cond: float
    cond_scaled: float
    unidentifiable: list[int]
    rows: NDArray[np.int64]

    @property
    def relative_std(self) -> Array:
        """``100 std / |x|`` [%] (inf for a zero estimate)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.x != 0.0, 100.0 * self.std / np.abs(self.x), np.inf)


def _solve(R: Array, z: Array, rank_tol: float) -> tuple[Array, Array, float, float, list[int]]:
    """Least squares ``R x = z`` (R square) with rank detection on unit-norm columns."""
    scale = np.linalg.norm(R, axis=0)
    scale[scale == 0.0] = 1.0
    U, s, Vt = np.linalg.svd(R / scale, full_matrices=False)
    keep = s > rank_tol * s[0] if s.size and s[0] > 0 else np.zeros(s.size, dtype=bool)
    inv_s = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    x = (Vt.T @ (inv_s * (U.T @ z))) / scale
    cov_diag = ((Vt.T * inv_s) ** 2).sum(axis=1) / scale**2
    lost: set[int] = set()
    for v in Vt[~keep]:
        lost.update(np.flatnonzero(np.abs(v) > 0.1).tolist())
    cond_scaled = float(s[0] / s[-1]) if s.size and s[-1] > 0 else np.inf
    sv = np.linalg.svd(R, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv.size and sv[-1] > 0 else np.inf
    std = np.sqrt(cov_diag)
    std[sorted(lost)] = np.inf
    return x, std, cond, cond_scaled, sorted(lost)


def estimate(acc: Accumulator, rank_tol: float = 1e-7) -> Estimate:
    """OLS, per-joint residual variances, then WLS (see the module docstring)."""
    r = acc.r
    used = [i for i in range(acc.n) if acc.rows[i] > 0]
    F = _triangle(np.vstack([acc.factors[i] for i in used]))
    F = np.vstack([F, np.zeros((r + 1 - F.shape[0], r + 1))]) if F.shape[0] < r + 1 else F
    x_ols = _solve(F[:r, :r], F[:r, r], rank_tol)[0]
    residual = acc.residual_norms(x_ols)
    dof = acc.rows - acc.active.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.sqrt(np.where(dof > 0, residual / np.maximum(dof, 1), np.nan))
    # Noise floor: 1e-7 of the joint's RMS torque (noiseless data would give weights of 1e14).
    rms = (np.array([np.linalg.norm(F[:, r]) for F in acc.factors])
           / np.sqrt(np.maximum(acc.rows, 1)))
    sigma = np.where(np.isfinite(sigma), np.maximum(sigma, 1e-7 * rms), np.nan)
    weighted = [acc.factors[i] / sigma[i] for i in used if np.isfinite(sigma[i])]
    Fw = _triangle(np.vstack(weighted))
    if Fw.shape[0] < r + 1:
        Fw = np.vstack([Fw, np.zeros((r + 1 - Fw.shape[0], r + 1))])
    R, z = Fw[:r, :r], Fw[:r, r]
    x, std, cond, cond_scaled, lost = _solve(R, z, rank_tol)
    return Estimate(x, std, sigma, R, z, cond, cond_scaled, lost, acc.rows.copy())
