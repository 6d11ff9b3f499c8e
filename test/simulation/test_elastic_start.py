"""The shipped mixed rigid/elastic arm (urdf/mixed_3dof.urdf, hua-2024 section V): its
link inertias are physically consistent (it loads strict, silently)."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from elastic_cases import PAPER_URDF

from rnea_ros.core.errors import InertiaWarning
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import load_elastic_robot, sample_urdf

URDF = sample_urdf("mixed_3dof")


def principal_moments(path) -> list[np.ndarray]:
    """Principal moments (ascending) of every link inertia of a URDF, through Pinocchio."""
    model = pin.buildModelFromUrdf(str(path))
    return [np.linalg.eigvalsh(model.inertias[i].inertia) for i in range(1, model.njoints)]


def test_the_shipped_urdf_is_physical_and_loads_strict_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any InertiaWarning fails
        load_urdf(URDF, inertia_check="strict")
        load_elastic_robot("mixed_3dof")
    for moments in principal_moments(URDF):  # triangle inequality, with its margin
        assert moments[0] + moments[1] - moments[2] > 2e-3
    # Table I's tensors, kept for the paper-number tests, are what the paper prints.
    with pytest.warns(InertiaWarning, match="triangle"):
        load_urdf(PAPER_URDF, inertia_check="warn")
    paper = principal_moments(PAPER_URDF)
    assert paper[1][0] + paper[1][1] < paper[1][2] and paper[2][0] + paper[2][1] < paper[2][2]


def test_the_consistent_tensors_are_the_nearest_to_table_one() -> None:
    """Only links 2 and 3 changed, along their principal axes, by (I3 - I1 - I2 + 3e-3)/3
    on each moment (I1, I2 up, I3 down: the Frobenius-nearest consistent tensor)."""
    ours, paper = (pin.buildModelFromUrdf(str(p)) for p in (URDF, PAPER_URDF))
    assert np.allclose(ours.inertias[1].inertia, paper.inertias[1].inertia)
    for i in (2, 3):
        a, b = ours.inertias[i], paper.inertias[i]
        assert a.mass == b.mass and np.allclose(a.lever, b.lever)
        w, R = np.linalg.eigh(b.inertia)
        shift = (w[2] - w[0] - w[1] + 3e-3) / 3
        nearest = R @ np.diag(w + shift * np.array([1.0, 1.0, -1.0])) @ R.T
        assert np.abs(a.inertia - nearest).max() < 1e-4  # the URDF's 4 decimals
