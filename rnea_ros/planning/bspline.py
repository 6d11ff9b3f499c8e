"""Clamped B-spline joint profiles on ``[0, T]`` (Barman 2020 eq. 4.13-4.14).

Every joint shares one knot vector: clamped (degree + 1 repeated knots at both
ends), interior knots evenly spaced, so ``s_{i+1} = s_i + T / l`` (eq. 4.14).
We write the spline in normalised time ``s = t / T`` in [0, 1]::

    q(t)      = sum_i B_i(s) p_i                         (eq. 4.13)
    q^(r)(t)  = T^-r sum_i B_i^(r)(s) p_i                r = 1, 2, 3 (velocity..jerk)

so the knots scale with ``T`` and, for a fixed grid in ``s``, every derivative
is linear in the control points ``P`` (m, n) with a known power of ``T``:
``d q^(r) / d P = T^-r B^(r)`` and ``d q^(r) / d T = -r q^(r) / T``. These are
the ``dq/dp_i, dqd/dp_i, dqdd/dp_i`` of the chain rule eq. 4.15
(:mod:`rnea_ros.planning.chain_rule`).

The derivative of a B-spline is a B-spline of one degree less with control
points ``k (p_{i+1} - p_i) / (u_{i+k+1} - u_{i+1})`` (de Boor), so bounds on
those (:meth:`Basis.derivative_control_matrix`) bound the derivative
everywhere, between any grid points (the convex-hull property).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy.interpolate import BSpline

from rnea_ros.planning.errors import PlanningError

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Basis:
    """Clamped B-spline basis of ``degree`` with ``m`` control points on s in [0, 1].

    ``breaks``: the distinct knots ``0 = u_0 < ... < u_l = 1`` (l = m - degree + 1 values);
    evenly spaced (eq. 4.14) when None, refined where needed by the adaptive planner
    (:func:`rnea_ros.planning.optimize.plan_min_time`).
    """

    m: int
    degree: int = 3
    breaks: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.degree < 3 or self.m < self.degree + 1:
            raise PlanningError(f"a clamped B-spline of degree {self.degree} (>= 3) needs at "
                               f"least degree + 1 = {self.degree + 1} control points, got {self.m}")
        if self.breaks is not None:
            b = np.asarray(self.breaks)
            if (b.size != self.m - self.degree + 1 or b[0] != 0.0 or b[-1] != 1.0
                    or np.any(np.diff(b) <= 0)):
                raise PlanningError(f"breaks must rise strictly from 0 to 1 with "
                                   f"{self.m - self.degree + 1} values, got {self.breaks}")

    @classmethod
    def from_breaks(cls, breaks: object, degree: int) -> Basis:
        """The basis on the given distinct knots (0, ..., 1)."""
        b = tuple(float(v) for v in np.asarray(breaks, dtype=float))
        return cls(len(b) - 1 + degree, degree, b)

    @cached_property
    def inner(self) -> Array:
        """(l + 1,) the distinct knots ``u_0 = 0 < ... < u_l = 1``."""
        if self.breaks is None:
            return np.linspace(0.0, 1.0, self.m - self.degree + 1)
        return np.asarray(self.breaks, dtype=float)

    @cached_property
    def knots(self) -> Array:
        """(m + degree + 1,) clamped knots; interior ones evenly spaced (eq. 4.14, T = 1)
        unless ``breaks`` says otherwise."""
        k = self.degree
        return np.concatenate([np.zeros(k), self.inner, np.ones(k)])

    @property
    def intervals(self) -> int:
        """Number of knot intervals ``l`` of eq. 4.14."""
        return self.m - self.degree

    @cached_property
    def _splines(self) -> dict[int, BSpline]:
        """The basis as one vector-valued scipy BSpline per derivative order, built on first
        use (building one and its derivative at every call was half of a via point's
        single-point evaluations in the planner's NLP and Hessian)."""
        return {}

    def matrix(self, s: object, order: int = 0) -> Array:
        """(N, m) ``B^(order)(s)``: row k maps control points to the order-th s-derivative."""
        s = np.clip(np.asarray(s, dtype=float), 0.0, 1.0)
        spline = self._splines.get(order)
        if spline is None:
            spline = BSpline(self.knots, np.eye(self.m), self.degree, extrapolate=False)
            if order:
                spline = spline.derivative(order)
            self._splines[order] = spline
        out = spline(s)
        return np.asarray(np.nan_to_num(np.asarray(out, dtype=float)), dtype=np.float64)

    def derivative_control_matrix(self, order: int = 1) -> Array:
        """(m - order, m) ``D``: ``D @ P`` are the control points of ``d^order q / ds^order``."""
        D = np.eye(self.m)
        t, k = self.knots, self.degree
        for r in range(order):
            kk = k - r
            rows = D.shape[0] - 1
            step = np.zeros((rows, rows + 1))
            for i in range(rows):
                span = t[i + kk + 1 + r] - t[i + 1 + r]
                step[i, i], step[i, i + 1] = -kk / span, kk / span
            D = step @ D
        return D

    def grid(self, per_interval: int) -> Array:
        """(l * per_interval + 1,) s: every knot, and per_interval even steps within each span."""
        u = self.inner
        steps = np.arange(per_interval) / per_interval
        return np.append((u[:-1, None] + np.diff(u)[:, None] * steps).ravel(), 1.0)


@dataclass(frozen=True, eq=False)
class JointSpline:
    """Joint trajectory ``q(t)`` on ``[0, T]``: control points ``P`` (m, n) on ``basis``."""

    basis: Basis
    P: Array
    T: float

    def derivatives(self, t: object, order: int = 3) -> list[Array]:
        """``[q, qd, qdd, qddd][:order + 1]`` at times t (N,), each (N, n); held outside [0, T]."""
        s = np.clip(np.atleast_1d(np.asarray(t, dtype=float)) / self.T, 0.0, 1.0)
        return [self.basis.matrix(s, r) @ self.P / self.T**r for r in range(order + 1)]

    def sample(self, dt: float) -> tuple[Array, list[Array]]:
        """Times ``0, dt, ..., T`` (T always included) and ``[q, qd, qdd, qddd]`` there."""
        steps = int(np.floor(self.T / dt + 1e-9))
        t: Array = np.arange(steps + 1, dtype=float) * dt
        if self.T - t[-1] > 1e-9:
            t = np.append(t, self.T)
        return t, self.derivatives(t)

    @property
    def dof(self) -> int:
        return int(self.P.shape[1])
