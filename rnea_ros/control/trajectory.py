"""Joint-space reference trajectories sampled at the state's time.

A :class:`JointTrajectory` holds waypoints (times [s], positions, and
optionally velocities and accelerations, all ``(K, n)`` in model order) and
samples ``(q, qd, qdd)`` at any time:

* between two waypoints that both give accelerations: quintic Hermite
  (position, velocity, acceleration continuous);
* otherwise cubic Hermite on positions and velocities; waypoints without
  velocities get the Catmull-Rom estimate (central difference, zero at the
  first and last point);
* before the first waypoint: its state; after the last: the last position
  held, with zero velocity and acceleration.

:func:`continue_from` prepends the current reference as a waypoint at the
new trajectory's start, so replacing a trajectory keeps the reference (and
the feedforward torque) continuous when the new first waypoint is in the
future, as ros2_control's joint_trajectory_controller does. :func:`from_message`
checks a ``trajectory_msgs/JointTrajectory`` against the model and expands it to
every joint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import StateError, options
from rnea_ros.core.kernels import jit
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]
KernelArrays = tuple[Array, Array, Array]  # times (K,), coefficients (K-1, 6, n), first point (n,)

_FACTORIALS = (1.0, 1.0, 2.0, 6.0, 24.0, 120.0)


@jit
def point_derivatives(times: Array, C: Array, first: Array, t: float, order: int,
                      out: Array) -> None:
    """``out[d]`` (n,), ``d = 0..order`` (``out`` is (order + 1, n), ``order <= 5``): the
    ``d``-th time derivative at time ``t`` of the trajectory whose waypoint ``times``
    (K,) and segment coefficients ``C`` (K-1, 6, n) are given (``first``: the first
    position, for K = 1), as :meth:`JointTrajectory.derivatives` documents.

    On segment ``k`` of duration ``T`` at ``s = (t - t_k) / T``,
    ``q^(d) = sum_{i >= d} i! / (i - d)! c_i s^(i - d) / T^d``, summed in increasing
    ``i`` (the order of the numpy evaluation this kernel replaced).
    """
    K, n = times.shape[0], out.shape[1]
    if K == 1:
        for j in range(n):
            out[0, j] = first[j]
            for d in range(1, order + 1):
                out[d, j] = 0.0
        return
    c = t  # clipped to [t_0, t_{K-1}] (a NaN stays NaN)
    if c < times[0]:
        c = times[0]
    if c > times[K - 1]:
        c = times[K - 1]
    lo, hi = 0, K - 2  # the last segment starting at or before c
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if times[mid] <= c:
            lo = mid
        else:
            hi = mid - 1
    k = lo
    T = times[k + 1] - times[k]
    s = (c - times[k]) / T
    s2, T2 = s * s, T * T
    powers = (1.0, s, s2, s2 * s, s2 * s2, s2 * s2 * s)
    T_d = (1.0, T, T2, T2 * T, T2 * T2, T2 * T2 * T)
    held = t >= times[K - 1]  # after the end: at rest
    for d in range(order + 1):
        if d > 0 and held:
            out[d, :] = 0.0
            continue
        out[d, :] = 0.0
        for i in range(6 - d):  # sum_i b_i c_{d+i}, in increasing i
            b = powers[i] * (_FACTORIALS[d + i] / _FACTORIALS[i])
            for j in range(n):
                out[d, j] += b * C[k, d + i, j]
        for j in range(n):
            out[d, j] /= T_d[d]


@jit
def _derivatives_call(times: Array, C: Array, first: Array, at: Array, order: int,
                      out: Array) -> None:
    for p in range(at.shape[0]):
        point_derivatives(times, C, first, at[p], order, out[:, p, :])


@dataclass(frozen=True, eq=False)
class JointTrajectory:
    """Waypoints at absolute ``times`` (K,) [s]; ``positions`` (K, n) [rad or m];
    ``velocities``/``accelerations`` (K, n) or ``None``."""

    times: Array
    positions: Array
    velocities: Array | None = None
    accelerations: Array | None = None
    quintic: NDArray[np.bool_] | None = None  # per segment (K-1,); default: accelerations given

    def __post_init__(self) -> None:
        K = self.times.shape[0]
        if K == 0 or self.positions.ndim != 2 or self.positions.shape[0] != K:
            raise StateError(f"trajectory needs K >= 1 points with positions (K, n), got "
                             f"times {self.times.shape} and positions {self.positions.shape}")
        for name in ("velocities", "accelerations"):
            value = getattr(self, name)
            if value is not None and value.shape != self.positions.shape:
                raise StateError(f"trajectory {name} have shape {value.shape}, "
                                 f"positions {self.positions.shape}")
        arrays = [self.times, self.positions, self.velocities, self.accelerations]
        if not all(a is None or np.all(np.isfinite(a)) for a in arrays):
            raise StateError("trajectory contains non-finite values")
        if np.any(np.diff(self.times) <= 0.0):
            raise StateError("trajectory times must be strictly increasing")
        if self.velocities is None:
            object.__setattr__(self, "velocities", _catmull_rom(self.times, self.positions))
        if self.quintic is None:
            object.__setattr__(self, "quintic",
                               np.full(K - 1, self.accelerations is not None, dtype=bool))
        object.__setattr__(self, "_coefficients", self._segment_coefficients())
        object.__setattr__(self, "_kernel", (
            np.ascontiguousarray(self.times, dtype=np.float64),
            self._coefficients,  # type: ignore[attr-defined]
            np.ascontiguousarray(self.positions[0], dtype=np.float64)))

    @property
    def kernel_arrays(self) -> KernelArrays:
        """``(times, coefficients, first position)`` for :func:`point_derivatives`."""
        arrays: KernelArrays = self._kernel  # type: ignore[attr-defined]
        return arrays

    def _segment_coefficients(self) -> Array:
        """Polynomial coefficients (K-1, 6, n) of every segment in ``s`` in [0, 1]."""
        P, V, A = self.positions, self.velocities, self.accelerations
        assert V is not None and self.quintic is not None
        T = np.diff(self.times)[:, None]
        C = np.zeros((len(T), 6, P.shape[1]))
        p0, p1, m0, m1 = P[:-1], P[1:], V[:-1] * T, V[1:] * T
        C[:, 0], C[:, 1] = p0, m0  # cubic Hermite
        C[:, 2] = 3 * (p1 - p0) - 2 * m0 - m1
        C[:, 3] = 2 * (p0 - p1) + m0 + m1
        if A is not None:  # quintic Hermite where flagged
            a0, a1 = 0.5 * A[:-1] * T**2, A[1:] * T**2
            d = p1 - p0 - m0 - a0
            e = m1 - m0 - 2 * a0
            f = a1 - 2 * a0
            quintic = np.stack([p0, m0, a0, 10 * d - 4 * e + 0.5 * f, -15 * d + 7 * e - f,
                                6 * d - 3 * e + 0.5 * f], axis=1)
            C[self.quintic] = quintic[self.quintic]
        return C

    @property
    def end_time(self) -> float:
        """Time of the last waypoint [s]."""
        return float(self.times[-1])

    def derivatives(self, times: Array, order: int = 3) -> Array:
        """Position and its first ``order`` (up to 5) time derivatives at each of
        ``times``: (order + 1, len(times), n), consistent with :meth:`sample`
        (before the start: the first point's state; after the end: the last point
        at rest). ``order=4`` gives the snap the elastic feedforward needs."""
        if not 0 <= order <= 5:
            raise StateError(f"derivative order {order} is not in 0..5")
        at = np.ascontiguousarray(times, dtype=np.float64).ravel()
        out = np.empty((order + 1, at.size, self.positions.shape[1]))
        _derivatives_call(*self.kernel_arrays, at, order, out)
        return out

    def sample(self, t: float) -> tuple[Array, Array, Array]:
        """``(q, qd, qdd)`` (n,) at absolute time ``t`` [s]."""
        times, P = self.times, self.positions
        V = self.velocities
        assert V is not None  # set in __post_init__
        n = P.shape[1]
        if t >= times[-1]:
            return P[-1].copy(), np.zeros(n), np.zeros(n)
        if t <= times[0]:
            acc = self.accelerations[0].copy() if self.accelerations is not None else np.zeros(n)
            return P[0].copy(), V[0].copy(), acc if len(times) > 1 else np.zeros(n)
        k = int(np.searchsorted(times, t, side="right")) - 1
        T = float(times[k + 1] - times[k])
        s = (t - float(times[k])) / T
        C = self._coefficients[k]  # type: ignore[attr-defined]
        s2, s3 = s * s, s * s * s
        basis = np.array([[1.0, s, s2, s3, s2 * s2, s3 * s2],
                          [0.0, 1.0 / T, 2 * s / T, 3 * s2 / T, 4 * s3 / T, 5 * s2 * s2 / T],
                          [0.0, 0.0, 2 / T**2, 6 * s / T**2, 12 * s2 / T**2, 20 * s3 / T**2]])
        q, qd, qdd = basis @ C
        return q, qd, qdd


def _catmull_rom(times: Array, positions: Array) -> Array:
    V = np.zeros_like(positions)
    if len(times) > 2:
        V[1:-1] = (positions[2:] - positions[:-2]) / (times[2:] - times[:-2])[:, None]
    return V


def _cubic(s: float, T: float, p0: Array, v0: Array, p1: Array, v1: Array
           ) -> tuple[Array, Array, Array]:
    """Cubic Hermite on ``s`` in [0, 1] over a segment of duration ``T``."""
    m0, m1 = v0 * T, v1 * T
    h = (2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2)
    dh = (6 * s**2 - 6 * s, 3 * s**2 - 4 * s + 1, -6 * s**2 + 6 * s, 3 * s**2 - 2 * s)
    ddh = (12 * s - 6, 6 * s - 4, -12 * s + 6, 6 * s - 2)
    q = h[0] * p0 + h[1] * m0 + h[2] * p1 + h[3] * m1
    qd = (dh[0] * p0 + dh[1] * m0 + dh[2] * p1 + dh[3] * m1) / T
    qdd = (ddh[0] * p0 + ddh[1] * m0 + ddh[2] * p1 + ddh[3] * m1) / T**2
    return q, qd, qdd


def continue_from(trajectory: JointTrajectory, start: float,
                  current: tuple[Array, Array, Array]) -> JointTrajectory:
    """Prepend the current reference ``(q, qd, qdd)`` at time ``start`` when the
    trajectory's first waypoint lies after it, joined by a quintic segment so
    that position, velocity and acceleration stay continuous."""
    times, P, V = trajectory.times, trajectory.positions, trajectory.velocities
    assert V is not None and trajectory.quintic is not None
    if times[0] <= start:
        return trajectory
    q, qd, qdd = current
    A = trajectory.accelerations
    if A is None:
        # The first waypoint's acceleration as the following cubic segment starts
        # with it, so the joining quintic keeps qdd continuous there too.
        A = np.zeros_like(P)
        if len(times) > 1:
            A[0] = _cubic(0.0, float(times[1] - times[0]), P[0], V[0], P[1], V[1])[2]
    return JointTrajectory(
        np.concatenate([[start], times]), np.vstack([q, P]), np.vstack([qd, V]),
        np.vstack([qdd, A]), np.concatenate([[True], trajectory.quintic]),
    )


def cosine_motion(q0: np.ndarray, amplitude: float, omega: float, t: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``q0 + A (1 - cos(w t))`` on every joint and its two derivatives, (len(t), n):
    a sinusoid that starts at rest at ``q0`` (amplitude ``A`` [rad or m], ``omega`` ``w``
    [rad/s], times ``t`` [s]); the demo's and the node tests' reference."""
    ones = np.ones_like(q0)
    return (q0 + amplitude * (1 - np.cos(omega * t))[:, None] * ones,
            amplitude * omega * np.sin(omega * t)[:, None] * ones,
            amplitude * omega**2 * np.cos(omega * t)[:, None] * ones)


def from_message(model: RobotModel, names: Sequence[str], commanded: Sequence[str],
                 joint_names: Sequence[str], times: Array, positions: Array,
                 velocities: Array | None, accelerations: Array | None, start: float,
                 hold: Array) -> JointTrajectory:
    """The reference a ``trajectory_msgs/JointTrajectory`` describes, in the order of
    ``names`` (the reference's joints: ``model``'s, or a closed-loop robot's active
    joints): waypoints at ``start + times`` [s] (``times`` (K,), its
    ``time_from_start``), values (K, len(joint_names)) expanded to every joint of
    ``names``; those the message does not name hold ``hold`` (len(names),) (zero
    velocity and acceleration).

    Every joint of ``commanded`` must be named, once, every name must be one of
    ``names`` and no mimic follower of ``model``, and every position within its
    joint's limits (``model``'s);
    :class:`~rnea_ros.core.errors.StateError` names the offending joints (and
    :class:`JointTrajectory` refuses non-finite values and non-increasing times).
    """
    missing = [j for j in commanded if j not in joint_names]
    if missing:
        raise StateError(f"trajectory lacks commanded joints {options(missing)}")
    followers = [f"'{j}' (follows '{model.mimic_joints[j].leader}')" for j in joint_names
                 if j in model.mimic_joints]
    if followers:
        raise StateError(f"trajectory names mimic followers {', '.join(followers)}: they "
                         "are not coordinates; give their leaders only")
    unknown = [j for j in joint_names if j not in names]
    if unknown:
        raise StateError(f"trajectory names joints {options(unknown)} not in the model; "
                         f"valid: {options(names)}")
    if len(set(joint_names)) != len(joint_names):
        raise StateError("trajectory names a joint more than once")
    given = np.asarray(positions, dtype=np.float64)
    if given.ndim == 2 and given.shape[1] == len(joint_names) and np.all(np.isfinite(given)):
        index = [model.joint_index(j) for j in joint_names]
        low, high = model.lower_limit[index], model.upper_limit[index]
        outside = np.any((given < low) | (given > high), axis=0)
        if np.any(outside):
            bad = [j for j, o in zip(joint_names, outside, strict=True) if o]
            raise StateError(f"trajectory positions of joints {options(bad)} are beyond "
                             "their limits")
    K = len(times)

    def expand(values: Array | None, fill: Array) -> Array | None:
        if values is None:
            return None
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (K, len(joint_names)):
            raise StateError(f"trajectory values have shape {values.shape}, expected "
                             f"({K}, {len(joint_names)})")
        out = np.tile(fill, (K, 1))
        for k, name in enumerate(joint_names):
            out[:, names.index(name)] = values[:, k]
        return out

    zeros = np.zeros(len(names))
    P = expand(positions, hold)
    if P is None:
        raise StateError("trajectory has no positions")
    return JointTrajectory(start + np.asarray(times, dtype=np.float64), P,
                           expand(velocities, zeros), expand(accelerations, zeros))
