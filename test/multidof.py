"""Random states for models with multi-DoF joints (Pinocchio's layout), generated here
rather than by the model (configuration helpers are another module's job)."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.robot_model import RobotModel


def unit_quaternions(rng: np.random.Generator, count: int) -> np.ndarray:
    """``(count, 4)`` uniformly random unit quaternions ``[x, y, z, w]``."""
    x = rng.normal(size=(count, 4))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def random_configurations(model: RobotModel, count: int, seed: int = 0) -> np.ndarray:
    """``(count, nq)``: 1-DoF joints within finite limits (else +-pi), free-flyer
    positions ~ N(0, 1) m, random unit quaternions, planar angles in [-pi, pi]."""
    rng = np.random.default_rng(seed)
    Q = np.empty((count, model.nq))
    for j, jtype in enumerate(model.joint_types):
        i = int(model.idx_q[j])
        if jtype == "free-flyer":
            Q[:, i:i + 3] = rng.normal(size=(count, 3))
            Q[:, i + 3:i + 7] = unit_quaternions(rng, count)
        elif jtype == "spherical":
            Q[:, i:i + 4] = unit_quaternions(rng, count)
        elif jtype == "planar":
            th = rng.uniform(-np.pi, np.pi, count)
            Q[:, i:i + 2] = rng.normal(size=(count, 2))
            Q[:, i + 2], Q[:, i + 3] = np.cos(th), np.sin(th)
        else:
            lo, hi = model.lower_limit[i], model.upper_limit[i]
            lo, hi = (lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (-np.pi, np.pi)
            Q[:, i] = rng.uniform(lo, hi, count)
    return Q


def random_states(model: RobotModel, count: int, seed: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q (count, nq), v (count, nv), a (count, nv))``: random configurations, base
    twists and joint rates ~ N(0, 2), accelerations ~ N(0, 5)."""
    rng = np.random.default_rng(seed + 1)
    return (random_configurations(model, count, seed), rng.normal(0.0, 2.0, (count, model.nv)),
            rng.normal(0.0, 5.0, (count, model.nv)))
