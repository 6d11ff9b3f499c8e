"""Planning and robots with mimic joints: limits are per coordinate (followers have
none), the force check at rest reads the wrench of the body each coordinate moves, a
mimic gripper plans within every limit, and a multi-DoF joint is refused naming it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.core.errors import InfeasibleError, ModelError
from rnea_ros.planning import sensitivities
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


def test_a_mimic_gripper_plans_within_its_limits_100x_finer(tmp_path, capsys) -> None:
    """arm7 with its gripper (finger_joint2 mimics finger_joint1): the sensitivities fold
    the follower onto its leader, so torque and torque-rate limits hold between grid
    points, checked 100x finer with rnea and gfd (mimic-aware, checked against
    Pinocchio), and the CLI writes the plan. (Before, the planner refused the model.)"""
    start = np.zeros(8)
    start[3] = -1.5
    goal = start.copy()
    goal[0], goal[7] = 0.5, 0.03
    limits = Limits.from_model(GRIPPER, torque_rate=2000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged: no solver stop short of it
        plan = plan_min_time(GRIPPER, np.array([start, goal]), limits)
    s = np.unique(np.concatenate([np.linspace(a, b, 101) for a, b in
                                  zip(plan.grid[:-1], plan.grid[1:], strict=True)]))
    tau, tau_dot, F = plan.dynamics(s * plan.T)
    assert F.shape == tau.shape == (s.size, 8)
    qd = plan.spline.derivatives(s * plan.T)[1]
    worst = [float((np.abs(x) / limit).max()) for x, limit in
             ((tau, limits.torque), (tau_dot, limits.torque_rate), (qd, limits.velocity))]
    assert max(worst) <= 1.0 + 1e-6 and max(worst) > 0.99  # minimum time: one is active
    q, qd, _, _ = plan.spline.derivatives(np.array([0.0, plan.T]))
    assert np.allclose(q, [start, goal], atol=1e-6) and np.allclose(qd, 0.0, atol=1e-6)

    code = main(["--urdf", str(robot_urdf("arm7_gripper")), "--from", *map(str, start),
                 "--to", *map(str, goal), "--out", str(tmp_path / "traj.yaml"), "--no-plot"])
    assert code == 0 and (tmp_path / "traj.yaml").exists(), capsys.readouterr().err


def test_the_force_rows_are_each_coordinates_own_body_and_their_derivatives() -> None:
    """The planner's internal-force constraint on a mimic model: one row per coordinate
    joint, the wrench of the body it moves (PR2: followers' bodies sit between), with
    derivatives w.r.t. the coordinates (central differences of rnea_with_wrenches)."""
    model = pr2()
    rng = np.random.default_rng(4)
    Q, V, A = (rng.uniform(-1.0, 1.0, (2, model.nv)) for _ in range(3))
    W, dq, dv, da = sensitivities.wrenches(model, Q, V, A)
    assert W.shape == (2, model.nv, 6) and dq.shape == (2, model.nv, 6, model.nv)
    body = model.joint_body
    h = 1e-6
    for k in range(2):
        np.testing.assert_allclose(W[k], rc.rnea_with_wrenches(model, Q[k], V[k], A[k])[1][body],
                                   atol=1e-12)
        for slot, d in enumerate((dq, dv, da)):
            for i in range(0, model.nv, 7):
                up, down = [Q[k].copy(), V[k].copy(), A[k].copy()], [Q[k], V[k], A[k]]
                down = [x.copy() for x in down]
                up[slot][i] += h
                down[slot][i] -= h
                fd = (rc.rnea_with_wrenches(model, *up)[1][body]
                      - rc.rnea_with_wrenches(model, *down)[1][body]) / (2 * h)
                assert np.abs(d[k, :, :, i] - fd).max() < 1e-6 * max(1.0, np.abs(fd).max())


def test_the_planner_refuses_a_multi_dof_joint_naming_it() -> None:
    model = rc.load_urdf(robot_urdf("arm7"), root_joint="free-flyer")
    with pytest.raises(ModelError, match=r"rnea-plan .* model 'arm7' has 'root_joint' "
                                         r"\(free-flyer\)"):
        plan_min_time(model, np.zeros((2, model.nq)))
