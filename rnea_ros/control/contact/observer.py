"""Generalized-momentum observer: the external joint torques ``tau_ext`` without
acceleration (De Luca & Mattone, ICRA 2003; De Luca, Albu-Schaeffer, Haddadin &
Hirzinger, IROS 2006; Haddadin, De Luca & Albu-Schaeffer, "Robot collisions: a
survey on detection, isolation, and identification", T-RO 2017; equation numbers
below are this module's).

**Model.** With ``p = M(q) qd`` and a Christoffel-consistent ``C`` (``dM/dt = C + C^T``),

    dp/dt = tau_m - tau_f + C(q, qd)^T qd - g(q) + tau_ext = u(t) + tau_ext,
    u = tau_m - tau_f - beta(q, qd),   beta = g - C^T qd

(``beta`` and ``p`` by :func:`rnea_ros.core.momentum_and_bias`, O(n); ``tau_f`` the
friction of the model, :func:`friction`: ``Fs sgn_b(qd) + Fv qd``, Khalil eq. 31 with
the sign regularised, from ``model.coulomb``, ``model.viscous`` or an identified drives
file). The continuous observer

    r(t) = K_O (p(t) - p(0) - int_0^t (u + r) ds),   dr/dt = K_O (tau_ext - r)

follows ``tau_ext`` through a first-order filter of time constant ``1/K_O`` per joint
(``K_O`` diagonal, 1/s), needs no ``qdd``, and ``r = 0`` without contact.

**Discrete form (exact for a held torque).** Between samples ``t_k`` and ``t_{k+1}``
(``T = t_{k+1} - t_k``, any spacing) the commanded torque is held (zero-order hold), so
``int tau_m = T tau_m[k]`` exactly. If ``tau_ext`` is constant over the period, the
momentum balance identifies it exactly, ``T tau_ext = p_{k+1} - p_k - int u``, and
``dr/dt = K_O (tau_ext - r)`` integrates in closed form:

    r_{k+1} = e^{-K_O T} r_k + (1 - e^{-K_O T}) / T * (p_{k+1} - p_k - T u_k)     (5)
    T u_k = T tau_m[k] - T/2 (beta_k + beta_{k+1} + tau_f,k + tau_f,k+1)

The state-dependent terms ``beta`` and ``tau_f`` are integrated by the trapezoid rule
(error O(T^3) per period, exact for the held torque); (5) is the exact
discretisation of the filter, stable for every ``K_O T`` (forward Euler of the
continuous form is unstable beyond ``K_O T = 2``) and equal to it as ``T -> 0``.
``tau_m[k]`` is the torque held from ``t_k`` to ``t_{k+1}``: the command sent with
sample ``k``, or the effort measured over that period.

**Torque input.** Measured efforts (``joint_states.effort``, motor current times torque
constant) are best: the observer then sees only what the model does not explain --
contacts, and friction/parameter errors. When the robot reports no effort the
commanded torques are used: actuator tracking errors, torque ripple and unmodelled
friction then appear in ``r`` as if they were contacts, and the thresholds must be
calibrated (:mod:`~.calibration`) from a contact-free run in that mode, larger.

**Coulomb friction near zero velocity.** Khalil's ``Fs sign(qd)`` jumps by ``2 Fs`` at
``qd = 0``: at rest, measured velocity noise (or round-off) flips its sign from sample to
sample and the residual sees ``+-Fs`` that no contact made (the Unitree Z1's URDF gives
``Fs`` = 1-2 N m, thresholds are 0.05-0.6 N m). The observer therefore uses the
regularised sign ``sgn_b(x) = clip(x / b, -1, 1)`` (a linear zone of half-width ``b``,
the Stribeck-free regularisation of the identification literature: Khalil & Dombre,
*Modeling, Identification and Control of Robots*, ch. 14, and Olsson, Astrom, Canudas
de Wit, Gafvert & Lischinsky, "Friction models and friction compensation", Eur. J.
Control 1998, sec. 3; the same ``sgn_band`` as ``rnea-identify --band``, so an
identified ``Fc`` is used as it was fitted). ``b`` = ``friction.coulomb_band`` (default
:data:`COULOMB_BAND`, the controller's parameter table); ``b = 0`` is the exact sign.
White velocity noise of deviation ``s`` at rest then enters ``r`` as at most
``Fs s / b`` filtered by the observer (``Fs (s / b) sqrt(K_O T / 4)`` deviation), and
beyond ``|qd| > b`` the model is Khalil's. Inside the band a real joint still has its
friction (or sticks): a slow reversal shows up to ``Fs (1 - |qd| / b)`` for the
``2 b / |qdd|`` it spends there, filtered by ``1/K_O``.

Closed loops and elastic models are refused (``rc.momentum_and_bias``'s
:class:`~rnea_ros.core.errors.ModelError`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.control.contact._observer_jit import observer_rows
from rnea_ros.core.dynamics.momentum_bias import require_tree
from rnea_ros.core.errors import StateError
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import load_table

Array = NDArray[np.float64]

COULOMB_BAND = float(load_table("controller")["friction.coulomb_band"].default)
"""[rad/s or m/s] the default band of the regularised Coulomb sign (the parameter
table's ``friction.coulomb_band``; ``rnea-bag --contact-band`` takes the same)."""


def observer_model(model: rc.RobotModel, drives: str | Path | dict[str, Any] | None = None
                   ) -> rc.RobotModel:
    """The model the observer uses: ``model`` with an identified drives file applied
    (armature, Coulomb and viscous friction; :mod:`rnea_ros.core.model.drives`)."""
    model = require_tree(model, "momentum observer")
    return model if drives is None else rc.apply_drive_parameters(model, drives)


def observer_gains(model: rc.RobotModel, gains: object) -> Array:
    """``K_O`` (nv,) [1/s] from a scalar or a per-joint sequence; each finite and > 0."""
    k = np.asarray(gains, dtype=np.float64)
    k = np.full(model.nv, float(k)) if k.ndim == 0 else k
    if k.shape != (model.nv,):
        raise ParameterError(f"observer gains: {k.shape[0] if k.ndim == 1 else k.shape} values "
                             f"for the {model.nv} joint velocities of '{model.name}'")
    bad = np.flatnonzero(~(np.isfinite(k) & (k > 0.0)))
    if bad.size:
        j = int(bad[0])
        raise ParameterError(f"observer gain of joint '{model.joint_of_coordinate(j)}' is "
                             f"{k[j]}: must be finite and > 0 [1/s]")
    return k


def checked_band(band: object) -> float:
    """``band`` [rad/s or m/s] checked: finite and >= 0 (:class:`ParameterError`)."""
    b = float(band)  # type: ignore[arg-type]
    if not (math.isfinite(b) and b >= 0.0):
        raise ParameterError(f"friction.coulomb_band {band!r}: must be finite and >= 0 "
                             "[rad/s or m/s] (0: the exact sign)")
    return b


def friction(model: rc.RobotModel, qd: Array, band: float = COULOMB_BAND) -> Array:
    """``Fs sgn_b(qd) + Fv qd`` per sample (rows of ``qd``, (N, nv) or (nv,)) [N m, N]:
    ``sgn_b(x) = clip(x / b, -1, 1)``, ``b = band`` [rad/s or m/s] (module docstring;
    ``b = 0``: ``sign(x)``, Khalil eq. 31). The compiled monitor
    (:mod:`~rnea_ros.control.contact._monitor_jit`) computes the same per state; the
    law is the core's (:func:`rnea_ros.core.coulomb_signs`), as the controller's
    friction compensation and the kernels use it."""
    sgn = rc.coulomb_signs(qd, band)
    return np.asarray(model.coulomb * sgn + model.viscous * qd, dtype=np.float64)


def residual_rows(t: Array, p: Array, w: Array, tau: Array, gains: Array, r0: Array
                  ) -> tuple[Array, int]:
    """The observer's recursion (eq. (5)) over consecutive samples, continuing a
    recording chunk by chunk (``rnea-bag``): ``t`` (N,) [s], ``p`` (N, nv) the momentum
    ``M qd``, ``w`` (N, nv) ``beta + tau_f`` (:func:`rnea_ros.core.momentum_and_bias_batch`
    plus :func:`friction`), ``tau`` (N, nv) the torque held from each sample on,
    ``gains`` (nv,) ``K_O`` [1/s], ``r0`` (nv,) the residual at ``t[0]``. Returns ``r``
    (N, nv) and the first period ``k`` (``t[k]`` to ``t[k+1]``) that is not a positive
    step or gives a non-finite residual, -1 if none: rows ``0..k`` of ``r`` are valid,
    the later ones are not."""
    U = np.zeros_like(p)
    U[:-1] = tau[:-1] - 0.5 * (w[:-1] + w[1:])
    R = np.full_like(p, np.nan)
    bad = observer_rows(np.ascontiguousarray(t, dtype=np.float64), _asc(p), U,
                        _asc(gains), _asc(r0), R)
    return R, int(bad)


def _asc(x: Array) -> Array:
    return np.ascontiguousarray(x, dtype=np.float64)


def residuals(model: rc.RobotModel, t: object, q: object, qd: object, tau: object,
              gains: object, *, drives: str | Path | dict[str, Any] | None = None,
              coulomb_band: float = COULOMB_BAND) -> Array:
    """The observer over a recording: ``t`` (N,) [s] increasing, ``q`` (N, nq), ``qd``,
    ``tau`` (N, nv) (``tau[k]`` held over ``[t_k, t_{k+1})``) give ``r`` (N, nv), the
    estimated external joint torques (``r[0] = 0``), by eq. (5) of the module docstring;
    ``coulomb_band`` [rad/s or m/s] the band of :func:`friction`.
    One compiled pass for ``p, beta`` and one for the recursion."""
    band = checked_band(coulomb_band)
    model = observer_model(model, drives)
    K = observer_gains(model, gains)
    times = np.ascontiguousarray(t, dtype=np.float64)
    P, B = rc.momentum_and_bias_batch(model, q, qd)
    n = P.shape[0]
    torque = np.ascontiguousarray(tau, dtype=np.float64)
    if times.shape != (n,) or torque.shape != P.shape:
        raise StateError(f"t {times.shape} and tau {torque.shape} must be ({n},) and "
                         f"({n}, {model.nv}) for {n} states of '{model.name}'")
    if not np.all(np.isfinite(torque)):
        k, j = (int(x) for x in np.argwhere(~np.isfinite(torque))[0])
        raise StateError(f"tau of joint '{model.joint_of_coordinate(j)}' is not finite "
                         f"(sample {k})")
    W = B + friction(model, np.asarray(qd, dtype=np.float64), band)
    U = np.empty_like(P)
    U[:-1] = torque[:-1] - 0.5 * (W[:-1] + W[1:])
    U[-1:] = 0.0
    R = np.empty_like(P)
    bad = observer_rows(times, P, U, K, np.zeros(model.nv), R)
    if bad >= 0:
        raise StateError(f"observer: period {bad} -> {bad + 1} (t = {times[bad]!r} -> "
                         f"{times[bad + 1]!r} s) is not a positive finite time step, or "
                         "the residual overflowed")
    return R


class MomentumObserver:
    """The observer sample by sample (a controller's or a node's): :meth:`update` with
    each new state gives ``r`` (nv,). Shares eq. (5) and its kernel with
    :func:`residuals` (which it reproduces to rounding on the same data).

    ``max_gap`` [s]: a longer period between samples (a stalled stream, a clock jump)
    restarts the observer at the new sample (``r = 0``, counted in ``restarts``) rather
    than integrating across it. A sample with a non-finite entry or a non-increasing
    time raises :class:`StateError` and leaves the observer unchanged.
    """

    def __init__(self, model: rc.RobotModel, gains: object, *, max_gap: float,
                 drives: str | Path | dict[str, Any] | None = None,
                 coulomb_band: float = COULOMB_BAND) -> None:
        self.model = observer_model(model, drives)
        self.band = checked_band(coulomb_band)
        self.gains = observer_gains(self.model, gains)
        if not (math.isfinite(max_gap) and max_gap > 0.0):
            raise ParameterError(f"observer max_gap {max_gap} s must be finite and > 0")
        self.max_gap = float(max_gap)
        nv = self.model.nv
        self.r = np.zeros(nv)
        self.restarts = 0
        self._t = math.nan  # no sample yet
        self._p, self._w, self._tau = np.zeros(nv), np.zeros(nv), np.zeros(nv)

    def reset(self) -> None:
        """Forget the past: the next sample starts the observer (``r = 0``)."""
        self._t = math.nan
        self.r = np.zeros(self.model.nv)

    def update(self, t: float, q: object, qd: object, tau: object) -> Array:
        """Advance to the state ``(q, qd)`` at time ``t`` [s]; ``tau`` (nv,) is the
        torque held from ``t`` on (used at the next update). Returns ``r`` (nv,)."""
        m = self.model
        torque = np.asarray(tau, dtype=np.float64)
        if torque.shape != (m.nv,) or not np.all(np.isfinite(torque)):
            raise StateError(f"observer: tau must be {m.nv} finite values, got {torque!r}")
        if not math.isfinite(t):
            raise StateError(f"observer: sample time {t!r} is not finite")
        qd_a = np.asarray(qd, dtype=np.float64)
        p, beta = rc.momentum_and_bias(m, q, qd_a)  # checks q, qd (StateError)
        w = beta + friction(m, qd_a, self.band)
        T = t - self._t
        if math.isnan(self._t) or T > self.max_gap:
            self.restarts += 0 if math.isnan(self._t) else 1
            self.r = np.zeros(m.nv)
        elif not T > 0.0:
            raise StateError(f"observer: sample time {t!r} s does not follow {self._t!r} s")
        else:
            a = np.exp(-self.gains * T)
            self.r = a * self.r + (1.0 - a) / T * (
                p - self._p - T * (self._tau - 0.5 * (self._w + w)))
        self._t, self._p, self._w, self._tau = float(t), p, w, torque.copy()
        return self.r


__all__ = ["COULOMB_BAND", "MomentumObserver", "checked_band", "friction", "observer_gains",
           "observer_model", "residual_rows", "residuals"]
