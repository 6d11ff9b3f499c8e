"""Planning and robots with mimic joints: limits are per coordinate (followers have
none), the force check at rest reads the wrench of the body each coordinate moves, and
the planner refuses a mimic model with one clear message (its sensitivities do not take
followers yet)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.core.errors import InfeasibleError, ModelError
from rnea_ros.planning.cli import main
from rnea_ros.planning.limits import Limits, check_waypoints
from rnea_ros.planning.optimize import plan_min_time
from rnea_ros.samples import robot_urdf

GRIPPER = rc.load_urdf(robot_urdf("arm7_gripper"))


def pr2() -> rc.RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.InertiaWarning)
        return rc.load_urdf(robot_urdf("pr2"), inertia_check="warn")


def test_limits_are_per_coordinate() -> None:
    limits = Limits.from_model(GRIPPER)
    assert limits.torque.shape == (8,) and limits.upper[7] == 0.04 and limits.lower[7] == 0.0
    with pytest.raises(Exception, match=r"one per joint .*'finger_joint1'\]"):
        Limits.from_model(GRIPPER, torque=np.ones(9))


def test_the_force_at_rest_is_that_of_the_coordinates_own_body() -> None:
    """PR2: followers' bodies sit between coordinates' bodies (body index != joint
    index); each joint's force limit must read its own body's wrench."""
    model = pr2()
    assert not np.array_equal(model.joint_body, np.arange(model.nv))
    q = 0.5 * (np.where(np.isfinite(model.lower_limit), model.lower_limit, 0.0)
               + np.where(np.isfinite(model.upper_limit), model.upper_limit, 0.0))
    zero = np.zeros(model.nv)
    _, W = rc.rnea_with_wrenches(model, q, zero, zero)
    force = np.linalg.norm(W[model.joint_body, :3], axis=1)
    j = model.joint_index("l_shoulder_pan_joint")
    limit = np.full(model.nv, np.inf)
    limit[j] = 0.99 * force[j]
    with pytest.raises(InfeasibleError, match="joint 'l_shoulder_pan_joint' carries"):
        check_waypoints(model, np.array([q, q]),
                        Limits.from_model(model, force=limit, torque=np.inf))
    limit[j] = 1.01 * force[j]
    check_waypoints(model, np.array([q, q]), Limits.from_model(model, force=limit, torque=np.inf))


def test_the_planner_refuses_a_mimic_model_naming_the_follower(tmp_path, capsys) -> None:
    start = np.zeros(8)
    start[3] = -1.5
    goal = start.copy()
    goal[0] = 0.5
    with pytest.raises(ModelError, match=r"rnea-plan .* model 'arm7_gripper' has "
                                         r"'finger_joint2' \(mimic\)"):
        plan_min_time(GRIPPER, np.array([start, goal]))
    code = main(["--urdf", str(robot_urdf("arm7_gripper")), "--from", *map(str, start),
                 "--to", *map(str, goal), "--out", str(tmp_path / "traj.yaml")])
    assert code == 1 and "'finger_joint2' (mimic)" in capsys.readouterr().err
    assert not (tmp_path / "traj.yaml").exists()
