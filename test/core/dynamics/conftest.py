"""Fixtures shared by the per-algorithm tests of core/dynamics."""

from __future__ import annotations

import pytest
from dynamics_cases import (
    FREE_FLYER_ROBOTS,
    ROBOTS,
    Case,
    FreeFlyerCase,
    agreement_case,
    free_flyer_case,
)


@pytest.fixture(scope="package", params=ROBOTS)
def pin_case(request: pytest.FixtureRequest) -> Case:
    """A robot, 1000 random states and its Pinocchio oracle (dynamics_cases), built once
    for every test file here that compares with Pinocchio."""
    return agreement_case(request.param)


@pytest.fixture(scope="package", params=FREE_FLYER_ROBOTS)
def ff_case(request: pytest.FixtureRequest) -> FreeFlyerCase:
    """A free-flyer robot, 1000 random states and its Pinocchio oracle (dynamics_cases)."""
    return free_flyer_case(request.param)
