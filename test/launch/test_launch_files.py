"""Launch files reference only things that exist and agree with each other.

``launch``/``launch_ros`` are not on PyPI, so the launch files keep what they
reference in module-level tables (arguments, nodes, executables, controllers)
and import ``launch`` inside their functions; ``robot:=NAME`` is resolved by
:func:`rnea_ros.samples.robot_files`. This test imports them without ``launch``
and checks every table entry and every shipped robot's complete configuration
(URDF, controller, simulator, ros2_controllers, Gazebo description). Where
``launch`` is installed (a ROS workspace), the descriptions are also built.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import yaml

from rnea_ros.control.config import (
    CONTROLLER_PARAMETERS,
    controller_config,
    default_values,
    load_elastic,
    load_loop_model,
    load_model,
    resolve_path,
)
from rnea_ros.control.parallel import PlatformSolver, parallel_robot, platform_pose_of
from rnea_ros.core import gravity_torques, loop_gravity, platform_inverse_dynamics, solve_loops
from rnea_ros.core.errors import ModelError, ParameterError
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.rate_limiter import RATE_LIMITER_PARAMETERS
from rnea_ros.nodes.simulator import SIMULATOR_PARAMETERS
from rnea_ros.samples import (
    ELASTIC_ROBOTS,
    LOOP_ROBOTS,
    MIMIC_ROBOTS,
    NONPHYSICAL_INERTIA,
    PARALLEL_ROBOTS,
    SAMPLE_ROBOTS,
    launch_flag,
    robot_files,
    shipped_robots,
)

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))
NODE_PARAMETERS = {"rnea_controller": CONTROLLER_PARAMETERS,
                   "rnea_simulator": SIMULATOR_PARAMETERS,
                   "rnea_rate_limiter": RATE_LIMITER_PARAMETERS}
COMMON_PARAMETERS = {"use_sim_time"}
ROBOTS = shipped_robots(ROOT)
GAZEBO_ROBOTS = tuple(r for r in ROBOTS if robot_files(r, ROOT).gazebo is not None)
WILDCARD = "/**"  # parameter files apply to their node under any namespace


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def console_scripts() -> dict[str, str]:
    """The executables ``ros2 run``/launch find in <prefix>/lib/rnea_ros, and the
    ``module:function`` each runs: rnea_ros/commands.py, which setup.py installs."""
    from rnea_ros.commands import COMMANDS

    return {spec.ros_name: spec.target for spec in COMMANDS.values()}


def flat_values(params: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(flat_values(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def node_parameters(path: Path) -> dict:
    """The flat ``ros__parameters`` of a one-node parameter file keyed ``/**``."""
    data = yaml.safe_load(path.read_text())
    assert set(data) == {WILDCARD}, f"{path.name} must be keyed '{WILDCARD}' (any namespace)"
    return flat_values(data[WILDCARD]["ros__parameters"])


def quiet_model(values: dict):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hua-2024 table I (mixed_3dof)
        return load_model(values)


def test_the_three_launch_files_exist() -> None:
    assert {p.name for p in LAUNCH_FILES} == {"sim.launch.py", "gazebo.launch.py",
                                             "robot.launch.py"}


def test_every_sample_robot_is_shipped_and_gazebo_has_all_but_elastic_and_loops() -> None:
    assert set(ROBOTS) == set(SAMPLE_ROBOTS + MIMIC_ROBOTS + ELASTIC_ROBOTS + LOOP_ROBOTS
                              + PARALLEL_ROBOTS)
    assert set(GAZEBO_ROBOTS) == set(ROBOTS) - set(ELASTIC_ROBOTS) - set(LOOP_ROBOTS) - \
        set(PARALLEL_ROBOTS)


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_arguments_are_described_with_namespace_and_sim_time(path: Path) -> None:
    module = load(path)
    assert callable(module.generate_launch_description)
    assert {"robot", "namespace", "use_sim_time", "mode", "controller_config"} \
        <= set(module.ARGUMENTS)
    for name, (default, description) in module.ARGUMENTS.items():
        assert len(description) > 15, f"{path.name}: argument '{name}' needs a description"
        if name == "robot":
            assert default in ROBOTS
        if name.endswith("_config") or name == "mode":
            assert default == "", f"{name}: empty = the robot's own file"
    assert module.ARGUMENTS["namespace"][0] == ""
    # Gazebo's clock is an argument too (true by default), not hard-coded.
    assert module.ARGUMENTS["use_sim_time"][0] in ("true", "false")
    source = path.read_text()
    assert "use_sim_time\": True" not in source and "use_sim_time': True" not in source


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_nodes_use_existing_executables_and_our_nodes_shut_the_launch_down(path: Path) -> None:
    module = load(path)
    scripts = console_scripts()
    for package, executable, node_name, which in module.NODES:
        assert package == "rnea_ros" and executable in scripts
        target_module, function = scripts[executable].split(":")
        assert callable(getattr(importlib.import_module(target_module), function))
        assert node_name in NODE_PARAMETERS and which in ("controller", "simulator")
    for package, executable in getattr(module, "EXECUTABLES", ()):
        if package == "rnea_ros":
            assert executable in scripts
    source = path.read_text()
    assert "OnProcessExit(target_action=node" in source or \
        "OnProcessExit(target_action=controller" in source
    # (the Shutdown, with exit status 1 on a failure: rnea_ros.launching, test_launch_exit.py)
    assert "on_exit=on_exit_shutdown(name)" in source and "namespace=" in source


@pytest.mark.parametrize("robot", ROBOTS)
def test_robot_selects_a_complete_consistent_configuration(robot: str) -> None:
    """robot:=<robot>: URDF, controller and simulator files that agree with each other
    (joints, initial pose within limits) and validate as the nodes would."""
    files = robot_files(robot, ROOT)
    assert files.urdf.is_file() and "$(" not in files.urdf.read_text()  # plain URDF
    controller = node_parameters(files.controller)
    simulator = node_parameters(files.simulator)
    assert set(controller) <= set(CONTROLLER_PARAMETERS) | COMMON_PARAMETERS
    assert set(simulator) <= set(SIMULATOR_PARAMETERS) | COMMON_PARAMETERS
    # As the launch file gives them: robot_description (no path), so a closed-loop robot's
    # files must name its loop file.
    values = {**default_values(), **controller, "robot_description": files.urdf.read_text()}
    model = quiet_model(values)
    elastic = load_elastic(values, model)
    loops = load_loop_model(values, model)
    config = controller_config(values, model, elastic, loops)
    assert simulator.get("elastic_file", "") == controller.get("elastic_file", "")
    assert (elastic is not None) == (robot in ELASTIC_ROBOTS)
    assert (loops is not None) == (robot in LOOP_ROBOTS + PARALLEL_ROBOTS) == \
        (files.loops is not None)
    assert (config.loops.parallel != "") == (robot in PARALLEL_ROBOTS)  # run as platform + legs
    if robot in ELASTIC_ROBOTS:
        assert config.mode == "elastic"
    q0 = np.array(simulator["initial_positions"], dtype=float)
    if loops is not None:  # the active joints are measured and commanded
        assert resolve_path(controller["loops_file"]) == \
            resolve_path(simulator["loops_file"]) == files.loops == ROOT / "urdf" / \
            f"{robot}.loops.yaml"
        assert list(config.joints) == simulator["joints"] == list(loops.active_names)
        assert q0.shape == (loops.n_active,)
        low, high = (limit[loops.active_index] for limit in (model.lower_limit,
                                                             model.upper_limit))
        assert np.all(q0 >= low) and np.all(q0 <= high)
        q = solve_loops(loops, q0)  # closes, in the loop file's assembly mode
        assert np.all(q >= model.lower_limit) and np.all(q <= model.upper_limit)
        assert np.all(np.abs(loop_gravity(loops, q)) <
                      model.effort_limit[loops.active_index])
        if config.loops.parallel:  # the platform + legs model of the same robot holds it too
            robot = parallel_robot(config.loops.parallel, model, loops)
            x = PlatformSolver(robot, platform_pose_of(robot, loops)).solve(q0)
            zero = np.zeros(robot.nv)
            assert np.allclose(platform_inverse_dynamics(robot, x, zero, zero),
                               loop_gravity(loops, q), rtol=1e-9, atol=1e-9)
        return
    assert list(config.joints) == simulator["joints"] == list(model.joint_names)
    assert q0.shape == (model.nv,)
    assert np.all(q0 >= model.lower_limit) and np.all(q0 <= model.upper_limit)
    if elastic is None:  # the start pose can be held within the effort limits
        assert np.all(np.abs(gravity_torques(model, q0)) < model.effort_limit)


@pytest.mark.parametrize("robot", LOOP_ROBOTS + PARALLEL_ROBOTS)
def test_closed_loop_robots_ros2_controllers_command_the_active_joints(robot: str) -> None:
    """A real closed-loop robot's ros2_control stack: effort on the active joints only."""
    files = robot_files(robot, ROOT)
    assert files.gazebo is None and files.ros2_controllers is not None
    controllers = yaml.safe_load(files.ros2_controllers.read_text())
    effort = controllers["/**/effort_controller"]["ros__parameters"]
    assert effort["interface_name"] == "effort"
    assert effort["joints"] == node_parameters(files.controller)["joints"]
    assert controllers["/**/controller_manager"]["ros__parameters"]["effort_controller"][
        "type"] == "forward_command_controller/ForwardCommandController"


def test_a_loop_file_next_to_urdf_path_is_found_and_none_turns_it_off() -> None:
    urdf = str(ROOT / "urdf" / "five_bar.urdf")
    model = load_urdf(urdf)
    found = load_loop_model({**default_values(), "urdf_path": urdf}, model)
    assert found is not None and found.active_names == ("left_motor", "right_motor")
    assert load_loop_model({**default_values(), "urdf_path": urdf, "loops_file": "none"},
                           model) is None
    # robot_description has no location: nothing is guessed.
    assert load_loop_model({**default_values(), "robot_description": "<robot/>"}, model) is None
    with pytest.raises(ParameterError, match="parameter 'loops_file': no file"):
        load_loop_model({**default_values(), "loops_file": "/nonexistent.loops.yaml"}, model)


def test_unknown_robot_is_one_line_listing_the_robots() -> None:
    with pytest.raises(ModelError) as error:
        robot_files("ur5e", ROOT)
    message = str(error.value)
    assert "\n" not in message and "'ur5e'" in message
    assert all(robot in message for robot in ROBOTS)
    with pytest.raises(ModelError, match="no parameter file"):
        robot_files("arm7", ROOT, controller="missing.yaml")


def test_boolean_launch_arguments() -> None:
    assert launch_flag("use_sim_time", "True") is True
    assert launch_flag("use_sim_time", "false") is False
    with pytest.raises(ParameterError, match="'publish_clock' is 'yes'; valid: true, false"):
        launch_flag("publish_clock", "yes")


def test_every_declared_parameter_is_in_the_reference_files() -> None:
    for node_name, file_name in (("rnea_controller", "arm7_controller.yaml"),
                                 ("rnea_simulator", "arm7_simulator.yaml"),
                                 ("rnea_rate_limiter", "rate_limiter.yaml")):
        names = set(node_parameters(ROOT / "config" / file_name))
        # the URDF and where it comes from (robot_description_source:=) are the launch's
        from_launch = {"robot_description", "urdf_path", "drives_file",
                       "robot_description_source"}
        missing = set(NODE_PARAMETERS[node_name]) - names - from_launch
        assert not missing, f"{file_name} does not document {sorted(missing)}"
        assert not names - set(NODE_PARAMETERS[node_name])


def test_every_parameter_file_applies_under_any_namespace() -> None:
    for path in sorted((ROOT / "config").glob("*.yaml")):
        keys = set(yaml.safe_load(path.read_text()))
        if path.name.endswith("_elastic.yaml"):
            assert keys == {"joints"}  # a side file, not ROS parameters
        elif path.name.endswith("_ros2_controllers.yaml"):
            assert keys == {"/**/controller_manager", "/**/effort_controller"}, path.name
        else:
            assert keys == {WILDCARD}, path.name


@pytest.mark.parametrize("robot", GAZEBO_ROBOTS)
def test_gazebo_description_controllers_and_start_pose_agree(robot: str) -> None:
    """urdf/<robot>.gazebo.urdf.xacro: the plain URDF + <ros2_control>; its start pose is
    the simulator's and its initial efforts are g(q0), so the arm does not fall before
    our first command; the ros2_controllers YAML commands the controller's joints."""
    gazebo = load(ROOT / "launch" / "gazebo.launch.py")
    files = robot_files(robot, ROOT)
    assert files.gazebo is not None and files.ros2_controllers is not None
    assert files.gazebo.name.endswith(".urdf.xacro") and "$(find" in files.gazebo.read_text()
    controllers = yaml.safe_load(files.ros2_controllers.read_text())
    manager = controllers["/**/controller_manager"]["ros__parameters"]
    for name in gazebo.CONTROLLERS:
        assert "type" in manager[name], f"controller '{name}' has no type"
    assert manager["effort_controller"]["type"] == \
        "forward_command_controller/ForwardCommandController"
    effort = controllers["/**/effort_controller"]["ros__parameters"]
    assert effort["interface_name"] == "effort"
    ours = node_parameters(files.controller)
    model = load_urdf(files.urdf)
    assert effort["joints"] == ours["joints"] == list(model.joint_names)
    assert model.root_link == "world"  # fixed in the Gazebo world

    root = ET.parse(files.gazebo).getroot()
    xacro = "{http://www.ros.org/wiki/xacro}"
    assert [e.get("filename") for e in root.iter(f"{xacro}include")] == \
        [f"$(find rnea_ros)/urdf/{robot}.urdf"]
    args = {e.get("name"): e.get("default") for e in root.iter(f"{xacro}arg")}
    assert args == {"controllers_file":
                    f"$(find rnea_ros)/config/{files.ros2_controllers.name}", "namespace": ""}
    system = root.find("ros2_control")
    assert system is not None
    assert system.find("hardware/plugin").text == "gz_ros2_control/GazeboSimSystem"
    # Mimic followers: declared mimic="true", state interfaces only (never commanded).
    followers = [j for j in system.findall("joint") if j.get("mimic") == "true"]
    assert [j.get("name") for j in followers] == list(model.mimic_joints)
    for joint in followers:
        assert not joint.findall("command_interface")
        assert {s.get("name") for s in joint.findall("state_interface")} == \
            {"position", "velocity", "effort"}
    joints = [j for j in system.findall("joint") if j.get("mimic") != "true"]
    assert [j.get("name") for j in joints] == ours["joints"]
    q0 = np.array(node_parameters(files.simulator)["initial_positions"], dtype=float)
    g0 = gravity_torques(model, q0)
    for joint, q, g in zip(joints, q0, g0, strict=True):
        assert [c.get("name") for c in joint.findall("command_interface")] == ["effort"]
        states = {s.get("name"): s for s in joint.findall("state_interface")}
        assert set(states) == {"position", "velocity", "effort"}
        assert float(states["position"].find("param").text) == pytest.approx(q, abs=1e-6)
        assert float(states["effort"].find("param").text) == pytest.approx(g, abs=1e-5)
    plugin = root.find("gazebo/plugin")
    assert plugin.get("filename") == "gz_ros2_control-system"
    assert plugin.find("parameters").text == "$(arg controllers_file)"
    assert plugin.find("hold_joints").text == "true"
    assert plugin.find("ros/namespace").text == "$(arg namespace)"


def test_files_with_xacro_are_named_urdf_xacro() -> None:
    for path in sorted((ROOT / "urdf").iterdir()):
        text = path.read_text()
        uses_xacro = "$(" in text or "http://www.ros.org/wiki/xacro" in text
        assert uses_xacro == path.name.endswith(".urdf.xacro"), path.name
        if path.name.endswith(".urdf"):
            check = "warn" if path.name[:-len(".urdf")] in NONPHYSICAL_INERTIA else "strict"
            load_urdf(path, inertia_check=check)  # loads without xacro


def test_gazebo_without_xacro_or_packages_is_one_line() -> None:
    gazebo = load(ROOT / "launch" / "gazebo.launch.py")
    with pytest.raises(RuntimeError) as error:
        gazebo.check_requirements(which=lambda name: None, installed=lambda p: True)
    assert "xacro" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(RuntimeError) as error:
        gazebo.check_requirements(which=lambda name: "/usr/bin/" + name,
                                  installed=lambda p: p != "gz_ros2_control")
    assert str(error.value) == ("gazebo.launch.py needs gz_ros2_control: sudo apt install "
                                "ros-$ROS_DISTRO-gz-ros2-control")
    gazebo.check_requirements(which=lambda name: "/usr/bin/" + name, installed=lambda p: True)


def test_gazebo_is_not_a_dependency_of_the_package() -> None:
    root = ET.parse(ROOT / "package.xml").getroot()
    depends = {e.text for e in root if e.tag in ("depend", "exec_depend")}
    gazebo = load(ROOT / "launch" / "gazebo.launch.py")
    assert {"launch", "launch_ros"} <= depends
    assert not depends & set(gazebo.GAZEBO_PACKAGES)


def test_node_topic_names_are_relative_except_diagnostics_and_clock() -> None:
    topics = []
    for path in sorted((ROOT / "rnea_ros" / "nodes").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in (
                    "create_publisher", "create_subscription") and len(node.args) >= 2:
                name = node.args[1]
                text = name.value if isinstance(name, ast.Constant) else ast.unparse(name)
                topics.append((path.name, text))
    assert ("controller.py", "effort_controller/commands") in topics
    assert ("simulator.py", "joint_states") in topics
    absolute = {t for _, t in topics if re.match(r"f?['\"]?/", t)}
    assert absolute <= {"/diagnostics", "/clock"}, absolute


def test_installed_data_files_cover_launch_config_and_urdf() -> None:
    setup = (ROOT / "setup.py").read_text()
    for folder, pattern in (("launch", "launch/*.launch.py"), ("config", "config/*.yaml"),
                            ("urdf", "urdf/*.urdf"), ("urdf", "urdf/*.urdf.xacro")):
        assert f'glob("{pattern}")' in setup and f"share/{{PACKAGE}}/{folder}" in setup


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_description_builds_where_launch_is_installed(path: Path) -> None:
    pytest.importorskip("launch_ros", reason="launch/launch_ros are not on PyPI; built in a "
                        "ROS workspace and in the scratch check described in the README")
    description = load(path).generate_launch_description()
    assert len(description.entities) == len(load(path).ARGUMENTS) + 1


def test_sim_launch_rocking_and_imu_set_declared_parameters_that_validate() -> None:
    """``rocking:=true`` / ``imu:=true`` (sim.launch.py) give the simulator and the
    controller parameters they declare, with values that validate, for every rigid robot."""
    sim = load(ROOT / "launch" / "sim.launch.py")
    assert sim.ARGUMENTS["rocking"][0] == sim.ARGUMENTS["imu"][0] == "false"
    assert set(sim.ROCKING) <= set(SIMULATOR_PARAMETERS)
    assert set(sim.IMU) == {"rnea_simulator", "rnea_controller"}
    for node, values in sim.IMU.items():
        assert set(values) <= set(NODE_PARAMETERS[node])
    from rnea_ros.simulation import RockingBase

    base = RockingBase(**{k.split(".")[1]: v for k, v in sim.ROCKING.items()})
    assert base.moving
    for robot in ROBOTS:
        if robot in ELASTIC_ROBOTS:  # elastic robots run on a fixed base (the nodes say so)
            continue
        files = robot_files(robot, ROOT)
        values = {**default_values(), **node_parameters(files.controller),
                  **sim.IMU["rnea_controller"], "urdf_path": str(files.urdf)}
        model = quiet_model(values)
        if robot in LOOP_ROBOTS + PARALLEL_ROBOTS:  # closed loops: a fixed base, one line
            with pytest.raises(ParameterError, match="closed-loop robots do not support an IMU"):
                controller_config(values, model, loops=load_loop_model(values, model))
            continue
        config = controller_config(values, model)
        assert config.imu is not None and config.imu.link == model.root_link
        assert config.imu.linear_acceleration == "measured"


def test_robot_description_source_parameters() -> None:
    """robot_description_source:= (both launch files): the URDF text and file, or the
    topic alone (the nodes refuse a URDF given both ways); another value in one line."""
    from rnea_ros.launching import USER_ROBOT_ARGUMENTS, description_parameters

    assert USER_ROBOT_ARGUMENTS["robot_description_source"][0] == "parameter"
    for path in LAUNCH_FILES:
        if path.name != "gazebo.launch.py":
            assert "robot_description_source" in load(path).ARGUMENTS, path.name
    assert description_parameters("parameter", "<robot/>", "/a.urdf") == [
        {"robot_description": "<robot/>"}, {"urdf_path": "/a.urdf"}]
    assert description_parameters("topic", "<robot/>", "/a.urdf") == [
        {"robot_description_source": "topic"}]
    with pytest.raises(ValueError, match="robot_description_source:='file': expected "
                                         "parameter or topic"):
        description_parameters("file", "", "")
    for node in ("rnea_controller", "rnea_simulator"):
        assert NODE_PARAMETERS[node]["robot_description_source"].choices == ("parameter",
                                                                             "topic")
