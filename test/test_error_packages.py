"""Each package keeps its own errors, all under ``RneaError``; the old names in
``rnea_ros.core.errors`` (and ``rnea_ros.core``) still resolve; the packages raise
typed errors, not plain ``ValueError``/``RuntimeError``."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from plain_raises import PACKAGE, plain_raises

import rnea_ros.core as rc
from rnea_ros.core import errors

MOVED = errors.MOVED  # old name -> package module
PACKAGES = {"rnea_ros.tools.bag.errors", "rnea_ros.identification.errors",
            "rnea_ros.planning.errors", "rnea_ros.parameter_errors"}


def defined_classes(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)}


@pytest.mark.parametrize("name", ["BagError", "IdentificationError", "InfeasibleError",
                                  "PlanningError", "SolverError", "ParameterError"])
def test_a_package_error_lives_in_its_package_and_keeps_its_old_name(name: str) -> None:
    assert set(MOVED.values()) == PACKAGES
    assert len(MOVED) == 6
    cls = getattr(importlib.import_module(MOVED[name]), name)
    assert name not in defined_classes(PACKAGE / "core" / "errors.py")
    assert getattr(errors, name) is cls  # from rnea_ros.core.errors import BagError
    assert getattr(rc, name) is cls  # rc.BagError
    assert issubclass(cls, rc.RneaError)
    with pytest.raises(rc.RneaError):
        raise cls("caught by except RneaError")


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchError"):
        errors.NoSuchError  # noqa: B018
    with pytest.raises(AttributeError, match="NoSuchError"):
        rc.NoSuchError  # noqa: B018


def test_the_old_names_load_no_layer_above_the_core_until_asked() -> None:
    code = ("import sys, rnea_ros.core, rnea_ros.core.errors as e\n"
            "above = [m for m in sys.modules if m.startswith('rnea_ros.')"
            " and m.split('.')[1] != 'core']\n"
            "assert not above, above\n"
            "assert e.PlanningError.__module__ == 'rnea_ros.planning.errors'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=PACKAGE.parent, check=False)
    assert result.returncode == 0, result.stderr


def test_planning_identification_and_tools_raise_typed_errors() -> None:
    files = [*(PACKAGE / "planning").rglob("*.py"), *(PACKAGE / "identification").rglob("*.py"),
             *(PACKAGE / "tools").rglob("*.py"), PACKAGE / "nodes" / "identification_loop.py"]
    assert len(files) > 30
    found = [hit for path in files for hit in plain_raises(path)]
    assert not found, found
