"""The commands table (rnea_ros/commands.py): names on the PATH, ``ros2 run`` wrappers,
and one line naming the extra when an optional dependency is missing (issue 39)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import rnea_ros
from rnea_ros import commands

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_names_a_main_and_an_entry_function(name: str) -> None:
    spec = commands.COMMANDS[name]
    module, function = spec.target.split(":")
    assert callable(getattr(importlib.import_module(module), function))
    assert callable(getattr(commands, spec.ros_name))
    assert name.startswith("rnea-"), "PATH names are this package's, never bare"


def test_installed_console_scripts_are_the_table() -> None:
    """pip's metadata lists exactly the table's names (no bare `controller`, `demo`)."""
    scripts = {e.name: e.value for e in metadata.entry_points(group="console_scripts")
               if e.value.startswith("rnea_ros.")}
    assert scripts == {name: f"rnea_ros.commands:{spec.ros_name}"
                       for name, spec in commands.COMMANDS.items()}


def test_ros_wrappers_are_written_for_every_command_and_run() -> None:
    """setup.py writes <prefix>/lib/rnea_ros/<ros_name> wrappers (build/ros_executables in
    the source tree); one of them runs the command with the prefix's interpreter."""
    folder = ROOT / "build" / "ros_executables"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        spec.ros_name for spec in commands.COMMANDS.values())
    assert all(os.access(p, os.X_OK) for p in folder.iterdir())
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run([str(folder / "rnea_plan"), "--version"], capture_output=True,
                         text=True, env=env, timeout=120, check=True)
    assert out.stdout.strip() == f"rnea-plan {rnea_ros.__version__}"


def test_a_missing_optional_dependency_is_one_line_naming_the_extra(monkeypatch,
                                                                    capsys) -> None:
    def missing(name: str) -> None:
        raise ModuleNotFoundError("No module named 'rosbags'", name="rosbags.highlevel")

    monkeypatch.setattr(commands.importlib, "import_module", missing)
    assert commands.run("rnea-bag", ["--help"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "'rosbags' is not installed; pip install 'rnea_ros[tools]'" in err


def test_a_missing_module_of_the_package_itself_still_raises(monkeypatch) -> None:
    def broken(name: str) -> None:
        raise ModuleNotFoundError("No module named 'rnea_ros.tools.bag.cli'",
                                  name="rnea_ros.tools.bag.cli")

    monkeypatch.setattr(commands.importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError):
        commands.run("rnea-bag", ["--help"])


def test_run_passes_argv_and_the_exit_code(capsys) -> None:
    assert commands.run("rnea-config", ["--urdf", "/nope.urdf", "--out", "/tmp/x.yaml"]) == 1
    assert "rnea-config: error:" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["rnea-bag", "a.bag", "--urdf", "a.urdf"],
                                  ["rnea-fleet", "analyse", "m.yaml", "--out", "o"],
                                  ["rnea-controller"]])
def test_numba_jit_switched_off_is_one_line_naming_the_variable(argv, tmp_path) -> None:
    """NUMBA_DISABLE_JIT=1 (a debugging habit) would hand the kernels back as plain
    functions, which cannot build their work arrays: every command stops at once with
    one line naming the variable, exit 1, a node before it starts a ROS context."""
    code = ("import sys; from rnea_ros.commands import run; "
            f"sys.exit(run({argv[0]!r}, {argv[1:]!r}))")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"{argv[0]}: error: NUMBA_DISABLE_JIT is set")
    assert "unset NUMBA_DISABLE_JIT" in out.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_core_refuses_to_import_without_the_jit() -> None:
    code = "import rnea_ros.core"
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1].startswith(
        "rnea_ros.core.errors.JitDisabledError: NUMBA_DISABLE_JIT is set")
