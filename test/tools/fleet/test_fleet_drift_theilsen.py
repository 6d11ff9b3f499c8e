"""rnea-fleet's Theil-Sen trend (:func:`rnea_ros.tools.fleet.drift.theil_sen`) against
``scipy.stats.theilslopes`` (the oracle it replaces, so that a run no longer imports
``scipy.stats``), and the run's modules without ``scipy.stats``."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import theilslopes

from rnea_ros.tools.fleet.drift import theil_sen


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(40)
    cases = []
    for n in (3, 4, 5, 7, 10, 20, 31, 60):
        x = np.sort(rng.uniform(0.0, 30.0, n))
        cases.append((0.02 * x + rng.normal(0.0, 0.1, n), x))  # a noisy trend
        cases.append((rng.normal(1.0, 0.3, n), np.round(x)))  # days repeated
        cases.append((np.round(rng.normal(1.0, 0.3, n), 1), np.floor(x / 5.0)))  # both tied
    cases.append((np.ones(6), np.arange(6.0)))  # flat: every y tied
    cases.append((np.ones(4), np.array([0.0, 0.0, 1.0, 1.0])))  # ties beyond the formula
    cases.append((np.array([1.0, 2.0, 0.5]), np.array([2.0, 2.0, 5.0])))
    return cases


def same(a: float, b: float) -> bool:
    """Equal to round-off (bit-equal with scipy 1.17; another version may reorder a sum)."""
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12,
                                                              abs_tol=1e-15)


@pytest.mark.parametrize("k", range(len(_cases())))
def test_theil_sen_is_scipys(k: int) -> None:
    y, x = _cases()[k]
    with np.errstate(invalid="ignore"):
        fit = theilslopes(y, x, alpha=0.95)
    expected = [float(fit[0]), float(fit[2]), float(fit[3])]
    got = list(theil_sen(y, x, 0.95))
    for a, b in zip(got, expected, strict=True):
        assert same(a, b), (got, expected)


def test_other_confidence_levels_match_scipy() -> None:
    rng = np.random.default_rng(7)
    x, y = np.arange(25.0), rng.normal(0.0, 1.0, 25)
    for confidence in (0.5, 0.8, 0.9, 0.99):
        fit = theilslopes(y, x, alpha=confidence)
        got = theil_sen(y, x, confidence)
        assert all(same(a, float(b)) for a, b in zip(got, (fit[0], fit[2], fit[3]),
                                                         strict=True)), (got, fit)


def test_drift_does_not_import_scipy_stats() -> None:
    """The trends of a fleet run leave ``scipy.stats`` unimported (0.26 s of serial CPU
    in the client after the last bag)."""
    code = (
        "import sys, math\n"
        "from rnea_ros.tools.fleet.drift import drift\n"
        "rows = [dict(robot='r', joint='j', status='ok', start=86400.0 * k, rms=1.0 + k,\n"
        "             coulomb=0.1 * k, viscous=0.0, coulomb_se=0.01, viscous_se=0.01,\n"
        "             samples=1000, velocity_rms=1.0) for k in range(5)]\n"
        "trends = drift(rows)\n"
        "assert any(math.isfinite(t['slope_per_day']) for t in trends), trends\n"
        "print('scipy.stats' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-1] == "False"
