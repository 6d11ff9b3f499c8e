"""Centre of mass and centroidal momentum (core/dynamics/momentum.py) against Pinocchio's
``centerOfMass`` / ``computeCentroidalMomentum`` on fixed-base robots and on free-flyer
models (Talos, Solo12, ANYmal C, HyQ, Go2, Talos with mimic grippers: random unit
quaternions and base twists), and identities: the linear momentum is ``m dc``, its
derivative ``m ddc`` is the base's reaction force minus gravity, the body twists are
Pinocchio's ``data.v``, and a free-flyer model's momentum is the free-floating
robot's (base inertia + fixed-base tree, ``free_floating_momentum``)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from oracle import PinOracle, random_states, relative_error

import rnea_ros.core as rc
from rnea_ros.samples import SAMPLE_ROBOTS, load_robot, robot_urdf

FREE_FLYERS = ("talos", "solo12", "anymal_c", "hyq", "go2", "talos_full")

ROBOTS = (*SAMPLE_ROBOTS, "panda", "ur5", "talos_left_arm", "baxter", "pr2", "solo12", "tiago")
SAMPLES = 100
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@pytest.mark.parametrize("robot", ROBOTS)
def test_momentum_matches_pinocchio(robot: str) -> None:
    model = load_robot(robot)
    oracle = PinOracle(robot_urdf(robot), model)
    pm, pd = oracle.pm, oracle.pd
    q, qd, _ = random_states(model, SAMPLES, seed=4)
    ours = {"com": [], "vcom": [], "hg": [], "v": []}
    ref = {"com": [], "vcom": [], "hg": [], "v": []}
    for k in range(SAMPLES):
        pq, pv = oracle.config(q[k]), oracle.tangent(qd[k])
        ref["com"].append(pin.centerOfMass(pm, pd, pq, pv).copy())
        ref["vcom"].append(pd.vcom[0].copy())
        ref["hg"].append(pin.computeCentroidalMomentum(pm, pd, pq, pv).vector.copy())
        pin.forwardKinematics(pm, pd, pq, pv)
        ref["v"].append([pd.v[j].vector.copy() for j in oracle.jid])
        ours["com"].append(rc.center_of_mass(model, q[k]))
        ours["vcom"].append(rc.center_of_mass_velocity(model, q[k], qd[k]))
        ours["hg"].append(rc.centroidal_momentum(model, q[k], qd[k]))
        ours["v"].append(rc.body_velocities(model, q[k], qd[k]))
    for key in ours:
        err = relative_error(np.array(ours[key]), np.array(ref[key]))
        assert err <= TOL, (key, err)
    assert rc.momentum(model, q[0]).mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-14)


@pytest.mark.parametrize("robot", FREE_FLYERS)
def test_free_flyer_momentum_matches_pinocchio(robot: str) -> None:
    """World frame, about the COM; the root body (the base) counts. Random unit
    quaternions, base positions and twists (rc.random_configuration); Talos' mimic
    followers move with their leaders (Pinocchio: followers eliminated, G v)."""
    model = load_robot(robot, root_joint="free-flyer", mimic=robot == "talos_full")
    oracle = PinOracle(robot_urdf(robot), model, mimic="eliminate")
    pm, pd = oracle.pm, oracle.pd
    rng = np.random.default_rng(21)
    ours: dict[str, list[np.ndarray]] = {"com": [], "vcom": [], "hg": []}
    ref: dict[str, list[np.ndarray]] = {"com": [], "vcom": [], "hg": []}
    for _ in range(SAMPLES):
        q = rc.random_configuration(model, rng, translation_box=2.0)
        v = rng.normal(0.0, 2.0, model.nv)
        pq, pv = oracle.config(q), oracle.tangent(v)
        ref["com"].append(pin.centerOfMass(pm, pd, pq, pv).copy())
        ref["vcom"].append(pd.vcom[0].copy())
        ref["hg"].append(pin.computeCentroidalMomentum(pm, pd, pq, pv).vector.copy())
        mom = rc.momentum(model, q, v)
        ours["com"].append(rc.center_of_mass(model, q))
        ours["vcom"].append(rc.center_of_mass_velocity(model, q, v))
        ours["hg"].append(rc.centroidal_momentum(model, q, v))
        np.testing.assert_array_equal(mom.hg, ours["hg"][-1])
    for key in ours:
        err = relative_error(np.array(ours[key]), np.array(ref[key]))
        assert err <= TOL, (key, err)
    assert rc.momentum(model, q).mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-14)


@pytest.mark.parametrize("robot", ("solo12", "hyq"))
def test_free_flyer_model_is_the_free_floating_robot(robot: str) -> None:
    """The free-flyer model's momentum equals the free-floating robot's as base inertia
    plus fixed-base tree (rc.free_floating_momentum, its own kinematics)."""
    model = load_robot(robot, root_joint="free-flyer")
    path = robot_urdf(robot)
    tree = load_robot(robot)
    base = rc.urdf_base_inertia(path, inertia_check="warn")
    order = np.array([model.joint_names.index(j) for j in tree.joint_names]) - 1
    rng = np.random.default_rng(2)
    for _ in range(20):
        q = rc.random_configuration(model, rng)
        v = rng.normal(0.0, 2.0, model.nv)
        split = rc.free_floating_momentum(tree, base, q[:7], v[:6], q[7:][order], v[6:][order])
        whole = rc.momentum(model, q, v)
        assert relative_error(np.r_[whole.com, whole.com_velocity, whole.hg],
                              np.r_[split.com, split.com_velocity, split.hg]) < 1e-13


@pytest.mark.parametrize("robot", ("arm7", "stanford_arm", "pr2"))
def test_momentum_rate_is_the_base_reaction(robot: str) -> None:
    """Newton on the whole robot: d/dt l = m ddc = F_base + m g, where F_base is the force
    the fixed base exerts, the sum of the root joints' wrenches (rnea_with_wrenches).
    d/dt l by central differences along (q, qd, qdd)."""
    model = load_robot(robot)
    q, qd, qdd = random_states(model, 20, seed=9)
    roots = np.flatnonzero(model.parent < 0)
    h = 1e-5
    for k in range(20):
        def linear(t: float, k: int = k) -> np.ndarray:
            qt = q[k] + t * qd[k] + 0.5 * t * t * qdd[k]
            return rc.centroidal_momentum(model, qt, qd[k] + t * qdd[k])[:3]
        rate = (linear(h) - linear(-h)) / (2 * h)
        _, wrenches = rc.rnea_with_wrenches(model, q[k], qd[k], qdd[k])
        Rb, _ = rc.body_poses(model, q[k])
        force = sum(Rb[i] @ wrenches[i, :3] for i in roots)
        expected = force + model.mass.sum() * model.gravity
        assert relative_error(rate, expected) < 1e-7


def test_at_rest_and_straight_line() -> None:
    """At rest the momentum is zero; a two-link arm folded out along x has its COM where
    the link masses put it."""
    model = load_robot("arm7")
    q = np.linspace(-1, 1, model.nv)
    np.testing.assert_array_equal(rc.centroidal_momentum(model, q, np.zeros(model.nv)),
                                  np.zeros(6))
    two = load_robot("two_link_rr")
    R, p = rc.body_poses(two, np.zeros(2))
    com = (two.mass[:, None] * (p + np.einsum("nij,nj->ni", R, two.com))).sum(0) / two.mass.sum()
    np.testing.assert_allclose(rc.center_of_mass(two, np.zeros(2)), com, atol=1e-15)


def test_base_twist_moves_every_body() -> None:
    """body_velocities with a base twist: Pinocchio's free-flyer data.v."""
    path = str(robot_urdf("arm7"))
    model = rc.load_urdf(path)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, model.nv), rng.normal(size=model.nv)
    base = rng.normal(size=6)
    qf = np.r_[rng.normal(size=3), pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs(), q]
    pin.forwardKinematics(pm, pd, qf, np.r_[base, qd])
    ref = np.array([pd.v[pm.getJointId(name)].vector for name in model.joint_names])
    np.testing.assert_allclose(rc.body_velocities(model, q, qd, base_twist=base), ref,
                               rtol=0, atol=1e-12)


def test_bad_input() -> None:
    model = load_robot("arm7")
    with pytest.raises(rc.StateError, match="qd has shape"):
        rc.centroidal_momentum(model, np.zeros(model.nv), np.zeros(3))
    with pytest.raises(rc.StateError, match="base_twist"):
        rc.body_velocities(model, np.zeros(model.nv), np.zeros(model.nv), base_twist=np.ones(3))
    massless = model.replace(mass=np.zeros(model.nv), com=np.zeros((model.nv, 3)),
                             inertia=np.zeros((model.nv, 3, 3)))
    with pytest.raises(rc.ModelError, match="total mass 0 kg"):
        rc.center_of_mass(massless, np.zeros(model.nv))
