"""Fixtures shared by the mixed rigid/elastic tests."""

from __future__ import annotations

import pytest
from elastic_cases import paper_model


@pytest.fixture(scope="package")
def hua():
    """The paper's 3-DoF arm (hua-2024 table I, test/data/hua_2024_table1.urdf) with the
    shipped drive file."""
    return paper_model()
