"""Elastic-joint simulator: :class:`ElasticSimulator` (our recursive forward dynamics, RK4)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.kinematics import potential_energy
from rnea_ros.core.elastic.fd import dynamics, forward_dynamics
from rnea_ros.core.elastic.feedforward import Feedforward, MotorReference
from rnea_ros.core.elastic.hybrid import check_recursive, forward_dynamics_recursive
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import ModelError, StateError
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.simulation.plant import Index, JointStateOut, Plant

Array = NDArray[np.float64]


class ElasticSimulator(Plant):
    """Integrates a mixed rigid/elastic robot (:mod:`rnea_ros.core.elastic.model`) with RK4.

    State: link ``q, qd`` (n,), motor ``theta, thetad`` (n_e,). The engine is our
    recursive forward dynamics (Khalil section 6.2), or hua-2024 Algorithm 2
    where a rigid joint's motor is off its parent link. ``fext`` (a function of
    the link positions returning (n, 6) body wrenches, or None) models e.g. a
    payload force. Pinocchio cannot serve here: it has no geared rotors.
    ``equilibrium_start``: :meth:`reset` without motor positions puts the motors at
    :meth:`equilibrium_motors` (else at their links' positions, springs relaxed).
    """

    def __init__(self, model: ElasticModel, *, dt: float = 1e-3,
                 fext: Callable[[Array], Array] | None = None,
                 equilibrium_start: bool = False) -> None:
        if not dt > 0.0:
            raise ParameterError(f"time step {dt} must be > 0")
        self.model, self.dt, self.fext = model, dt, fext
        self.equilibrium_start = equilibrium_start
        try:
            check_recursive(model)
            self.engine: Callable[..., tuple[Array, Array]] = forward_dynamics_recursive
        except ModelError:
            self.engine = forward_dynamics
        n, ne = model.n, model.n_elastic
        self.x = np.zeros(2 * (n + ne))  # [q, theta, qd, thetad]
        self.t0, self.steps = 0.0, 0
        self.effort = np.zeros(n)
        # (qdd, thetadd) at the start of the last step, under its torques.
        self.accelerations = (np.zeros(n), np.zeros(ne))
        self.derivative(self.x, self.effort)  # compile now (seconds, cold), not in a step

    @property
    def t(self) -> float:
        return self.t0 + self.steps * self.dt

    @property
    def state(self) -> tuple[Array, Array, Array, Array]:
        """``(q, theta, qd, thetad)``."""
        n, ne = self.model.n, self.model.n_elastic
        x = self.x
        return x[:n], x[n:n + ne], x[n + ne:2 * n + ne], x[2 * n + ne:]

    def joint_state(self, index: Index | None = None,
                    followers: bool = False) -> JointStateOut:
        """Links then motors (``index`` and ``followers`` do not apply); effort: a link's
        applied torque (an elastic joint's spring torque), a motor's torque."""
        m = self.model
        q, theta, qd, thetad = self.state
        link_effort = self.effort.copy()
        link_effort[m.elastic_joints] = m.spring_torque(q, theta, qd, thetad)
        return JointStateOut(list(m.links.joint_names + m.motor_names), np.r_[q, theta].tolist(),
                             np.r_[qd, thetad].tolist(),
                             np.r_[link_effort, self.effort[m.elastic_joints]].tolist())

    def reset(self, q: Array, theta: Array | None = None, qd: Array | None = None,
              thetad: Array | None = None, t: float = 0.0) -> None:
        """Set the state: link positions ``q`` (n,) [rad or m]; motor positions ``theta``
        (n_e,) default to :meth:`equilibrium_motors` with ``equilibrium_start``, else to
        their links' positions; velocities default to 0."""
        m = self.model
        e = m.elastic_joints
        q = np.asarray(q, dtype=np.float64)
        qd = np.zeros(m.n) if qd is None else np.asarray(qd, dtype=np.float64)
        if theta is None:
            theta = self.equilibrium_motors(q) if self.equilibrium_start else q[e].copy()
        theta = np.asarray(theta, dtype=np.float64)
        thetad = qd[e] if thetad is None else np.asarray(thetad, dtype=np.float64)
        self.x = np.concatenate([q, theta, qd, thetad])
        self.t0, self.steps = t, 0

    def equilibrium_motors(self, q: Array) -> Array:
        """Motor positions (n_e,) [rad or m] holding the links at rest at ``q`` (n,)
        against gravity (not with ``fext``: :class:`ModelError`): hua-2024 eq. 28-29 at rest,
        ``theta = q_e + K^-1 tau_l,e(q)``, ``tau_l`` the link-side static torques of the
        unified bodies (:class:`~rnea_ros.core.elastic.feedforward.Feedforward`, exact at
        rest). The motor torques of :meth:`hold_torques` then keep every body still."""
        return self._rest(q).theta

    def hold_torques(self, q: Array) -> Array:
        """Motor torques (n,) [N m or N] that hold the robot at rest at ``q`` with the
        motors at :meth:`equilibrium_motors` (Algorithm 1 of hua-2024 at rest)."""
        return self._rest(q).tau

    def _rest(self, q: Array) -> MotorReference:
        m = self.model
        q = np.asarray(q, dtype=np.float64)
        if q.shape != (m.n,) or not np.all(np.isfinite(q)):
            raise StateError(f"link positions must be {m.n} finite values, got {q!r}")
        if self.fext is not None:
            raise ModelError("equilibrium motor positions under an external force 'fext' "
                             "are not supported")
        zero = np.zeros(m.n)
        return Feedforward(m)(q, zero, zero, zero, zero)

    def derivative(self, x: Array, tau: Array) -> Array:
        """``d/dt [q, theta, qd, thetad]``."""
        n, ne = self.model.n, self.model.n_elastic
        q, theta, qd, thetad = x[:n], x[n:n + ne], x[n + ne:2 * n + ne], x[2 * n + ne:]
        fext = None if self.fext is None else self.fext(q)
        qdd, thetadd = self.engine(self.model, q, theta, qd, thetad, tau, fext=fext)
        return np.concatenate([qd, thetad, qdd, thetadd])

    def step(self, tau: Array) -> None:
        """Advance by ``dt`` (RK4) with the motor torques ``tau`` (n,) held."""
        tau = np.asarray(tau, dtype=np.float64)
        if tau.shape != (self.model.n,) or not np.all(np.isfinite(tau)):
            raise StateError(f"effort must be {self.model.n} finite values, got {tau!r}")
        dt, x = self.dt, self.x
        k1 = self.derivative(x, tau)
        n, ne = self.model.n, self.model.n_elastic
        self.accelerations = (k1[n + ne:2 * n + ne], k1[2 * n + ne:])
        k2 = self.derivative(x + 0.5 * dt * k1, tau)
        k3 = self.derivative(x + 0.5 * dt * k2, tau)
        k4 = self.derivative(x + dt * k3, tau)
        self.x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        self.effort = tau
        self.steps += 1

    def energy(self) -> float:
        """Kinetic + gravity + spring energy [J] (``1/2 xd^T A xd + U_g + 1/2 K dq^2``)."""
        m = self.model
        q, theta, qd, thetad = self.state
        A, _ = dynamics(m, q, theta, np.zeros(m.n), np.zeros(m.n_elastic))
        xd = np.concatenate([qd, thetad])
        phi = theta - q[m.elastic_joints]
        return float(0.5 * xd @ A @ xd + potential_energy(m.unified, q)
                     + 0.5 * np.sum(m.stiffness[m.elastic_joints] * phi**2))
