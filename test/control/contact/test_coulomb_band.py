"""The observer's Coulomb friction near zero velocity (issue 38 follow-up,
docs/contacts.md "Coulomb friction at rest").

A robot whose URDF gives Coulomb friction (``<dynamics friction="2.0">`` on every joint,
as the Unitree Z1's shoulder) is held at rest by gravity compensation: the plant is
exactly at rest (``aba(q, 0, g(q)) = 0``), so the true external torque is zero. Its
velocity is measured with white noise of deviation ``SIGMA``. With Khalil's exact
``Fs sign(qd)`` the noise flips the model's friction by ``+-Fs`` every sample and the
residual reads a large part of ``Fs`` as an external torque; with the regularised sign
(band ``friction.coulomb_band``) it reads ``Fs (qd / b)``, filtered. Checked on both
paths (the node's compiled monitor and the batch observer ``rnea-bag`` uses) and against
the same observer on the same robot without friction (the noise floor of ``M qd``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.control.contact import ContactMonitor, DetectionSettings, residuals
from rnea_ros.control.contact.observer import COULOMB_BAND, friction
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import load_table
from rnea_ros.samples import sample_urdf

T = 1e-3  # [s] the state period
SIGMA = 1e-3  # [rad/s] white velocity-measurement noise
FS = 2.0  # [N m] Coulomb friction of every joint in the URDF
GAIN = 50.0  # [1/s] the controller's default contact.observer_gain
SECONDS = 5.0


@pytest.fixture(scope="module")
def robot(tmp_path_factory: pytest.TempPathFactory) -> rc.RobotModel:
    """arm7 with ``<dynamics friction="2.0">`` in its URDF on every joint."""
    text = Path(sample_urdf("arm7")).read_text()
    text = text.replace('friction="0.0"', f'friction="{FS}"')
    path = tmp_path_factory.mktemp("urdf") / "arm7_friction.urdf"
    path.write_text(text)
    model = rc.load_urdf(str(path))
    assert np.allclose(model.coulomb, FS)
    return model


def at_rest(model: rc.RobotModel, seed: int = 3) -> tuple[np.ndarray, ...]:
    """``t, q, qd_measured, tau``: the arm at rest at mid-range under gravity
    compensation, its velocity measured with white noise ``SIGMA``."""
    q0 = 0.5 * (model.lower_limit + model.upper_limit) + 0.3
    tau0 = rc.gravity_torques(model, q0)
    # the plant is exactly at rest: no acceleration under g(q) at qd = 0
    assert np.abs(rc.aba(model.without_friction(), q0, np.zeros(model.nv), tau0)).max() < 1e-9
    n = round(SECONDS / T)
    rng = np.random.default_rng(seed)
    qd = SIGMA * rng.standard_normal((n, model.nv))
    return (np.arange(n) * T, np.tile(q0, (n, 1)), qd, np.tile(tau0, (n, 1)))


def monitor_peak(model: rc.RobotModel, run: tuple[np.ndarray, ...], **band: float) -> float:
    """The node's path: the compiled monitor state by state; its peak |r| [N m]."""
    settings = DetectionSettings(np.full(model.nv, 5.0), np.zeros(model.nv),
                                 np.zeros(model.nv), 0.5, 0.002)
    monitor = ContactMonitor(model, GAIN, settings, max_gap=0.1, **band)
    assert monitor.fused
    peak = 0.0
    for t, q, qd, tau in zip(*run, strict=True):
        monitor.update(float(t), q, qd, tau)
        peak = max(peak, float(np.abs(monitor.r).max()))
    return peak


def friction_part(model: rc.RobotModel, run: tuple[np.ndarray, ...], **band: float
                  ) -> tuple[float, float]:
    """The peak |r| [N m] and the peak of the part of ``r`` the friction model made: the
    observer is linear in its input, so ``r - r_no_friction`` is the response to the
    friction term alone (the rest, ``K_O M qd`` noise of deviation about
    ``K_O M_jj SIGMA``, is the same with any friction model)."""
    r = residuals(model, *run, GAIN, **band)
    floor = residuals(model.without_friction(), *run, GAIN)
    return float(np.abs(r).max()), float(np.abs(r - floor).max())


# the friction part's bound with the band b: white noise s through Fs / b enters eq. (5)
# and is filtered to a deviation of about Fs (s / b) sqrt(K_O T / 2); 6 deviations
BOUND = 6.0 * FS * (SIGMA / COULOMB_BAND) * np.sqrt(GAIN * T / 2.0)


def test_velocity_noise_at_rest_is_no_contact(robot: rc.RobotModel) -> None:
    """The defect: at rest, 1e-3 rad/s of velocity noise flipped the model's friction
    and made a false residual of a large part of Fs (main: 1.2 N m of 2 from friction
    alone). With the default band the friction part stays within BOUND (0.19 N m);
    the node's compiled monitor and the bag's batch observer agree."""
    run = at_rest(robot)
    peak, part = friction_part(robot, run)
    node = monitor_peak(robot, run)
    print(f"at rest, band {COULOMB_BAND}: peak |r| {peak:.4f} (node {node:.4f}), friction "
          f"part {part:.4f}, bound {BOUND:.4f} N m")
    assert abs(node - peak) < 1e-9
    assert part < BOUND


def test_the_exact_sign_shows_the_cause(robot: rc.RobotModel) -> None:
    """Band 0 is Khalil's exact sign: the same run then reads a large part of Fs from
    the friction term alone, many times the band's."""
    run = at_rest(robot)
    peak, exact = friction_part(robot, run, coulomb_band=0.0)
    node = monitor_peak(robot, run, coulomb_band=0.0)
    _, band = friction_part(robot, run)
    print(f"at rest, exact sign: peak |r| {peak:.3f} (node {node:.3f}), friction part "
          f"{exact:.3f}; band {COULOMB_BAND}: {band:.4f} N m")
    assert abs(node - peak) < 1e-9
    assert exact > 0.4 * FS
    assert exact > 5.0 * band


def test_band_is_one_fact_with_its_table_row() -> None:
    """The default is the parameter table's, and the regularised sign is exact outside
    the band, linear inside, the sign itself at band 0."""
    spec = load_table("controller")["friction.coulomb_band"]
    assert COULOMB_BAND == spec.default and spec.unit == "rad/s or m/s"
    model = rc.load_urdf(sample_urdf("arm7")).replace(coulomb=np.full(7, FS),
                                                      viscous=np.zeros(7))
    qd = np.array([-1.0, -0.02, -0.005, 0.0, 0.004, 0.01, 0.3])
    assert np.allclose(friction(model, qd, 0.01), FS * np.array([-1, -1, -0.5, 0, 0.4, 1, 1]))
    assert np.allclose(friction(model, qd, 0.0), FS * np.sign(qd))
    for bad in (-1e-3, float("nan"), float("inf")):
        with pytest.raises(ParameterError, match=r"friction\.coulomb_band"):
            residuals(model, [0.0, T], np.zeros((2, 7)), np.zeros((2, 7)), np.zeros((2, 7)),
                      GAIN, coulomb_band=bad)


def test_round_off_velocity_of_an_exact_plant_at_rest(robot: rc.RobotModel) -> None:
    """What the Z1 showed (2.0 N m = its shoulder's Fs): no noise at all, the rigid
    simulator (Pinocchio's ABA, RK4) holding the arm at rest under ``g(q)``; its
    velocities are round-off (1e-13 rad/s) whose sign the exact model takes at face
    value, so ``r`` reaches the full Fs. With the band, round-off stays round-off."""
    from rnea_ros.simulation.rigid import Simulator

    plant = Simulator(sample_urdf("arm7"), robot.without_friction(), dt=T)
    plant.reset(0.5 * (robot.lower_limit + robot.upper_limit) + 0.3)
    settings = DetectionSettings(np.full(robot.nv, 5.0), np.zeros(robot.nv),
                                 np.zeros(robot.nv), 0.5, 0.002)
    monitors = {band: ContactMonitor(robot, GAIN, settings, max_gap=0.1, coulomb_band=band)
                for band in (0.0, COULOMB_BAND)}
    peak = dict.fromkeys(monitors, 0.0)
    speed = 0.0
    for k in range(2000):
        q, qd = plant.q.copy(), plant.qd.copy()
        tau = rc.gravity_torques(robot, q)
        speed = max(speed, float(np.abs(qd).max()))
        for band, monitor in monitors.items():
            monitor.update(k * T, q, qd, tau)
            peak[band] = max(peak[band], float(np.abs(monitor.r).max()))
        plant.step(tau)
    print(f"exact plant at rest (|qd| <= {speed:.1e} rad/s): peak |r| exact sign "
          f"{peak[0.0]:.3f}, band {COULOMB_BAND} {peak[COULOMB_BAND]:.1e} N m")
    assert speed < 1e-9
    assert peak[COULOMB_BAND] < 1e-6
    assert peak[0.0] > 0.5 * FS
