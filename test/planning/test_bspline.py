"""Clamped B-spline profiles (eq. 4.13-4.14): exact derivatives, derivative control points."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.planning.bspline import Basis, JointSpline


@pytest.mark.parametrize("degree", [3, 4, 5])
def test_derivatives_match_finite_differences_and_scale_with_T(degree: int) -> None:
    rng = np.random.default_rng(degree)
    basis = Basis(11, degree)
    spline = JointSpline(basis, rng.normal(size=(11, 3)), T=0.7)
    t = np.linspace(0.0123, 0.6871, 13)  # off the knots (the jerk of a cubic jumps there)
    h = 1e-6
    derivs = spline.derivatives(t)
    for r in range(3):
        up, down = spline.derivatives(t + h)[r], spline.derivatives(t - h)[r]
        assert np.allclose((up - down) / (2 * h), derivs[r + 1], rtol=1e-5, atol=1e-5)
    slower = JointSpline(basis, spline.P, T=1.4)  # knots scale with T (eq. 4.14)
    d2 = slower.derivatives(2 * t)
    for r in range(4):
        assert np.allclose(d2[r], derivs[r] / 2**r, atol=1e-12)


def test_clamped_ends_and_partition_of_unity() -> None:
    basis = Basis(9, 3)
    s = np.linspace(0, 1, 101)
    assert np.allclose(basis.matrix(s).sum(axis=1), 1.0)
    P = np.random.default_rng(1).normal(size=(9, 2))
    spline = JointSpline(basis, P, T=2.0)
    q = spline.derivatives(np.array([0.0, 2.0]), order=0)[0]
    assert np.allclose(q, P[[0, -1]])
    assert basis.intervals == 6 and np.allclose(np.diff(basis.knots[3:-3]), 1 / 6)


@pytest.mark.parametrize("degree", [3, 4])
def test_derivative_control_points_bound_the_derivative_everywhere(degree: int) -> None:
    """de Boor: the control points of dq/ds, and q'(s) lies in their convex hull."""
    rng = np.random.default_rng(7)
    basis = Basis(10, degree)
    P = rng.normal(size=(10, 2))
    s = np.linspace(0, 1, 2001)
    for order in (1, 2):
        C = basis.derivative_control_matrix(order) @ P
        exact = basis.matrix(s, order) @ P
        lower = Basis(10 - order, degree - order) if degree - order >= 3 else None
        if lower is not None:  # same curve from the lower-degree spline on the inner knots
            assert np.allclose(lower.matrix(s) @ C, exact, atol=1e-9)
        assert np.all(exact <= C.max(axis=0) + 1e-12)
        assert np.all(exact >= C.min(axis=0) - 1e-12)


def test_basis_rejects_too_few_points() -> None:
    with pytest.raises(ValueError, match="at least degree"):
        Basis(3, 3)
