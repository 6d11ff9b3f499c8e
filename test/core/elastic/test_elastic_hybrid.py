"""elastic/hybrid.py: the recursive forward dynamics and Khalil's hybrid inverse
dynamics with elastic joints (Khalil 2010 section 6), against Algorithm 2; a geared
loop is refused (and the simulator falls back to Algorithm 2)."""

from __future__ import annotations

import numpy as np
import pytest
from elastic_cases import (
    ELASTIC_ROBOTS,
    TOL,
    random_state,
    setup_model,
)
from oracle import relative_error

from rnea_ros.core.elastic.fd import forward_dynamics
from rnea_ros.core.elastic.hybrid import elastic_inverse_dynamics, forward_dynamics_recursive
from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.errors import ModelError
from rnea_ros.samples import load_robot
from rnea_ros.simulation import ElasticSimulator


@pytest.mark.parametrize("name", ELASTIC_ROBOTS)
def test_recursive_forward_dynamics_agrees_with_algorithm2(name: str) -> None:
    """Khalil section 6.2 (O(n), recursive) vs hua-2024 Algorithm 2 (A by RNEA columns)."""
    model, rng = setup_model(name, 3, on_parent=True)
    for k in range(20):
        q, theta, qd, thetad, _, _ = random_state(model, rng)
        tau = rng.normal(0, 10, model.n)
        fext = rng.normal(0, 5, (model.n, 6)) if k % 2 else None
        xdd = np.r_[forward_dynamics(model, q, theta, qd, thetad, tau, fext=fext)]
        rec = np.r_[forward_dynamics_recursive(model, q, theta, qd, thetad, tau, fext=fext)]
        assert relative_error(rec, xdd) < TOL


@pytest.mark.parametrize("name", ELASTIC_ROBOTS)
def test_khalil_inverse_dynamics_with_elastic_joints(name: str) -> None:
    """Khalil section 6.3: from the rigid joints' and motors' accelerations, the elastic
    accelerations and the torques come out as forward dynamics had them."""
    model, rng = setup_model(name, 5, on_parent=False)
    e = model.elastic_joints
    for _ in range(20):
        q, theta, qd, thetad, _, _ = random_state(model, rng)
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


def test_simulator_falls_back_to_algorithm2_for_a_geared_loop() -> None:
    """A rigid joint's motor off its parent link: the recursive form refuses, the
    simulator integrates with Algorithm 2, and energy is still conserved."""
    links = load_robot("two_link_rr").replace(gravity=np.array([0.0, -9.81, 0.0]))
    model = elastic_model(links, [
        JointDrive("joint1", stiffness=50.0, motor=MotorSpec("base_link", (0.01, 0.01, 0.01),
                                                             gear_ratio=3.0)),
        JointDrive("joint2", motor=MotorSpec("base_link", (0.01, 0.01, 0.01), gear_ratio=5.0))])
    sim = ElasticSimulator(model, dt=1e-3)
    assert sim.engine is forward_dynamics
    sim.reset(np.array([0.3, -0.5]), np.array([0.4]), np.array([1.0, -1.0]), np.array([0.5]))
    E0 = sim.energy()
    for _ in range(2000):
        sim.step(np.zeros(2))
    assert abs(sim.energy() - E0) / abs(E0) < 1e-6
