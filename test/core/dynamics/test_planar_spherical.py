"""Planar and spherical joints (and free-flyer roots) against Pinocchio's
``JointModelPlanar``/``JointModelSpherical``/``JointModelFreeFlyer``.

Random trees mixing them with revolute and prismatic joints are built in Python
on both sides: ours through the common builder, Pinocchio's joint by joint with
the same placements and inertias (``multidof.to_pinocchio``); every rigid
algorithm is compared on 200 random states per tree, relative error <= 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import pytest
from multidof import random_multidof_tree, random_states, to_pinocchio
from oracle import relative_error

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel

SAMPLES = 200
TOL = 1e-9
TREES = [(seed, root) for seed in range(6) for root in (None, "free-flyer", "planar")]


@dataclass
class Case:
    model: RobotModel
    pm: pin.Model
    pd: pin.Data
    jid: list[int]
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray


@pytest.fixture(scope="module", params=TREES, ids=[f"{s}-{r}" for s, r in TREES])
def case(request: pytest.FixtureRequest) -> Case:
    seed, root = request.param
    model = random_multidof_tree(seed, root=root)
    pm, jid = to_pinocchio(model)
    q, v, a = random_states(model, SAMPLES, seed=seed)
    return Case(model, pm, pm.createData(), jid, q, v, a)


def each(case: Case, fn, *arrays) -> np.ndarray:
    return np.array([np.array(fn(case.pm, case.pd, case.q[k], *(x[k] for x in arrays)))
                     for k in range(SAMPLES)])


def test_trees_have_multi_dof_joints(case: Case) -> None:
    m = case.model
    assert {"spherical", "planar"} & set(m.joint_types)
    assert (m.nq, m.nv) == (case.pm.nq, case.pm.nv)
    assert m.expanded


def test_rnea_gravity_nonlinear_effects(case: Case) -> None:
    m = case.model
    tau = np.array([rc.rnea(m, *s) for s in zip(case.q, case.v, case.a, strict=True)])
    assert relative_error(tau, each(case, pin.rnea, case.v, case.a)) < TOL
    assert relative_error(rc.rnea_batch(m, case.q, case.v, case.a), tau) < TOL
    g = np.array([rc.gravity_torques(m, q) for q in case.q])
    assert relative_error(g, each(case, pin.computeGeneralizedGravity)) < TOL
    assert relative_error(rc.gravity_batch(m, case.q), g) < TOL
    h = np.array([rc.nonlinear_effects(m, q, v) for q, v in zip(case.q, case.v, strict=True)])
    assert relative_error(h, each(case, pin.nonLinearEffects, case.v)) < TOL


def test_external_wrenches_and_joint_wrenches(case: Case) -> None:
    m = case.model
    rng = np.random.default_rng(2)
    for k in range(0, SAMPLES, 20):
        f = rng.normal(0.0, 10.0, (m.nbodies, 6))
        forces = [pin.Force.Zero() for _ in range(case.pm.njoints)]
        for b, j in enumerate(case.jid):
            forces[j] = pin.Force(f[b, :3], f[b, 3:])
        theirs = pin.rnea(case.pm, case.pd, case.q[k], case.v[k], case.a[k], forces)
        tau, wrenches = rc.rnea_with_wrenches(m, case.q[k], case.v[k], case.a[k], fext=f)
        assert relative_error(tau, theirs) < TOL
        pin_f = np.array([np.r_[case.pd.f[j].linear, case.pd.f[j].angular] for j in case.jid])
        assert relative_error(wrenches, pin_f) < TOL
        qdd = pin.aba(case.pm, case.pd, case.q[k], case.v[k], tau, forces)
        assert relative_error(rc.aba(m, case.q[k], case.v[k], tau, fext=f), qdd) < TOL


def test_mass_and_coriolis_matrices(case: Case) -> None:
    m = case.model
    M = rc.mass_matrix_batch(m, case.q)
    theirs = each(case, pin.crba)
    assert relative_error(M, np.triu(theirs) + np.transpose(np.triu(theirs, 1), (0, 2, 1))) < TOL
    rng = np.random.default_rng(4)
    for k in range(0, SAMPLES, 10):
        C = rc.coriolis_matrix(m, case.q[k], case.v[k])
        pin_C = pin.computeCoriolisMatrix(case.pm, case.pd, case.q[k], case.v[k])
        assert relative_error(C, pin_C) < TOL
        x = rng.normal(size=m.nv)
        assert relative_error(rc.coriolis_product(m, case.q[k], case.v[k], x), pin_C @ x) < TOL


def test_aba_and_forward_dynamics(case: Case) -> None:
    m = case.model
    tau = rc.rnea_batch(m, case.q, case.v, case.a)
    theirs = each(case, pin.aba, case.v, tau)
    assert relative_error(rc.aba_batch(m, case.q, case.v, tau), theirs) < TOL
    assert relative_error(np.array([rc.aba(m, *s) for s in zip(case.q, case.v, tau,
                                                                strict=True)]), case.a) < TOL
    assert relative_error(rc.forward_dynamics_batch(m, case.q, case.v, tau), case.a) < TOL


def test_kinematics_and_energies(case: Case) -> None:
    m = case.model
    rigid = pin.Model(case.pm)  # Pinocchio's kinetic energy counts armature its own way:
    rigid.armature[:] = 0.0  # compare the rigid bodies' energy
    rigid_data = rigid.createData()
    for k in range(0, SAMPLES, 25):
        q, v = case.q[k], case.v[k]
        pin.forwardKinematics(case.pm, case.pd, q)
        R, p = rc.body_poses(m, q)
        for b, j in enumerate(case.jid):
            assert np.allclose(R[b], case.pd.oMi[j].rotation, atol=1e-12)
            assert np.allclose(p[b], case.pd.oMi[j].translation, atol=1e-12)
        T = pin.computeKineticEnergy(rigid, rigid_data, q, v)
        T_ours = rc.kinetic_energy(m, q, v) - 0.5 * float(v @ (m.armature * v))
        assert abs(T_ours - T) <= TOL * abs(T)
        V = pin.computePotentialEnergy(case.pm, case.pd, q)
        assert abs(rc.potential_energy(m, q) - V) <= TOL * max(abs(V), 1.0)
