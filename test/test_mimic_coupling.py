"""rnea_ros.mimic: the coupling checks and the unfolded tree, and the mimic sample robot
(urdf/arm7_gripper.urdf) against Pinocchio's mimic parser."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from oracle import random_states, relative_error

import rnea_ros.core as rc
from rnea_ros.mimic import follower_check, follower_deviation, unfold
from rnea_ros.samples import MIMIC_ROBOTS, load_robot, robot_urdf

ROBOTS = [*MIMIC_ROBOTS, "pr2"]


def mimic_model(name: str) -> rc.RobotModel:
    return load_robot(name, mimic=True)


@pytest.mark.parametrize("name", ROBOTS)
def test_arm7_gripper_and_pr2_agree_with_pinocchios_mimic_parser(name: str) -> None:
    """Our RNEA, gravity and mass matrix of the mimic model against
    ``pin.buildModelFromUrdf(path, mimic=True)``, matched by joint name."""
    model = mimic_model(name)
    pm = pin.buildModelFromUrdf(str(robot_urdf(name)), mimic=True)
    pd = pm.createData()
    assert pm.nv == model.nv
    jid = [pm.getJointId(j) for j in model.joint_names]
    iv = np.array([pm.joints[j].idx_v for j in jid])
    for q, qd, qdd in zip(*random_states(model, 20, seed=4), strict=True):
        x = pin.neutral(pm)
        for k, j in enumerate(jid):
            iq, nq = pm.joints[j].idx_q, pm.joints[j].nq
            x[iq:iq + nq] = [np.cos(q[k]), np.sin(q[k])] if nq == 2 else q[k]
        v, a = np.zeros(pm.nv), np.zeros(pm.nv)
        v[iv], a[iv] = qd, qdd
        tau = pin.rnea(pm, pd, x, v, a)[iv]
        assert relative_error(rc.rnea(model.without_friction(), q, qd, qdd), tau) < 1e-9
        M = pin.crba(pm, pd, x)
        M = np.triu(M) + np.triu(M, 1).T
        assert relative_error(rc.mass_matrix(model, q), M[np.ix_(iv, iv)]) < 1e-9


@pytest.mark.parametrize("name", ROBOTS)
def test_unfolded_tree_is_the_mimic_false_model_and_gives_tau_and_tau_dot(name: str) -> None:
    model = mimic_model(name).without_friction()
    u = unfold(model)
    plain = load_robot(name, mimic=False).without_friction()
    assert u.tree.joint_names == plain.joint_names and u.tree.nv == model.nbodies
    q, qd, qdd = random_states(model, 5, seed=1)
    qddd = np.random.default_rng(2).normal(0.0, 5.0, q.shape)
    for k in range(5):
        x, v, a = u.configuration(q[k]), u.tangent(qd[k]), u.tangent(qdd[k])
        assert relative_error(rc.rnea(u.tree, x, v, a), rc.rnea(plain, x, v, a)) < 1e-12
        tau = rc.rnea(model, q[k], qd[k], qdd[k])
        assert relative_error(u.forces(rc.rnea(u.tree, x, v, a)), tau) < 1e-12
        # tau_dot = G^T tau_dot_tree: central differences along the motion
        _, tau_dot = rc.rnea_time_derivative(u.tree, x, v, a, u.tangent(qddd[k]))
        h = 1e-6
        ahead = rc.rnea(model, q[k] + h * qd[k], qd[k] + h * qdd[k], qdd[k] + h * qddd[k])
        behind = rc.rnea(model, q[k] - h * qd[k], qd[k] - h * qdd[k], qdd[k] - h * qddd[k])
        assert relative_error(u.forces(tau_dot), (ahead - behind) / (2 * h)) < 1e-6


def test_unfold_without_followers_is_the_model() -> None:
    model = load_robot("arm7")
    u = unfold(model)
    assert u.tree is model and np.array_equal(u.G, np.eye(7))


def test_follower_checks_need_the_leader_in_the_message() -> None:
    model = mimic_model("pr2")
    names = ["r_gripper_l_finger_joint", "r_gripper_r_finger_joint",
             "r_gripper_r_parallel_root_joint", "l_gripper_r_finger_joint", "torso_lift_joint"]
    check = follower_check(model, names)
    assert check.names == ("r_gripper_r_finger_joint", "r_gripper_r_parallel_root_joint")
    position = np.array([0.3, 0.3, -0.3, 9.0, 0.1])
    assert np.allclose(follower_deviation(check, position), 0.0)
    position[2] = 0.3  # multiplier -1 broken
    assert np.allclose(follower_deviation(check, position), [0.0, 0.6])
    batch = np.tile(position, (3, 1))
    assert follower_deviation(check, batch).shape == (3, 2)
    assert len(follower_check(load_robot("arm7"), ["joint1"])) == 0
