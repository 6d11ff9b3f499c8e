"""Random kinematic trees with physical inertias, for identity tests."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.tree import JointSpec, LinkSpec, build_model


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    a, b, c = rng.uniform(0.01, 0.3, 3)  # I = sum m r^2 style: triangle inequality holds
    moments = np.array([b + c, a + c, a + b])
    R = random_rotation(rng)
    return R @ np.diag(moments) @ R.T


def random_tree(seed: int, bodies: int | None = None, drives: bool = True) -> RobotModel:
    """A random fixed-base tree: revolute, continuous, prismatic and fixed joints,
    random axes, placements, inertias, armature and friction."""
    rng = np.random.default_rng(seed)
    count = int(bodies if bodies is not None else rng.integers(3, 13))
    links = [LinkSpec("base")]
    joints = []
    for k in range(1, count + 1):
        parent = links[int(rng.integers(0, k))].name
        kind = str(rng.choice(["revolute", "continuous", "prismatic", "fixed"],
                              p=[0.45, 0.15, 0.25, 0.15]))
        if k == 1:
            kind = "revolute"
        axis = rng.normal(size=3) if rng.random() < 0.5 else np.eye(3)[rng.integers(0, 3)]
        links.append(LinkSpec(f"l{k}", float(rng.uniform(0.2, 3.0)), rng.normal(0, 0.2, 3),
                              random_inertia(rng)))
        joints.append(JointSpec(
            f"j{k}", kind, parent, f"l{k}", (random_rotation(rng), rng.normal(0, 0.4, 3)),
            axis * rng.choice([-1.0, 1.0]),
            armature=float(rng.uniform(0, 0.3)) if drives else 0.0,
            coulomb=float(rng.uniform(0, 0.5)) if drives else 0.0,
            viscous=float(rng.uniform(0, 0.5)) if drives else 0.0,
        ))
    return build_model(f"tree{seed}", links, joints, gravity=rng.normal(0, 5, 3))
