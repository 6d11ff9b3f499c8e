"""elastic/fd.py: mixed rigid/elastic forward dynamics (hua-2024 Algorithm 2):
its inertia matrix against the augmented-tree Pinocchio oracle, FD(ID) = identity,
and energy conservation of the unforced simulation."""

from __future__ import annotations

import numpy as np
import pytest
from elastic_cases import (
    ELASTIC_ROBOTS,
    TOL,
    geared_hua,
    random_state,
    scaled_error,
    setup_model,
)
from elastic_oracle import AugmentedOracle
from oracle import relative_error

from rnea_ros.core.elastic.fd import dynamics, forward_dynamics
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.samples import robot_urdf
from rnea_ros.simulation import ElasticSimulator


@pytest.mark.parametrize("name", ELASTIC_ROBOTS[:6])
def test_algorithm2_inertia_matrix_matches_pinocchio(name: str) -> None:
    model, rng = setup_model(name, 2, on_parent=False)
    oracle = AugmentedOracle(robot_urdf(name), model)
    for _ in range(10):
        q, theta, qd, thetad, _, _ = random_state(model, rng)
        A, _ = dynamics(model, q, theta, qd, thetad)
        assert relative_error(A, oracle.mass_matrix(q, theta)) < TOL
        assert np.linalg.eigvalsh(A)[0] > 0.0


@pytest.mark.parametrize("name", ELASTIC_ROBOTS)
@pytest.mark.parametrize("on_parent", [True, False], ids=["motor-on-parent", "motor-anywhere"])
def test_inverse_of_forward_dynamics(name: str, on_parent: bool) -> None:
    """FD(ID) round trip: Algorithm 1 on Algorithm 2's accelerations gives back the
    torques, and the elastic joints' link-side torques equal their springs (eq. 28)."""
    model, rng = setup_model(name, 4, on_parent)
    e = model.elastic_joints
    for _ in range(20):
        q, theta, qd, thetad, _, _ = random_state(model, rng)
        tau = rng.normal(0, 10, model.n)
        qdd, thetadd = forward_dynamics(model, q, theta, qd, thetad, tau)
        r = elastic_rnea(model, q, theta, qd, thetad, qdd, thetadd)
        spring = model.spring_torque(q, theta, qd, thetad)
        assert scaled_error(r.tau, tau, spring) < TOL
        if model.n_elastic:
            assert scaled_error(r.tau_link[e], spring) < TOL


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
    assert _energy_drift(geared_hua(10.0), 1e-3) < 1e-6


def test_energy_drift_is_integration_error_only(hua) -> None:
    """With the paper's gear ratio 1 the motor mode is fast (omega dt ~ 0.16 at 1 kHz):
    the drift is RK4's, shrinking as dt^5 (2^5 = 32 when halving dt; a modelling
    error would not shrink)."""
    coarse, fine = _energy_drift(hua, 1e-3, 2.0), _energy_drift(hua, 5e-4, 2.0)
    assert coarse / fine > 20.0
    assert fine < 1e-5
