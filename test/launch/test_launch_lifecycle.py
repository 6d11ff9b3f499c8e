"""The launch files' ``start_inactive:=`` (issue 39): declared by every launch file,
default false (the controller active at once, as before), turned into the controller's
``autostart`` parameter, whose values the nodes' tables accept. Checked without
``launch`` installed (the files are imported as modules, their source parsed)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from rnea_ros.control.config import CONTROLLER_PARAMETERS
from rnea_ros.control.effort_limiter import RATE_LIMITER_PARAMETERS
from rnea_ros.launching import LIFECYCLE_ARGUMENTS, autostart

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_") + "_lc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_autostart_values_are_the_tables_choices() -> None:
    for table in (CONTROLLER_PARAMETERS, RATE_LIMITER_PARAMETERS):
        spec = table["autostart"]
        assert spec.default == "active" and spec.read_only
        assert set(spec.choices) == {"active", "inactive", "unconfigured"}
    assert autostart(False) == {"autostart": "active"}
    assert autostart(True) == {"autostart": "inactive"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_every_launch_file_takes_start_inactive(path: Path) -> None:
    module = load(path)
    assert module.ARGUMENTS["start_inactive"] == LIFECYCLE_ARGUMENTS["start_inactive"]
    assert module.ARGUMENTS["start_inactive"][0] == "false"
    calls = [node for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == "autostart"]
    assert len(calls) == 1, f"{path.name}: the controller's autostart is not set once"
    (arg,) = calls[0].args
    assert ast.unparse(arg) == "flag('start_inactive')"
