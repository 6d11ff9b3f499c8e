"""Free-flyer robots against Pinocchio's ``JointModelFreeFlyer`` root: Talos, Solo12,
ANYmal C, HyQ, Go2 (example-robot-data) and Talos with its mimic grippers, 1000
random states each (random unit quaternions, base twists and accelerations),
relative error <= 1e-9.

Both sides read the same URDF, each with its own parser; random armature (on
every velocity coordinate, the base's too) and a tilted gravity are copied to
Pinocchio by the oracle. Friction is removed (Pinocchio has none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from multidof import random_states
from oracle import PinOracle, relative_error

from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.coriolis import coriolis_matrix, coriolis_product
from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import (
    gravity_batch,
    gravity_torques,
    nonlinear_effects,
    nonlinear_effects_batch,
    rnea,
    rnea_batch,
    rnea_with_wrenches,
)
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import FLOATING_ROBOTS, load_robot, robot_urdf

ROBOTS = ("talos", "solo12", "anymal_c", "hyq", "go2", "talos_full")
SAMPLES = 1000
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@dataclass
class Case:
    name: str
    model: RobotModel
    oracle: PinOracle
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    pq: np.ndarray  # Pinocchio's configurations (the same: the layout is shared)


@pytest.fixture(scope="module", params=ROBOTS)
def case(request: pytest.FixtureRequest) -> Case:
    name = request.param
    rng = np.random.default_rng(3)
    model = load_robot(name, root_joint="free-flyer", mimic=name == "talos_full")
    model = model.without_friction().replace(armature=rng.uniform(0.0, 0.5, model.nv),
                                             gravity=np.array([0.3, -0.2, -9.81]))
    q, v, a = random_states(model, SAMPLES, seed=5)
    # Pinocchio 4.1's mimic parser rejects Talos' grippers ("the parent joint of the mimic
    # joint is not in the kinematic tree"): there, the followers are eliminated by hand.
    oracle = PinOracle(robot_urdf(name), model, mimic="eliminate")
    return Case(name, model, oracle, q, v, a, np.array([oracle.config(x) for x in q]))


def pin_each(case: Case, fn, *arrays) -> np.ndarray:
    """Pinocchio's ``fn`` on every sample, in our velocity order (``G^T fn(G x)``)."""
    o = case.oracle
    return np.array([o.ours(fn(o.pm, o.pd, pq, *(o.tangent(x[k]) for x in arrays)))
                     for k, pq in enumerate(case.pq)])


def test_the_robots_float_and_one_has_mimic_joints() -> None:
    assert set(ROBOTS) <= set(FLOATING_ROBOTS)
    talos = load_robot("talos_full", root_joint="free-flyer", mimic=True)
    assert talos.joint_types[0] == "free-flyer" and talos.nq == talos.nv + 1
    assert len(talos.mimic_joints) == 12


def test_layout_is_pinocchios(case: Case) -> None:
    """Per joint the same nq, nv and coordinates (joints may be listed in another
    order: the oracle maps them by name); the free-flyer first, as in Pinocchio."""
    m, o = case.model, case.oracle
    followers = len(m.mimic_joints)
    assert (m.nq + followers, m.nv + followers) == (o.pm.nq, o.pm.nv)
    for j, jid in enumerate(o.jid):
        joint = o.pm.joints[jid]
        assert (m.joint_nq[j], m.joint_nv[j]) == (joint.nq, joint.nv)
        assert np.array_equal(case.pq[:, joint.idx_q:joint.idx_q + joint.nq],
                              case.q[:, m.idx_q[j]:m.idx_q[j] + m.joint_nq[j]])
    assert m.idx_q[0] == o.idx_q[0] == 0 and o.pm.joints[1].shortname() == "JointModelFreeFlyer"


def test_rnea(case: Case) -> None:
    m = case.model
    pin = case.oracle.pin
    ours = np.array([rnea(m, *s) for s in zip(case.q, case.v, case.a, strict=True)])
    assert relative_error(ours, pin_each(case, pin.rnea, case.v, case.a)) < TOL
    assert relative_error(rnea_batch(m, case.q, case.v, case.a), ours) < TOL


def test_rnea_with_external_wrenches_and_joint_wrenches(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(11)
    for k in range(0, SAMPLES, 50):
        f = rng.normal(0.0, 20.0, (m.nbodies, 6))
        tau, wrenches = rnea_with_wrenches(m, case.q[k], case.v[k], case.a[k], fext=f)
        theirs = o.rnea(case.q[k], case.v[k], case.a[k], f)
        assert relative_error(tau, theirs) < TOL
        assert relative_error(wrenches, o.joint_wrenches()) < TOL
        assert relative_error(rnea(m, case.q[k], case.v[k], case.a[k], fext=f), theirs) < TOL


def test_base_wrench_is_the_first_six_components(case: Case) -> None:
    """The free-flyer's entries are the wrench on the base body, [force; torque], in
    its frame: the joint wrench the world would have to exert on it, plus armature."""
    m = case.model
    tau, wrenches = rnea_with_wrenches(m, case.q[0], case.v[0], case.a[0])
    base = tau[:6] - m.armature[:6] * case.a[0, :6]
    assert relative_error(base, wrenches[0]) < 1e-12


def test_gravity_and_nonlinear_effects(case: Case) -> None:
    m = case.model
    pin = case.oracle.pin
    g = np.array([gravity_torques(m, q) for q in case.q])
    assert relative_error(g, pin_each(case, pin.computeGeneralizedGravity)) < TOL
    assert relative_error(gravity_batch(m, case.q), g) < TOL
    h = np.array([nonlinear_effects(m, q, v) for q, v in zip(case.q, case.v, strict=True)])
    assert relative_error(h, pin_each(case, pin.nonLinearEffects, case.v)) < TOL
    assert relative_error(nonlinear_effects_batch(m, case.q, case.v), h) < TOL


def test_mass_matrix(case: Case) -> None:
    m, o = case.model, case.oracle
    M = mass_matrix_batch(m, case.q)
    theirs = np.array([o.mass_matrix(q) for q in case.q])  # symmetrised, then G^T M G
    assert relative_error(M, theirs) < TOL
    assert relative_error(mass_matrix(m, case.q[0]), M[0]) < TOL


def test_coriolis_matrix_and_product(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(12)
    for k in range(0, SAMPLES, 100):
        C = coriolis_matrix(m, case.q[k], case.v[k])
        theirs = o.coriolis(case.q[k], case.v[k])
        assert relative_error(C, theirs) < TOL
        x = rng.normal(size=m.nv)
        assert relative_error(coriolis_product(m, case.q[k], case.v[k], x), theirs @ x) < TOL


def test_aba_and_forward_dynamics(case: Case) -> None:
    """ABA against Pinocchio's (models without mimic joints; Pinocchio's aba has no
    mimic support); FD(ID) = identity for both forward dynamics."""
    m, o = case.model, case.oracle
    tau = rnea_batch(m, case.q, case.v, case.a)
    qdd = aba_batch(m, case.q, case.v, tau)
    assert relative_error(qdd, case.a) < TOL
    assert relative_error(forward_dynamics_batch(m, case.q, case.v, tau), case.a) < TOL
    for k in range(0, SAMPLES, 100):
        assert relative_error(aba(m, case.q[k], case.v[k], tau[k]), case.a[k]) < TOL
        assert relative_error(forward_dynamics(m, case.q[k], case.v[k], tau[k]), case.a[k]) < TOL
    if not m.mimic_joints:
        assert relative_error(qdd, pin_each(case, o.pin.aba, case.v, tau)) < TOL


def test_inverse_dynamics_is_m_a_plus_h(case: Case) -> None:
    m = case.model
    M = mass_matrix_batch(m, case.q)
    h = nonlinear_effects_batch(m, case.q, case.v)
    tau = rnea_batch(m, case.q, case.v, case.a)
    assert relative_error(np.einsum("nij,nj->ni", M, case.a) + h, tau) < TOL


def test_coriolis_skew_symmetry_along_the_lie_group_motion(case: Case) -> None:
    """dM/dt - 2C is skew, dM/dt by central differences along q(t) = q (+) t v
    (Pinocchio's integrate: the base moves with the constant body twist v)."""
    m, o = case.model, case.oracle
    eps = 1e-6
    ours = np.concatenate([np.arange(i, i + n) for i, n in zip(o.idx_q, o.nq_j, strict=True)])
    for k in range(0, SAMPLES, 250):
        q, v = case.q[k], case.v[k]
        forward = o.pin.integrate(o.pm, o.config(q), o.tangent(eps * v))
        backward = o.pin.integrate(o.pm, o.config(q), o.tangent(-eps * v))
        Mdot = (mass_matrix(m, forward[ours]) - mass_matrix(m, backward[ours])) / (2 * eps)
        N = Mdot - 2.0 * coriolis_matrix(m, q, v)
        assert np.abs(N + N.T).max() <= 1e-6 * np.abs(Mdot).max()


def test_free_flyer_and_moving_base_agree(case: Case) -> None:
    """The joints' torques of the free-flyer model are those of the fixed-base model
    on a base moving as the free-flyer (rc.BaseMotion, Khalil §7.1; its linear
    acceleration is the classical one, a + w x v); and a free-flyer model takes a
    base motion too (a base at rest changes nothing)."""
    m = case.model
    if m.mimic_joints:
        return  # the fixed-base model below is loaded without the followers' coupling
    fixed = load_robot(case.name).without_friction()
    fixed = fixed.replace(armature=m.armature[6:], gravity=m.gravity)
    order = [m.joint_names.index(j) - 1 for j in fixed.joint_names]  # same names, maybe
    for k in range(0, SAMPLES, 200):                                   # another order
        q, v, a = case.q[k], case.v[k], case.a[k]
        motion = BaseMotion(orientation=q[3:7], angular_velocity=v[3:6],
                            angular_acceleration=a[3:6], linear_velocity=v[:3],
                            linear_acceleration=a[:3] + np.cross(v[3:6], v[:3]))
        ours = rnea(fixed, q[7:][order], v[6:][order], a[6:][order], base_motion=motion)
        assert relative_error(ours, rnea(m, q, v, a)[6:][order]) < TOL
        at_rest = rnea(m, q, v, a, base_motion=BaseMotion())
        assert relative_error(at_rest, rnea(m, q, v, a)) < 1e-14
        assert relative_error(gravity_torques(m, q, base_motion=BaseMotion()),
                              gravity_torques(m, q)) < 1e-14
