"""Random motors for the mixed rigid/elastic tests; the oracle is
:class:`rnea_ros.oracle.AugmentedOracle` (Pinocchio on the *augmented* tree)."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.elastic.model import JointDrive, MotorSpec
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import AugmentedOracle

__all__ = ["AugmentedOracle", "random_drives"]


def random_drives(links: RobotModel, rng: np.random.Generator, *, elastic: float = 0.5,
                  on_parent: bool = True) -> list[JointDrive]:
    """Random motors for every joint (some elastic): on the joint's parent link
    (``on_parent``) or on any link that precedes it, random axes, positions and gears."""
    link_of = {-1: links.root_link}
    for name, frame in links.frames.items():
        link_of.setdefault(frame.body, name)
    drives = []
    for i, joint in enumerate(links.joint_names):
        par = int(links.parent[i])
        if on_parent:
            body = par
        else:
            ancestors = [-1]
            b = par
            while b >= 0:
                ancestors.append(b)
                b = int(links.parent[b])
            body = int(rng.choice(ancestors))
        Ixy = rng.uniform(0.001, 0.01)
        Iz = Ixy * rng.uniform(0.2, 1.9)  # triangle inequality: Iz <= 2 Ixy
        motor = MotorSpec(link=link_of[body], inertia=(Ixy, Ixy, Iz),
                          gear_ratio=float(rng.choice([1.0, rng.uniform(2.0, 100.0)])),
                          axis=tuple(rng.normal(size=3)), position=tuple(rng.normal(0, 0.1, 3)),
                          mass=float(rng.uniform(0.1, 1.0)))
        is_elastic = bool(rng.random() < elastic)
        drives.append(JointDrive(joint, stiffness=rng.uniform(50, 5000) if is_elastic else None,
                                 damping=rng.uniform(0, 2) if is_elastic else 0.0, motor=motor))
    return drives
