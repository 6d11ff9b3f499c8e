"""control/contact/observer.py: the momentum observer against identities on our own
exact plant (RK4 on ``rc.aba``, torque held over each period as the observer assumes):
no contact gives ``r ~ 0``; a constant external torque is followed with time constant
``1/K_O``; the exact discretisation stays right where forward Euler diverges
(``K_O T > 2``); friction from the model and from a drives file; the per-sample
observer equals the batch; bad input is refused with typed errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.control.contact import MomentumObserver, residuals
from rnea_ros.samples import load_loop_robot, load_robot

T = 1e-3


def arm(coulomb: float = 0.0, viscous: float = 0.0) -> rc.RobotModel:
    model = load_robot("arm7")
    return model.replace(coulomb=np.full(model.nv, coulomb), viscous=np.full(model.nv, viscous))


def plant(model: rc.RobotModel, seconds: float, tau_ext: np.ndarray | None = None,
          substeps: int = 8) -> tuple[np.ndarray, ...]:
    """Computed-torque tracking of sines on ``model`` itself: ``tau_k`` from the state at
    ``t_k`` is held over ``[t_k, t_k+1)`` (RK4, ``substeps`` per period); ``tau_ext``
    (nv,) is added to the plant only. Returns ``t, q, qd, tau``."""
    n = round(seconds / T)
    w = np.linspace(1.5, 3.0, model.nv)
    amp = 0.5 * np.ones(model.nv)
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    ext = np.zeros(model.nv) if tau_ext is None else tau_ext
    q, qd = mid.copy(), amp * w
    t = np.arange(n) * T
    Q, QD, TAU = np.empty((n, model.nv)), np.empty((n, model.nv)), np.empty((n, model.nv))
    h = T / substeps
    for k in range(n):
        qr, qdr = mid + amp * np.sin(w * t[k]), amp * w * np.cos(w * t[k])
        qddr = -amp * w * w * np.sin(w * t[k])
        tau = rc.rnea(model, q, qd, qddr + 100.0 * (qr - q) + 20.0 * (qdr - qd))
        Q[k], QD[k], TAU[k] = q, qd, tau

        def f(x: np.ndarray, v: np.ndarray, tau: np.ndarray = tau) -> np.ndarray:
            return rc.aba(model, x, v, tau + ext)
        for _ in range(substeps):
            a1 = f(q, qd)
            a2 = f(q + 0.5 * h * qd, qd + 0.5 * h * a1)
            a3 = f(q + 0.5 * h * (qd + 0.5 * h * a1), qd + 0.5 * h * a2)
            a4 = f(q + h * (qd + 0.5 * h * a2), qd + h * a3)
            q = q + h * qd + h * h / 6.0 * (a1 + a2 + a3)
            qd = qd + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
    return t, Q, QD, TAU


@pytest.fixture(scope="module")
def free_run() -> tuple[rc.RobotModel, tuple[np.ndarray, ...]]:
    model = arm(viscous=0.3)
    return model, plant(model, 1.0)


def test_no_contact_gives_a_zero_residual(free_run) -> None:
    model, (t, q, qd, tau) = free_run
    r = residuals(model, t, q, qd, tau, 50.0)
    assert np.abs(tau).max() > 10.0
    assert np.abs(r).max() < 2e-3 * np.abs(tau).max()


def test_friction_comes_from_the_model_and_the_drives_file(free_run, tmp_path: Path) -> None:
    """Without its friction the observer reports the friction torque as an external one;
    the same friction given by an identified drives file gives r ~ 0 again."""
    model, (t, q, qd, tau) = free_run
    bare = model.replace(coulomb=np.zeros(model.nv), viscous=np.zeros(model.nv))
    wrong = residuals(bare, t, q, qd, tau, 50.0)
    settled = t > 0.2
    assert np.abs(wrong[settled] + 0.3 * qd[settled]).max() < 0.05  # filtered by 1/K_O
    assert np.abs(wrong[settled]).max() > 0.3
    drives = tmp_path / "drives.yaml"
    drives.write_text("joints:\n" + "".join(f"  {j}: {{viscous: 0.3}}\n"
                                            for j in model.joint_names))
    r = residuals(bare, t, q, qd, tau, 50.0, drives=drives)
    assert np.abs(r).max() < 2e-3 * np.abs(tau).max()
    assert np.abs(wrong).max() > 100 * np.abs(r).max()


def test_coulomb_friction_of_the_model_is_subtracted(free_run) -> None:
    """An observer whose model has Coulomb friction the plant lacks expects the drives to
    lose Fs sign(qd) to it; they don't, so it reports +Fs sign(qd) as an external torque
    (checked away from velocity reversals)."""
    model, (t, q, qd, tau) = free_run
    with_coulomb = model.replace(coulomb=np.full(model.nv, 0.4))
    r = residuals(with_coulomb, t, q, qd, tau, 200.0)
    steady = (t > 0.05)[:, None] & (np.abs(qd) > 0.2)
    for j in range(model.nv):
        away = steady[:, j] & (np.convolve(np.abs(qd[:, j]) > 0.2, np.ones(41), "same") == 41)
        assert away.sum() > 100
        assert np.abs(r[away, j] - 0.4 * np.sign(qd[away, j])).max() < 0.02


@pytest.mark.parametrize("gain", [20.0, 80.0])
def test_constant_external_torque_is_followed_with_time_constant_one_over_k(gain: float
                                                                             ) -> None:
    model = arm()
    ext = np.array([3.0, -5.0, 2.0, 4.0, -1.0, 0.5, 0.3])
    t, q, qd, tau = plant(model, 6.0 / gain, ext)
    r = residuals(model, t, q, qd, tau, gain)
    expected = np.outer(1.0 - np.exp(-gain * t), ext)
    assert np.abs(r - expected).max() < 0.01 * np.abs(ext).max()
    j = int(np.argmax(np.abs(ext)))
    fraction = r[:, j] / ext[j]  # 1 - exp(-t / time constant)
    k = int(np.flatnonzero(fraction >= 1.0 - math.exp(-1.0))[0])
    crossing = t[k - 1] + T * ((1.0 - math.exp(-1.0)) - fraction[k - 1]) / (fraction[k]
                                                                           - fraction[k - 1])
    assert crossing == pytest.approx(1.0 / gain, rel=0.03)


def test_exact_discretisation_is_stable_where_euler_is_not() -> None:
    """K_O T = 5: (5) reaches tau_ext within a period; forward Euler of the continuous
    form, r += K T (tau_ext - r), would oscillate with growing amplitude (|1 - K T| > 1)."""
    model = arm()
    ext = np.linspace(-2.0, 2.0, model.nv)
    t, q, qd, tau = plant(model, 0.05, ext)
    r = residuals(model, t, q, qd, tau, 5.0 / T)
    assert np.abs(r[5:] - ext).max() < 0.02 * np.abs(ext).max()


def test_the_per_sample_observer_equals_the_batch(free_run) -> None:
    model, (t, q, qd, tau) = free_run
    gains = np.linspace(20.0, 80.0, model.nv)
    batch = residuals(model, t[:300], q[:300], qd[:300], tau[:300], gains)
    obs = MomentumObserver(model, gains, max_gap=0.05)
    step = np.array([obs.update(float(t[k]), q[k], qd[k], tau[k]).copy() for k in range(300)])
    assert np.allclose(step, batch, rtol=1e-9, atol=1e-12)
    assert obs.restarts == 0


def test_bad_samples_are_refused_and_leave_the_observer_unchanged(free_run) -> None:
    model, (t, q, qd, tau) = free_run
    obs = MomentumObserver(model, 50.0, max_gap=0.05)
    for k in range(50):
        obs.update(float(t[k]), q[k], qd[k], tau[k])
    before = obs.r.copy()
    bad_qd = qd[50].copy()
    bad_qd[3] = np.nan
    with pytest.raises(rc.StateError, match="qd of joint 'joint4'"):
        obs.update(float(t[50]), q[50], bad_qd, tau[50])
    with pytest.raises(rc.StateError, match="tau must be 7 finite"):
        obs.update(float(t[50]), q[50], qd[50], np.full(7, np.inf))
    with pytest.raises(rc.StateError, match="does not follow"):
        obs.update(float(t[48]), q[50], qd[50], tau[50])
    assert np.array_equal(obs.r, before)
    again = MomentumObserver(model, 50.0, max_gap=0.05)
    for k in range(51):
        again.update(float(t[k]), q[k], qd[k], tau[k])
    assert np.allclose(obs.update(float(t[50]), q[50], qd[50], tau[50]), again.r)
    obs.update(float(t[50]) + 1.0, q[51], qd[51], tau[51])  # a stalled stream: restart
    assert obs.restarts == 1 and not obs.r.any()


def test_bad_parameters_and_models() -> None:
    model = arm()
    with pytest.raises(rc.ParameterError, match=r"gain of joint 'joint3' is -1.0"):
        MomentumObserver(model, [1, 1, -1, 1, 1, 1, 1], max_gap=0.1)
    with pytest.raises(rc.ParameterError, match="3 values for the 7"):
        MomentumObserver(model, [1, 1, 1], max_gap=0.1)
    with pytest.raises(rc.ParameterError, match="max_gap"):
        MomentumObserver(model, 10.0, max_gap=math.inf)
    with pytest.raises(rc.ModelError, match="ClosedLoopModel"):
        MomentumObserver(load_loop_robot("four_bar"), 10.0, max_gap=0.1)  # type: ignore[arg-type]
    t = np.array([0.0, 1e-3, 1e-3])
    z = np.zeros((3, model.nv))
    with pytest.raises(rc.StateError, match=r"period 1 -> 2"):
        residuals(model, t, z, z, z, 10.0)
