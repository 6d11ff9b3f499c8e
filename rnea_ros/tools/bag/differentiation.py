"""Savitzky-Golay derivatives of a uniformly sampled segment.

A centred window of ``window`` seconds and polynomial ``order`` (>= 3 for the
jerk): no lag inside the data; the first and last half-window are fitted
one-sidedly (``mode="interp"``). Noise gain: a white noise of deviation ``s``
on ``q`` gives about ``s * c_k / (W dt)^k`` on the k-th derivative.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.tools.bag.savgol import savgol_coeffs, savgol_filter

Array = NDArray[np.float64]


def window_samples(window: float, dt: float, order: int) -> int:
    """An odd number of samples covering ``window`` seconds, at least ``order + 2``."""
    w = max(round(window / dt) | 1, order + 2)
    return w if w % 2 else w + 1


def derivatives(q: Array, dt: float, window: int, order: int,
                which: tuple[int, ...] = (1, 2, 3)) -> list[Array]:
    """The time derivatives ``which`` (default first, second and third) of ``q``
    (samples, joints).

    The window shrinks to the segment's length (odd); a derivative the
    polynomial cannot carry (order below it, or too few samples) is zero.
    """
    w = min(window, len(q) if len(q) % 2 else len(q) - 1)
    order = min(order, w - 1)
    result = []
    for k in which:
        if w > order and order >= k:
            result.append(savgol_filter(q, w, order, deriv=k, delta=dt))
        else:
            result.append(np.zeros_like(q))
    return result


# A measured rate is a violation only beyond ``limit + RATE_NOISE_SIGMAS * sigma_rate``
# (docs/bag.md, "Effort-rate checks"): one-sided Gaussian tail 2.9e-7 per sample.
RATE_NOISE_SIGMAS = 5.0
_MAD_TO_SIGMA = 1.0 / 0.6744897501960817  # Gaussian: sigma = MAD / Phi^-1(3/4)


def rate_gain(window: int, order: int, dt: float) -> float:
    """Noise gain [1/s] of the Savitzky-Golay first derivative at the window's centre:
    white noise of deviation ``s`` on a signal gives ``s * rate_gain`` on its derivative
    (the 2-norm of the filter's coefficients)."""
    return float(np.linalg.norm(savgol_coeffs(window, order, deriv=1, delta=dt, use="dot")))


def noise_sigma(x: Array) -> Array:
    """Per column (samples, joints), the deviation of the white noise on ``x``, robustly:
    ``MAD(d2) / 0.6745 / sqrt(6)`` of the second differences ``d2`` (a white noise of
    deviation ``s`` gives ``var d2 = 6 s^2``; a smooth signal adds ``x'' dt^2``, a step a
    few outliers the median ignores). NaN samples are left out; fewer than 10 second
    differences give NaN."""
    out = np.full(x.shape[1], np.nan)
    if len(x) < 12:
        return out
    d2 = x[2:] - 2.0 * x[1:-1] + x[:-2]
    for j in range(x.shape[1]):
        d = d2[:, j][np.isfinite(d2[:, j])]
        if d.size >= 10:
            out[j] = float(np.median(np.abs(d - np.median(d)))) * _MAD_TO_SIGMA / np.sqrt(6.0)
    return out


def effort_rate(effort: Array, dt: float, window: int, order: int) -> Array:
    """The measured effort's time derivative (samples, joints) [N m/s or N/s]: the
    Savitzky-Golay first derivative of the configured window and order (as ``q_dot``),
    not a raw difference (which multiplies the noise by ``sqrt(2) / dt``). A joint with
    a NaN effort in the segment gets NaN throughout (the model's rate is used there)."""
    rate = np.full_like(effort, np.nan)
    if len(effort) < 2:
        return rate
    finite = np.isfinite(effort).all(axis=0)
    if finite.any():
        rate[:, finite] = derivatives(effort[:, finite], dt, window, order, (1,))[0]
    return rate
