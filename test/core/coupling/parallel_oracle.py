"""Test helpers for parallel robots: the shipped samples, random reachable platform
states, and Pinocchio's constrained dynamics on the same URDF tree + loop file
(:class:`rnea_ros.loop_oracle.LoopOracle`, the closed-loop oracle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import rnea_ros.core as rc
from rnea_ros.core.coupling.loop_file import loop_file_path
from rnea_ros.core.coupling.parallel_model import quaternion_of
from rnea_ros.loop_oracle import LoopOracle
from rnea_ros.samples import share_directory

SAMPLES = {"gough_stewart": rc.GoughStewart, "delta": rc.DeltaRobot}


def sample_path(name: str) -> Path:
    return share_directory() / "urdf" / f"{name}.urdf"


def load_sample(name: str) -> rc.ParallelRobot:
    return SAMPLES[name].from_urdf(sample_path(name))


def rotation_vector(v: np.ndarray) -> np.ndarray:
    """Rotation matrix of the rotation vector ``v`` (Rodrigues)."""
    angle = float(np.linalg.norm(v))
    if angle == 0.0:
        return np.eye(3)
    k = v / angle
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def random_pose(robot: rc.ParallelRobot, home: np.ndarray, rng: np.random.Generator
                ) -> np.ndarray:
    """A platform pose near ``home`` (not necessarily reachable)."""
    if robot.nx == 7:
        p = home[:3] + rng.uniform([-0.1, -0.1, -0.07], [0.1, 0.1, 0.07])
        R = rotation_vector(rng.normal(0.0, 0.15, 3))
        return np.concatenate([p, quaternion_of(R)])
    return home + rng.uniform([-0.2, -0.2, -0.2], [0.2, 0.2, 0.12])


def random_states(robot: rc.ParallelRobot, count: int, seed: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` reachable platform states ``(x, xd, xdd)``: poses drawn around the
    pose with every active joint at 0, kept if every leg reaches them."""
    rng = np.random.default_rng(seed)
    home = rc.platform_forward_geometry(robot, np.zeros(robot.nv))
    xs: list[np.ndarray] = []
    while len(xs) < count:
        x = random_pose(robot, home, rng)
        try:
            rc.platform_inverse_geometry(robot, x)
            rc.platform_tree_state(robot, x)
        except rc.ParallelRobotError:
            continue
        xs.append(x)
    scale_v = np.r_[np.full(3, 0.3), np.full(3, 0.8)][:robot.nv]
    scale_a = np.r_[np.full(3, 3.0), np.full(3, 8.0)][:robot.nv]
    xd = rng.normal(0.0, 1.0, (count, robot.nv)) * scale_v
    xdd = rng.normal(0.0, 1.0, (count, robot.nv)) * scale_a
    return np.array(xs), xd, xdd


def active_indices(robot: rc.ParallelRobot) -> np.ndarray:
    return np.array([robot.tree.joint_index(j) for j in robot.active])


class PlatformOracle:
    """:class:`~rnea_ros.loop_oracle.LoopOracle` of a parallel robot: its tree closed by
    the loop file beside ``urdf`` (``rc.load_loops``), plus the platform's acceleration."""

    def __init__(self, robot: rc.ParallelRobot, urdf: Path) -> None:
        self.robot = robot
        self.loops = LoopOracle(urdf, rc.load_loops(robot.tree, loop_file_path(urdf)))

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau_active: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """``(qdd of the tree, platform acceleration)`` under the active forces, by
        ``pin.constraintDynamics``; the platform's as ``[dv/dt, dw/dt]`` of its origin
        in the base frame (``[dv/dt]`` for a translating platform)."""
        qdd, _ = self.loops.accelerations(q, qd, tau_active)
        platform = self.loops.tree.link_acceleration(q, qd, qdd, self.robot.platform)
        return qdd, platform[:self.robot.nv]
