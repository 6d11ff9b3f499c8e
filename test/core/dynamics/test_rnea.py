"""rnea.py: inverse dynamics (RNEA), gravity, nonlinear effects, friction, joint wrenches
and the batch kernels (_rnea_jit.py).

* Against Pinocchio on every sample URDF and 14 example-robot-data robots, 1000
  random states each, relative error <= 1e-9 (dynamics_cases.agreement_case).
* Physics identities on random trees (revolute, continuous, prismatic, fixed joints,
  armature and friction): tau = M qdd + h + friction; rest + no gravity gives
  tau = M qdd; power balance; joint wrenches project on the axis as the torque.
* The batch kernels against the per-call RNEA, whose code path is separate (its own
  joint-motion and gravity code, libm's sin and cos): random trees with general axes
  and with +-x/y/z axes (the batch kernels' one-coordinate branch), armature and
  friction; composite-moment gravity equals RNEA at rest.
"""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_cases import (
    EXAMPLE_ROBOTS,
    FREE_FLYER_ROBOTS,
    ROBOTS,
    SAMPLES,
    TOL,
    Case,
    FreeFlyerCase,
    close,
    pin_each,
    tree_states,
)
from oracle import relative_error
from trees import random_tree

from rnea_ros.core import errors
from rnea_ros.core._compile import STACK_ROWS
from rnea_ros.core._layout import F_KIND, PRISMATIC, REVOLUTE, REVOLUTE_X
from rnea_ros.core.dynamics._rnea_jit import gravity_pass
from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.kinematics import kinetic_energy, potential_energy
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
from rnea_ros.samples import FLOATING_ROBOTS, load_robot

SEEDS = range(12)  # the identities' random trees
BATCH_SEEDS = range(10)  # the batch kernels' random trees
ROUNDING = 1e-12  # batch vs per call, relative to the largest torque: rounding only
INERTIA_WARNINGS_IGNORED = pytest.mark.filterwarnings(
    "ignore::rnea_ros.core.errors.InertiaWarning")  # some robots' inertias are non-physical


# ------------------------------------------------------------ against Pinocchio
@INERTIA_WARNINGS_IGNORED
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


def test_rnea(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    ours = np.array([rnea(m, *s) for s in zip(pin_case.q, pin_case.qd, pin_case.qdd, strict=True)])
    ref = np.array([o.rnea(*s) for s in zip(pin_case.q, pin_case.qd, pin_case.qdd, strict=True)])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(rnea_batch(m, pin_case.q, pin_case.qd, pin_case.qdd), ref) <= TOL


def test_rnea_with_external_wrenches_and_joint_wrenches(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    rng = np.random.default_rng(3)
    for q, qd, qdd in list(zip(pin_case.q, pin_case.qd, pin_case.qdd, strict=True))[:200]:
        fext = rng.normal(0.0, 10.0, (m.nv, 6))
        tau, wrenches = rnea_with_wrenches(m, q, qd, qdd, fext=fext)
        ref = o.rnea(q, qd, qdd, fext)
        assert relative_error(tau, ref) <= TOL
        assert relative_error(wrenches, o.joint_wrenches()) <= TOL
        assert relative_error(rnea(m, q, qd, qdd, fext=fext), ref) <= TOL


def test_gravity(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    ours = np.array([gravity_torques(m, q) for q in pin_case.q])
    ref = np.array([o.gravity(q) for q in pin_case.q])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(gravity_batch(m, pin_case.q), ref) <= TOL


def test_nonlinear_effects(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    states = list(zip(pin_case.q, pin_case.qd, strict=True))
    ours = np.array([nonlinear_effects(m, q, qd) for q, qd in states])
    ref = np.array([o.nonlinear_effects(q, qd) for q, qd in states])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(nonlinear_effects_batch(m, pin_case.q, pin_case.qd), ref) <= TOL


@INERTIA_WARNINGS_IGNORED
def test_friction_from_urdf_dynamics_adds_to_rnea(pin_case: Case) -> None:
    with_friction = load_robot(pin_case.name).replace(
        armature=pin_case.model.armature, gravity=pin_case.model.gravity)
    rng = np.random.default_rng(2)
    with_friction = with_friction.replace(coulomb=rng.uniform(0, 2, pin_case.model.nv),
                                          viscous=rng.uniform(0, 1, pin_case.model.nv))
    for q, qd, qdd in list(zip(pin_case.q, pin_case.qd, pin_case.qdd, strict=True))[:50]:
        expected = pin_case.oracle.rnea(q, qd, qdd) + with_friction.coulomb * np.sign(qd) \
            + with_friction.viscous * qd
        assert relative_error(rnea(with_friction, q, qd, qdd), expected) <= TOL
        assert np.allclose(friction_torques(with_friction, qd),
                           with_friction.coulomb * np.sign(qd) + with_friction.viscous * qd)


# ------------------------------------------------------------------ identities
@pytest.mark.parametrize("seed", SEEDS)
def test_tau_equals_mass_matrix_times_qdd_plus_bias(seed: int) -> None:
    model = random_tree(seed)
    for q, qd, qdd in tree_states(model, seed):
        expected = mass_matrix(model, q) @ qdd + nonlinear_effects(model, q, qd) \
            + friction_torques(model, qd)
        assert close(rnea(model, q, qd, qdd), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_at_rest_without_gravity_tau_is_mass_matrix_times_qdd(seed: int) -> None:
    model = random_tree(seed)
    zero = np.zeros(model.nv)
    for q, _, qdd in tree_states(model, seed):
        assert close(rnea(model, q, zero, qdd, gravity=np.zeros(3)), mass_matrix(model, q) @ qdd)
        assert close(gravity_torques(model, q, gravity=np.zeros(3)), zero)


@pytest.mark.parametrize("seed", SEEDS)
def test_power_balance(seed: int) -> None:
    """qd . (tau - friction) = d/dt (T + V) along a smooth trajectory."""
    model = random_tree(seed)
    rng = np.random.default_rng(seed)
    amp, omega, phase = rng.uniform(0.2, 1, model.nv), rng.uniform(0.5, 3, model.nv), \
        rng.uniform(0, 6, model.nv)

    def traj(t):
        return (amp * np.sin(omega * t + phase), amp * omega * np.cos(omega * t + phase),
                -amp * omega**2 * np.sin(omega * t + phase))

    def energy(t):
        q, qd, _ = traj(t)
        return kinetic_energy(model, q, qd) + potential_energy(model, q)

    h = 1e-5
    for t in np.linspace(0.0, 3.0, 7):
        q, qd, qdd = traj(t)
        power = qd @ (rnea(model, q, qd, qdd) - friction_torques(model, qd))
        d_energy = (energy(t + h) - energy(t - h)) / (2 * h)
        assert abs(power - d_energy) <= 1e-6 * max(abs(power), 1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_joint_wrench_projects_on_the_axis_as_the_rigid_body_torque(seed: int) -> None:
    model = random_tree(seed, drives=False)
    for q, qd, qdd in tree_states(model, seed, 5):
        tau, wrenches = rnea_with_wrenches(model, q, qd, qdd)
        projected = [w[:3] @ u if t == "prismatic" else w[3:] @ u
                     for w, u, t in zip(wrenches, model.axis, model.joint_types, strict=True)]
        assert close(projected, tau)


# --------------------------------------------------------------- batch kernels
def signed_coordinate_axes(model: RobotModel, seed: int) -> RobotModel:
    """The same tree with every joint axis replaced by a random +-e_x, +-e_y or +-e_z."""
    rng = np.random.default_rng(seed)
    axis = np.zeros((model.nv, 3))
    axis[np.arange(model.nv), rng.integers(0, 3, model.nv)] = rng.choice([-1.0, 1.0], model.nv)
    return model.replace(axis=axis)


def models(seed: int) -> list[RobotModel]:
    tree = random_tree(seed)
    return [tree, signed_coordinate_axes(tree, seed)]


def samples(model: RobotModel, seed: int, count: int = 50) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(200 + seed)
    q = rng.uniform(-4.0, 4.0, (count, model.nv))
    q[0] = 0.0
    q[1] = np.pi / 2 * rng.integers(-5, 6, model.nv)  # quadrant edges of sincos
    return q, rng.normal(0.0, 2.0, (count, model.nv)), rng.normal(0.0, 5.0, (count, model.nv))


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1.0))


def test_the_trees_exercise_every_joint_kind() -> None:
    kinds = set()
    for seed in BATCH_SEEDS:
        for model in models(seed):
            kinds.update(int(k) for k in model.kernel_floats[:, F_KIND])
    assert {PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_X + 1, REVOLUTE_X + 2} <= kinds


@pytest.mark.parametrize("seed", BATCH_SEEDS)
def test_rnea_batch_equals_per_call_rnea(seed: int) -> None:
    for model in models(seed):
        q, qd, qdd = samples(model, seed)
        per_call = np.array([rnea(model, *s) for s in zip(q, qd, qdd, strict=True)])
        assert relative(rnea_batch(model, q, qd, qdd), per_call) <= ROUNDING


@pytest.mark.parametrize("seed", BATCH_SEEDS)
def test_nonlinear_effects_batch_equals_per_call(seed: int) -> None:
    for model in models(seed):
        q, qd, _ = samples(model, seed)
        per_call = np.array([nonlinear_effects(model, a, b) for a, b in zip(q, qd, strict=True)])
        assert relative(nonlinear_effects_batch(model, q, qd), per_call) <= ROUNDING


@pytest.mark.parametrize("seed", BATCH_SEEDS)
def test_composite_gravity_equals_rnea_at_rest(seed: int) -> None:
    for model in models(seed):
        q, _, _ = samples(model, seed)
        model = model.replace(gravity=np.array([1.5, -2.0, -9.81]))
        zero = np.zeros(model.nv)  # at rest: no friction (sign(0) = 0), no armature term
        at_rest = np.array([rnea(model, x, zero, zero) for x in q])
        assert relative(gravity_batch(model, q), at_rest) <= ROUNDING
        assert relative(np.array([gravity_torques(model, x) for x in q]), at_rest) <= ROUNDING
        g = np.array([0.0, 3.0, 0.0])
        assert relative(gravity_batch(model, q, gravity=g),
                        np.array([rnea(model, x, zero, zero, gravity=g) for x in q])) <= ROUNDING


def test_large_angles_take_the_libm_path_and_agree() -> None:
    model = signed_coordinate_axes(random_tree(3), 3)
    q = np.full((2, model.nv), 2.5e5)
    q[1] = -1e7
    zero = np.zeros(model.nv)
    at_rest = np.array([rnea(model, x, zero, zero) for x in q])
    assert relative(gravity_batch(model, q), at_rest) <= 1e-9  # q's own rounding: 1e-11 rad
    assert relative(rnea_batch(model, q, q * 0, q * 0), at_rest) <= 1e-9


def test_non_finite_sample_in_gravity_batch_is_named() -> None:
    model = random_tree(1)
    q = np.zeros((5, model.nv))
    q[3, 0] = np.inf
    with pytest.raises(errors.StateError, match=r"q of joint '.+' is inf \(sample 3\)"):
        gravity_batch(model, q)
    with pytest.raises(errors.StateError, match=r"is nan"):
        gravity_torques(model, np.full(model.nv, np.nan))


def tree_with_joints(n: int) -> RobotModel:
    """A random tree of exactly ``n`` joints (fixed joints merge bodies away)."""
    bodies = n
    while (model := random_tree(11, bodies=bodies)).nv < n:
        bodies += 1
    assert model.nv == n
    return model


@pytest.mark.parametrize("n", [STACK_ROWS, STACK_ROWS + 1, 70])
def test_per_call_scratch_on_the_stack_and_on_the_heap(n: int) -> None:
    """Up to STACK_ROWS bodies the per-call kernels work on the stack, beyond on the heap."""
    model = tree_with_joints(n)
    q, qd, qdd = samples(model, 11, count=5)
    zero = np.zeros(model.nv)
    for x, xd, xdd in zip(q, qd, qdd, strict=True):
        assert relative(rnea(model, x, xd, xdd), rnea_batch(model, x[None], xd[None],
                                                           xdd[None])[0]) <= ROUNDING
        assert relative(gravity_torques(model, x), rnea(model, x, zero, zero)) <= ROUNDING


def test_gravity_pass_kernel_is_the_per_call_gravity() -> None:
    model = random_tree(4)
    q = samples(model, 4, count=3)[0]
    tau, work = np.empty(model.nv), np.empty((model.nv, 30))
    for x in q:
        assert gravity_pass(model.kernel_floats, x, model.gravity, tau, work)
        assert np.array_equal(tau, gravity_torques(model, x))


# ----------------------------------- free-flyer robots against Pinocchio (1000 states)
@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
def test_the_robots_float_and_one_has_mimic_joints() -> None:
    assert set(FREE_FLYER_ROBOTS) <= set(FLOATING_ROBOTS)
    talos = load_robot("talos_full", root_joint="free-flyer", mimic=True)
    assert talos.joint_types[0] == "free-flyer" and talos.nq == talos.nv + 1
    assert len(talos.mimic_joints) == 12


def test_layout_is_pinocchios(ff_case: FreeFlyerCase) -> None:
    """Per joint the same nq, nv and coordinates (joints may be listed in another
    order: the oracle maps them by name); the free-flyer first, as in Pinocchio."""
    m, o = ff_case.model, ff_case.oracle
    followers = len(m.mimic_joints)
    assert (m.nq + followers, m.nv + followers) == (o.pm.nq, o.pm.nv)
    for j, jid in enumerate(o.jid):
        joint = o.pm.joints[jid]
        assert (m.joint_nq[j], m.joint_nv[j]) == (joint.nq, joint.nv)
        assert np.array_equal(ff_case.pq[:, joint.idx_q:joint.idx_q + joint.nq],
                              ff_case.q[:, m.idx_q[j]:m.idx_q[j] + m.joint_nq[j]])
    assert m.idx_q[0] == o.idx_q[0] == 0 and o.pm.joints[1].shortname() == "JointModelFreeFlyer"


def test_rnea_free_flyer(ff_case: FreeFlyerCase) -> None:
    m = ff_case.model
    pin = ff_case.oracle.pin
    ours = np.array([rnea(m, *s) for s in zip(ff_case.q, ff_case.v, ff_case.a, strict=True)])
    assert relative_error(ours, pin_each(ff_case, pin.rnea, ff_case.v, ff_case.a)) < TOL
    assert relative_error(rnea_batch(m, ff_case.q, ff_case.v, ff_case.a), ours) < TOL


def test_rnea_with_external_wrenches_and_joint_wrenches_free_flyer(ff_case: FreeFlyerCase) -> None:
    m, o = ff_case.model, ff_case.oracle
    rng = np.random.default_rng(11)
    for k in range(0, SAMPLES, 50):
        f = rng.normal(0.0, 20.0, (m.nbodies, 6))
        tau, wrenches = rnea_with_wrenches(m, ff_case.q[k], ff_case.v[k], ff_case.a[k], fext=f)
        theirs = o.rnea(ff_case.q[k], ff_case.v[k], ff_case.a[k], f)
        assert relative_error(tau, theirs) < TOL
        assert relative_error(wrenches, o.joint_wrenches()) < TOL
        assert relative_error(rnea(m, ff_case.q[k], ff_case.v[k], ff_case.a[k], fext=f),
                              theirs) < TOL


def test_base_wrench_is_the_first_six_components(ff_case: FreeFlyerCase) -> None:
    """The free-flyer's entries are the wrench on the base body, [force; torque], in
    its frame: the joint wrench the world would have to exert on it, plus armature."""
    m = ff_case.model
    tau, wrenches = rnea_with_wrenches(m, ff_case.q[0], ff_case.v[0], ff_case.a[0])
    base = tau[:6] - m.armature[:6] * ff_case.a[0, :6]
    assert relative_error(base, wrenches[0]) < 1e-12


def test_gravity_and_nonlinear_effects(ff_case: FreeFlyerCase) -> None:
    m = ff_case.model
    pin = ff_case.oracle.pin
    g = np.array([gravity_torques(m, q) for q in ff_case.q])
    assert relative_error(g, pin_each(ff_case, pin.computeGeneralizedGravity)) < TOL
    assert relative_error(gravity_batch(m, ff_case.q), g) < TOL
    h = np.array([nonlinear_effects(m, q, v) for q, v in zip(ff_case.q, ff_case.v, strict=True)])
    assert relative_error(h, pin_each(ff_case, pin.nonLinearEffects, ff_case.v)) < TOL
    assert relative_error(nonlinear_effects_batch(m, ff_case.q, ff_case.v), h) < TOL


def test_inverse_dynamics_is_m_a_plus_h(ff_case: FreeFlyerCase) -> None:
    m = ff_case.model
    M = mass_matrix_batch(m, ff_case.q)
    h = nonlinear_effects_batch(m, ff_case.q, ff_case.v)
    tau = rnea_batch(m, ff_case.q, ff_case.v, ff_case.a)
    assert relative_error(np.einsum("nij,nj->ni", M, ff_case.a) + h, tau) < TOL
