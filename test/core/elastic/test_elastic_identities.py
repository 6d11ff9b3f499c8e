"""Mixed rigid/elastic robots: physics identities (energy, K -> infinity), the exact
feedforward, and the model's validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import yaml
from elastic_oracle import random_drives
from oracle import PinOracle, relative_error

from rnea_ros.core.elastic.fd import forward_dynamics
from rnea_ros.core.elastic.feedforward import Feedforward
from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.core.errors import InertiaError, ParameterError
from rnea_ros.samples import elastic_robot_drives, load_elastic_robot, load_robot, robot_urdf
from rnea_ros.simulation import ElasticSimulator


@pytest.fixture(scope="module")
def hua():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # table I's inertias (see urdf/mixed_3dof.urdf)
        return load_elastic_robot("mixed_3dof")


def _geared_hua(ratio: float):
    drives = yaml.safe_load(elastic_robot_drives("mixed_3dof").read_text())
    for joint in drives["joints"].values():
        joint["motor"]["gear_ratio"] = ratio
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return elastic_model(load_robot("mixed_3dof"), drives)


def _energy_drift(model, dt: float, seconds: float = 10.0) -> float:
    """Max relative energy change, unforced, RK4 at ``dt``."""
    sim = ElasticSimulator(model, dt=dt)
    e = model.elastic_joints
    q0 = np.linspace(0.3, -0.5, model.n)
    sim.reset(q0, q0[e] + 0.2, np.linspace(1.0, -1.0, model.n), np.full(model.n_elastic, 2.0))
    E0 = sim.energy()
    drift = 0.0
    for k in range(round(seconds / dt)):
        sim.step(np.zeros(model.n))
        if k % 50 == 0:
            drift = max(drift, abs(sim.energy() - E0) / abs(E0))
    return max(drift, abs(sim.energy() - E0) / abs(E0))


def test_energy_is_conserved_without_input() -> None:
    """No torque, no damping, no friction: energy drift < 1e-6 over 10 s, RK4 at 1 kHz
    (the paper's 3-DoF arm with gear ratio 10 on its motors)."""
    assert _energy_drift(_geared_hua(10.0), 1e-3) < 1e-6


def test_energy_drift_is_integration_error_only(hua) -> None:
    """With the paper's gear ratio 1 the motor mode is fast (omega dt ~ 0.16 at 1 kHz):
    the drift is RK4's, shrinking as dt^5 (2^5 = 32 when halving dt; a modelling
    error would not shrink)."""
    coarse, fine = _energy_drift(hua, 1e-3, 2.0), _energy_drift(hua, 5e-4, 2.0)
    assert coarse / fine > 20.0
    assert fine < 1e-5


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


def test_side_file_round_trip(hua, tmp_path) -> None:
    assert hua.elastic_names == ("joint3",)
    assert hua.motor_names == ("joint3_motor",)
    assert hua.motor_body.tolist() == [-1, 0, 0]
    assert hua.stiffness.tolist() == [0.0, 0.0, 100.0]
    # the unified body of link 1 carries motors 2 and 3 (table I: 1 kg each)
    assert hua.unified.mass.tolist() == [4.5, 1.5, 1.0]


BAD = [
    ({"joint9": {}}, "unknown joint 'joint9'; valid joints: 'joint1', 'joint2'"),
    ({"joint1": {"stiffness": 0.0, "motor": {"link": "base_link"}}},
     "joint 'joint1': stiffness = 0 must be > 0"),
    ({"joint1": {"stiffness": -5, "motor": {"link": "base_link"}}}, "stiffness = -5 must be > 0"),
    ({"joint1": {"stiffness": 10.0}}, "joint 'joint1' is elastic and needs a motor"),
    ({"joint1": {"stiffness": 10.0, "damping": -1, "motor": {"link": "base_link"}}},
     "damping = -1 must be >= 0"),
    ({"joint1": {"damping": 1.0}}, "damping needs stiffness"),
    ({"joint1": {"motor": {"link": "link7"}}},
     "motor of joint 'joint1': unknown link 'link7'; valid links: 'world', 'base_link'"),
    ({"joint1": {"motor": {"link": "base_link", "gear_ratio": 0}}},
     "gear_ratio = 0 must be > 0"),
    ({"joint1": {"motor": {"link": "base_link", "inertia": [0.1, 0.2, 0.1]}}},
     "I_mx = 0.1 and I_my = 0.2 differ"),
    ({"joint1": {"motor": {"link": "base_link", "inertia": [0.1, 0.1]}}},
     "inertia needs 3 numbers"),
    ({"joint1": {"stiffness": 10.0, "motor": {"link": "base_link", "inertia": [0.1, 0.1, 0]}}},
     "its motor needs I_mz > 0"),
    ({"joint1": {"motor": {"link": "base_link", "axis": [0, 0, 0]}}}, "axis .* is zero"),
    ({"joint1": {"motor": {"link": "base_link", "mass": "heavy"}}},
     "mass = 'heavy' is not a number"),
    ({"joint1": {"stiff": 1.0}}, "unknown keys 'stiff'; valid: 'stiffness', 'damping', 'motor'"),
    ({"joint1": {"motor": {"link": "base_link", "ratio": 2}}}, "unknown keys 'ratio'"),
    ({"joint1": {"motor": {"axis": [0, 0, 1]}}}, "motor must be a mapping with a 'link'"),
]


@pytest.mark.parametrize(("joints", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_bad_parameters_are_named(joints, message) -> None:
    with pytest.raises(ParameterError, match=message):
        elastic_model(load_robot("two_link_rr"), {"joints": joints})


def test_bad_files(tmp_path) -> None:
    links = load_robot("two_link_rr")
    with pytest.raises(ParameterError, match="cannot read elastic-joint file"):
        elastic_model(links, tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("joints: [1, 2")
    with pytest.raises(ParameterError, match="is not valid YAML"):
        elastic_model(links, bad)
    bad.write_text("stiffness: 3")
    with pytest.raises(ParameterError, match="need a 'joints' mapping"):
        elastic_model(links, bad)
    with pytest.raises(InertiaError, match="triangle inequality"):
        elastic_model(links, {"joints": {"joint1": {"motor": {
            "link": "base_link", "inertia": [0.1, 0.1, 0.5]}}}})


def test_armature_and_elasticity_exclude_each_other() -> None:
    links = load_robot("two_link_rr")
    links = links.replace(armature=np.array([0.1, 0.0]))
    with pytest.raises(ParameterError, match="give its rotor inertia to its motor"):
        elastic_model(links, [JointDrive("joint1", 10.0, motor=MotorSpec("base_link",
                                                                          (1, 1, 1)))])


def test_elastic_rnea_wrenches_are_the_interaction_forces(hua) -> None:
    """Algorithm 1's f_b, tau_b: projected on the axis, the link-side torque."""
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 3))
    r = elastic_rnea(hua, q, [0.1], qd, [0.2], qdd, [0.3], wrenches=True)
    assert r.wrenches.shape == (3, 6)
    axes = hua.links.axis
    assert np.allclose(np.einsum("ij,ij->i", r.wrenches[:, 3:], axes), r.tau_link, atol=1e-12)


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
