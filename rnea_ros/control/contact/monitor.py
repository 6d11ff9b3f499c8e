"""Contact monitoring per state, as the controller node will run it: the momentum
observer (:mod:`~.observer`) and the detector (:mod:`~.detection`) fused in one
compiled call on models of 1-DoF joints (the same equations and state machine, so it
equals :func:`~.observer.residuals` + :func:`~.detection.detect` on the same samples);
models with multi-DoF or mimic joints run :class:`~.observer.MomentumObserver` and
:class:`~.detection.ContactDetector` one after the other.

:meth:`ContactMonitor.update` returns whether the robot is in contact; ``r`` (nv,) is
the estimated external joint torque (the node's ``~/external_torque``),
:meth:`ContactMonitor.contact` the isolated link and the time the contact began, and
:func:`~.detection.contact_wrench` at that link the node's ``~/external_wrench``. A
state with a non-finite entry, a wrong size or a time that does not increase raises
:class:`~rnea_ros.core.errors.StateError` and changes nothing (the node rejects and
counts it); a gap longer than ``max_gap`` restarts the observer (``restarts``).

Kernel: :mod:`~rnea_ros.control.contact._monitor_jit` (``monitor_call``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.control.contact._detection_jit import S_IN, S_JOINT, S_PEAK, S_START, new_state
from rnea_ros.control.contact._monitor_jit import (
    OK,
    P_BAND,
    P_MAX_GAP,
    P_MIN_DURATION,
    P_RELEASE,
    P_VECTORS,
    X_IN,
    X_R,
    X_RESTARTS,
    X_T,
    monitor_call,
    params_size,
    state_size,
)
from rnea_ros.control.contact.detection import (
    Contact,
    ContactDetector,
    DetectionSettings,
    contact_wrench,
    coordinate_depth,
    coordinate_link,
)
from rnea_ros.control.contact.observer import COULOMB_BAND, MomentumObserver
from rnea_ros.core._compile import FastCall
from rnea_ros.core.errors import StateError

Array = NDArray[np.float64]

_monitor_fast = FastCall(monitor_call)
_asc, _f64 = np.ascontiguousarray, np.float64


class ContactMonitor:
    """Observer + detector for one robot; ``gains`` ``K_O`` [1/s] (scalar or (nv,)),
    ``max_gap`` [s], ``drives``: an identified drives file (friction, armature),
    ``coulomb_band`` [rad/s or m/s]: the band of the observer's Coulomb sign
    (:func:`~.observer.friction`)."""

    def __init__(self, model: rc.RobotModel, gains: object, settings: DetectionSettings, *,
                 max_gap: float, drives: str | Path | dict[str, Any] | None = None,
                 coulomb_band: float = COULOMB_BAND) -> None:
        self.observer = MomentumObserver(model, gains, max_gap=max_gap, drives=drives,
                                         coulomb_band=coulomb_band)
        self.model = self.observer.model
        self.detector = ContactDetector(self.model, settings)
        self.settings = self.detector.settings
        nv = self.model.nv
        self.fused = not self.model.expanded
        s = self.settings
        self._params = np.empty(params_size(nv))
        self._params[[P_RELEASE, P_MIN_DURATION, P_MAX_GAP, P_BAND]] = (
            s.release, s.min_duration, self.observer.max_gap, self.observer.band)
        self._params[P_VECTORS:] = np.concatenate([
            self.observer.gains, s.thresholds, s.velocity, s.acceleration,
            coordinate_depth(self.model).astype(np.float64)])
        self._zeros = np.zeros(nv)
        self._state = np.empty(state_size(nv))
        self._fp, self._g = self.model.kernel_floats, self.model.gravity
        self.reset()

    @property
    def restarts(self) -> int:
        """Observer restarts after a gap longer than ``max_gap``."""
        if self.fused:
            return int(self._state[X_RESTARTS])
        return self.observer.restarts

    @property
    def r(self) -> Array:
        """The estimated external joint torques (nv,) [N m, N] (a read-only view)."""
        r: Array = (self._state[X_R:X_R + self.model.nv] if self.fused
                    else self.observer.r).view()
        r.flags.writeable = False
        return r

    def reset(self) -> None:
        """Forget the past: no contact, the next state starts the observer."""
        nv = self.model.nv
        self._state[:] = 0.0
        self._state[0] = np.nan
        self._state[X_R + 4 * nv:] = new_state()
        self._det = self._state[X_R + 4 * nv:]
        self.observer.reset()
        self.detector.reset()

    def update(self, t: float, q: Array, qd: Array, tau: Array, qdd: Array | None = None
               ) -> bool:
        """One state at time ``t`` [s]: ``q`` (nq,), ``qd`` (nv,), ``tau`` (nv,) the torque
        held from ``t`` on, ``qdd`` (nv,) for the acceleration term (``None``: none).
        Returns whether the robot is in contact; ``self.r`` is updated."""
        if self.fused:  # the 1 kHz path, kept lean (the kernel checks sizes and values)
            state = self._state
            if _monitor_fast.call(self._fp, self._g, float(t), _asc(q, _f64), _asc(qd, _f64),
                                  self._zeros if qdd is None else _asc(qdd, _f64),
                                  _asc(tau, _f64), self._params, state) != OK:
                self._refuse(t, q, qd, tau, qdd)
            return state[X_IN] > 0.5  # type: ignore[no-any-return]
        r = self.observer.update(t, q, qd, tau)
        return self.detector.update(t, r, qd, qdd) is not None

    def _refuse(self, t: float, q: Array, qd: Array, tau: Array, qdd: Array | None) -> None:
        """The :class:`StateError` naming what is wrong with a refused state."""
        m = self.model
        last = float(self._state[X_T])
        if np.isfinite(t) and not t > last:
            raise StateError(f"contact monitor: sample time {t!r} s does not follow {last!r} s")
        for name, x, size in (("q", q, m.nq), ("qd", qd, m.nv), ("tau", tau, m.nv),
                              ("qdd", qdd, m.nv)):
            if x is None:
                continue
            a = np.asarray(x, dtype=np.float64)
            if a.shape != (size,):
                raise StateError(f"contact monitor: {name} has shape {a.shape}, expected "
                                 f"({size},) for '{m.name}'")
            bad = np.flatnonzero(~np.isfinite(a))
            if bad.size:
                joint = m.joint_of_coordinate(int(bad[0]), "q" if name == "q" else "v")
                raise StateError(f"contact monitor: {name} of joint '{joint}' is not finite")
        raise StateError(f"contact monitor: sample time {t!r} or the result is not finite")

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) every kernel :meth:`update`, :meth:`contact`
        and :func:`~.detection.contact_wrench` reach, on two neutral states, then
        :meth:`reset`: a node calls it before its first callback."""
        m = self.model
        q, zero = rc.neutral(m), np.zeros(m.nv)
        self.update(0.0, q, zero, zero, zero)
        self.update(1e-3, q, zero, zero)
        contact_wrench(m, q, str(m.body_names[-1]), zero)
        self.reset()

    def contact(self) -> Contact | None:
        """The current contact (link, joint, onset time, peak |r|), or ``None``."""
        state = self._det if self.fused else self.detector.state
        if state[S_IN] < 0.5:
            return None
        j = int(state[S_JOINT])
        m = self.model
        return Contact(float(state[S_START]), coordinate_link(m, j) if j >= 0 else "",
                       m.joint_of_coordinate(j) if j >= 0 else "", j, float(state[S_PEAK]))


__all__ = ["ContactMonitor"]
