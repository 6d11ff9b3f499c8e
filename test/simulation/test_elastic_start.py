"""The shipped mixed rigid/elastic arm (urdf/mixed_3dof.urdf, hua-2024 section V): its
link inertias are physically consistent (it loads strict, silently), and its simulator
can start the motors at the elastic equilibrium under gravity (``initial_motor_positions:
equilibrium``, hua-2024 eq. 28-29 at rest), where the hold torques keep it still."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from elastic_cases import PAPER_URDF, paper_model

from rnea_ros.core.errors import InertiaWarning, ModelError, ParameterError
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import load_elastic_robot, sample_urdf
from rnea_ros.simulation import ElasticSimulator
from rnea_ros.simulation.factory import equilibrium_start

URDF = sample_urdf("mixed_3dof")
Q0 = np.array([0.0, 0.0, -0.4363])  # rad, the paper's start (config/mixed_3dof_simulator.yaml)


def principal_moments(path) -> list[np.ndarray]:
    """Principal moments (ascending) of every link inertia of a URDF, through Pinocchio."""
    model = pin.buildModelFromUrdf(str(path))
    return [np.linalg.eigvalsh(model.inertias[i].inertia) for i in range(1, model.njoints)]


def test_the_shipped_urdf_is_physical_and_loads_strict_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any InertiaWarning fails
        load_urdf(URDF, inertia_check="strict")
        load_elastic_robot("mixed_3dof")
    for moments in principal_moments(URDF):  # triangle inequality, with its margin
        assert moments[0] + moments[1] - moments[2] > 2e-3
    # Table I's tensors, kept for the paper-number tests, are what the paper prints.
    with pytest.warns(InertiaWarning, match="triangle"):
        load_urdf(PAPER_URDF, inertia_check="warn")
    paper = principal_moments(PAPER_URDF)
    assert paper[1][0] + paper[1][1] < paper[1][2] and paper[2][0] + paper[2][1] < paper[2][2]


def test_the_consistent_tensors_are_the_nearest_to_table_one() -> None:
    """Only links 2 and 3 changed, along their principal axes, by (I3 - I1 - I2 + 3e-3)/3
    on each moment (I1, I2 up, I3 down: the Frobenius-nearest consistent tensor)."""
    ours, paper = (pin.buildModelFromUrdf(str(p)) for p in (URDF, PAPER_URDF))
    assert np.allclose(ours.inertias[1].inertia, paper.inertias[1].inertia)
    for i in (2, 3):
        a, b = ours.inertias[i], paper.inertias[i]
        assert a.mass == b.mass and np.allclose(a.lever, b.lever)
        w, R = np.linalg.eigh(b.inertia)
        shift = (w[2] - w[0] - w[1] + 3e-3) / 3
        nearest = R @ np.diag(w + shift * np.array([1.0, 1.0, -1.0])) @ R.T
        assert np.abs(a.inertia - nearest).max() < 1e-4  # the URDF's 4 decimals


@pytest.mark.parametrize("which", ["shipped", "paper"])
def test_an_equilibrium_start_stays_still_under_the_hold_torques(which: str) -> None:
    model = load_elastic_robot("mixed_3dof") if which == "shipped" else paper_model()
    rng = np.random.default_rng(7)
    for q0 in (Q0, rng.uniform(-1.5, 1.5, 3)):
        sim = ElasticSimulator(model, equilibrium_start=True)
        sim.reset(q0)
        theta0 = sim.state[1].copy()
        tau = sim.hold_torques(q0)
        for _ in range(2000):  # 2 s at 1 kHz, RK4
            sim.step(tau)
        q, theta, qd, thetad = sim.state
        assert np.abs(q - q0).max() < 1e-9 and np.abs(theta - theta0).max() < 1e-9
        assert np.abs(qd).max() < 1e-9 and np.abs(thetad).max() < 1e-9


def test_the_equilibrium_deflection_is_the_link_gravity_torque_over_k() -> None:
    """K (theta - q3) = g3(q), joint 3's gravity torque by Pinocchio on the URDF (the
    motors ride on the base and link 1: none weighs on joint 3)."""
    model = load_elastic_robot("mixed_3dof")
    pin_model = pin.buildModelFromUrdf(str(URDF))
    data = pin_model.createData()
    sim = ElasticSimulator(model, equilibrium_start=True)
    for q in (Q0, np.array([0.3, -0.7, 1.1])):
        g = pin.computeGeneralizedGravity(pin_model, data, q)
        deflection = sim.equilibrium_motors(q) - q[2]
        assert abs(100.0 * deflection[0] - g[2]) < 1e-10 and abs(g[2]) > 0.5


def test_a_relaxed_start_sags_and_is_still_the_default() -> None:
    """The default (``links``: motors at their links, springs relaxed) is what sagged."""
    model = load_elastic_robot("mixed_3dof")
    sim = ElasticSimulator(model)
    sim.reset(Q0)
    assert sim.state[1][0] == Q0[2]
    tau = sim.hold_torques(Q0)
    for _ in range(300):
        sim.step(tau)
    assert np.abs(sim.state[0] - Q0).max() > 1e-4  # 5e-4 rad after 0.3 s, open loop


def test_equilibrium_needs_an_elastic_file() -> None:
    assert equilibrium_start({"initial_motor_positions": "equilibrium", "elastic_file": "x"})
    assert not equilibrium_start({"initial_motor_positions": "links", "elastic_file": "x"})
    with pytest.raises(ParameterError, match=r"'initial_motor_positions' is 'equilibrium'.*"
                                             r"'elastic_file'"):
        equilibrium_start({"initial_motor_positions": "equilibrium", "elastic_file": ""})
    sim = ElasticSimulator(load_elastic_robot("mixed_3dof"), fext=lambda q: np.zeros((3, 6)))
    with pytest.raises(ModelError, match="external force"):
        sim.equilibrium_motors(Q0)
