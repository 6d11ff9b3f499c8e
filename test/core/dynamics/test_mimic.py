"""Mimic joints against Pinocchio: ``buildModelFromUrdf(path, mimic=True)`` on the
Franka hand (Panda) and the PR2 grippers (multipliers +-1), and the same robots
with the followers as independent Pinocchio joints eliminated by hand
(``tau = G^T tau_tree``, ``M = G^T M_tree G``, ``C = G^T C_tree G``), which also
covers what Pinocchio 4.1's mimic support lacks: its ``aba`` refuses mimic joints
and its ``computeCoriolisMatrix`` on them satisfies neither ``C v = h - g`` nor
the skew symmetry of ``dM/dt - 2C`` (checked while writing this test), so ``C``
is compared with the eliminated form only. A small URDF adds a multiplier 2, an
offset and a follower of a follower (a prismatic one of a revolute leader, which
Pinocchio's mimic parser refuses: it is checked against the eliminated form).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from multidof import random_states
from oracle import PinOracle, pinocchio_rnea_derivatives, relative_error

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import load_robot, robot_urdf

SAMPLES = 300
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")

LINK = ('<link name="{}"><inertial><origin xyz="0.05 0.02 0.1"/><mass value="{}"/>'
        '<inertia ixx="0.02" iyy="0.03" izz="0.015" ixy="0.001" ixz="0" iyz="0.002"/>'
        '</inertial></link>')
JOINT = ('<joint name="{}" type="{}"><parent link="{}"/><child link="{}"/>'
         '<origin xyz="0.1 0.05 0.3" rpy="0.3 -0.2 0.1"/><axis xyz="{}"/>'
         '<limit lower="-2" upper="2" effort="50" velocity="5"/>{}</joint>')
CHAIN_URDF = "<robot name='mimic_chain'>{}</robot>".format("".join([
    LINK.format("base", 1.0), LINK.format("a", 2.0), LINK.format("b", 1.5),
    LINK.format("c", 0.8), LINK.format("d", 0.5),
    JOINT.format("leader", "revolute", "base", "a", "0 0 1", ""),
    JOINT.format("f1", "revolute", "a", "b", "0 1 0",
                 '<mimic joint="leader" multiplier="2.0" offset="0.3"/>'),
    JOINT.format("f2", "prismatic", "b", "c", "1 0 0",
                 '<mimic joint="f1" multiplier="-0.5" offset="0.1"/>'),
    JOINT.format("free", "revolute", "c", "d", "0.6 0 0.8", ""),
]))


@dataclass
class Case:
    model: RobotModel
    pinocchio: PinOracle  # mimic=True parser
    eliminated: PinOracle
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray


@pytest.fixture(scope="module", params=["panda", "pr2", "chain"])
def case(request: pytest.FixtureRequest) -> Case:
    rng = np.random.default_rng(9)
    if request.param == "chain":
        source: object = CHAIN_URDF
        model = rc.parse_urdf(CHAIN_URDF)
    else:
        source = robot_urdf(request.param)
        model = load_robot(request.param, mimic=True)
    model = model.without_friction().replace(armature=rng.uniform(0.0, 0.3, model.nv),
                                             gravity=np.array([0.2, 0.1, -9.81]))
    q, v, a = random_states(model, SAMPLES, seed=4)
    eliminated = PinOracle(source, model, mimic="eliminate")
    # Pinocchio's mimic parser needs a follower of the leader's type and no chains: the
    # small URDF has neither, so there both oracles are the eliminated one.
    own = eliminated if request.param == "chain" else PinOracle(source, model)
    return Case(model, own, eliminated, q, v, a)


def test_followers_are_not_coordinates(case: Case) -> None:
    m = case.model
    assert m.mimic_joints and m.nv == m.njoints == m.nbodies - len(m.mimic_joints)
    assert not set(m.mimic_joints) & set(m.joint_names)
    assert case.pinocchio.pm.nv == m.nv or case.pinocchio.eliminate
    assert case.eliminated.pm.nv == m.nv + len(m.mimic_joints)


def test_chain_of_mimics_resolves_to_the_root_leader() -> None:
    m = rc.parse_urdf(CHAIN_URDF)
    f1, f2 = m.mimic_joints["f1"], m.mimic_joints["f2"]
    assert (f1.leader, f1.multiplier, f1.offset) == ("leader", 2.0, 0.3)
    # q_f2 = -0.5 q_f1 + 0.1 = -0.5 (2 q + 0.3) + 0.1 = -q - 0.05
    assert f2.leader == "leader" and np.isclose(f2.multiplier, -1.0)
    assert np.isclose(f2.offset, -0.05)
    positions = m.mimic_positions(np.array([0.7, 0.2]))
    assert np.isclose(positions["f1"], 1.7) and np.isclose(positions["f2"], -0.75)
    assert rc.parse_urdf(CHAIN_URDF, mimic=False).nv == 4


@pytest.mark.parametrize("oracle", ["pinocchio", "eliminated"])
def test_rnea_gravity_and_mass_matrix(case: Case, oracle: str) -> None:
    m, o = case.model, getattr(case, oracle)
    tau = rc.rnea_batch(m, case.q, case.v, case.a)
    assert relative_error(tau, np.array([o.rnea(*s) for s in zip(case.q, case.v, case.a,
                                                                  strict=True)])) < TOL
    assert relative_error(np.array([rc.rnea(m, *s) for s in zip(case.q, case.v, case.a,
                                                                 strict=True)]), tau) < TOL
    g = rc.gravity_batch(m, case.q)
    assert relative_error(g, np.array([o.gravity(q) for q in case.q])) < TOL
    assert relative_error(np.array([rc.gravity_torques(m, q) for q in case.q]), g) < TOL
    h = rc.nonlinear_effects_batch(m, case.q, case.v)
    assert relative_error(h, np.array([o.nonlinear_effects(q, v)
                                       for q, v in zip(case.q, case.v, strict=True)])) < TOL
    M = rc.mass_matrix_batch(m, case.q)
    assert relative_error(M, np.array([o.mass_matrix(q) for q in case.q])) < TOL


def test_external_wrenches_on_follower_bodies(case: Case) -> None:
    m, o = case.model, case.pinocchio
    rng = np.random.default_rng(1)
    for k in range(0, SAMPLES, 30):
        f = rng.normal(0.0, 5.0, (m.nbodies, 6))
        tau, wrenches = rc.rnea_with_wrenches(m, case.q[k], case.v[k], case.a[k], fext=f)
        assert relative_error(tau, o.rnea(case.q[k], case.v[k], case.a[k], f)) < TOL
        assert relative_error(wrenches, o.joint_wrenches()) < TOL


def test_coriolis_against_the_eliminated_followers(case: Case) -> None:
    m, o = case.model, case.eliminated
    rng = np.random.default_rng(5)
    g = rc.gravity_batch(m, case.q)
    h = rc.nonlinear_effects_batch(m, case.q, case.v)
    for k in range(0, SAMPLES, 30):
        C = rc.coriolis_matrix(m, case.q[k], case.v[k])
        assert relative_error(C, o.coriolis(case.q[k], case.v[k])) < TOL
        assert relative_error(C @ case.v[k] + g[k], h[k]) < TOL
        x = rng.normal(size=m.nv)
        assert relative_error(rc.coriolis_product(m, case.q[k], case.v[k], x), C @ x) < TOL


def test_coriolis_skew_symmetry(case: Case) -> None:
    """dM/dt - 2C is skew (dM/dt by central differences along q + t v: q is a
    vector space here, the followers move with their leaders)."""
    m = case.model
    eps = 1e-6
    for k in range(0, SAMPLES, 60):
        q, v = case.q[k], case.v[k]
        Mdot = (rc.mass_matrix(m, q + eps * v) - rc.mass_matrix(m, q - eps * v)) / (2 * eps)
        N = Mdot - 2.0 * rc.coriolis_matrix(m, q, v)
        assert np.abs(N + N.T).max() <= 1e-6 * np.abs(Mdot).max()


def test_forward_dynamics_through_the_mass_matrix(case: Case) -> None:
    """The recursive ABA cannot articulate the coupling: aba goes through M^-1."""
    m = case.model
    tau = rc.rnea_batch(m, case.q, case.v, case.a)
    assert relative_error(rc.aba_batch(m, case.q, case.v, tau), case.a) < TOL
    assert relative_error(rc.forward_dynamics_batch(m, case.q, case.v, tau), case.a) < TOL
    assert relative_error(rc.aba(m, case.q[0], case.v[0], tau[0]), case.a[0]) < TOL


def test_body_poses_include_the_followers(case: Case) -> None:
    m, o = case.model, case.eliminated
    pin = o.pin
    for k in range(0, SAMPLES, 100):
        pin.forwardKinematics(o.pm, o.pd, o.config(case.q[k]))
        R, p = rc.body_poses(m, case.q[k])
        assert R.shape == (m.nbodies, 3, 3)
        for b, jid in enumerate(o.body_jid):
            assert np.allclose(R[b], o.pd.oMi[jid].rotation, atol=1e-12)
            assert np.allclose(p[b], o.pd.oMi[jid].translation, atol=1e-12)


# --- derivatives: the kernels on the kernel tree, folded back by the chain rule ---------

def _along(f, q: np.ndarray, *x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d/dt f(q, qd, qdd, ...) along the motion, by central differences."""
    plus = [q + h * x[0], *(xi + h * xn for xi, xn in itertools.pairwise(x))]
    minus = [q - h * x[0], *(xi - h * xn for xi, xn in itertools.pairwise(x))]
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * h)


def test_rnea_derivatives_against_pinocchio_on_the_eliminated_followers(case: Case) -> None:
    m, o = case.model, case.eliminated
    rng = np.random.default_rng(2)
    for k in range(0, SAMPLES, 30):
        q, v, a = case.q[k], case.v[k], case.a[k]
        ours = rc.rnea_derivatives(m, q, v, a)
        for x, ref in zip(ours, pinocchio_rnea_derivatives(o, q, v, a), strict=True):
            assert relative_error(x, ref) < TOL
        f = rng.normal(0.0, 5.0, (m.nbodies, 6))
        ours = rc.rnea_derivatives(m, q, v, a, fext=f)
        for x, ref in zip(ours, pinocchio_rnea_derivatives(o, q, v, a, f), strict=True):
            assert relative_error(x, ref) < TOL
    batch = rc.rnea_derivatives_batch(m, case.q[:20], case.v[:20], case.a[:20])
    for k in range(20):
        for x, one in zip(batch, rc.rnea_derivatives(m, case.q[k], case.v[k], case.a[k]),
                          strict=True):
            np.testing.assert_allclose(x[k], one, rtol=0, atol=1e-12 * np.abs(one).max())


def test_joint_wrench_derivatives_per_body_against_finite_differences(case: Case) -> None:
    """One wrench per body, followers included, exactly rnea_with_wrenches' (checked
    against Pinocchio above); their derivatives against central differences of it."""
    m = case.model
    h = 1e-6
    for k in range(0, SAMPLES, 100):
        q, v, a = case.q[k], case.v[k], case.a[k]
        W, dq, dv, da = rc.joint_wrench_derivatives(m, q, v, a)
        assert W.shape == (m.nbodies, 6) and dq.shape == (m.nbodies, 6, m.nv)
        np.testing.assert_allclose(W, rc.rnea_with_wrenches(m, q, v, a)[1], atol=1e-12)
        for slot, d in enumerate((dq, dv, da)):
            fd = np.empty_like(d)
            for i in range(m.nv):
                e = np.zeros(m.nv)
                e[i] = h
                up, down = [q, v, a], [q, v, a]
                up[slot], down[slot] = up[slot] + e, down[slot] - e
                fd[:, :, i] = (rc.rnea_with_wrenches(m, *up)[1]
                               - rc.rnea_with_wrenches(m, *down)[1]) / (2 * h)
            assert np.abs(d - fd).max() < 1e-6 * max(1.0, np.abs(d).max())
        batch = rc.joint_wrench_derivatives_batch(m, q[None], v[None], a[None])
        for x, one in zip(batch, (W, dq, dv, da), strict=True):
            np.testing.assert_allclose(x[0], one, rtol=0, atol=1e-12 * max(1, np.abs(one).max()))


def test_tau_dot_and_its_sensitivities_are_derivatives_along_the_motion(case: Case) -> None:
    """tau_dot (gfd) = d/dt rnea, tau_ddot = d/dt tau_dot; d tau_dot/dq = d/dt (dtau/dq),
    d tau_dot/dqd = d/dt (dtau/dqd) + dtau/dq, d tau_dot/dqdd = d/dt M + dtau/dqd,
    d tau_dot/dqddd = M (module docstring of
    derivatives): each against central differences of the already-checked functions."""
    m = case.model
    rng = np.random.default_rng(3)
    for k in range(0, SAMPLES, 60):
        q, v, a = case.q[k], case.v[k], case.a[k]
        j, s = rng.normal(0.0, 3.0, m.nv), rng.normal(0.0, 3.0, m.nv)
        tau, tau_dot, tau_ddot = rc.rnea_second_time_derivative(m, q, v, a, j, s)
        np.testing.assert_allclose(tau, rc.rnea(m, q, v, a), atol=1e-10)
        ref = _along(lambda *x: rc.rnea(m, *x), q, v, a, j)
        assert np.abs(tau_dot - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
        ref = _along(lambda *x: rc.rnea_time_derivative(m, *x)[1], q, v, a, j, s)
        assert np.abs(tau_ddot - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
        td, sq, sv, sa, sj = rc.rnea_time_derivative_sensitivities(m, q, v, a, j)
        np.testing.assert_allclose(td, tau_dot, atol=1e-9 * max(1.0, np.abs(td).max()))
        dq, dv, M = rc.rnea_derivatives(m, q, v, a)
        np.testing.assert_allclose(sj, M, atol=1e-12 * np.abs(M).max())
        ref = _along(lambda *x: rc.rnea_derivatives(m, *x)[0], q, v, a, j)
        assert np.abs(sq - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
        ref = _along(lambda *x: rc.rnea_derivatives(m, *x)[1], q, v, a, j) + dq
        assert np.abs(sv - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
        ref = _along(lambda *x: rc.rnea_derivatives(m, *x)[2], q, v, a, j) + dv
        assert np.abs(sa - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())
        batch = rc.rnea_time_derivative_sensitivities_batch(m, q[None], v[None], a[None],
                                                            j[None])
        for x, one in zip(batch, (td, sq, sv, sa, sj), strict=True):
            np.testing.assert_allclose(x[0], one, rtol=0, atol=1e-12 * max(1, np.abs(one).max()))
        B = rc.rnea_second_time_derivative_batch(m, q[None], v[None], a[None], j[None], s[None])
        for x, one in zip(B, (tau, tau_dot, tau_ddot), strict=True):
            np.testing.assert_allclose(x[0], one, rtol=0, atol=1e-12 * max(1, np.abs(one).max()))


def test_derivatives_still_refuse_a_multi_dof_joint_naming_it() -> None:
    m = load_robot("solo12", root_joint="free-flyer")
    q, v, a = random_states(m, 1, seed=1)
    with pytest.raises(rc.ModelError, match=r"mimic followers too.*'root_joint' \(free-flyer\)"):
        rc.rnea_derivatives(m, q[0], v[0], a[0])
    with pytest.raises(rc.ModelError, match=r"'root_joint' \(free-flyer\)"):
        rc.rnea_time_derivative_batch(m, q, v, a, a)
