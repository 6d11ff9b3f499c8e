"""rnea-precompile derives the controller modes it warms from the family table
(rnea_ros.control.modes.FAMILIES): every mode of the robot's family, no other."""

from __future__ import annotations

import pytest

from rnea_ros.control.modes import FAMILIES
from rnea_ros.nodes.precompile import variants
from rnea_ros.samples import robot_files


@pytest.mark.parametrize(("robot", "family"), [("arm7", "serial"), ("mixed_3dof", "elastic"),
                                              ("five_bar", "closed_chain")])
def test_rnea_precompile_warms_every_mode_of_the_robots_family(robot: str,
                                                               family: str) -> None:
    found = {dict(v.parameters).get("mode") for v in variants(robot_files(robot))
             if v.node == "controller"}
    assert found == set(FAMILIES[family].modes)
