"""Identification of a plant whose joints stick and chatter near rest (issue 35 §11: the
demo's identification phase warned "the model does not explain the measured torques" on
every run, and the wrist's friction came out 10-30 % off).

The plant is the simulator's (Pinocchio's ABA, ``Fc sign(qd)`` + viscous friction,
semi-implicit Euler at 1 kHz) running the demo's "true" arm7; a computed-torque PD law on
the nominal URDF tracks a Fourier motion (Swevers' series, not optimised) with reversals and
a final rest, in lockstep, as
the closed-loop demo does. Near rest the light wrist joints chatter (the friction's sign
flips at every step): no Coulomb + viscous model explains those rows, so
``rnea-identify`` leaves them out (``near_rest``) and finds the true friction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnea_ros.core.dynamics.rnea import rnea_batch
from rnea_ros.core.model.urdf import load_urdf, parse_urdf
from rnea_ros.identification import parameters
from rnea_ros.identification.data import Recording, near_rest
from rnea_ros.identification.excitation import initial_guess
from rnea_ros.identification.pipeline import Settings, identify
from rnea_ros.identification.truth import TRUE_COULOMB, TRUE_VISCOUS, true_urdf
from rnea_ros.nodes.harness import ARM7_GAINS
from rnea_ros.planning.limits import Limits
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation.rigid import Simulator

NOMINAL = Path(sample_urdf("arm7"))
DT = 1e-3


@pytest.fixture(scope="module")
def closed_loop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Recording, np.ndarray]:
    """10 s of the Fourier motion then 0.5 s at rest on the true plant: the recording
    (effort = the applied command) and the plant's velocities (N, 7)."""
    nominal = load_urdf(NOMINAL)
    text = true_urdf(NOMINAL.read_text())
    path = tmp_path_factory.mktemp("truth") / "arm7_true.urdf"
    path.write_text(text)
    sim = Simulator(str(path), parse_urdf(text), dt=DT, friction=np.array(TRUE_COULOMB),
                    damping=np.array(TRUE_VISCOUS))
    # Two periods of a Swevers series (starts and ends each period at rest), 0.5 s held.
    series = initial_guess(nominal, Limits.from_model(nominal), np.full(7, 4.0),
                           2 * np.pi * 0.2, 4, 0.05, seed=4)
    t = np.arange(0.0, 10.5, DT)
    q_ref, qd_ref, qdd_ref = series(np.minimum(t, 10.0))
    feedforward = rnea_batch(nominal, q_ref, qd_ref, qdd_ref)
    kp, kd = np.array(ARM7_GAINS["kp"]), np.array(ARM7_GAINS["kd"])
    sim.reset(q_ref[0], qd_ref[0])
    q, qd, effort = (np.empty_like(q_ref) for _ in range(3))
    for k in range(t.size):  # lockstep: state k -> command k -> one step
        q[k], qd[k] = sim.q, sim.qd
        effort[k] = feedforward[k] + kp * (q_ref[k] - q[k]) + kd * (qd_ref[k] - qd[k])
        sim.step(effort[k])
    return Recording(t, q, effort), qd


def test_the_plant_chatters_near_rest(closed_loop: tuple[Recording, np.ndarray]) -> None:
    # The case this file is about: the wrist's velocity changes sign far more often than
    # the motion reverses (a few times per second), at speeds well above zero.
    _, qd = closed_loop
    flips = (np.sign(qd[1:]) * np.sign(qd[:-1]) < 0).sum(axis=0)
    assert flips[6] > 300, flips
    assert np.abs(qd[1:, 6][np.sign(qd[1:, 6]) * np.sign(qd[:-1, 6]) < 0]).max() > 0.02


def test_identification_explains_the_torques_and_finds_the_friction(
        closed_loop: tuple[Recording, np.ndarray]) -> None:
    recording, _ = closed_loop
    model = load_urdf(NOMINAL)
    result = identify(model, recording, Settings(cutoff=20.0, rate=40.0, validation=0.15),
                      urdf=NOMINAL.read_text())
    assert result.warnings == []
    fc = result.theta[[parameters.drive_index(model, j, "Fc") for j in range(7)]]
    fv = result.theta[[parameters.drive_index(model, j, "Fv") for j in range(7)]]
    print("Coulomb", fc.round(4).tolist(), "viscous", fv.round(4).tolist())
    np.testing.assert_allclose(fc, TRUE_COULOMB, rtol=0.05)
    np.testing.assert_allclose(fv, TRUE_VISCOUS, rtol=0.1)
    # The rows near rest were left out and said so; the validation residual is small
    # against the torques (noise-free plant: no noise floor to compare with).
    assert any("near rest" in note for note in result.notes)
    assert np.all(result.rms_after < 0.02 * np.abs(recording.effort).max(axis=0))


def test_near_rest_is_relative_to_each_joints_peak_speed() -> None:
    qd = np.array([[0.0, 0.0], [0.05, 0.0], [-0.5, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(near_rest(qd, 0.1),
                                  [[True, False], [True, False], [False, False],
                                   [False, False]])
    # A joint that never moves keeps its rows (its torque still carries gravity), also
    # when noise gives it a speed.
    assert not near_rest(qd, 0.1)[:, 1].any()
    assert not near_rest(qd, 0.0).any()
    noisy = qd + np.array([0.0, 1.0]) * np.array([[1e-4], [-1e-6], [2e-6], [-1e-4]])
    assert near_rest(noisy, 0.1)[:, 1].tolist() == [False, True, True, False]
    assert not near_rest(noisy, 0.1, np.array([True, False]))[:, 1].any()
