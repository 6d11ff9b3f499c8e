"""Savitzky-Golay filter coefficients and filtering, as ``scipy.signal`` computes them.

``scipy.signal.savgol_coeffs`` and ``savgol_filter(..., mode="interp")`` (SciPy 1.17)
step for step, with the same library calls (``scipy.linalg.lstsq``,
``scipy.ndimage.convolve1d``), so the results are the same to the bit
(test/tools/test_bag_savgol.py) without importing ``scipy.signal``: that import
pulls in ``scipy.stats``, ``scipy.interpolate`` and ``scipy.optimize`` (about
0.7 s of CPU), which every freshly spawned process analysing a bag paid (a Dask
worker of rnea-fleet, rnea-bag's start; docs/performance.md).

Savitzky, Golay (1964), Smoothing and differentiation of data by simplified least
squares procedures: the least-squares polynomial of degree ``polyorder`` over a
window of ``window_length`` samples, its ``deriv``-th derivative at the window's
point ``pos``; near the ends of the data (``interp``) the polynomial fitted to the
first and last whole window is evaluated instead.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import lstsq
from scipy.ndimage import convolve1d

from rnea_ros.tools.bag.errors import FilterWindowError

Array = NDArray[np.float64]


def savgol_coeffs(window_length: int, polyorder: int, deriv: int = 0, delta: float = 1.0,
                  use: str = "conv") -> Array:
    """(window_length,) the filter's coefficients: ``use="conv"`` in convolution order,
    ``"dot"`` in the window's order (a dot product with the window gives the fitted
    polynomial's ``deriv``-th derivative at its centre [unit of the data / delta^deriv])."""
    if polyorder >= window_length:
        raise FilterWindowError(f"polyorder must be less than window_length. (polyorder "
                                f"{polyorder}, window_length {window_length})")
    if use not in ("conv", "dot"):
        raise FilterWindowError(f"`use` must be 'conv' or 'dot' (got {use!r})")
    halflen, rem = divmod(window_length, 2)
    pos = halflen if rem else halflen - 0.5
    if deriv > polyorder:
        return np.zeros(window_length, dtype=np.float64)
    x = np.arange(-pos, window_length - pos, dtype=np.float64)
    if use == "conv":
        x = np.flip(x)
    order = np.reshape(np.arange(polyorder + 1, dtype=np.float64), (-1, 1))
    A = x ** order
    y = np.zeros(polyorder + 1, dtype=np.float64)
    y[deriv] = float(math.factorial(deriv)) / (delta ** deriv)
    rcond = np.finfo(A.dtype).eps * max(A.shape[-1], A.shape[-2])
    return np.asarray(lstsq(A, y, cond=rcond)[0], dtype=np.float64)


def savgol_filter(x: Array, window_length: int, polyorder: int, deriv: int = 0,
                  delta: float = 1.0) -> Array:
    """``scipy.signal.savgol_filter(x, window_length, polyorder, deriv, delta, axis=0,
    mode="interp")``: x (samples, ...) float; the same shape back."""
    x = np.asarray(x)
    if x.dtype != np.float64 and x.dtype != np.float32:
        x = x.astype(np.float64)
    coeffs = savgol_coeffs(window_length, polyorder, deriv=deriv, delta=delta)
    if window_length > x.shape[0]:
        raise FilterWindowError(f"If mode is 'interp', window_length must be less than or "
                                f"equal to the size of x. (window_length {window_length}, "
                                f"{x.shape[0]} samples)")
    y = convolve1d(x, coeffs, axis=0, mode="constant")
    halflen = window_length // 2
    n = x.shape[0]
    _fit_edge(x, 0, window_length, 0, halflen, polyorder, deriv, delta, y)
    _fit_edge(x, n - window_length, n, n - halflen, n, polyorder, deriv, delta, y)
    return np.asarray(y)


def _fit_edge(x: Array, window_start: int, window_stop: int, interp_start: int,
              interp_stop: int, polyorder: int, deriv: int, delta: float, y: Array) -> None:
    """Into ``y[interp_start:interp_stop]``: the ``deriv``-th derivative of the polynomial
    fitted to ``x[window_start:window_stop]``."""
    edge = np.reshape(x[window_start:window_stop], (window_stop - window_start, -1))
    c = _polyfit(np.arange(0, window_stop - window_start, dtype=x.dtype), edge, polyorder)
    if deriv > 0:
        c = _polyder(c, deriv)
    i = np.arange(interp_start - window_start, interp_stop - window_start, dtype=c.dtype)
    values = _polyval(c, np.reshape(i, (-1, 1))) / (delta ** deriv)
    y[interp_start:interp_stop] = np.reshape(values, (interp_stop - interp_start,
                                                      *y.shape[1:]))


def _polyfit(x: Array, y: Array, deg: int) -> Array:
    """Least-squares polynomial coefficients (highest power first) per column of y,
    columns of the Vandermonde matrix scaled to unit norm (as ``numpy.polyfit``)."""
    order = int(deg) + 1
    rcond = x.shape[0] * np.finfo(x.dtype).eps
    powers = np.flip(np.arange(order, dtype=x.dtype))
    lhs = x[:, None] ** powers[None, :]
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    lhs /= scale
    c, _, rank, _ = lstsq(lhs, y, cond=rcond)
    c = (c.T / scale).T
    if rank != order:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    return np.asarray(c)


def _polyder(p: Array, m: int) -> Array:
    """The ``m``-th derivative of the polynomials ``p`` (coefficients along axis 0)."""
    n = p.shape[0]
    if n <= m:
        return np.zeros_like(p[:1, ...])
    dp = np.array(p[:-m, ...], copy=True)
    for k in range(m):
        rng = np.arange(n - k - 1, m - k - 1, -1, dtype=p.dtype)
        dp *= np.reshape(rng, (n - m,) + (1,) * (p.ndim - 1))
    return dp


def _polyval(p: Array, x: Array) -> Array:
    """Horner's rule: the polynomials ``p`` (highest power first) at ``x``."""
    y = np.zeros_like(x)
    for j in range(p.shape[0]):
        y = y * x + p[j, ...]
    return y
