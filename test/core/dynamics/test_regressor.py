"""The joint torque regressor: against Pinocchio's ``computeJointTorqueRegressor``
(every sample URDF and the example-robot-data robots, 200 random states each,
<= 1e-9 relative) and against our RNEA (``Y pi = tau`` with drive terms, on
random trees with prismatic, continuous and fixed joints)."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import PinOracle, random_states, relative_error
from trees import random_tree

import rnea_ros.core as rc
from rnea_ros.core.dynamics.rnea import rnea_batch
from rnea_ros.samples import EXAMPLE_ROBOTS, SAMPLE_ROBOTS, load_robot, robot_urdf

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
ROBOTS = list(SAMPLE_ROBOTS) + list(EXAMPLE_ROBOTS)
TOL = 1e-9


@pytest.mark.parametrize("name", ROBOTS)
def test_matches_pinocchio_regressor(name: str) -> None:
    import pinocchio as pin

    model = load_robot(name)
    oracle = PinOracle(robot_urdf(name), model)
    q, qd, qdd = random_states(model, 200, seed=4)
    ours = rc.joint_torque_regressor_batch(model, q, qd, qdd, drives=False)
    # Pinocchio: rows in its tangent order, 10 columns per joint id (1..n) in its joint order.
    columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in oracle.jid])
    ref = np.array([
        pin.computeJointTorqueRegressor(oracle.pm, oracle.pd, oracle.config(a),
                                        oracle.tangent(b), oracle.tangent(c))[oracle.idx_v]
        for a, b, c in zip(q, qd, qdd, strict=True)])[:, :, columns]
    assert ref.shape == ours.shape == (200, model.nv, 10 * model.nv)
    assert relative_error(ours, ref) <= TOL
    single = rc.joint_torque_regressor(model, q[0], qd[0], qdd[0], drives=False)
    assert relative_error(single, ref[0]) <= TOL
    # Pinocchio's own dynamic parameters reproduce its RNEA through our regressor.
    pi = np.concatenate([oracle.pm.inertias[j].toDynamicParameters() for j in oracle.jid])
    assert np.allclose(pi, rc.regressor_parameters(model, drives=False), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_regressor_times_parameters_is_rnea(seed: int) -> None:
    model = random_tree(seed)
    q, qd, qdd = random_states(model, 100, seed=seed)
    Y = rc.joint_torque_regressor_batch(model, q, qd, qdd)
    pi = rc.regressor_parameters(model)
    assert Y.shape == (100, model.nv, 13 * model.nv)
    assert relative_error(Y @ pi, rnea_batch(model, q, qd, qdd)) <= TOL
    g = np.array([0.1, 0.2, -3.0])
    assert relative_error(rc.joint_torque_regressor(model, q[1], qd[1], qdd[1], gravity=g) @ pi,
                          rc.rnea(model, q[1], qd[1], qdd[1], gravity=g)) <= TOL


def test_names_and_drive_columns() -> None:
    model = load_robot("two_link_rr")
    names = rc.regressor_parameter_names(model)
    assert len(names) == 26 and names[:3] == ["m@" + model.body_names[0],
                                              "mx@" + model.body_names[0],
                                              "my@" + model.body_names[0]]
    assert names[20:23] == [f"{p}@{model.joint_names[0]}" for p in ("Ia", "Fv", "Fs")]
    Y = rc.joint_torque_regressor(model, [0.1, 0.2], [0.5, -0.3], [2.0, 3.0])
    assert Y[:, 20:].tolist() == [[2.0, 0.5, 1.0, 0, 0, 0], [0, 0, 0, 3.0, -0.3, -1.0]]
    assert np.any(Y[0, 10:20] != 0.0) and np.all(Y[1, :10] == 0.0)  # body 2 acts on joint 1


def test_bad_input_is_named() -> None:
    model = load_robot("two_link_rr")
    with pytest.raises(rc.StateError, match="qd of joint"):
        rc.joint_torque_regressor(model, [0.0, 0.0], [np.nan, 0.0], [0.0, 0.0])
    with pytest.raises(rc.StateError, match="expected"):
        rc.joint_torque_regressor_batch(model, np.zeros((3, 3)), np.zeros((3, 3)),
                                        np.zeros((3, 3)))
    with pytest.raises(rc.StateError, match="out must be"):
        rc.joint_torque_regressor_batch(model, np.zeros((3, 2)), np.zeros((3, 2)),
                                        np.zeros((3, 2)), out=np.empty((3, 2, 20)))
