"""aba.py (and forward_dynamics.py, its CRBA + Cholesky twin): forward dynamics.

Against Pinocchio's ABA on every sample URDF and 14 example-robot-data robots, 1000
random states each, relative error <= 1e-9 (dynamics_cases.agreement_case); on random
trees, forward dynamics inverts inverse dynamics, external wrenches included.

Free-floating simulation identities (issue 12 §3), without any other engine. A
free-flyer model (Solo12, Talos) with no actuation (``tau = 0``, armature on the
joints, no friction) is simulated for 1 s from a random state (random unit
quaternion, base position and twist, joint rates): ``rc.aba`` for the
accelerations, integrated on the Lie group with ``rc.integrate`` by a fourth-order
commutator-free Lie-group Runge-Kutta method (CF4, below). Along the trajectory:

* gravity off, no external wrench: linear and angular momentum (centroidal, world
  frame) and total energy (``rc.kinetic_energy``, rotor energy included through the
  armature) stay constant to 1e-9 relative;
* gravity on: the energy ``T + V`` is constant, the linear momentum grows by
  ``m g t`` and the angular momentum about the COM stays constant (gravity has no
  moment about it).

The steps (Solo12 2 ms, Talos 1 ms) leave the drift at 2e-14..1.4e-11, 100x or
more under the tolerance (with 4 ms, Talos' energy drifts 3.6e-9), and the test
checks the drift falls 16-fold when the step halves (fourth order), so neither a
first- or second-order error in the dynamics or the integrator nor a drift floor
passes. About 4 s in all on a quiet machine.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from dynamics_cases import SAMPLES, TOL, Case, FreeFlyerCase, close, pin_each, tree_states
from oracle import relative_error
from trees import random_tree

import rnea_ros.core as rc
from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.dynamics.rnea import rnea, rnea_batch
from rnea_ros.samples import load_robot

SEEDS = range(12)
STEPS = {"solo12": 2e-3, "talos": 1e-3}  # [s] the free-floating simulations' steps

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


def test_forward_dynamics(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    rng = np.random.default_rng(5)
    tau = rng.normal(0.0, 5.0, pin_case.q.shape)
    ref = np.array([o.aba(*s) for s in zip(pin_case.q, pin_case.qd, tau, strict=True)])
    recursive = np.array([aba(m, *s) for s in zip(pin_case.q, pin_case.qd, tau, strict=True)])
    via_mass_matrix = np.array([forward_dynamics(m, *s)
                                for s in zip(pin_case.q, pin_case.qd, tau, strict=True)])
    # FD amplifies rounding by cond(M): compare at the scale of M^-1 tau.
    assert relative_error(recursive, ref) <= TOL
    assert relative_error(via_mass_matrix, ref) <= TOL
    assert relative_error(aba_batch(m, pin_case.q, pin_case.qd, tau), ref) <= TOL
    assert relative_error(forward_dynamics_batch(m, pin_case.q, pin_case.qd, tau), ref) <= TOL


def test_forward_dynamics_with_external_wrenches(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    rng = np.random.default_rng(6)
    for q, qd in list(zip(pin_case.q, pin_case.qd, strict=True))[:100]:
        tau = rng.normal(0.0, 5.0, m.nv)
        fext = rng.normal(0.0, 5.0, (m.nv, 6))
        ref = o.aba(q, qd, tau, fext)
        assert relative_error(aba(m, q, qd, tau, fext=fext), ref) <= TOL
        assert relative_error(forward_dynamics(m, q, qd, tau, fext=fext), ref) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_dynamics_inverts_inverse_dynamics(seed: int) -> None:
    model = random_tree(seed)
    rng = np.random.default_rng(seed)
    for q, qd, qdd in tree_states(model, seed):
        fext = rng.normal(0, 3, (model.nv, 6))
        tau = rnea(model, q, qd, qdd, fext=fext)
        assert close(aba(model, q, qd, tau, fext=fext), qdd, 1e-9)
        assert close(forward_dynamics(model, q, qd, tau, fext=fext), qdd, 1e-9)


# ------------------------------------------------- free-floating simulation
Acceleration = Callable[[np.ndarray, np.ndarray], np.ndarray]


def cf4_step(model: rc.RobotModel, q: np.ndarray, v: np.ndarray, h: float,
             acc: Acceleration) -> tuple[np.ndarray, np.ndarray]:
    """One step of CF4 (Celledoni, Marthinsen & Owren 2003, "Commutator-free Lie group
    methods", the fourth-order scheme) for ``dq/dt = q v`` (local velocity: Pinocchio's
    ``integrate(q, v) = q exp(v)``) and ``dv/dt = acc(q, v)``; the stage velocities are
    the Lie-algebra elements, the velocities themselves a vector space (classical
    RK4 weights). Written for the right action ``q exp(.)``: the stages' exponentials
    compose on the right, the first half-step's (weights 3, 2, 2, -1) first."""
    a1 = acc(q, v)
    q2, v2 = rc.integrate(model, q, 0.5 * h * v), v + 0.5 * h * a1
    a2 = acc(q2, v2)
    q3, v3 = rc.integrate(model, q, 0.5 * h * v2), v + 0.5 * h * a2
    a3 = acc(q3, v3)
    q4, v4 = rc.integrate(model, q2, 0.5 * h * (2.0 * v3 - v)), v + h * a3
    a4 = acc(q4, v4)
    first = rc.integrate(model, q, h / 12.0 * (3.0 * v + 2.0 * v2 + 2.0 * v3 - v4))
    q_next = rc.integrate(model, first, h / 12.0 * (-v + 2.0 * v2 + 2.0 * v3 + 3.0 * v4))
    return q_next, v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)


def robot(name: str, gravity: bool) -> rc.RobotModel:
    model = load_robot(name, root_joint="free-flyer").without_friction()
    rng = np.random.default_rng(1)
    armature = np.r_[np.zeros(6), rng.uniform(0.0, 0.05, model.nv - 6)]
    return model.replace(armature=armature,
                         gravity=model.gravity if gravity else np.zeros(3))


def drift(model: rc.RobotModel, h: float, duration: float, seed: int = 0) -> dict[str, float]:
    """Simulate ``duration`` seconds unactuated; the worst relative deviations from the
    expected linear momentum ``l0 + m g t``, the initial angular momentum about the COM
    and the initial energy (relative to the initial kinetic energy)."""
    rng = np.random.default_rng(seed)
    q = rc.random_configuration(model, rng)
    v = rng.normal(0.0, 1.0, model.nv)
    zero = np.zeros(model.nv)

    def acc(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return rc.aba(model, q, v, zero)

    def energy(q: np.ndarray, v: np.ndarray) -> float:
        return rc.kinetic_energy(model, q, v) + rc.potential_energy(model, q)

    h0, e0, t0 = rc.centroidal_momentum(model, q, v), energy(q, v), rc.kinetic_energy(model, q, v)
    weight = model.mass.sum() * model.gravity
    worst = {"linear": 0.0, "angular": 0.0, "energy": 0.0}
    steps = round(duration / h)
    for k in range(1, steps + 1):
        q, v = cf4_step(model, q, v, h, acc)
        hg = rc.centroidal_momentum(model, q, v)
        worst["linear"] = max(worst["linear"], float(
            np.abs(hg[:3] - h0[:3] - weight * k * h).max() / np.abs(h0[:3]).max()))
        worst["angular"] = max(worst["angular"],
                               float(np.abs(hg[3:] - h0[3:]).max() / np.abs(h0[3:]).max()))
        worst["energy"] = max(worst["energy"], abs(energy(q, v) - e0) / t0)
    rc.check_configuration(model, q, tol=1e-12)  # integrate keeps the quaternion unit
    return worst


@pytest.mark.parametrize("name", list(STEPS))
@pytest.mark.parametrize("gravity", [False, True], ids=["no_gravity", "gravity"])
def test_momentum_and_energy_are_conserved(name: str, gravity: bool) -> None:
    worst = drift(robot(name, gravity), STEPS[name], 1.0)
    assert max(worst.values()) <= TOL, worst


def test_drift_is_the_integrators_fourth_order_error() -> None:
    """Halving the step divides every drift by about 16 (CF4 is fourth order): what is
    left is the integrator's truncation error, not the dynamics'."""
    model = robot("solo12", gravity=True)
    coarse, fine = drift(model, 8e-3, 0.25), drift(model, 4e-3, 0.25)
    for key in coarse:
        assert 10.0 < coarse[key] / fine[key] < 25.0, (key, coarse, fine)


# ----------------------------------- free-flyer robots against Pinocchio (1000 states)
def test_aba_and_forward_dynamics(ff_case: FreeFlyerCase) -> None:
    """ABA against Pinocchio's (models without mimic joints; Pinocchio's aba has no
    mimic support); FD(ID) = identity for both forward dynamics."""
    m, o = ff_case.model, ff_case.oracle
    tau = rnea_batch(m, ff_case.q, ff_case.v, ff_case.a)
    qdd = aba_batch(m, ff_case.q, ff_case.v, tau)
    assert relative_error(qdd, ff_case.a) < TOL
    assert relative_error(forward_dynamics_batch(m, ff_case.q, ff_case.v, tau), ff_case.a) < TOL
    for k in range(0, SAMPLES, 100):
        assert relative_error(aba(m, ff_case.q[k], ff_case.v[k], tau[k]), ff_case.a[k]) < TOL
        assert relative_error(forward_dynamics(m, ff_case.q[k], ff_case.v[k], tau[k]),
                              ff_case.a[k]) < TOL
    if not m.mimic_joints:
        assert relative_error(qdd, pin_each(ff_case, o.pin.aba, ff_case.v, tau)) < TOL


@pytest.mark.parametrize("root_armature", (0.0, 0.2))
def test_free_flyer_root_as_one_joint_or_six_rows(root_armature: float) -> None:
    """A free-flyer root without drive is solved as one 6-DoF joint (``IA a = tau - pA``
    at the root body); with armature on it, as its six sub-joint rows. Both give the
    CRBA + Cholesky accelerations, per call and in the batch, with a wrench on the base,
    torques on the root's coordinates and a tilted gravity."""
    rng = np.random.default_rng(7)
    base = load_robot("solo12", root_joint="free-flyer").without_friction()
    m = base.replace(armature=np.r_[np.full(6, root_armature),
                                    rng.uniform(0.0, 0.05, base.nv - 6)],
                     gravity=np.array([0.5, -0.3, -9.81]))
    Q = np.array([rc.random_configuration(m, rng) for _ in range(10)])
    V, TAU = rng.normal(0.0, 1.0, (10, m.nv)), rng.normal(0.0, 5.0, (10, m.nv))
    fext = rng.normal(0.0, 3.0, (m.nbodies, 6))
    for q, v, tau in zip(Q, V, TAU, strict=True):
        assert relative_error(aba(m, q, v, tau), forward_dynamics(m, q, v, tau)) <= TOL
        assert relative_error(aba(m, q, v, tau, fext=fext),
                              forward_dynamics(m, q, v, tau, fext=fext)) <= TOL
    assert relative_error(aba_batch(m, Q, V, TAU), forward_dynamics_batch(m, Q, V, TAU)) <= TOL
