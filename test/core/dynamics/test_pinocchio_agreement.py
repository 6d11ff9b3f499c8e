"""Our algorithms against Pinocchio on every sample URDF and 14 example-robot-data
robots, 1000 random states each, relative error <= 1e-9.

Each robot is loaded twice from the same URDF: by our parser and by
Pinocchio's. Random armature is added to both; friction from the URDF
``<dynamics>`` is removed from ours, since Pinocchio's RNEA has none (the
friction term is checked on its own below).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from oracle import PinOracle, random_states, relative_error

from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.coriolis import coriolis_matrix, coriolis_product
from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.dynamics.rnea import (
    friction_torques,
    gravity_batch,
    gravity_torques,
    nonlinear_effects,
    nonlinear_effects_batch,
    rnea,
    rnea_batch,
    rnea_with_wrenches,
)
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import EXAMPLE_ROBOTS, SAMPLE_ROBOTS, load_robot, robot_urdf

ROBOTS = list(SAMPLE_ROBOTS) + list(EXAMPLE_ROBOTS)
SAMPLES = 1000
TOL = 1e-9


@dataclass
class Case:
    name: str
    model: RobotModel
    oracle: PinOracle
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@pytest.fixture(scope="module", params=ROBOTS)
def case(request: pytest.FixtureRequest) -> Case:
    path = robot_urdf(request.param)
    rng = np.random.default_rng(7)
    model = load_robot(request.param).without_friction()
    model = model.replace(armature=rng.uniform(0.0, 0.5, model.nv),
                          gravity=np.array([0.3, -0.2, -9.81]))
    q, qd, qdd = random_states(model, SAMPLES, seed=1)
    return Case(request.param, model, PinOracle(path, model), q, qd, qdd)


def test_robot_set_covers_trees_continuous_prismatic_and_fixed_joints() -> None:
    kinds = set()
    branching = 0
    for name in ROBOTS:
        model = load_robot(name)
        kinds.update(model.joint_types)
        branching += len(model.parent) != len(set(model.parent.tolist()))
        if len(model.frames) > model.nv + 1:  # links merged through fixed joints
            kinds.add("fixed")
    assert {"revolute", "continuous", "prismatic", "fixed"} <= kinds
    assert branching >= 4
    assert len(EXAMPLE_ROBOTS) >= 8


def test_rnea(case: Case) -> None:
    m, o = case.model, case.oracle
    ours = np.array([rnea(m, *s) for s in zip(case.q, case.qd, case.qdd, strict=True)])
    ref = np.array([o.rnea(*s) for s in zip(case.q, case.qd, case.qdd, strict=True)])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(rnea_batch(m, case.q, case.qd, case.qdd), ref) <= TOL


def test_rnea_with_external_wrenches_and_joint_wrenches(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(3)
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:200]:
        fext = rng.normal(0.0, 10.0, (m.nv, 6))
        tau, wrenches = rnea_with_wrenches(m, q, qd, qdd, fext=fext)
        ref = o.rnea(q, qd, qdd, fext)
        assert relative_error(tau, ref) <= TOL
        assert relative_error(wrenches, o.joint_wrenches()) <= TOL
        assert relative_error(rnea(m, q, qd, qdd, fext=fext), ref) <= TOL


def test_gravity(case: Case) -> None:
    m, o = case.model, case.oracle
    ours = np.array([gravity_torques(m, q) for q in case.q])
    ref = np.array([o.gravity(q) for q in case.q])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(gravity_batch(m, case.q), ref) <= TOL


def test_nonlinear_effects(case: Case) -> None:
    m, o = case.model, case.oracle
    ours = np.array([nonlinear_effects(m, q, qd) for q, qd in zip(case.q, case.qd, strict=True)])
    ref = np.array([o.nonlinear_effects(q, qd) for q, qd in zip(case.q, case.qd, strict=True)])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(nonlinear_effects_batch(m, case.q, case.qd), ref) <= TOL


def test_mass_matrix(case: Case) -> None:
    m, o = case.model, case.oracle
    ours = np.array([mass_matrix(m, q) for q in case.q])
    ref = np.array([o.mass_matrix(q) for q in case.q])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(mass_matrix_batch(m, case.q), ref) <= TOL


def test_forward_dynamics(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(5)
    tau = rng.normal(0.0, 5.0, case.q.shape)
    ref = np.array([o.aba(*s) for s in zip(case.q, case.qd, tau, strict=True)])
    recursive = np.array([aba(m, *s) for s in zip(case.q, case.qd, tau, strict=True)])
    via_mass_matrix = np.array([forward_dynamics(m, *s)
                                for s in zip(case.q, case.qd, tau, strict=True)])
    # FD amplifies rounding by cond(M): compare at the scale of M^-1 tau.
    assert relative_error(recursive, ref) <= TOL
    assert relative_error(via_mass_matrix, ref) <= TOL
    assert relative_error(aba_batch(m, case.q, case.qd, tau), ref) <= TOL
    assert relative_error(forward_dynamics_batch(m, case.q, case.qd, tau), ref) <= TOL


def test_forward_dynamics_with_external_wrenches(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(6)
    for q, qd in list(zip(case.q, case.qd, strict=True))[:100]:
        tau = rng.normal(0.0, 5.0, m.nv)
        fext = rng.normal(0.0, 5.0, (m.nv, 6))
        ref = o.aba(q, qd, tau, fext)
        assert relative_error(aba(m, q, qd, tau, fext=fext), ref) <= TOL
        assert relative_error(forward_dynamics(m, q, qd, tau, fext=fext), ref) <= TOL


def test_coriolis_matrix(case: Case) -> None:
    m, o = case.model, case.oracle
    for q, qd in list(zip(case.q, case.qd, strict=True))[:50]:
        assert relative_error(coriolis_matrix(m, q, qd), o.coriolis(q, qd)) <= TOL


def test_coriolis_product(case: Case) -> None:
    """``C(q, qd) x`` in O(n) against Pinocchio's C times x (x unrelated to qd)."""
    m, o = case.model, case.oracle
    rng = np.random.default_rng(5)
    for q, qd in list(zip(case.q, case.qd, strict=True))[:50]:
        x = rng.normal(0.0, 2.0, m.nv)
        assert relative_error(coriolis_product(m, q, qd, x), o.coriolis(q, qd) @ x) <= TOL


def test_friction_from_urdf_dynamics_adds_to_rnea(case: Case) -> None:
    with_friction = load_robot(case.name).replace(
        armature=case.model.armature, gravity=case.model.gravity)
    rng = np.random.default_rng(2)
    with_friction = with_friction.replace(coulomb=rng.uniform(0, 2, case.model.nv),
                                          viscous=rng.uniform(0, 1, case.model.nv))
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:50]:
        expected = case.oracle.rnea(q, qd, qdd) + with_friction.coulomb * np.sign(qd) \
            + with_friction.viscous * qd
        assert relative_error(rnea(with_friction, q, qd, qdd), expected) <= TOL
        assert np.allclose(friction_torques(with_friction, qd),
                           with_friction.coulomb * np.sign(qd) + with_friction.viscous * qd)
