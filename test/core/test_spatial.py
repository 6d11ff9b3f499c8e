"""Small rigid-body helpers of ``rnea_ros.core.spatial`` against independent forms."""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from rnea_ros.core import spatial


def test_axis_angle_is_the_exponential_of_the_axis_skew_matrix() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = float(rng.uniform(-4.0, 4.0))
        R = spatial.axis_angle(axis, angle)
        assert np.abs(R - expm(angle * spatial.skew(axis))).max() < 1e-13  # expm: ~2e-14
        assert np.abs(R @ axis - axis).max() < 1e-15


def test_axis_angle_about_the_coordinate_axes() -> None:
    for e, rot in zip(np.eye(3), (spatial.rot_x, spatial.rot_y, spatial.rot_z), strict=True):
        assert np.abs(spatial.axis_angle(e, 0.7) - rot(0.7)).max() < 1e-15
    assert np.array_equal(spatial.axis_angle(np.array([0.0, 0.0, 1.0]), 0.0), np.eye(3))
