"""momentum_bias.py and jacobian.py: the momentum observer's core terms.

``beta = g(q) - C(q, qd)^T qd`` and ``p = M(q) qd`` (O(n), per call and batched) against
Pinocchio (``computeGeneralizedGravity``, ``computeCoriolisMatrix``, ``crba``) on every
sample URDF and 14 example-robot-data robots (50 states each), free-flyer robots,
mimic joints (Pinocchio with the followers eliminated); against identities
(``C^T qd = dT/dq``, ``dp/dt = tau - beta`` along a simulated motion); frame Jacobians
against ``computeFrameJacobian`` in Pinocchio's three reference frames, every link.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from dynamics_cases import TOL, Case, FreeFlyerCase, tree_states
from oracle import PinOracle, random_states, relative_error
from trees import random_tree

import rnea_ros.core as rc
from rnea_ros.samples import load_elastic_robot, load_loop_robot, load_robot, robot_urdf

STATES = 50
REFERENCES = ("LOCAL", "WORLD", "LOCAL_WORLD_ALIGNED")


def _reference_bias(o: PinOracle, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    return o.gravity(q) - o.coriolis(q, qd).T @ qd


def test_bias_and_momentum_against_pinocchio(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    Q, QD = pin_case.q[:STATES], pin_case.qd[:STATES]
    P, B = rc.momentum_and_bias_batch(m, Q, QD)
    beta_ref = np.array([_reference_bias(o, q, qd) for q, qd in zip(Q, QD, strict=True)])
    p_ref = np.array([o.mass_matrix(q) @ qd for q, qd in zip(Q, QD, strict=True)])
    assert relative_error(B, beta_ref) <= TOL
    assert relative_error(P, p_ref) <= TOL
    for k in range(0, STATES, 10):
        p, beta = rc.momentum_and_bias(m, Q[k], QD[k])
        assert relative_error(beta, beta_ref[k]) <= TOL
        assert relative_error(rc.momentum_bias(m, Q[k], QD[k]), beta_ref[k]) <= TOL
        assert relative_error(p, p_ref[k]) <= TOL


def test_bias_and_momentum_on_free_flyers(ff_case: FreeFlyerCase) -> None:
    m, o = ff_case.model, ff_case.oracle
    idx = range(0, 1000, 50)
    Q, V = ff_case.q[list(idx)], ff_case.v[list(idx)]
    P, B = rc.momentum_and_bias_batch(m, Q, V)
    for k in range(len(Q)):
        assert relative_error(B[k], _reference_bias(o, Q[k], V[k])) < TOL
        assert relative_error(P[k], o.mass_matrix(Q[k]) @ V[k]) < TOL
    p, beta = rc.momentum_and_bias(m, Q[3], V[3])
    assert relative_error(beta, B[3]) < TOL and relative_error(p, P[3]) < TOL


@pytest.mark.parametrize("name", ["panda", "arm7_gripper"])
def test_mimic_followers_against_the_eliminated_form(name: str) -> None:
    model = load_robot(name, mimic=True)
    assert model.mimic_joints
    rng = np.random.default_rng(2)
    model = model.without_friction().replace(armature=rng.uniform(0.0, 0.3, model.nv))
    o = PinOracle(robot_urdf(name), model, mimic="eliminate")
    Q, QD, _ = random_states(model, 20, seed=3)
    P, B = rc.momentum_and_bias_batch(model, Q, QD)
    for k in range(20):
        assert relative_error(B[k], _reference_bias(o, Q[k], QD[k])) < TOL
        assert relative_error(P[k], o.mass_matrix(Q[k]) @ QD[k]) < TOL


@pytest.mark.parametrize("seed", range(6))
def test_coriolis_transpose_is_the_kinetic_energy_gradient(seed: int) -> None:
    """``C^T qd = dT/dq`` (central differences) and ``beta = g - C^T qd`` with our own C."""
    model = random_tree(seed)
    eps = 1e-6
    for q, qd, _ in tree_states(model, seed, 4):
        beta = rc.momentum_bias(model, q, qd)
        grad = np.array([(rc.kinetic_energy(model, q + eps * e, qd)
                          - rc.kinetic_energy(model, q - eps * e, qd)) / (2 * eps)
                         for e in np.eye(model.nv)])
        g = rc.gravity_torques(model, q)
        assert np.allclose(g - beta, grad, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(grad).max()))
        C = rc.coriolis_matrix(model, q, qd)
        assert np.allclose(beta, g - C.T @ qd, rtol=1e-10, atol=1e-10)


def test_momentum_rate_is_torque_minus_bias_along_a_motion() -> None:
    """``dp/dt = tau - beta`` (the observer's model, no contact) along a trajectory: p by
    the kernel, its rate by central differences, tau by RNEA (friction removed)."""
    model = load_robot("arm7").without_friction()
    t = np.linspace(0.0, 1.0, 2001)
    w = np.linspace(1.0, 2.5, model.nv)
    q = np.sin(np.outer(t, w))
    qd = np.cos(np.outer(t, w)) * w
    qdd = -np.sin(np.outer(t, w)) * w * w
    P, B = rc.momentum_and_bias_batch(model, q, qd)
    tau = rc.rnea_batch(model, q, qd, qdd)
    dp = (P[2:] - P[:-2]) / (t[2] - t[0])
    assert np.abs(dp - (tau - B)[1:-1]).max() < 1e-4 * np.abs(tau).max()


def test_refuses_closed_loops_and_wrong_shapes() -> None:
    loops = load_loop_robot("four_bar")
    with pytest.raises(rc.ModelError, match=r"ClosedLoopModel.*active coordinates"):
        rc.momentum_bias(loops, np.zeros(1), np.zeros(1))  # type: ignore[arg-type]
    with pytest.raises(rc.ModelError, match=r"frame_jacobian.*ClosedLoopModel"):
        rc.frame_jacobian(loops, np.zeros(1), "link1")  # type: ignore[arg-type]
    with warnings.catch_warnings():  # the sample's link inertias are not what is tested
        warnings.simplefilter("ignore", rc.InertiaWarning)
        elastic = load_elastic_robot("mixed_3dof")
    with pytest.raises(rc.ModelError, match=r"ElasticModel.*model.links"):
        rc.momentum_and_bias_batch(elastic, np.zeros((1, 3)), np.zeros((1, 3)))  # type: ignore[arg-type]
    model = load_robot("arm7")
    with pytest.raises(rc.StateError, match=r"qd has shape \(3,\)"):
        rc.momentum_bias(model, np.zeros(model.nq), np.zeros(3))
    with pytest.raises(rc.StateError, match="qd of joint"):
        rc.momentum_and_bias_batch(model, np.zeros((2, model.nq)),
                                   np.full((2, model.nv), np.nan))


# ------------------------------------------------------------------ frame Jacobians
def _pin_jacobian(o: PinOracle, q: np.ndarray, link: str, reference: str) -> np.ndarray:
    pin = o.pin
    J = np.asarray(pin.computeFrameJacobian(o.pm, o.pd, o.config(q),
                                            o.pm.getFrameId(link, pin.BODY),
                                            getattr(pin.ReferenceFrame, reference)))
    return J @ o.G if o.eliminate else J[:, o.idx_v]


def test_frame_jacobian_against_pinocchio(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    links = [name for name in m.frames if o.pm.existFrame(name, o.pin.BODY)]
    assert len(links) >= 2
    for q in pin_case.q[:5]:
        for link in links:
            for reference in REFERENCES:
                J = rc.frame_jacobian(m, q, link, reference)
                assert J.shape == (6, m.nv)
                ref = _pin_jacobian(o, q, link, reference)
                assert np.abs(J - ref).max() <= TOL * max(1.0, np.abs(ref).max())


def test_frame_jacobian_on_free_flyers(ff_case: FreeFlyerCase) -> None:
    m, o = ff_case.model, ff_case.oracle
    links = [name for name in m.frames if o.pm.existFrame(name, o.pin.BODY)][::3]
    for q in ff_case.q[:3]:
        for link in links:
            for reference in REFERENCES:
                J = rc.frame_jacobian(m, q, link, reference)
                Jp = _pin_jacobian(o, q, link, reference)
                assert np.abs(J - Jp).max() <= TOL * max(1.0, np.abs(Jp).max())


def test_frame_jacobian_maps_velocities_and_wrenches() -> None:
    """``J qd`` is the link's twist (body_velocities for a body frame) and ``J^T F`` is
    the torque RNEA gives for the wrench ``F`` on the link (fext)."""
    model = load_robot("arm7").without_friction()
    q, qd, _ = random_states(model, 1, seed=8)
    q, qd = q[0], qd[0]
    body = model.nbodies - 1
    link = model.body_names[body]
    assert np.allclose(rc.frame_jacobian(model, q, link, "LOCAL") @ qd,
                       rc.body_velocities(model, q, qd)[body], atol=1e-12)
    F = np.array([3.0, -1.0, 2.0, 0.5, 0.2, -0.3])
    fext = np.zeros((model.nbodies, 6))
    fext[body] = F
    zero = np.zeros(model.nv)
    tau = rc.rnea(model, q, zero, zero, fext=fext) - rc.rnea(model, q, zero, zero)
    assert np.allclose(rc.frame_jacobian(model, q, link, "LOCAL").T @ F, -tau, atol=1e-10)


def test_frame_jacobian_bad_input() -> None:
    model = load_robot("arm7")
    q = np.zeros(model.nq)
    with pytest.raises(rc.JointNameError, match=r"unknown link 'nope'.*valid links"):
        rc.frame_jacobian(model, q, "nope")
    with pytest.raises(rc.ModelError, match=r"unknown reference frame 'BODY'.*'LOCAL'"):
        rc.frame_jacobian(model, q, model.body_names[-1], "BODY")
    base = [name for name, f in model.frames.items() if f.body < 0]
    assert base and not rc.frame_jacobian(model, q, base[0], "WORLD").any()
