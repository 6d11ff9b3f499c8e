"""A rigid-body simulator whose engine is not our code: Pinocchio's ABA.

Used by the simulator node (machines without Gazebo) and the closed-loop
tests, so that our controller is checked against an independent plant.
State ``(q, qd)`` in our model's joint order; the applied effort is
``tau - damping * qd`` with ``tau`` held over the step. Integrators:
``semi_implicit`` (symplectic Euler: ``qd += dt qdd; q += dt qd``) and
``rk4``. Optional joint damping and Coulomb friction (``sign(qd)``, no
stiction) act against the motion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import ParameterError, StateError
from rnea_ros.core.model import RobotModel
from rnea_ros.core.payload import Payload
from rnea_ros.oracle import PinocchioOracle

Array = NDArray[np.float64]
INTEGRATORS = ("semi_implicit", "rk4")


class Simulator:
    """Integrates ``qdd = ABA_pinocchio(q, qd, tau - damping qd)``."""

    def __init__(self, urdf: str | Path, model: RobotModel, *, dt: float = 1e-3,
                 integrator: str = "semi_implicit", damping: Array | None = None,
                 friction: Array | None = None, payload: Payload | None = None) -> None:
        if integrator not in INTEGRATORS:
            raise ParameterError(f"integrator '{integrator}' is not one of {INTEGRATORS}")
        if not dt > 0.0:
            raise ParameterError(f"time step {dt} must be > 0")
        self.model = model
        self.engine = PinocchioOracle(urdf, model)
        if payload is not None:
            self.engine.add_payload(payload)
        self.dt = dt
        self.integrator = integrator
        self.damping = np.zeros(model.nv) if damping is None else np.asarray(damping, float)
        self.friction = np.zeros(model.nv) if friction is None else np.asarray(friction, float)
        self.q = np.zeros(model.nv)
        self.qd = np.zeros(model.nv)
        self.t0, self.steps = 0.0, 0  # t = t0 + steps * dt, without accumulating rounding
        self.effort = np.zeros(model.nv)

    @property
    def t(self) -> float:
        """Simulated time [s]."""
        return self.t0 + self.steps * self.dt

    def reset(self, q: Array, qd: Array | None = None, t: float = 0.0) -> None:
        """Set the state."""
        self.q = np.array(q, dtype=np.float64)
        self.qd = np.zeros(self.model.nv) if qd is None else np.array(qd, dtype=np.float64)
        self.t0, self.steps = t, 0

    def acceleration(self, q: Array, qd: Array, tau: Array) -> Array:
        """``qdd`` from Pinocchio's ABA with joint damping and Coulomb friction."""
        return self.engine.aba(q, qd, tau - self.damping * qd - self.friction * np.sign(qd))

    def step(self, tau: Array) -> None:
        """Advance by ``dt`` with the effort ``tau`` (model order) held."""
        tau = np.asarray(tau, dtype=np.float64)
        if tau.shape != (self.model.nv,) or not np.all(np.isfinite(tau)):
            raise StateError(f"effort must be {self.model.nv} finite values, got {tau!r}")
        dt, q, qd = self.dt, self.q, self.qd
        if self.integrator == "semi_implicit":
            qd = qd + dt * self.acceleration(q, qd, tau)
            q = q + dt * qd
        else:
            k1q, k1v = qd, self.acceleration(q, qd, tau)
            k2q, k2v = qd + 0.5 * dt * k1v, self.acceleration(q + 0.5 * dt * k1q,
                                                                qd + 0.5 * dt * k1v, tau)
            k3q, k3v = qd + 0.5 * dt * k2v, self.acceleration(q + 0.5 * dt * k2q,
                                                                qd + 0.5 * dt * k2v, tau)
            k4q, k4v = qd + dt * k3v, self.acceleration(q + dt * k3q, qd + dt * k3v, tau)
            q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
            qd = qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        self.q, self.qd, self.effort = q, qd, tau
        self.steps += 1
