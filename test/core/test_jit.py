"""The compiled-path helpers of rnea_ros.core._jit: sincos against libm."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from rnea_ros.core._jit import SINCOS_RANGE, sincos


@numba.njit(cache=False)
def _sincos_all(x: np.ndarray, c: np.ndarray, s: np.ndarray) -> None:
    for i in range(x.shape[0]):
        c[i], s[i] = sincos(x[i])


def _eval(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c, s = np.empty_like(x), np.empty_like(x)
    _sincos_all(x, c, s)
    return c, s


@pytest.mark.parametrize("half_width", [1.0, 7.0, 100.0, SINCOS_RANGE])
def test_sincos_is_within_one_rounding_of_libm(half_width: float) -> None:
    rng = np.random.default_rng(5)
    k = np.arange(-300, 301) * (np.pi / 2)  # quadrant edges, where the reduction cancels
    x = np.r_[rng.uniform(-half_width, half_width, 200_000), k, k + 1e-9, k - 1e-9,
              np.pi / 4 * np.array([-1.0, 1.0, 3.0, 5.0]), [0.0, -0.0, 5e-324, 1e-200]]
    x = x[np.abs(x) <= half_width]
    c, s = _eval(x)
    assert np.abs(c - np.cos(x)).max() <= 2.0**-53 * 2  # 1e-16 absolute: one rounding of 1
    assert np.abs(s - np.sin(x)).max() <= 2.0**-53 * 2
    assert np.all(c * c + s * s <= 1.0 + 1e-15)


def test_sincos_signs_of_each_quadrant() -> None:
    for n in range(-8, 9):
        x = n * math.pi / 2 + 0.3
        c, s = sincos(x)
        assert math.copysign(1.0, c) == math.copysign(1.0, math.cos(x))
        assert math.copysign(1.0, s) == math.copysign(1.0, math.sin(x))


def test_sincos_outside_the_reduction_range_and_non_finite_fall_back_to_libm() -> None:
    x = np.array([2e5, -3.3e7, 1e300])
    c, s = _eval(x)
    assert c.tolist() == [math.cos(v) for v in x]
    assert s.tolist() == [math.sin(v) for v in x]
    c, s = _eval(np.array([np.inf, -np.inf, np.nan]))
    assert np.all(np.isnan(c)) and np.all(np.isnan(s))
