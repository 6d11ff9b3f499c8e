"""Issue 39, cold start: a ``colcon build`` compiles the nodes' kernels into the install
(rnea_ros/build_precompile.py, setup.py's ``install``), and nothing else does.

The decision on the ``install`` options each installer passes (colcon; a wheel, which
pip builds for ``pip install .``; ``setup.py install`` without colcon's options; the
switch off); the precompile run on a package installed under ``tmp_path`` (a stand-in
``rnea_ros.nodes.precompile`` there reports how it was started: the installed package
first, never the source tree, the install's share directory on ``AMENT_PREFIX_PATH``,
the wrappers' interpreter); a failing or missing interpreter is a warning line, never a
failed build. No real colcon here (docs/performance.md, "Start-up", has its numbers).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rnea_ros.build_precompile import SWITCH, decision, interpreter, run_after_install

# what colcon's ament_python build passes: setup.py ... install --record
# build/rnea_ros/install.log --single-version-externally-managed (no --root)
COLCON = {"root": None, "externally_managed": True, "record": "build/rnea_ros/install.log"}


def test_colcon_style_install_precompiles() -> None:
    assert decision(**COLCON, environ={}) == (True, "colcon-style install into a prefix")
    assert decision(**COLCON, environ={SWITCH: "1"})[0]


@pytest.mark.parametrize(("options", "environ", "why"), [
    ({"root": "/tmp/bdist.linux/wheel"}, {}, "staged install"),  # bdist_wheel: pip install
    ({"externally_managed": False, "record": None}, {}, "not a colcon-style install"),
    ({"record": None}, {}, "not a colcon-style install"),
    ({}, {SWITCH: "0"}, f"{SWITCH}=0"),
])
def test_other_installs_do_not(options: dict[str, object], environ: dict[str, str],
                               why: str) -> None:
    go, reason = decision(**{**COLCON, **options}, environ=environ)  # type: ignore[arg-type]
    assert not go and reason.startswith(why), reason


def fake_install(tmp_path: Path, body: str) -> SimpleNamespace:
    """A prefix with ``lib/.../rnea_ros/nodes/precompile.py`` = ``body`` and
    ``bin/python3`` (this interpreter), as setuptools' ``install`` command leaves it."""
    prefix = tmp_path / "install" / "rnea_ros"
    lib = prefix / "lib" / "python3" / "site-packages"
    nodes = lib / "rnea_ros" / "nodes"
    nodes.mkdir(parents=True)
    (lib / "rnea_ros" / "__init__.py").write_text("")
    (nodes / "__init__.py").write_text("")
    (nodes / "precompile.py").write_text(body)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python3").symlink_to(sys.executable)
    return SimpleNamespace(install_lib=str(lib), install_base=str(prefix), **{
        "root": None, "single_version_externally_managed": True, "record": "install.log"})


REPORT = """import json, os, sys
import rnea_ros
json.dump({"package": rnea_ros.__file__, "path0": sys.path[0], "argv": sys.argv,
           "ament": os.environ.get("AMENT_PREFIX_PATH", ""), "cwd": os.getcwd()},
          open(os.environ["REPORT"], "w"))
"""


def test_the_install_is_precompiled_with_the_installed_package(tmp_path: Path) -> None:
    command = fake_install(tmp_path, REPORT)
    report = tmp_path / "report.json"
    env = dict(os.environ, REPORT=str(report), AMENT_PREFIX_PATH="/opt/ros/jazzy",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))  # the source tree
    assert run_after_install(command, env) is True
    seen = json.loads(report.read_text())
    lib = Path(command.install_lib).resolve()
    assert Path(seen["package"]).resolve() == lib / "rnea_ros" / "__init__.py"
    assert seen["argv"][0].endswith("precompile.py")
    assert seen["ament"].split(os.pathsep) == [
        str(Path(command.install_base).resolve()), "/opt/ros/jazzy"]
    assert interpreter(command.install_base, env) == f"{command.install_base}/bin/python3"


def test_a_failed_precompile_is_a_warning_not_a_failed_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = fake_install(tmp_path, "raise SystemExit(3)\n")
    assert run_after_install(command, dict(os.environ)) is False
    out = capsys.readouterr().out
    assert "WARNING: build-time precompile failed (exit code 3" in out
    (Path(command.install_base) / "bin" / "python3").unlink()
    command.install_lib = str(tmp_path / "missing")  # no such directory: OSError
    assert run_after_install(command, dict(os.environ)) is False
    assert "WARNING" in capsys.readouterr().out


def test_no_precompile_outside_colcon_prints_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = fake_install(tmp_path, "raise SystemExit(3)\n")
    command.root = str(tmp_path / "stage")
    assert run_after_install(command, {}) is False
    assert "no build-time precompile: staged install" in capsys.readouterr().out
