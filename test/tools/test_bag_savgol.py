"""rnea-bag's Savitzky-Golay filter (tools/bag/savgol.py) is scipy.signal's to the bit,
and a bag's analysis no longer imports scipy.signal (0.7 s of CPU in every spawned
process: each fresh Dask worker of rnea-fleet paid it, docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.signal

from rnea_ros.tools.bag.savgol import savgol_coeffs, savgol_filter


@pytest.mark.parametrize("window", [5, 7, 21, 51, 6, 20])
@pytest.mark.parametrize("order", [2, 3, 4])
@pytest.mark.parametrize("deriv", [0, 1, 2, 3])
def test_the_filter_is_scipys_to_the_bit(window: int, order: int, deriv: int) -> None:
    rng = np.random.default_rng(window * 100 + order * 10 + deriv)
    t = np.arange(400) * 1e-3
    q = np.column_stack([np.sin(3 * t), t ** 3, rng.normal(size=t.size),
                         np.cumsum(rng.normal(size=t.size))])
    for n in (window, window + 1, 400):  # the whole data one window, a bit more, long
        x = q[:n]
        expected = scipy.signal.savgol_filter(x, window, order, deriv=deriv, delta=1e-3,
                                              axis=0, mode="interp")
        np.testing.assert_array_equal(savgol_filter(x, window, order, deriv=deriv,
                                                    delta=1e-3), expected)
        one = scipy.signal.savgol_filter(x[:, 2], window, order, deriv=deriv, delta=1e-3,
                                         axis=0, mode="interp")  # one signal, 1-D
        np.testing.assert_array_equal(savgol_filter(x[:, 2], window, order, deriv=deriv,
                                                    delta=1e-3), one)
    for use in ("conv", "dot"):
        np.testing.assert_array_equal(
            savgol_coeffs(window, order, deriv=deriv, delta=1e-3, use=use),
            scipy.signal.savgol_coeffs(window, order, deriv=deriv, delta=1e-3, use=use))


def test_bad_windows_are_refused_as_scipy_does() -> None:
    with pytest.raises(ValueError, match="polyorder must be less than window_length"):
        savgol_coeffs(3, 3)
    with pytest.raises(ValueError, match="less than or equal to the size of x"):
        savgol_filter(np.zeros((4, 2)), 5, 2)
    with pytest.raises(ValueError, match="`use` must be"):
        savgol_coeffs(5, 2, use="matrix")


def test_a_bag_task_does_not_import_scipy_signal() -> None:
    code = ("import sys, rnea_ros.tools.fleet.task, rnea_ros.tools.bag.differentiation\n"
            "print('scipy.signal' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False"]
