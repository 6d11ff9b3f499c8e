"""Launch files reference only things that exist and agree with each other.

``launch``/``launch_ros`` are not on PyPI, so the launch files keep what they
reference in module-level tables (arguments, nodes, executables, controllers,
files) and import ``launch`` inside ``generate_launch_description``; this test
imports them without it and checks every table entry. Where ``launch`` is
installed (a ROS workspace), the descriptions are also built.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from rnea_ros.control.config import (
    CONTROLLER_PARAMETERS,
    controller_config,
    default_values,
    load_elastic,
    load_model,
)
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.rate_limiter import RATE_LIMITER_PARAMETERS
from rnea_ros.nodes.simulator import SIMULATOR_PARAMETERS
from rnea_ros.samples import ELASTIC_ROBOTS

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))
NODE_PARAMETERS = {"rnea_controller": CONTROLLER_PARAMETERS,
                   "rnea_simulator": SIMULATOR_PARAMETERS,
                   "rnea_rate_limiter": RATE_LIMITER_PARAMETERS}
COMMON_PARAMETERS = {"use_sim_time"}


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def console_scripts() -> dict[str, str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    entries = ast.literal_eval(value)
                    return dict(e.replace(" ", "").split("=") for e in entries)
    raise AssertionError("setup.py has no console_scripts")


def flat_values(params: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(flat_values(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def flatten(params: dict, prefix: str = "") -> set[str]:
    names = set()
    for key, value in params.items():
        if isinstance(value, dict):
            names |= flatten(value, f"{prefix}{key}.")
        else:
            names.add(prefix + key)
    return names


def test_the_three_launch_files_exist() -> None:
    assert {p.name for p in LAUNCH_FILES} == {"sim.launch.py", "gazebo.launch.py",
                                             "robot.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_arguments_are_described_and_defaults_exist(path: Path) -> None:
    module = load(path)
    assert callable(module.generate_launch_description)
    for name, (default, description) in module.ARGUMENTS.items():
        assert len(description) > 15, f"{path.name}: argument '{name}' needs a description"
        if name == "robot":
            urdf = ROOT / "urdf" / f"{default}.urdf"
            assert urdf.is_file()
            load_urdf(urdf)  # parses with our own reader
        if name.endswith("_config"):
            assert (ROOT / "config" / default).is_file()


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_nodes_use_existing_executables_and_declared_parameters(path: Path) -> None:
    module = load(path)
    scripts = console_scripts()
    for package, executable, node_name, config_argument in module.NODES:
        assert package == "rnea_ros" and executable in scripts
        target_module, function = scripts[executable].split(":")
        assert callable(getattr(importlib.import_module(target_module), function))
        config = ROOT / "config" / module.ARGUMENTS[config_argument][0]
        data = yaml.safe_load(config.read_text())
        assert set(data) == {node_name}, f"{config.name} must be keyed by '{node_name}'"
        names = flatten(data[node_name]["ros__parameters"])
        unknown = names - set(NODE_PARAMETERS[node_name]) - COMMON_PARAMETERS
        assert not unknown, f"{config.name}: undeclared parameters {sorted(unknown)}"
    for package, executable in getattr(module, "EXECUTABLES", ()):
        if package == "rnea_ros":
            assert executable in scripts


def test_every_declared_parameter_is_in_the_yaml_files() -> None:
    for node_name, file_name in (("rnea_controller", "controller.yaml"),
                                 ("rnea_simulator", "simulator.yaml"),
                                 ("rnea_rate_limiter", "rate_limiter.yaml")):
        data = yaml.safe_load((ROOT / "config" / file_name).read_text())
        names = flatten(data[node_name]["ros__parameters"])
        from_launch = {"robot_description", "urdf_path", "drives_file"}
        missing = set(NODE_PARAMETERS[node_name]) - names - from_launch
        assert not missing, f"{file_name} does not document {sorted(missing)}"


def controller_file(robot: str) -> Path:
    return ROOT / "config" / ("controller.yaml" if robot == "arm7" else f"{robot}_controller.yaml")


GAZEBO_ROBOTS = sorted(p.stem for p in (ROOT / "urdf").glob("*.urdf")
                       if ET.parse(p).getroot().find("ros2_control") is not None)


def test_every_sample_robot_is_gazebo_ready() -> None:
    """All but the elastic-joint robots: Gazebo/gz_ros2_control have no geared elastic
    drives, those run on the embedded simulator (next test)."""
    assert GAZEBO_ROBOTS == sorted(p.stem for p in (ROOT / "urdf").glob("*.urdf")
                                   if p.stem not in ELASTIC_ROBOTS)


@pytest.mark.parametrize("robot", ELASTIC_ROBOTS)
def test_elastic_robots_have_valid_sim_configs(robot: str) -> None:
    """sim.launch.py with robot:=<robot> and its two config files: every parameter is
    declared and validates against the model (elastic side file included)."""
    sim = load(ROOT / "launch" / "sim.launch.py")
    assert "elastic" in sim.ARGUMENTS["mode"][1]
    for node_name, suffix in (("rnea_controller", "controller"), ("rnea_simulator", "simulator")):
        data = yaml.safe_load((ROOT / "config" / f"{robot}_{suffix}.yaml").read_text())
        params = flat_values(data[node_name]["ros__parameters"])
        assert set(params) <= set(NODE_PARAMETERS[node_name])
        assert params["elastic_file"] == f"package://rnea_ros/config/{robot}_elastic.yaml"
    values = {**default_values(), **flat_values(
        yaml.safe_load((ROOT / "config" / f"{robot}_controller.yaml").read_text())
        ["rnea_controller"]["ros__parameters"]), "urdf_path": f"package://rnea_ros/urdf/{robot}.urdf"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hua-2024 table I
        model = load_model(values)
    elastic = load_elastic(values, model)
    config = controller_config(values, model, elastic)
    assert config.mode == "elastic" and elastic is not None and elastic.n_elastic > 0


@pytest.mark.parametrize("robot", GAZEBO_ROBOTS)
def test_gazebo_controllers_urdf_and_controller_agree(robot: str) -> None:
    gazebo = load(ROOT / "launch" / "gazebo.launch.py")
    controllers_file = ROOT / "config" / f"{robot}{gazebo.CONTROLLERS_FILE_SUFFIX}"
    controllers = yaml.safe_load(controllers_file.read_text())
    manager = controllers["controller_manager"]["ros__parameters"]
    for name in gazebo.CONTROLLERS:
        assert "type" in manager[name], f"controller '{name}' has no type"
    assert manager["effort_controller"]["type"] == \
        "forward_command_controller/ForwardCommandController"
    effort = controllers["effort_controller"]["ros__parameters"]
    assert effort["interface_name"] == "effort"
    ours = yaml.safe_load(controller_file(robot).read_text())
    ours_joints = ours["rnea_controller"]["ros__parameters"]["joints"]
    assert effort["joints"] == ours_joints
    urdf_path = ROOT / "urdf" / f"{robot}.urdf"
    root = ET.parse(urdf_path).getroot()
    system = root.find("ros2_control")
    assert system is not None
    assert system.find("hardware/plugin").text == "gz_ros2_control/GazeboSimSystem"
    hw_joints = [j.get("name") for j in system.findall("joint")]
    model = load_urdf(urdf_path)
    assert hw_joints == ours_joints == list(model.joint_names)
    assert model.root_link == "world"  # fixed in the Gazebo world
    for joint in system.findall("joint"):
        assert [c.get("name") for c in joint.findall("command_interface")] == ["effort"]
        assert {s.get("name") for s in joint.findall("state_interface")} >= {"position",
                                                                             "velocity"}
    plugin = root.find("gazebo/plugin")
    assert plugin.get("filename") == "gz_ros2_control-system"
    assert plugin.find("parameters").text.endswith(f"config/{controllers_file.name}")
    names = flatten(ours["rnea_controller"]["ros__parameters"])
    assert not names - set(CONTROLLER_PARAMETERS)
    values = default_values()  # the file is a valid configuration for that robot
    values.update(flat_values(ours["rnea_controller"]["ros__parameters"]))
    controller_config(values, model)


def test_simulator_config_matches_the_default_robot() -> None:
    simulator = yaml.safe_load((ROOT / "config" / "simulator.yaml").read_text())
    ours = yaml.safe_load((ROOT / "config" / "controller.yaml").read_text())
    assert simulator["rnea_simulator"]["ros__parameters"]["joints"] == \
        ours["rnea_controller"]["ros__parameters"]["joints"]


def test_installed_data_files_cover_launch_config_and_urdf() -> None:
    setup = (ROOT / "setup.py").read_text()
    for folder, pattern in (("launch", "launch/*.launch.py"), ("config", "config/*.yaml"),
                            ("urdf", "urdf/*.urdf")):
        assert f'glob("{pattern}")' in setup and f"share/{{PACKAGE}}/{folder}" in setup


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_description_builds_where_launch_is_installed(path: Path) -> None:
    pytest.importorskip("launch_ros", reason="launch/launch_ros are not on PyPI; built in a "
                        "ROS workspace and in the scratch check described in the README")
    description = load(path).generate_launch_description()
    assert len(description.entities) >= len(load(path).ARGUMENTS)
