"""elastic/feedforward.py: the exact feedforward reproduces the reference, says why
when it is not exact, and converges to the rigid model with reflected rotor inertia
as the springs stiffen (K -> infinity)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from elastic_oracle import random_drives
from oracle import PinOracle, relative_error

from rnea_ros.core.elastic.fd import forward_dynamics
from rnea_ros.core.elastic.feedforward import Feedforward
from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.samples import load_elastic_robot, load_robot, robot_urdf


@pytest.mark.parametrize("name", ["panda", "mixed_3dof"])
def test_stiff_springs_converge_to_the_rigid_model_with_reflected_rotor_inertia(name) -> None:
    """K -> infinity, every motor on the base: the exact feedforward's motor torques
    converge (as 1/K) to Pinocchio's RNEA with armature eta^2 I_mz."""
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        links = load_robot(name).without_friction()
    drives = [lambda K, j=j, k=k: JointDrive(j, stiffness=K, motor=MotorSpec(
        link=links.root_link, inertia=(0.002, 0.002, 0.001), gear_ratio=5.0 + k))
        for k, j in enumerate(links.joint_names)]
    oracle = PinOracle(robot_urdf(name), elastic_model(links, [d(1.0) for d in drives])
                       .rigid_equivalent())
    errors = []
    states = rng.normal(0, 1, (10, 5, links.nv))
    for K in (1e4, 1e6, 1e8):
        model = elastic_model(links, [d(K) for d in drives])
        feedforward = Feedforward(model)
        assert feedforward.exact
        worst = 0.0
        for q, qd, qdd, qddd, qdddd in states:
            tau = feedforward(q, qd, qdd, qddd, qdddd).tau
            worst = max(worst, relative_error(tau, oracle.rnea(q, qd, qdd)))
        errors.append(worst)
    assert 50 < errors[0] / errors[1] < 200  # first order in 1/K
    assert errors[2] < 1e-7


@pytest.mark.parametrize("name", ["mixed_3dof", "panda", "stanford_arm"])
def test_exact_feedforward_reproduces_the_reference(name) -> None:
    """At the feedforward's state, forward dynamics under its torques gives back the
    reference accelerations, and its motor velocities/accelerations are the time
    derivatives of its motor positions (checked by central differences)."""
    rng = np.random.default_rng(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        links = load_robot(name)
        hua = load_elastic_robot("mixed_3dof")
    if name == "mixed_3dof":
        model = hua
    else:  # exact: motors on the base (elastic joints see no rotor spin)
        drives = random_drives(links, rng)
        model = elastic_model(links, [JointDrive(d.joint, d.stiffness, 0.0, MotorSpec(
            link=links.root_link, inertia=d.motor.inertia, gear_ratio=d.motor.gear_ratio))
            for d in drives])
    feedforward = Feedforward(model)
    assert feedforward.exact
    omega = rng.uniform(0.5, 2.0, model.n)
    phase = rng.uniform(0, np.pi, model.n)

    def reference(t: float):
        s, c = np.sin(omega * t + phase), np.cos(omega * t + phase)
        return [0.5 * x for x in (s, omega * c, -omega**2 * s, -omega**3 * c, omega**4 * s)]

    for t in np.linspace(0.0, 3.0, 7):
        r = reference(t)
        ref = feedforward(*r)
        qdd, thetadd = forward_dynamics(model, r[0], ref.theta, r[1], ref.thetad, ref.tau)
        assert relative_error(np.r_[qdd, thetadd], np.r_[r[2], ref.thetadd]) < 1e-9
        h = 1e-5
        ahead, behind = feedforward(*reference(t + h)), feedforward(*reference(t - h))
        assert np.allclose((ahead.theta - behind.theta) / (2 * h), ref.thetad, atol=1e-6)
        assert np.allclose((ahead.thetad - behind.thetad) / (2 * h), ref.thetadd, atol=1e-5)


def test_feedforward_says_why_it_is_not_exact() -> None:
    links = load_robot("two_link_rr")
    model = elastic_model(links, [
        JointDrive("joint1", stiffness=100.0, damping=0.5,
                   motor=MotorSpec("base_link", (0.01, 0.01, 0.01))),
        JointDrive("joint2", motor=MotorSpec("link1", (0.01, 0.01, 0.01)))])
    feedforward = Feedforward(model)
    assert not feedforward.exact
    assert feedforward.reasons == [
        "elastic joint 'joint1' has damping",
        "motor of 'joint2' rides on 'link1', moved by elastic joint 'joint1'"]
