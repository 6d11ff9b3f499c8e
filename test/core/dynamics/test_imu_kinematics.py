"""The IMU's frame kinematics (rnea_ros.core.dynamics.imu_kinematics) as identities: a
sensor's readings made from a known base motion through the rigid-body transfer come
back as that motion (orientation, angular velocity, specific force at the base origin,
for a sensor on a link that moves relative to the base too), and the rotation
exponential is Rodrigues' rotation on both sides of its small-angle branch. (Against
Pinocchio: test/control/test_imu.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.core.dynamics.imu_kinematics import (
    FrameMotion,
    base_angular_velocity,
    base_orientation,
    base_specific_force,
    rotation_exp,
)
from rnea_ros.core.spatial import axis_angle


def rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def quaternion(R: np.ndarray) -> np.ndarray:
    """[x, y, z, w] of a rotation (Shepperd's method, the w-largest branch suffices for
    the rotations drawn here or raises)."""
    w = 0.5 * np.sqrt(max(1.0 + np.trace(R), 0.0))
    if w < 0.1:
        pytest.skip("rotation near pi: not this helper's branch")
    return np.array([(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                     (R[1, 0] - R[0, 1]) / (4 * w), w])


@pytest.mark.parametrize("seed", range(5))
def test_readings_made_from_a_base_motion_give_it_back(seed: int) -> None:
    rng = np.random.default_rng(seed)
    R_bs, r = rotation(rng), rng.normal(size=3) * 0.5
    w_rel, v_rel, a_rel = rng.normal(size=(3, 3))
    sensor = FrameMotion(R_bs, r, w_rel, v_rel, np.zeros(3), a_rel)
    R_wb, w_b, dw_b, f_b = rotation(rng), *rng.normal(size=(3, 3))
    # what the sensor reads: its orientation, its angular velocity (the base's plus the
    # link's own), its specific force (the base origin's moved to it, Featherstone §2.11)
    w_s = R_bs.T @ (w_b + w_rel)
    f_s = R_bs.T @ (f_b + np.cross(dw_b, r) + np.cross(w_b, np.cross(w_b, r))
                    + 2.0 * np.cross(w_b, v_rel) + a_rel)
    np.testing.assert_allclose(base_orientation(sensor, quaternion(R_wb @ R_bs)), R_wb,
                               atol=1e-12)
    np.testing.assert_allclose(base_angular_velocity(sensor, w_s), w_b, atol=1e-12)
    np.testing.assert_allclose(base_specific_force(sensor, f_s, w_b, dw_b), f_b, atol=1e-12)


def test_a_quaternion_off_unit_norm_is_normalised() -> None:
    sensor = FrameMotion(np.eye(3), np.zeros(3), *np.zeros((4, 3)))
    q = quaternion(axis_angle(np.array([0.0, 0.6, 0.8]), 0.7))
    np.testing.assert_allclose(base_orientation(sensor, 1.0005 * q),
                               axis_angle(np.array([0.0, 0.6, 0.8]), 0.7), atol=1e-12)


@pytest.mark.parametrize("angle", [0.0, 1e-9, 2e-8, 1e-3, 0.5, 3.0])
def test_the_rotation_exponential_is_rodrigues(angle: float) -> None:
    axis = np.array([0.48, -0.6, 0.64])
    np.testing.assert_allclose(rotation_exp(angle * axis), axis_angle(axis, angle),
                               atol=1e-15 + 1e-12 * angle)
