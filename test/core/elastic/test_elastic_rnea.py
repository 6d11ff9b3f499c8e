"""elastic/rnea.py: mixed rigid/elastic inverse dynamics (hua-2024 Algorithm 1,
Khalil 2010 section 6) against the augmented-tree Pinocchio oracle, the rigid RNEA
with rotors, the interaction wrenches, and bad states."""

from __future__ import annotations

import numpy as np
import pytest
from elastic_cases import (
    ELASTIC_ROBOTS,
    TOL,
    random_state,
    setup_model,
)
from elastic_oracle import AugmentedOracle
from oracle import PinOracle, relative_error

from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.core.errors import StateError
from rnea_ros.samples import load_robot, robot_urdf


@pytest.mark.parametrize("name", ELASTIC_ROBOTS)
@pytest.mark.parametrize("on_parent", [True, False], ids=["motor-on-parent", "motor-anywhere"])
def test_algorithm1_matches_augmented_pinocchio(name: str, on_parent: bool) -> None:
    model, rng = setup_model(name, 1, on_parent)
    oracle = AugmentedOracle(robot_urdf(name), model)
    e = model.elastic_joints
    ours, ref, link_ours, link_ref = [], [], [], []
    for k in range(40):
        state = random_state(model, rng)
        fext = rng.normal(0, 5, (model.n, 6)) if k % 2 else None
        r = elastic_rnea(model, *state, fext=fext)
        tau, tau_link = oracle.motor_torques(*state, fext)
        ours.append(r.tau)
        ref.append(tau)
        link_ours.append(r.tau_link[e])
        link_ref.append(tau_link[e])
    assert relative_error(np.array(ours), np.array(ref)) < TOL
    if model.n_elastic:
        assert relative_error(np.array(link_ours), np.array(link_ref)) < TOL


def test_bad_states_name_the_coordinate() -> None:
    model, rng = setup_model("two_link_rr", 6, on_parent=True)
    state = list(random_state(model, rng))
    with pytest.raises(StateError, match=r"theta has shape \(3,\), expected \(1,\).*joint"):
        elastic_rnea(model, state[0], [0.0, 0.0, 0.0], *state[2:])
    state[3] = np.array([np.nan])
    with pytest.raises(StateError, match=r"thetad of 'joint._motor' is nan"):
        elastic_rnea(model, *state)


def test_without_elastic_joints_it_is_the_rigid_rnea_with_rotors() -> None:
    """All rigid, motors on the base: exactly Pinocchio's RNEA with armature eta^2 I_mz."""
    links = load_robot("panda").without_friction()
    rng = np.random.default_rng(7)
    drives = [JointDrive(j, motor=MotorSpec(link=links.root_link, inertia=(0.01, 0.01, 0.004),
                                            gear_ratio=float(rng.uniform(10, 100))))
              for j in links.joint_names]
    model = elastic_model(links, drives)
    oracle = PinOracle(robot_urdf("panda"), model.rigid_equivalent())
    for _ in range(20):
        q, qd, qdd = rng.normal(size=(3, model.n))
        r = elastic_rnea(model, q, [], qd, [], qdd, [])
        assert relative_error(r.tau, oracle.rnea(q, qd, qdd)) < TOL


def test_non_finite_motor_state_is_named_when_every_joint_is_elastic() -> None:
    """n == n_e: the name says motor or link by the argument, not by the array length."""
    links = load_robot("two_link_rr")
    model = elastic_model(links, [JointDrive(j, stiffness=100.0, motor=MotorSpec(
        "base_link", (0.01, 0.01, 0.01))) for j in links.joint_names])
    z = np.zeros(2)
    with pytest.raises(StateError, match=r"thetadd of 'joint2_motor' is nan"):
        elastic_rnea(model, z, z, z, z, z, np.array([0.0, np.nan]))
    with pytest.raises(StateError, match=r"qd of 'joint1' is inf"):
        elastic_rnea(model, z, z, np.array([np.inf, 0.0]), z, z, z)


def test_elastic_rnea_wrenches_are_the_interaction_forces(hua) -> None:
    """Algorithm 1's f_b, tau_b: projected on the axis, the link-side torque."""
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 3))
    r = elastic_rnea(hua, q, [0.1], qd, [0.2], qdd, [0.3], wrenches=True)
    assert r.wrenches.shape == (3, 6)
    axes = hua.links.axis
    assert np.allclose(np.einsum("ij,ij->i", r.wrenches[:, 3:], axes), r.tau_link, atol=1e-12)
