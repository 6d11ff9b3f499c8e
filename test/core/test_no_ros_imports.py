"""rnea_ros.core is usable without ROS: no module imports rclpy or ROS messages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "rnea_ros" / "core"
ROS_MODULES = ("rclpy", "rosidl", "rcl_interfaces", "sensor_msgs", "std_msgs", "trajectory_msgs",
               "diagnostic_msgs", "builtin_interfaces", "launch", "launch_ros",
               "ament_index_python", "rosbags")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_sources_import_no_ros_module() -> None:
    files = sorted(CORE.glob("*.py"))
    assert len(files) >= 10
    for path in files:
        for name in imported_modules(path):
            assert name.split(".")[0] not in ROS_MODULES, f"{path.name} imports {name}"


def test_importing_the_core_loads_no_ros_module() -> None:
    code = ("import sys, pkgutil, importlib, rnea_ros.core as c\n"
            "for m in pkgutil.iter_modules(c.__path__):\n"
            "    importlib.import_module('rnea_ros.core.' + m.name)\n"
            f"bad = [m for m in sys.modules if m.split('.')[0] in {ROS_MODULES!r}]\n"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=CORE.parents[1], check=False)
    assert result.returncode == 0, result.stdout + result.stderr
