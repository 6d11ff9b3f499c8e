"""Physics identities on random trees (revolute, continuous, prismatic, fixed joints,
armature and friction): tau = M qdd + h + friction; FD(ID(qdd)) = qdd;
dM/dt - 2C skew; rest + no gravity gives tau = M qdd; power balance."""

from __future__ import annotations

import numpy as np
import pytest
from trees import random_tree

from rnea_ros.core.dynamics.aba import aba
from rnea_ros.core.dynamics.coriolis import coriolis_matrix
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics
from rnea_ros.core.dynamics.kinematics import kinetic_energy, potential_energy
from rnea_ros.core.dynamics.rnea import (
    friction_torques,
    gravity_torques,
    nonlinear_effects,
    rnea,
    rnea_with_wrenches,
)

SEEDS = range(12)


def states(model, seed, count=20):
    rng = np.random.default_rng(100 + seed)
    for _ in range(count):
        yield (rng.uniform(-np.pi, np.pi, model.nv), rng.normal(0, 2, model.nv),
               rng.normal(0, 5, model.nv))


def close(a, b, rtol=1e-10):
    scale = max(np.abs(b).max(), 1.0)
    return np.abs(np.asarray(a) - np.asarray(b)).max() <= rtol * scale


@pytest.mark.parametrize("seed", SEEDS)
def test_tau_equals_mass_matrix_times_qdd_plus_bias(seed: int) -> None:
    model = random_tree(seed)
    for q, qd, qdd in states(model, seed):
        expected = mass_matrix(model, q) @ qdd + nonlinear_effects(model, q, qd) \
            + friction_torques(model, qd)
        assert close(rnea(model, q, qd, qdd), expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_forward_dynamics_inverts_inverse_dynamics(seed: int) -> None:
    model = random_tree(seed)
    rng = np.random.default_rng(seed)
    for q, qd, qdd in states(model, seed):
        fext = rng.normal(0, 3, (model.nv, 6))
        tau = rnea(model, q, qd, qdd, fext=fext)
        assert close(aba(model, q, qd, tau, fext=fext), qdd, 1e-9)
        assert close(forward_dynamics(model, q, qd, tau, fext=fext), qdd, 1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_derivative_minus_twice_coriolis_is_skew(seed: int) -> None:
    model = random_tree(seed)
    eps = 1e-6
    for q, qd, _ in states(model, seed, 5):
        C = coriolis_matrix(model, q, qd)
        M_dot = (mass_matrix(model, q + eps * qd) - mass_matrix(model, q - eps * qd)) / (2 * eps)
        N = M_dot - 2 * C
        assert np.abs(N + N.T).max() <= 1e-6 * max(np.abs(M_dot).max(), 1.0)
        assert close(C @ qd, nonlinear_effects(model, q, qd) - gravity_torques(model, q))


@pytest.mark.parametrize("seed", SEEDS)
def test_at_rest_without_gravity_tau_is_mass_matrix_times_qdd(seed: int) -> None:
    model = random_tree(seed)
    zero = np.zeros(model.nv)
    for q, _, qdd in states(model, seed):
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
    for q, qd, qdd in states(model, seed, 5):
        tau, wrenches = rnea_with_wrenches(model, q, qd, qdd)
        projected = [w[:3] @ u if t == "prismatic" else w[3:] @ u
                     for w, u, t in zip(wrenches, model.axis, model.joint_types, strict=True)]
        assert close(projected, tau)
