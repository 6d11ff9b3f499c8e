"""Fixtures shared by the mixed rigid/elastic tests."""

from __future__ import annotations

import warnings

import pytest

from rnea_ros.samples import load_elastic_robot


@pytest.fixture(scope="package")
def hua():
    """The paper's 3-DoF arm (hua-2024, urdf/mixed_3dof.urdf) with its drive file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # table I's inertias (see urdf/mixed_3dof.urdf)
        return load_elastic_robot("mixed_3dof")
