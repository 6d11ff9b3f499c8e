"""Generalized-force derivatives: tau_dot against Pinocchio's chain rule, tau_ddot
against finite differences, the Stanford-arm experiment of Guarino Lo Bianco &
Fantini (2009), bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml
from oracle import PinOracle, random_states, relative_error
from trees import random_tree

from rnea_ros.core.dynamics.gfd import (
    rnea_second_time_derivative,
    rnea_second_time_derivative_batch,
    rnea_time_derivative,
    rnea_time_derivative_batch,
)
from rnea_ros.core.dynamics.rnea import rnea
from rnea_ros.core.errors import InertiaWarning, StateError
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.samples import EXAMPLE_ROBOTS, SAMPLE_ROBOTS, load_robot, robot_urdf

ROBOTS = list(SAMPLE_ROBOTS) + list(EXAMPLE_ROBOTS)
STANFORD = yaml.safe_load((Path(__file__).resolve().parents[2] / "data" /
                           "stanford_arm.yaml").read_text())


def chain_rule(oracle: PinOracle, q, qd, qdd, qddd) -> np.ndarray:
    """tau_dot = dtau/dq qd + dtau/dv qdd + M qddd (Pinocchio, our joint order)."""
    pin.computeRNEADerivatives(oracle.pm, oracle.pd, oracle.config(q), oracle.tangent(qd),
                               oracle.tangent(qdd))
    dq, dv = oracle.ours(oracle.pd.dtau_dq), oracle.ours(oracle.pd.dtau_dv)
    return dq @ qd + dv @ qdd + oracle.mass_matrix(q) @ qddd


@pytest.mark.parametrize("name", ROBOTS)
def test_tau_dot_matches_pinocchio_chain_rule(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        model = load_robot(name).without_friction()
    rng = np.random.default_rng(4)
    model = model.replace(armature=rng.uniform(0, 0.3, model.nv))
    oracle = PinOracle(robot_urdf(name), model)
    q, qd, qdd = random_states(model, 1000, seed=2)
    qddd = rng.normal(0, 10, q.shape)
    ours = [rnea_time_derivative(model, *s) for s in zip(q, qd, qdd, qddd, strict=True)]
    tau, tau_dot = (np.array(x) for x in zip(*ours, strict=True))
    ref = np.array([chain_rule(oracle, *s) for s in zip(q, qd, qdd, qddd, strict=True)])
    assert relative_error(tau_dot, ref) <= 1e-9
    assert relative_error(tau, np.array([oracle.rnea(*s) for s in zip(q, qd, qdd, strict=True)])
                          ) <= 1e-9
    batch_tau, batch_dot = rnea_time_derivative_batch(model, q, qd, qdd, qddd)
    assert np.array_equal(batch_tau, tau) and np.array_equal(batch_dot, tau_dot)


def sinusoid(model, seed):
    rng = np.random.default_rng(seed)
    amp, omega, phase = (rng.uniform(0.2, 1, model.nv), rng.uniform(0.5, 3, model.nv),
                         rng.uniform(0, 6, model.nv))

    def derivative(t: float, order: int) -> np.ndarray:
        return amp * omega**order * np.sin(omega * t + phase + order * np.pi / 2)
    return derivative


@pytest.mark.parametrize("seed", range(8))
def test_tau_ddot_matches_central_differences_of_tau_dot(seed: int) -> None:
    model = random_tree(seed)  # armature and viscous friction included
    traj = sinusoid(model, seed)
    h = 1e-4
    for t in np.linspace(0, 2, 5):
        tau, tau_dot, tau_ddot = rnea_second_time_derivative(model, *(traj(t, k) for k in range(5)))
        plus = rnea_time_derivative(model, *(traj(t + h, k) for k in range(4)))[1]
        minus = rnea_time_derivative(model, *(traj(t - h, k) for k in range(4)))[1]
        assert relative_error(tau_ddot, (plus - minus) / (2 * h)) <= 1e-6
        assert np.allclose(tau, rnea(model, *(traj(t, k) for k in range(3))), atol=1e-12)
        assert np.allclose(tau_dot, rnea_time_derivative(model, *(traj(t, k) for k in range(4)))[1])


def test_derivatives_with_time_varying_external_wrenches() -> None:
    model = random_tree(3)
    traj = sinusoid(model, 3)
    rng = np.random.default_rng(0)
    W0, W1 = rng.normal(0, 5, (model.nv, 6)), rng.normal(0, 5, (model.nv, 6))

    def wrench(t: float, order: int) -> np.ndarray:  # W0 + W1 sin(2t)
        return (W0 if order == 0 else 0) + W1 * 2.0**order * np.sin(2 * t + order * np.pi / 2)
    h = 1e-5
    for t in (0.1, 0.7):
        _, tau_dot, tau_ddot = rnea_second_time_derivative(
            model, *(traj(t, k) for k in range(5)), fext=wrench(t, 0), fext_dot=wrench(t, 1),
            fext_ddot=wrench(t, 2))

        def tau_at(s: float) -> np.ndarray:
            return rnea(model, *(traj(s, k) for k in range(3)), fext=wrench(s, 0))
        assert relative_error(tau_dot, (tau_at(t + h) - tau_at(t - h)) / (2 * h)) <= 1e-7
        second = (tau_at(t + h) - 2 * tau_at(t) + tau_at(t - h)) / h**2
        assert relative_error(tau_ddot, second) <= 1e-3


def test_second_derivative_batch_equals_per_call() -> None:
    model = load_robot("stanford_arm")
    rng = np.random.default_rng(1)
    X = [rng.normal(size=(50, model.nv)) for _ in range(5)]
    batch = rnea_second_time_derivative_batch(model, *X)
    single = [rnea_second_time_derivative(model, *(x[k] for x in X)) for k in range(50)]
    for m in range(3):
        assert np.allclose(batch[m], np.array([s[m] for s in single]), rtol=0, atol=1e-12)


def test_stanford_arm_backward_difference_experiment() -> None:
    """Guarino Lo Bianco & Fantini (2009), section V, table III motion over 2 s."""
    model = from_mdh([MDHLink(**row) for row in STANFORD["rows"]], gravity=STANFORD["gravity"])
    q0, q1 = np.array(STANFORD["trajectory"]["initial"]), np.array(STANFORD["trajectory"]["final"])
    T = STANFORD["trajectory"]["duration"]
    quintic = np.polynomial.Polynomial([0, 0, 0, 10, -15, 6])  # zero boundary vel. and acc.
    errors = []
    for Ts in STANFORD["paper_backward_difference"]["sample_times"]:
        s = np.arange(0, T + Ts / 2, Ts) / T
        derivatives = [np.outer(quintic.deriv(k)(s) / T**k, q1 - q0) for k in range(4)]
        derivatives[0] += q0
        tau, tau_dot = rnea_time_derivative_batch(model, *derivatives)
        backward = (tau[1:] - tau[:-1]) / Ts  # eq. (36)
        errors.append(np.abs(tau_dot[1:] - backward).max(axis=0))
    errors = np.array(errors)
    paper = STANFORD["paper_backward_difference"]["joint1_max_error_at_1e-4"]
    assert abs(errors[0, 0] - paper) / paper < 0.1  # 2.397e-2 against their 2.462e-2
    ratios = errors[1:] / errors[:-1]  # "one order worse per decade"
    assert np.all((ratios > 9.0) & (ratios < 11.0))


def test_bad_inputs() -> None:
    model = load_robot("stanford_arm")
    z = np.zeros(model.nv)
    with pytest.raises(StateError, match=r"qddd has shape \(5,\)"):
        rnea_time_derivative(model, z, z, z, np.zeros(5))
    bad = z.copy()
    bad[2] = np.nan
    with pytest.raises(StateError, match="qddd of joint 'joint3' is nan"):
        rnea_time_derivative(model, z, z, z, bad)
    with pytest.raises(StateError, match="qdddd of joint 'joint3'"):
        rnea_second_time_derivative(model, z, z, z, z, bad)
    with pytest.raises(StateError, match=r"fext_dot has shape \(6, 3\)"):
        rnea_time_derivative(model, z, z, z, z, fext_dot=np.zeros((6, 3)))
    with pytest.raises(StateError, match="qdd has shape"):
        rnea_time_derivative_batch(model, np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((2, 6)),
                                   np.zeros((3, 6)))
