"""The controller's Coulomb friction compensation near zero velocity (issue 35 spirit,
docs/control.md "Friction compensation").

arm7 with ``<dynamics friction="2.0">`` on every joint (the Unitree Z1's shoulder has
1-2 N m), ``friction_compensation: true``, the slew limiter off so the command is the
law's own. Gravity mode compensates at the MEASURED velocity: at rest, white velocity
noise of deviation ``SIGMA`` flipped Khalil's exact ``Fs sign(qd)`` every other sample,
a ``2 Fs`` = 4 N m chatter at the control rate. With the friction model's band ``b``
(``friction.coulomb_band``) the law is ``Fs clip(qd / b, -1, 1)``: the change per
sample is at most ``Fs / b |dqd|``. In inverse_dynamics mode the friction is taken at
the reference velocity: through a reversal the command must stay continuous.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.samples import sample_urdf

T = 1e-3  # [s] the state period
SIGMA = 1e-3  # [rad/s] white velocity-measurement noise
FS = 2.0  # [N m] Coulomb friction of every joint in the URDF
Q = np.array([0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3])


@pytest.fixture(scope="module")
def urdf(tmp_path_factory: pytest.TempPathFactory) -> str:
    text = Path(sample_urdf("arm7")).read_text().replace('friction="0.0"', f'friction="{FS}"')
    path = tmp_path_factory.mktemp("urdf") / "arm7_friction.urdf"
    path.write_text(text)
    return str(path)


def controller(urdf: str, **changes: object) -> TorqueController:
    values = default_values()
    values.update(urdf_path=urdf, friction_compensation=True, **changes)
    values["slew_limit.enable"] = False  # the law's own command, not the limiter's
    model = load_model(values)
    assert np.allclose(model.coulomb, FS)
    return TorqueController(model, controller_config(values, model))


def commands_at_rest(ctl: TorqueController, seconds: float = 5.0) -> tuple[np.ndarray, ...]:
    """The commands (n, 7) for ``seconds`` at rest with noisy measured velocities."""
    names = list(ctl.base_model.joint_names)
    rng = np.random.default_rng(7)
    n = round(seconds / T)
    qd = SIGMA * rng.standard_normal((n, 7))
    out = []
    for k in range(n):
        result = ctl.joint_state(names, Q, qd[k], stamp=1.0 + k * T, now=1.0 + k * T)
        assert result.command is not None, result
        out.append(np.array(result.command))
    return np.array(out), qd


def test_gravity_mode_does_not_chatter_at_rest(urdf: str) -> None:
    """Default band: the sample-to-sample change stays within the linear law's bound
    ``Fs / b |dqd|`` and its rms is below a tenth of the exact sign's ``2 Fs``-flips."""
    ctl = controller(urdf, mode="gravity")
    band = float(ctl.config.friction.coulomb_band)
    assert band > 0.0
    tau, qd = commands_at_rest(ctl)
    step = np.abs(np.diff(tau, axis=0))
    bound = FS / band * np.abs(np.diff(qd, axis=0)).max() + 1e-9
    assert step.max() <= bound, (step.max(), bound)
    assert np.sqrt(np.mean(step**2)) < 0.1 * 2 * FS, np.sqrt(np.mean(step**2))
    wide = controller(urdf, mode="gravity", **{"friction.coulomb_band": 50 * SIGMA})
    assert np.abs(np.diff(commands_at_rest(wide)[0], axis=0)).max() < 0.1 * 2 * FS


def test_band_zero_is_the_exact_sign(urdf: str) -> None:
    """``friction.coulomb_band: 0`` keeps Khalil's ``Fs sign(qd)``: the 2 Fs chatter."""
    ctl = controller(urdf, mode="gravity", **{"friction.coulomb_band": 0.0})
    tau, _ = commands_at_rest(ctl, 1.0)
    assert np.abs(np.diff(tau, axis=0)).max() > 2 * FS - 1e-6


def test_inverse_dynamics_is_continuous_through_a_velocity_reversal(urdf: str) -> None:
    """A reference moving every joint 0.05 rad out and back (velocity through zero at
    0.5 s), measured exactly on it: the command's change per sample stays far below
    ``Fs`` (it was ``2 Fs`` at the reversal with the exact sign)."""
    ctl = controller(urdf, mode="inverse_dynamics")
    names = list(ctl.base_model.joint_names)
    ctl.joint_state(names, Q, np.zeros(7), stamp=1.0, now=1.0)
    times = np.linspace(0.0, 1.0, 101)
    shape = 0.05 * np.sin(np.pi * times)  # out and back: qd = 0 at t = 0.5 s
    rate = 0.05 * np.pi * np.cos(np.pi * times)
    acc = -0.05 * np.pi**2 * np.sin(np.pi * times)
    positions = Q + shape[:, None] * np.ones(7)
    ctl.trajectory(names, times, positions, np.tile(rate[:, None], 7),
                   np.tile(acc[:, None], 7), 1.0)
    out = []
    for k in range(1, 1000):
        t = k * T
        s = np.interp(t, times, shape)
        v = np.interp(t, times, rate)
        result = ctl.joint_state(names, Q + s, np.full(7, v), stamp=1.0 + t, now=1.0 + t)
        assert result.command is not None, result
        out.append(np.array(result.command))
    step = np.abs(np.diff(np.array(out), axis=0))
    assert step.max() < 0.25 * FS, step.max()
