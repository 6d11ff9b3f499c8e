"""Mixed rigid/elastic dynamics (hua-2024 Algorithms 1-2, Khalil 2010 section 6) against
the augmented-tree Pinocchio oracle, against each other, and against physics identities."""

from __future__ import annotations

import numpy as np
import pytest
from elastic_oracle import AugmentedOracle, random_drives
from oracle import PinOracle, relative_error

from rnea_ros.core.elastic.fd import dynamics, forward_dynamics
from rnea_ros.core.elastic.hybrid import elastic_inverse_dynamics, forward_dynamics_recursive
from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.core.errors import ModelError, StateError
from rnea_ros.samples import load_robot, robot_urdf

ROBOTS = ("two_link_rr", "two_link_pr", "stanford_arm", "arm7", "panda", "ur5", "kinova",
          "baxter", "talos_left_arm")
TOL = 1e-9


def _setup(name: str, seed: int, on_parent: bool):
    rng = np.random.default_rng(seed)
    links = load_robot(name).without_friction()
    model = elastic_model(links, random_drives(links, rng, on_parent=on_parent))
    return model, rng


def _state(model, rng):
    """Random state; the springs deflect by ~0.05 rad (a few hundred N m at most)."""
    n, ne = model.n, model.n_elastic
    q = rng.uniform(-np.pi, np.pi, n)
    theta = q[model.elastic_joints] + rng.normal(0, 0.05, ne)
    return (q, theta, rng.normal(0, 2, n), rng.normal(0, 2, ne), rng.normal(0, 5, n),
            rng.normal(0, 5, ne))


def _scaled_error(ours, reference, *terms) -> float:
    """Error relative to the largest term that entered the sum (springs can dominate)."""
    scale = max(float(np.abs(x).max(initial=0.0)) for x in (reference, *terms))
    return float(np.abs(np.asarray(ours) - reference).max()) / max(scale, 1e-12)


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("on_parent", [True, False], ids=["motor-on-parent", "motor-anywhere"])
def test_algorithm1_matches_augmented_pinocchio(name: str, on_parent: bool) -> None:
    model, rng = _setup(name, 1, on_parent)
    oracle = AugmentedOracle(robot_urdf(name), model)
    e = model.elastic_joints
    ours, ref, link_ours, link_ref = [], [], [], []
    for k in range(40):
        state = _state(model, rng)
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


@pytest.mark.parametrize("name", ROBOTS[:6])
def test_algorithm2_inertia_matrix_matches_pinocchio(name: str) -> None:
    model, rng = _setup(name, 2, on_parent=False)
    oracle = AugmentedOracle(robot_urdf(name), model)
    for _ in range(10):
        q, theta, qd, thetad, _, _ = _state(model, rng)
        A, _ = dynamics(model, q, theta, qd, thetad)
        assert relative_error(A, oracle.mass_matrix(q, theta)) < TOL
        assert np.linalg.eigvalsh(A)[0] > 0.0


@pytest.mark.parametrize("name", ROBOTS)
def test_recursive_forward_dynamics_agrees_with_algorithm2(name: str) -> None:
    """Khalil section 6.2 (O(n), recursive) vs hua-2024 Algorithm 2 (A by RNEA columns)."""
    model, rng = _setup(name, 3, on_parent=True)
    for k in range(20):
        q, theta, qd, thetad, _, _ = _state(model, rng)
        tau = rng.normal(0, 10, model.n)
        fext = rng.normal(0, 5, (model.n, 6)) if k % 2 else None
        xdd = np.r_[forward_dynamics(model, q, theta, qd, thetad, tau, fext=fext)]
        rec = np.r_[forward_dynamics_recursive(model, q, theta, qd, thetad, tau, fext=fext)]
        assert relative_error(rec, xdd) < TOL


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("on_parent", [True, False], ids=["motor-on-parent", "motor-anywhere"])
def test_inverse_of_forward_dynamics(name: str, on_parent: bool) -> None:
    """FD(ID) round trip: Algorithm 1 on Algorithm 2's accelerations gives back the
    torques, and the elastic joints' link-side torques equal their springs (eq. 28)."""
    model, rng = _setup(name, 4, on_parent)
    e = model.elastic_joints
    for _ in range(20):
        q, theta, qd, thetad, _, _ = _state(model, rng)
        tau = rng.normal(0, 10, model.n)
        qdd, thetadd = forward_dynamics(model, q, theta, qd, thetad, tau)
        r = elastic_rnea(model, q, theta, qd, thetad, qdd, thetadd)
        spring = model.spring_torque(q, theta, qd, thetad)
        assert _scaled_error(r.tau, tau, spring) < TOL
        if model.n_elastic:
            assert _scaled_error(r.tau_link[e], spring) < TOL


@pytest.mark.parametrize("name", ROBOTS)
def test_khalil_inverse_dynamics_with_elastic_joints(name: str) -> None:
    """Khalil section 6.3: from the rigid joints' and motors' accelerations, the elastic
    accelerations and the torques come out as forward dynamics had them."""
    model, rng = _setup(name, 5, on_parent=False)
    e = model.elastic_joints
    for _ in range(20):
        q, theta, qd, thetad, _, _ = _state(model, rng)
        tau = rng.normal(0, 10, model.n)
        qdd, thetadd = forward_dynamics(model, q, theta, qd, thetad, tau)
        given = qdd.copy()
        given[e] = 1e3  # ignored: outputs
        out = elastic_inverse_dynamics(model, q, theta, qd, thetad, given, thetadd)
        assert relative_error(out.qdd, qdd) < TOL
        assert relative_error(out.tau, tau) < TOL


def test_recursive_forward_dynamics_refuses_a_geared_loop() -> None:
    links = load_robot("two_link_rr")
    model = elastic_model(links, [JointDrive("joint2", motor=MotorSpec(
        link="base_link", inertia=(0.01, 0.01, 0.01), gear_ratio=10.0))])
    with pytest.raises(ModelError, match=r"joint2.*not on its parent body 'link1'.*Algorithm 2"):
        forward_dynamics_recursive(model, [0, 0], [], [0, 0], [], [0, 0])
    forward_dynamics(model, [0, 0], [], [0, 0], [], [0, 0])  # Algorithm 2 handles it


def test_bad_states_name_the_coordinate() -> None:
    model, rng = _setup("two_link_rr", 6, on_parent=True)
    state = list(_state(model, rng))
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
