"""The layers stay honest: who may import whom (docs/design.md, "Layers").

* ``core`` imports no ROS module and none of ``control``, ``planning``,
  ``identification``, ``tools``, ``nodes``;
* ``control``, ``planning``, ``identification``, ``tools`` import no rclpy
  (nor ROS messages);
* only ``nodes`` and the demo import rclpy;
* ``control`` and ``simulation`` do not import each other (both sit on the core;
  the nodes, the harness and the tests join them).
Checked on the sources (every import statement, lazy ones included) and by
importing every module of the core in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rnea_ros"
ROS_MODULES = ("rclpy", "rosidl", "rcl_interfaces", "sensor_msgs", "std_msgs", "trajectory_msgs",
               "diagnostic_msgs", "builtin_interfaces", "rosgraph_msgs", "launch", "launch_ros",
               "ament_index_python")
# Above the core, resolving ``package://`` paths through the ament resource index
# (a file lookup, no middleware) is allowed; the ROS runtime and messages are not.
RUNTIME = tuple(m for m in ROS_MODULES if m != "ament_index_python")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def sources(folder: str) -> list[Path]:
    files = sorted((PACKAGE / folder).rglob("*.py"))
    assert files, folder
    return files


def test_core_imports_no_ros_and_no_higher_layer() -> None:
    files = sources("core")
    assert len(files) >= 20
    for path in files:
        for name in imported_modules(path):
            parts = name.split(".")
            assert parts[0] not in (*ROS_MODULES, "rosbags"), f"{path} imports {name}"
            if parts[0] == "rnea_ros":
                assert len(parts) > 1 and parts[1] == "core", f"{path} imports {name}"


@pytest.mark.parametrize("layer", ["control", "planning", "identification", "tools"])
def test_layers_below_the_nodes_import_no_ros(layer: str) -> None:
    for path in sources(layer):
        for name in imported_modules(path):
            assert name.split(".")[0] not in RUNTIME, f"{path} imports {name}"
            assert not name.startswith("rnea_ros.nodes"), f"{path} imports {name}"


@pytest.mark.parametrize(("layer", "other"), [("control", "simulation"),
                                              ("simulation", "control")])
def test_control_and_simulation_do_not_import_each_other(layer: str, other: str) -> None:
    for path in sources(layer):
        names = set(imported_modules(path))
        for node in ast.walk(ast.parse(path.read_text())):  # from rnea_ros import simulation
            if isinstance(node, ast.ImportFrom) and node.module:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        for name in names:
            assert not name.startswith(f"rnea_ros.{other}"), f"{path} imports {name}"


def test_only_nodes_and_the_demo_import_rclpy() -> None:
    allowed = {PACKAGE / "demo.py"} | set(sources("nodes"))
    importers = {path for path in PACKAGE.rglob("*.py")
                 if any(n.split(".")[0] == "rclpy" for n in imported_modules(path))}
    assert importers, "the nodes import rclpy: the check itself is broken"
    assert importers <= allowed, sorted(str(p) for p in importers - allowed)


def test_importing_the_core_loads_no_ros_module() -> None:
    code = ("import sys, pkgutil, importlib, rnea_ros.core as c\n"
            "for m in pkgutil.walk_packages(c.__path__, 'rnea_ros.core.'):\n"
            "    importlib.import_module(m.name)\n"
            f"bad = [m for m in sys.modules if m.split('.')[0] in {ROS_MODULES!r}]\n"
            "bad += [m for m in sys.modules if m.startswith('rnea_ros.') and\n"
            "        m.split('.')[1] != 'core']\n"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=PACKAGE.parent, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_flat_namespace_lists_what_it_exports() -> None:
    import rnea_ros.core as rc

    assert sorted(rc.__all__) == sorted(set(rc.__all__))
    missing = [name for name in rc.__all__ if not hasattr(rc, name)]
    assert not missing
    for name in ("load_urdf", "from_dh", "from_mdh", "rnea", "gravity_torques", "mass_matrix",
                 "aba", "forward_dynamics", "coriolis_matrix", "rnea_time_derivative", "rnea_batch",
                 "elastic_rnea", "elastic_model", "RneaError", "StateError"):
        assert name in rc.__all__, name
