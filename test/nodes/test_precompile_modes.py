"""rnea-precompile derives the controller modes it warms from the family table
(rnea_ros.control.modes.FAMILIES): every mode of the robot's family, no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnea_ros.control.config import CONTROLLER_PARAMETERS
from rnea_ros.control.modes import FAMILIES
from rnea_ros.nodes import precompile as pc
from rnea_ros.nodes.precompile import variants
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.samples import robot_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("robot", "family"), [("arm7", "serial"), ("mixed_3dof", "elastic"),
                                              ("five_bar", "closed_chain")])
def test_rnea_precompile_warms_every_mode_of_the_robots_family(robot: str,
                                                               family: str) -> None:
    found = {dict(v.parameters).get("mode") for v in variants(robot_files(robot))
             if v.node == "controller"}
    assert found == set(FAMILIES[family].modes)


@pytest.mark.parametrize(("robot", "family"), [("arm7", "serial"), ("mixed_3dof", "elastic"),
                                              ("five_bar", "closed_chain"),
                                              ("delta", "parallel"),
                                              ("gough_stewart", "parallel")])
def test_the_family_follows_the_controller_file_through_its_table(robot: str,
                                                                  family: str) -> None:
    """The shipped files write ``loops: {parallel: delta}`` nested, as ROS 2 allows: read
    through the table (dotted names), a parallel robot is of the parallel family."""
    assert pc.family(robot_files(robot)) == family


def _controller_file(folder: Path, body: str) -> Path:
    path = folder / "ctl.yaml"
    path.write_text("my_controller:\n  ros__parameters:\n" + body)
    return path


def test_the_controller_file_is_read_typed_and_checked(tmp_path: Path) -> None:
    nested = pc.controller_parameters(_controller_file(
        tmp_path, "    loops:\n      parallel: gough_stewart\n    watchdog_timeout: 1\n"))
    assert nested.loops.parallel == "gough_stewart"
    assert nested.watchdog_timeout == 1.0 and type(nested.watchdog_timeout) is float
    assert nested.mode == CONTROLLER_PARAMETERS["mode"].default  # absent: the default
    dotted = pc.controller_parameters(_controller_file(tmp_path,
                                                       "    loops.parallel: delta\n"))
    assert dotted.loops.parallel == "delta"
    bad = _controller_file(tmp_path, "    loops:\n      parallel: deltoid\n")
    with pytest.raises(ParameterError, match=r"loops\.parallel.*'delta'"):
        pc.controller_parameters(bad)
    urdf = ROOT / "urdf" / "arm7.urdf"
    with pytest.raises(ParameterError, match=r"loops\.parallel"):
        pc.user_robot(urdf, bad, ROOT / "config" / "arm7_simulator.yaml")
