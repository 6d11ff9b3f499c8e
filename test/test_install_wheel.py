"""Issue 39 §4: what a pip install gets. The wheel (built here, its contents inspected:
console scripts, ``lib/rnea_ros`` wrappers, launch/config/URDF data, the parameter
tables); ``--version`` of every command and ``--help`` of the nodes answered without the
command's optional dependencies; a launch file run by ``python`` without ``launch``
refused in one line. The full fresh-venv check (install, every ``--help`` and
``--version``, a launch) is ``bench/check_pip_install.py`` (minutes: not in the suite).
"""

from __future__ import annotations

import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import rnea_ros
from rnea_ros.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
# Run with these modules made unimportable: the answers must not need them.
BLOCKED = ["rclpy", "scipy", "rosbags", "threadpoolctl", "launch", "launch_ros",
           "rnea_ros.nodes", "rnea_ros.tools.bag"]


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    block = f"import sys\nfor m in {BLOCKED!r}: sys.modules[m] = None\n"
    return subprocess.run([sys.executable, "-c", block + code, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_version_and_node_help_need_no_optional_module(name: str) -> None:
    run = f"from rnea_ros.commands import run; sys.exit(run({name!r}, sys.argv[1:]))"
    out = python(run, "--version")
    assert (out.returncode, out.stdout.strip(), out.stderr) == (
        0, f"{name} {rnea_ros.__version__}", "")
    if COMMANDS[name].node:
        out = python(run, "--help")
        assert out.returncode == 0 and out.stderr == "", out.stderr
        assert out.stdout.startswith(f"usage: {name} [--ros-args")
        assert f"python -m rnea_ros.parameters {COMMANDS[name].node}" in out.stdout


def test_a_launch_file_without_launch_is_one_line(tmp_path: Path) -> None:
    path = str(ROOT / "launch" / "sim.launch.py")
    out = python(f"import runpy; sys.argv = [{path!r}, *sys.argv[1:]]; "
                 f"runpy.run_path({path!r}, run_name='__main__')", "robot:=arm7")
    assert out.returncode == 1 and out.stdout == ""
    err = out.stderr.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert err.startswith("sim.launch.py: error: the Python module 'launch") and \
        "not on PyPI" in err and "rnea-controller" in err


def test_the_wheel_holds_commands_wrappers_and_data(tmp_path: Path) -> None:
    """pip wheel of the source tree: console scripts exactly the command table's,
    a 0755 wrapper per command in <prefix>/lib/rnea_ros (where ros2 run and launch look),
    the launch files, parameter files, URDFs, package.xml, the ament index marker and the
    nodes' parameter tables."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(tmp_path), str(ROOT)], check=True, timeout=600,
                   capture_output=True)
    (wheel,) = tmp_path.glob("rnea_ros-*.whl")
    assert wheel.name.startswith(f"rnea_ros-{rnea_ros.__version__}-")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"rnea_ros-{rnea_ros.__version__}.dist-info"
        scripts = z.read(f"{info}/entry_points.txt").decode().split("[console_scripts]")[1]
        entries = dict(line.split(" = ") for line in scripts.strip().splitlines())
        assert entries == {name: f"rnea_ros.commands:{spec.ros_name}"
                           for name, spec in COMMANDS.items()}
        data = f"rnea_ros-{rnea_ros.__version__}.data/data"
        for spec in COMMANDS.values():
            member = z.getinfo(f"{data}/lib/rnea_ros/{spec.ros_name}")
            assert stat.S_IMODE(member.external_attr >> 16) == 0o755, spec.ros_name
        for folder, pattern in (("launch", "*.launch.py"), ("config", "*.yaml"),
                                ("urdf", "*.urdf")):
            shipped = {p.name for p in (ROOT / folder).glob(pattern)}
            packed = {Path(n).name for n in names
                      if n.startswith(f"{data}/share/rnea_ros/{folder}/")}
            assert shipped and shipped <= packed, (folder, shipped - packed)
        assert f"{data}/share/rnea_ros/package.xml" in names
        assert f"{data}/share/ament_index/resource_index/packages/rnea_ros" in names
        tables = {p.name for p in (ROOT / "rnea_ros" / "params").glob("*.yaml")}
        assert {f"rnea_ros/params/{t}" for t in tables} <= names
        assert not any(n.startswith("test/") for n in names)
