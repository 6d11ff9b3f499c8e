"""The version has one source, ``rnea_ros.__version__``; every other place agrees."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import yaml

import rnea_ros

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_semver() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", rnea_ros.__version__)


def test_package_xml_states_the_package_version() -> None:
    """colcon reads package.xml statically; it must carry the same version."""
    assert ET.parse(ROOT / "package.xml").getroot().findtext("version") == rnea_ros.__version__


def test_installed_metadata_has_the_package_version() -> None:
    """setup.py reads the version from rnea_ros/__init__.py, so pip's metadata agrees."""
    assert metadata.version("rnea_ros") == rnea_ros.__version__


def test_citation_states_the_package_version() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["version"] == rnea_ros.__version__
    assert citation["cff-version"] == "1.2.0"


def test_changelog_has_unreleased_and_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert headings[0] == "Unreleased"
    assert rnea_ros.__version__ in headings
