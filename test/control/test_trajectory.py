"""Reference trajectories: interpolation order, boundary behaviour, continuity on replacement."""

from __future__ import annotations

import numpy as np
import pytest

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
