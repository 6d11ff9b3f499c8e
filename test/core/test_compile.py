"""The compiled-path helpers of rnea_ros.core._compile and _algebra: sincos against libm; one
specialisation per argument type for calls between kernels; no cache directory."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from numba.core import types

from rnea_ros.core._algebra import SINCOS_RANGE, sincos
from rnea_ros.core._compile import _by_type


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


def _offset_pair(a: np.ndarray, k: int) -> float:
    return float(a[k] + a[k + 1])


def _pick(t: Any, k: int) -> Any:
    return t[k]


def _flagged(x: float, on: bool) -> float:
    return x + 1.0 if on else x


@pytest.mark.parametrize("by_type", [True, False])
def test_constant_integer_arguments_share_one_specialisation(by_type: bool) -> None:
    """A kernel calling a helper with three constant offsets: one compiled
    specialisation of the helper (numba's default, the control: three, each a module
    compiled on a cold cache)."""
    helper = numba.njit(cache=False)(_offset_pair)
    if by_type:
        helper = _by_type(helper)

    @numba.njit(cache=False)
    def three(a: np.ndarray) -> float:
        return helper(a, 0) + helper(a, 2) + helper(a, 4)  # type: ignore[no-any-return]

    assert three(np.arange(6.0)) == 15.0
    literal = [sig for sig in helper.signatures
               if any(isinstance(t, types.IntegerLiteral) for t in sig)]
    assert len(helper.signatures) == (1 if by_type else 3)
    assert not literal if by_type else len(literal) == 3


def test_a_helper_that_needs_its_literal_still_gets_it() -> None:
    """Indexing a heterogeneous tuple needs a constant index: the plain specialisation
    does not type, the literal one is compiled instead."""
    pick = _by_type(numba.njit(cache=False)(_pick))

    @numba.njit(cache=False)
    def second() -> float:
        return pick((1, 2.5), 1)  # type: ignore[no-any-return]

    assert second() == 2.5
    assert any(isinstance(t, types.IntegerLiteral) for sig in pick.signatures for t in sig)


def test_boolean_flags_keep_their_literal_specialisations() -> None:
    """(numba prunes the branch a literal flag decides: kept for flags.)"""
    flagged = _by_type(numba.njit(cache=False)(_flagged))

    @numba.njit(cache=False)
    def both(x: float) -> float:
        return flagged(x, True) + flagged(x, False)  # type: ignore[no-any-return]

    assert both(1.0) == 3.0
    assert {sig[1] for sig in flagged.signatures} == {types.literal(True), types.literal(False)}


def test_without_a_writable_cache_directory_the_package_compiles_instead() -> None:
    """numba refuses to cache when neither the package's __pycache__ nor the user's
    cache is writable (a read-only install, a user without a writable home): the import
    then warns and runs uncached instead of failing (numba's RuntimeError)."""
    code = textwrap.dedent("""
        import warnings
        import numpy as np
        import numba.core.caching as caching
        def refuse(self, py_func):
            raise RuntimeError("cannot cache function: no locator available")
        caching.FunctionCache.__init__ = refuse
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import rnea_ros.core as rc
            from rnea_ros.core import _compile
        from rnea_ros.samples import load_robot
        m = load_robot("two_link_rr")
        tau = rc.gravity_torques(m, np.zeros(m.nv))
        print(_compile._CACHE, np.isfinite(tau).all(), [str(w.message)[:33] for w in caught])
    """)
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "RNEA_ROS_NO_JIT_CACHE"}
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=str(root)),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("False True ['numba finds no writable directory']"), \
        out.stdout
