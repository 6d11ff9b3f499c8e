"""Reference trajectories: interpolation order, boundary behaviour, continuity on replacement;
the compiled derivatives against the numpy evaluation they replaced (``old_derivatives``,
JointTrajectory.derivatives at commit 19c0c05, kept here as a reference copy)."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import relative_error

from rnea_ros.control.trajectory import JointTrajectory, continue_from
from rnea_ros.core.errors import StateError


def numeric_derivative(f, t, h=1e-6):
    return (f(t + h) - f(t - h)) / (2 * h)


def test_quintic_matches_waypoints_and_is_consistent() -> None:
    rng = np.random.default_rng(0)
    times = np.array([1.0, 1.7, 2.5])
    P, V, A = (rng.normal(size=(3, 4)) for _ in range(3))
    traj = JointTrajectory(times, P, V, A)
    for k, t in enumerate(times[:-1]):
        q, qd, qdd = traj.sample(t + 1e-12)
        assert np.allclose(q, P[k]) and np.allclose(qd, V[k]) and np.allclose(qdd, A[k], atol=1e-6)
    # left limits at the interior waypoint
    q, qd, qdd = traj.sample(1.7 - 1e-12)
    assert np.allclose(q, P[1]) and np.allclose(qd, V[1]) and np.allclose(qdd, A[1], atol=1e-6)
    for t in (1.2, 2.1):
        assert np.allclose(numeric_derivative(lambda s: traj.sample(s)[0], t), traj.sample(t)[1],
                           atol=1e-6)
        assert np.allclose(numeric_derivative(lambda s: traj.sample(s)[1], t), traj.sample(t)[2],
                           atol=1e-5)


def test_cubic_without_accelerations_and_catmull_rom_velocities() -> None:
    times = np.array([0.0, 1.0, 2.0])
    P = np.array([[0.0], [1.0], [4.0]])
    traj = JointTrajectory(times, P)
    assert traj.velocities is not None
    assert traj.velocities[:, 0].tolist() == [0.0, 2.0, 0.0]  # (4 - 0) / 2 in the middle
    q, qd, _ = traj.sample(1.0 + 1e-12)
    assert np.allclose(q, [1.0]) and np.allclose(qd, [2.0])
    assert np.allclose(numeric_derivative(lambda s: traj.sample(s)[0], 0.4), traj.sample(0.4)[1])


def test_holds_the_last_point_and_starts_at_the_first() -> None:
    traj = JointTrajectory(np.array([1.0, 2.0]), np.array([[0.0, 1.0], [2.0, 3.0]]),
                           np.array([[0.0, 0.0], [5.0, 5.0]]))
    q, qd, qdd = traj.sample(10.0)
    assert q.tolist() == [2.0, 3.0] and not qd.any() and not qdd.any()
    q, _, _ = traj.sample(0.0)
    assert q.tolist() == [0.0, 1.0]


def test_replacement_keeps_position_velocity_acceleration_continuous() -> None:
    old = JointTrajectory(np.array([0.0, 2.0]), np.array([[0.0], [1.0]]),
                          np.array([[0.0], [0.0]]), np.array([[0.0], [0.0]]))
    t_switch = 0.8
    current = old.sample(t_switch)
    new = continue_from(JointTrajectory(np.array([1.5, 2.5]), np.array([[-1.0], [0.0]])),
                        t_switch, current)
    after = new.sample(t_switch + 1e-9)
    for a, b in zip(current, after, strict=True):
        assert np.allclose(a, b, atol=1e-6)
    # and it reaches the new waypoints
    assert np.allclose(new.sample(1.5)[0], [-1.0]) and np.allclose(new.sample(3.0)[0], [0.0])


def test_bad_trajectories() -> None:
    with pytest.raises(StateError, match="strictly increasing"):
        JointTrajectory(np.array([0.0, 0.0]), np.zeros((2, 3)))
    with pytest.raises(StateError, match="non-finite"):
        JointTrajectory(np.array([0.0, 1.0]), np.array([[0.0], [np.nan]]))
    with pytest.raises(StateError, match="velocities have shape"):
        JointTrajectory(np.array([0.0, 1.0]), np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(StateError, match="K >= 1"):
        JointTrajectory(np.zeros(0), np.zeros((0, 3)))


def old_derivatives(traj: JointTrajectory, times, order: int = 3):
    """JointTrajectory.derivatives at 19c0c05 (numpy, einsum)."""
    times = np.asarray(times, dtype=np.float64)
    T0, T1 = float(traj.times[0]), float(traj.times[-1])
    out = np.zeros((order + 1, times.size, traj.positions.shape[1]))
    if len(traj.times) == 1:
        out[0] = traj.positions[0]
        return out
    clipped = np.clip(times, T0, T1)
    k = np.clip(np.searchsorted(traj.times, clipped, side="right") - 1, 0, len(traj.times) - 2)
    T = (traj.times[k + 1] - traj.times[k])[:, None]
    s = ((clipped - traj.times[k]) / T[:, 0])[:, None]
    C = traj._coefficients[k]
    powers = np.concatenate([np.ones_like(s), s, s**2, s**3, s**4, s**5], axis=1)
    factors = np.array([1.0, 1.0, 2.0, 6.0, 24.0, 120.0])
    for d in range(order + 1):
        coef = factors[d:] / factors[:6 - d]
        basis = powers[:, :6 - d] * coef
        out[d] = np.einsum("ki,kin->kn", basis, C[:, d:]) / T**d
    out[1:, times >= T1] = 0.0
    return out


def test_trajectory_derivatives_equal_the_numpy_evaluation_and_differentiate() -> None:
    """The compiled JointTrajectory.derivatives against the numpy version it replaced
    (1 to 6 waypoints, before, inside and after), and each order against central
    differences of the one below."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        K, n = int(rng.integers(1, 7)), int(rng.integers(1, 5))
        times = np.cumsum(rng.uniform(0.1, 1.0, K)) - 0.5
        P = rng.normal(size=(K, n))
        V = rng.normal(size=(K, n)) if rng.random() < 0.7 else None
        A = rng.normal(size=(K, n)) if rng.random() < 0.5 else None
        traj = JointTrajectory(times, P, V, A)
        at = np.concatenate([rng.uniform(times[0] - 0.5, times[-1] + 0.5, 30), times])
        for order in range(6):
            ours = traj.derivatives(at, order)
            reference = old_derivatives(traj, at, order)
            for d in range(order + 1):
                assert relative_error(ours[d], reference[d]) < 1e-13 or not reference[d].any()
                assert np.array_equal(ours[d] == 0.0, reference[d] == 0.0) or d == 0
    traj = JointTrajectory(np.array([0.0, 0.4, 1.0]), rng.normal(size=(3, 2)),
                           rng.normal(size=(3, 2)), rng.normal(size=(3, 2)))
    h = 1e-6
    for t in (0.1, 0.3, 0.7):
        D, up, down = (traj.derivatives(np.array([x]), 5)[:, 0] for x in (t, t + h, t - h))
        for d in range(5):
            assert np.allclose((up[d] - down[d]) / (2 * h), D[d + 1], rtol=1e-5, atol=1e-4)
        q, qd, qdd = traj.sample(t)
        assert np.allclose(D[:3], [q, qd, qdd], rtol=1e-13, atol=1e-13)
