"""A robot we do not ship (UR5 from example-robot-data) with the file ``rnea-config``
writes: rcl's own parameter-file parser takes it (as ``ros2 launch`` passes it), and the
controller holds the robot in the simulator, in a namespace, in lockstep over DDS."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import yaml

from rnea_ros.control.starting_config import main as rnea_config
from rnea_ros.control.starting_config import reference_pose
from rnea_ros.core import load_urdf
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.nodes.precompile import quiet_context
from rnea_ros.samples import example_robot_urdf, robot_files


def user_robot(tmp_path: Path) -> tuple[Path, Path]:
    urdf = tmp_path / "my_ur5.urdf"
    shutil.copy(example_robot_urdf("ur5"), urdf)
    config = tmp_path / "my_ur5_controller.yaml"
    assert rnea_config(["--urdf", str(urdf), "--out", str(config)]) == 0
    return urdf, config


def test_rcl_parses_the_written_file_as_a_launch_passes_it(tmp_path: Path) -> None:
    """A double array written as [87, 870.5] made rcl refuse the file ('Sequence should
    be of same type'): the controller died at launch."""
    urdf, config = user_robot(tmp_path)
    params = yaml.safe_load(config.read_text())["/**"]["ros__parameters"]
    with quiet_context() as context:
        node = ControllerNode(context=context, cli_args=[
            "--ros-args", "--params-file", str(config), "-p", f"urdf_path:={urdf}"])
        try:
            for name in ("kp", "kd", "effort_limits", "effort_rate_limits"):
                assert np.allclose(node.get_parameter(name).value, params[name]), name
            assert list(node.get_parameter("joints").value) == params["joints"]
        finally:
            node.destroy_node()


def test_launch_files_resolve_a_user_urdf_and_its_file(tmp_path: Path) -> None:
    """urdf:= and controller_config:= (sim.launch.py, robot.launch.py) as robot_files
    resolves them: paths kept, no simulator file (the simulator's defaults)."""
    urdf, config = user_robot(tmp_path)
    files = robot_files("arm7", controller=str(config), urdf=str(urdf))
    assert (files.urdf, files.controller, files.simulator) == (urdf, config, None)
    assert files.name == "my_ur5" and files.gazebo is None and files.loops is None


def test_user_robot_holds_in_a_namespace(tmp_path: Path) -> None:
    urdf, config = user_robot(tmp_path)
    params = yaml.safe_load(config.read_text())["/**"]["ros__parameters"]
    description = {"robot_description": urdf.read_text()}
    q0 = reference_pose(load_urdf(urdf)) + np.array([0.1, -0.4, 0.6, -0.3, 0.2, 0.1])
    controller = {**params, **description, "watchdog_timeout": 1.0}
    simulator = {**description, "initial_positions": q0.tolist()}
    for mode in ("gravity", "inverse_dynamics"):
        with ClosedLoop({**controller, "mode": mode}, simulator, namespace="cell7") as loop:
            assert loop.run_for(2.0)
            c = loop.controller.controller
            assert c.commands >= 1990 and sum(c.rejected.values()) == 0
            q = np.array(loop.probe.recording.q)
            assert np.abs(q - q0).max() < 1e-3, (mode, np.abs(q - q0).max())
            assert loop.controller.get_namespace() == "/cell7"
