"""The dense check of a planned trajectory: every limit 10x finer than the constraint
grid (:func:`dense_check`, :class:`DenseCheck`), and where a violating grid interval
needs points (:func:`_interval_peaks`) for :func:`rnea_ros.planning.optimize.plan_min_time`'s
grid refinement (Barman 2020 ch. IV, eq. 4.16-4.17, checked between the grid points)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.planning.bspline import JointSpline
from rnea_ros.planning.limits import joint_forces
from rnea_ros.planning.problem import Problem

Array = NDArray[np.float64]

DENSE = 10  # the dense check samples this many times finer than the constraint grid


@dataclass(frozen=True)
class DenseCheck:
    """Worst ratio |value| / limit over a grid 10x finer than the constraint grid (1 = at it);
    ``position``: the largest excursion beyond a position limit [rad or m] (<= 0 inside)."""

    position: float
    velocity: float
    torque: float
    torque_rate: float
    force: float
    worst: tuple[str, str, float]  # (quantity, joint, time [s]) of the largest ratio

    @property
    def ratio(self) -> float:
        """The worst of the four ratios."""
        return max(self.velocity, self.torque, self.torque_rate, self.force)

    def ok(self, tol: float = 0.0) -> bool:
        return self.ratio <= 1.0 + tol and self.position <= tol + 1e-9


def dense_check(problem: Problem, x: Array) -> tuple[DenseCheck, Array]:
    """Worst ratios 10x finer than the grid, and the dense points exceeding a limit."""
    grid = problem.grid
    dense = np.unique(np.concatenate([np.linspace(a, b, DENSE + 1) for a, b in
                                      itertools.pairwise(grid)]))
    P, _, T = problem.unpack(x)
    spline = JointSpline(problem.basis, P, T)
    q, qd, qdd, qddd = spline.derivatives(dense * T)
    model, lim = problem.model, problem.limits
    tau = rc.rnea_batch(model, q, qd, qdd)
    position = float(np.max(np.maximum(q - lim.upper, lim.lower - q)))
    ratios: dict[str, Array] = {"velocity": np.abs(qd) / lim.velocity,
                                "torque": np.abs(tau) / lim.torque}
    if np.isfinite(lim.torque_rate).any():
        tau_dot = rc.rnea_time_derivative_batch(model, q, qd, qdd, qddd)[1]
        ratios["torque_rate"] = np.abs(tau_dot) / lim.torque_rate
    if np.isfinite(lim.force).any():
        ratios["force"] = joint_forces(model, q, qd, qdd) / lim.force
    worst = max(ratios, key=lambda k: float(ratios[k].max()))
    k, j = np.unravel_index(int(np.argmax(ratios[worst])), ratios[worst].shape)
    worst_ratio = np.zeros(dense.shape)
    for key in ("torque", "torque_rate", "force"):
        if key in ratios:
            worst_ratio = np.maximum(worst_ratio, ratios[key].max(axis=1))
    over = _interval_peaks(grid, dense, worst_ratio)
    check = DenseCheck(position=position,
                       **{key: float(ratios[key].max()) if key in ratios else 0.0 for key in
                          ("velocity", "torque", "torque_rate", "force")},
                       worst=(worst, model.joint_names[j], float(dense[k] * T)))
    return check, dense[over]


# With the worst dense point of a violating grid interval, the dense points this many
# samples (a fifth of the interval) either side of it join the grid too: the re-solve moves
# the excess beside a lone peak point, so one point per interval took 4 refinement rounds on
# arm7 through a waypoint (69 -> 106 -> 131 -> 155 -> 163 grid points, then a back-off),
# three take 2 (69 -> 169 -> 232): 103 -> 83 IPOPT iterations, 2.6 -> 2.2 s CPU, T 0.323595
# -> 0.323623 s. Points 4 samples apart (thirds) back off more (T 0.32389).
PEAK_NEIGHBOURS = 2


def _interval_peaks(grid: Array, dense: Array, ratio: Array) -> Array:
    """(len(dense),) bool: in each grid interval where ``ratio > 1`` somewhere, its largest
    and the points PEAK_NEIGHBOURS samples either side of it. Adding every exceeding dense
    point (up to 9 per interval) grew arm7's torque-only grid from 399 to 3108 rows (a 40 s
    solve)."""
    interval = np.clip(np.searchsorted(grid, dense, side="right") - 1, 0, grid.size - 2)
    out = np.zeros(dense.shape, dtype=bool)
    for i in np.unique(interval[ratio > 1.0]):
        members = np.flatnonzero(interval == i)
        k = int(np.argmax(ratio[members]))
        for at in (k - PEAK_NEIGHBOURS, k, k + PEAK_NEIGHBOURS):
            if 0 < at < members.size:  # members[0] is the interval's own grid point
                out[members[at]] = True
    return out


__all__ = ["DENSE", "PEAK_NEIGHBOURS", "DenseCheck", "dense_check"]
