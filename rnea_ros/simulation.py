"""A rigid-body simulator whose engine is not our code: Pinocchio's ABA (closed
loops: Pinocchio's constrained dynamics, :class:`LoopSimulator`).

Used by the simulator node (machines without Gazebo) and the closed-loop
tests, so that our controller is checked against an independent plant.
State ``(q, qd)`` in our model's joint order; the applied effort is
``tau - damping * qd`` with ``tau`` held over the step. Integrators:
``semi_implicit`` (symplectic Euler: ``qd += dt qdd; q += dt qd``) and
``rk4``. Optional joint damping and Coulomb friction (``sign(qd)``, no
stiction) act against the motion.

Hard stops: like a real arm (and Gazebo), a joint cannot leave its URDF
position limits -- a position beyond one is put back on it and the velocity
into the stop is zeroed (an inelastic stop, counted in ``stops``). Without
them an unpowered arm swings freely, and a 1 kHz integrator of a light
distal link can diverge. A step whose result is not finite (a diverged
integration) is not taken: the state stays, at rest (counted in
``diverged``), so no non-finite state is ever published.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_kinematics import loop_residual
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.kinematics import potential_energy
from rnea_ros.core.elastic.fd import dynamics, forward_dynamics
from rnea_ros.core.elastic.hybrid import check_recursive, forward_dynamics_recursive
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import ModelError, ParameterError, StateError
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import PinocchioOracle

Array = NDArray[np.float64]
INTEGRATORS = ("semi_implicit", "rk4")


class Simulator:
    """Integrates ``qdd = ABA_pinocchio(q, qd, tau - damping qd)``."""

    def __init__(self, urdf: str | Path, model: RobotModel, *, dt: float = 1e-3,
                 integrator: str = "semi_implicit", damping: Array | None = None,
                 friction: Array | None = None, payload: Payload | None = None,
                 hard_stops: bool = True) -> None:
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
        self.hard_stops = hard_stops
        self.stops = 0  # steps that met a joint's position limit
        self.diverged = 0  # steps whose result was not finite (not taken)

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
        if np.all(np.isfinite(q)) and np.all(np.isfinite(qd)):
            self.q, self.qd = self.stop_at_limits(q, qd) if self.hard_stops else (q, qd)
        else:
            self.qd = np.zeros(self.model.nv)
            self.diverged += 1
        self.effort = tau
        self.steps += 1

    def stop_at_limits(self, q: Array, qd: Array) -> tuple[Array, Array]:
        """``(q, qd)`` with positions beyond the URDF limits put back on them and the
        velocity into the stop zeroed (inelastic)."""
        lower, upper = self.model.lower_limit, self.model.upper_limit
        below, above = q < lower, q > upper
        if not (below.any() or above.any()):
            return q, qd
        self.stops += 1
        q = np.clip(q, lower, upper)
        qd = np.where((below & (qd < 0.0)) | (above & (qd > 0.0)), 0.0, qd)
        return q, qd


class LoopSimulator(Simulator):
    """A closed-loop robot (:class:`~rnea_ros.core.coupling.loops.ClosedLoopModel`:
    the URDF's spanning tree + cut joints) in Pinocchio's constrained dynamics.

    ``qdd = pin.constraintDynamics(q, qd, tau - damping qd - friction sign(qd))``
    over the tree, with the cut joints as Pinocchio constraints
    (:func:`rnea_ros.loop_oracle.pinocchio_constraints`: a 3D point per spherical or
    planar revolute cut, two on a spatial revolute cut's axis, a 6D frame per weld)
    and Pinocchio's proximal solver (``mu`` = :data:`PROXIMAL_MU`, redundant rows of a
    planar loop allowed). Integration drifts off the constraint manifold; Baumgarte
    stabilisation pulls it back: each constraint's acceleration is
    ``-Kp e - Kd de`` instead of 0 (``baumgarte = (Kp [1/s^2], Kd [1/s])``; the
    default (2500, 100) is critically damped at 50 rad/s, 20 ms). State ``q, qd`` and
    effort ``tau`` are over the tree joints (n,): passive joints take no effort.
    Hard stops act on the active joints only (a passive joint's limits are not a
    stop of the mechanism). :meth:`closure_error` measures the drift (our residual of
    eq. 3, for diagnostics only).
    """

    def __init__(self, urdf: str | Path, model: ClosedLoopModel, *, dt: float = 1e-3,
                 integrator: str = "semi_implicit", damping: Array | None = None,
                 friction: Array | None = None, payload: Payload | None = None,
                 hard_stops: bool = True, baumgarte: tuple[float, float] = (2500.0, 100.0)
                 ) -> None:
        super().__init__(urdf, model.tree, dt=dt, integrator=integrator, damping=damping,
                         friction=friction, payload=payload, hard_stops=hard_stops)
        from rnea_ros.loop_oracle import pinocchio_constraints

        kp, kd = (float(x) for x in baumgarte)
        if not (np.isfinite(kp) and np.isfinite(kd) and kp >= 0.0 and kd >= 0.0):
            raise ParameterError(f"Baumgarte gains must be finite and >= 0, got Kp = {kp}, "
                                 f"Kd = {kd}")
        self.loops = model
        self.constraints, self.datas = pinocchio_constraints(self.engine, model)
        pin = self.engine.pin
        for constraint in self.constraints:
            constraint.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(kp, kd))
        self.settings = pin.ProximalSettings(1e-12, PROXIMAL_MU, 100)
        self.q = model.q_reference.copy()
        active = np.zeros(model.n, dtype=bool)
        active[model.active_index] = True
        self._stops_at = active

    def acceleration(self, q: Array, qd: Array, tau: Array) -> Array:
        """Tree ``qdd`` (n,) from Pinocchio's constrained dynamics, damping and friction."""
        e = self.engine
        applied = tau - self.damping * qd - self.friction * np.sign(qd)
        a = e.pin.constraintDynamics(e.pm, e.pd, e.config(q), e.tangent(qd), e.tangent(applied),
                                     self.constraints, self.datas, self.settings)
        return e.ours(a)

    def stop_at_limits(self, q: Array, qd: Array) -> tuple[Array, Array]:
        """Hard stops on the active joints (inelastic); Baumgarte restores the closure."""
        lower = np.where(self._stops_at, self.model.lower_limit, -np.inf)
        upper = np.where(self._stops_at, self.model.upper_limit, np.inf)
        below, above = q < lower, q > upper
        if not (below.any() or above.any()):
            return q, qd
        self.stops += 1
        q = np.clip(q, lower, upper)
        qd = np.where((below & (qd < 0.0)) | (above & (qd > 0.0)), 0.0, qd)
        return q, qd

    def closure_error(self) -> float:
        """Largest constraint error of eq. 3 at the current state [m or rad]."""
        return float(np.abs(loop_residual(self.loops, self.q)).max())


PROXIMAL_MU = 1e-8  # Pinocchio's proximal regularisation of the constraint solve


class ElasticSimulator:
    """Integrates a mixed rigid/elastic robot (:mod:`rnea_ros.core.elastic.model`) with RK4.

    State: link ``q, qd`` (n,), motor ``theta, thetad`` (n_e,). The engine is our
    recursive forward dynamics (Khalil section 6.2), or hua-2024 Algorithm 2
    where a rigid joint's motor is off its parent link. ``fext`` (a function of
    the link positions returning (n, 6) body wrenches, or None) models e.g. a
    payload force. Pinocchio cannot serve here: it has no geared rotors.
    """

    def __init__(self, model: ElasticModel, *, dt: float = 1e-3,
                 fext: Callable[[Array], Array] | None = None) -> None:
        if not dt > 0.0:
            raise ParameterError(f"time step {dt} must be > 0")
        self.model, self.dt, self.fext = model, dt, fext
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

    def reset(self, q: Array, theta: Array | None = None, qd: Array | None = None,
              thetad: Array | None = None, t: float = 0.0) -> None:
        """Set the state (motors default to their links' positions, velocities to 0)."""
        m = self.model
        e = m.elastic_joints
        q = np.asarray(q, dtype=np.float64)
        qd = np.zeros(m.n) if qd is None else np.asarray(qd, dtype=np.float64)
        theta = q[e] if theta is None else np.asarray(theta, dtype=np.float64)
        thetad = qd[e] if thetad is None else np.asarray(thetad, dtype=np.float64)
        self.x = np.concatenate([q, theta, qd, thetad])
        self.t0, self.steps = t, 0

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
