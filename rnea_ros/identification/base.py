"""Base parameters: the identifiable combinations of the standard parameters.

Numerical method of Gautier (1990, "Numerical calculation of the base inertial
parameters of robots"): the regressor ``W`` of random samples is
reduced by a QR decomposition without pivoting, columns in the standard
order (body 1 first, within a body Pinocchio's ``m, mx, my, mz, Ixx, ...``,
then the drive parameters). Column ``k`` is dependent when ``|R_kk|`` is
negligible against its own norm: it is then a combination of the columns
before it, ``W_2 = W_1 beta``. This greedy order eliminates what Khalil's
symbolic rules eliminate for serial chains (``m_j, mz_j, Iyy_j`` into the
parameters of body ``j - 1``: Khalil & Dombre 2002, ch. 12), so

    ``theta_base = theta_1 + beta theta_2``, ``tau = W_1 theta_base``.

A column that is zero for every sample (e.g. ``m`` of a body on a vertical
first axis) is dependent with ``beta = 0``: it has no effect on the torques.
Works for any tree and prismatic joints (the model has no floating base and
mimic joints are independent joints, so neither case arises here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification import parameters

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a model's identification parameter set.

    ``independent`` (r,) and ``dependent`` are column indices into the
    standard set (``parameters.names``); ``beta`` (r, p - r) with
    ``theta_base = theta[independent] + beta @ theta[dependent]``;
    ``K`` (r, p) the same map as a matrix, ``theta_base = K theta``.
    """

    names: tuple[str, ...]
    independent: IntArray
    dependent: IntArray
    beta: Array
    K: Array

    @property
    def rank(self) -> int:
        return int(self.independent.size)

    def of(self, theta: Array) -> Array:
        """Base parameters (r,) of standard parameters ``theta`` (p,)."""
        return np.asarray(self.K @ theta, dtype=np.float64)

    def columns(self, W: Array) -> Array:
        """The base regressor: the independent columns of ``W`` (..., p)."""
        return np.asarray(W[..., self.independent], dtype=np.float64)

    def relations(self, digits: int = 6, tol: float = 1e-10) -> list[str]:
        """One line per base parameter, e.g. ``'Izz@link1 + Ia@joint1'``,
        ``'Ixx@link2 + 0.09·m@link3 - 0.3·mz@link3'`` (coefficients in SI units)."""
        lines = []
        for k, col in enumerate(self.independent):
            text = self.names[col]
            for j, dep in enumerate(self.dependent):
                b = float(self.beta[k, j])
                if abs(b) <= tol:
                    continue
                sign = "-" if b < 0 else "+"
                coefficient = "" if abs(abs(b) - 1.0) <= tol else f"{abs(b):.{digits}g}·"
                text += f" {sign} {coefficient}{self.names[dep]}"
            lines.append(text)
        return lines

    def without_effect(self) -> list[str]:
        """Standard parameters that never change the torques (zero columns)."""
        hit = np.abs(self.beta).max(axis=0) if self.beta.size else np.zeros(0)
        return [self.names[d] for d, h in zip(self.dependent, hit, strict=True) if h == 0.0]


def random_samples(model: RobotModel, count: int, seed: int) -> tuple[Array, Array, Array]:
    """Random ``(q, qd, qdd)`` (count, n): q uniform within finite limits (else +-pi)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -np.pi)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, np.pi)
    q = lo + (hi - lo) * rng.random((count, model.nv))
    return q, rng.normal(0.0, 1.0, q.shape), rng.normal(0.0, 1.0, q.shape)


def base_parameters(model: RobotModel, *, samples: int | None = None, seed: int = 0,
                    tol: float = 1e-8) -> BaseParameters:
    """Base parameters of ``model`` from ``samples`` random states (default ``max(40, 4 n)``)."""
    model.require_one_dof(parameters.IDENTIFICATION)
    n = model.nv
    count = samples if samples is not None else max(40, 4 * n)
    q, qd, qdd = random_samples(model, count, seed)
    W = parameters.regressor(model, q, qd, qdd).reshape(count * n, -1)
    norms = np.linalg.norm(W, axis=0)
    R = scipy.linalg.qr(W, mode="r", check_finite=False)[0]
    diag = np.abs(np.diag(R))
    # A column is zero when it is rounding noise against the largest column
    # (e.g. the mass of a body whose origin stays on the first, vertical axis).
    nonzero = norms > 1e-11 * float(norms.max(initial=0.0))
    independent = np.flatnonzero((diag > tol * norms) & nonzero)
    dependent = np.setdiff1d(np.arange(W.shape[1]), independent)
    W1, W2 = W[:, independent], W[:, dependent]
    beta = np.zeros((independent.size, dependent.size))
    if dependent.size:
        beta[:] = np.linalg.lstsq(W1, W2, rcond=None)[0]
    beta[np.abs(beta) < 1e-12 * max(1.0, float(np.abs(beta).max(initial=0.0)))] = 0.0
    K = np.zeros((independent.size, W.shape[1]))
    K[np.arange(independent.size), independent] = 1.0
    if dependent.size:
        K[:, dependent] = beta
    return BaseParameters(tuple(parameters.names(model)), independent, dependent, beta, K)
