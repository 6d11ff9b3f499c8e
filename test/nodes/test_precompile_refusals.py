"""``rnea-precompile`` that finds nothing to compile fails (issue 39 leftovers): before, a
share directory without robots (a broken install, an ``AMENT_PREFIX_PATH`` pointing at
another prefix) compiled the rate limiter alone and exited 0 with "done", so an install
script could not tell. Now: exit code 1 and one line on stderr naming what it looked for
(``urdf/*.urdf``), where (the share directory, ``AMENT_PREFIX_PATH``) and what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnea_ros import samples
from rnea_ros.nodes import precompile as pc

ROOT = Path(__file__).resolve().parents[2]


def empty_prefix(tmp_path: Path) -> Path:
    """An ament prefix that registers ``rnea_ros`` with an empty share directory."""
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "rnea_ros").write_text("")
    (tmp_path / "share" / "rnea_ros").mkdir()
    return tmp_path


@pytest.mark.parametrize("argv", [[], ["--robot", "arm7"], ["--tools"]])
def test_no_robots_found_is_a_failure_naming_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str]) -> None:
    share = tmp_path / "share" / "rnea_ros"
    share.mkdir(parents=True)
    monkeypatch.setattr(samples, "share_directory", lambda: share)
    monkeypatch.setattr(pc, "share_directory", lambda: share, raising=False)
    built: list[object] = []
    monkeypatch.setattr(pc, "precompile", lambda robots: built.append(robots) or [])
    assert pc.main(argv) == 1
    out = capsys.readouterr()
    assert not built and "done" not in out.out  # nothing compiled, no success line
    (line,) = out.err.strip().splitlines()
    assert line.startswith("rnea-precompile: no shipped robots found")
    assert f"{share / 'urdf'}/*.urdf" in line and "--urdf" in line
    assert ("asked for: arm7" in line) == ("--robot" in argv)


def test_no_robots_found_exits_non_zero_as_a_process(tmp_path: Path) -> None:
    prefix = empty_prefix(tmp_path)
    env = dict(os.environ, AMENT_PREFIX_PATH=str(prefix), PYTHONPATH=str(ROOT),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "rnea_ros.nodes.precompile"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert str(prefix / "share" / "rnea_ros" / "urdf") in line
    assert f"AMENT_PREFIX_PATH={prefix}" in line
    assert "Traceback" not in done.stderr and "done in" not in done.stdout


def test_a_user_robot_needs_no_shipped_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``--urdf`` with its files on an install without the samples: built, exit 0."""
    share = tmp_path / "empty"
    share.mkdir()
    monkeypatch.setattr(samples, "share_directory", lambda: share)
    built: list[list[object]] = []
    monkeypatch.setattr(pc, "precompile", lambda robots: built.append(list(robots)) or [])
    config = ROOT / "config"
    assert pc.main(["--urdf", str(ROOT / "urdf" / "arm7.urdf"), "--controller-config",
                    str(config / "arm7_controller.yaml"), "--simulator-config",
                    str(config / "arm7_simulator.yaml")]) == 0
    assert len(built) == 1 and [r.name for r in built[0]] == ["arm7"]  # type: ignore[attr-defined]
    assert capsys.readouterr().err == ""
