"""A rigid-body simulator whose engine is not our code: Pinocchio's ABA (closed
loops: Pinocchio's constrained dynamics, :class:`LoopSimulator`).

Used by the simulator node (machines without Gazebo) and the closed-loop
tests, so that our controller is checked against an independent plant.
State ``(q, qd)`` in our model's joint order; the applied effort is
``tau - damping * qd`` with ``tau`` held over the step. Integrators:
``semi_implicit`` (symplectic Euler: ``qd += dt qdd; q += dt qd``) and
``rk4``. Optional joint damping and Coulomb friction (``sign(qd)``, no
stiction) act against the motion.

Mimic joints (URDF ``<mimic>``): the state is the model's independent
coordinates; the followers move with their leaders. Pinocchio's ABA refuses
mimic models (``pin.buildModelFromUrdf(path, mimic=True)``), so their
acceleration is ``M^-1 (tau - h)`` with Pinocchio's ``crba`` and
``nonLinearEffects`` on that model (still not our code).
:meth:`Simulator.follower_state` gives the followers' positions and
velocities, as a driver would publish them.

Hard stops: like a real arm (and Gazebo), a joint cannot leave its URDF
position limits -- a position beyond one is put back on it and the velocity
into the stop is zeroed (an inelastic stop, counted in ``stops``). Without
them an unpowered arm swings freely, and a 1 kHz integrator of a light
distal link can diverge. A step whose result is not finite (a diverged
integration) is not taken: the state stays, at rest (counted in
``diverged``), so no non-finite state is ever published.

Moving base (``base=``, a :class:`RockingBase`: roll and pitch sinusoids about
the base origin, heave along the world's vertical, static tilts): the base
follows the prescribed motion whatever the arm does (a ship, a platform), and
the joints obey ``M(q) qdd = tau - h(q, qd, base_motion(t))`` with our
``mass_matrix`` and ``nonlinear_effects(..., base_motion=)`` (Khalil 2010 §7.1;
Pinocchio's ABA has no prescribed-root form; a test checks the step's
accelerations against Pinocchio's free-flyer rows of M and h). :class:`ImuSensor`
gives what an IMU on any link reads there -- from Pinocchio's free-flyer
kinematics, not our code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_kinematics import loop_residual
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.kinematics import potential_energy
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import nonlinear_effects
from rnea_ros.core.elastic.fd import dynamics, forward_dynamics
from rnea_ros.core.elastic.hybrid import check_recursive, forward_dynamics_recursive
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import ModelError, ParameterError, StateError
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import PinocchioOracle

Array = NDArray[np.float64]
INTEGRATORS = ("semi_implicit", "rk4")


def _rx(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _ry(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@dataclass(frozen=True)
class RockingBase:
    """A prescribed base motion: a rocking, heaving platform.

    ``roll(t) = roll_offset + roll_amplitude sin(2 pi roll_frequency t)`` [rad]
    about the base's x axis, ``pitch(t)`` likewise about y, ``R_wb = Ry(pitch)
    Rx(roll)`` (URDF/ROS roll-pitch-yaw, zero yaw); the base origin at
    ``(0, 0, heave_amplitude sin(2 pi heave_frequency t))`` [m] in the world.
    Starting with sines, the angular and linear accelerations are zero at t = 0.
    """

    roll_amplitude: float = 0.0
    roll_frequency: float = 0.0
    pitch_amplitude: float = 0.0
    pitch_frequency: float = 0.0
    heave_amplitude: float = 0.0
    heave_frequency: float = 0.0
    roll_offset: float = 0.0
    pitch_offset: float = 0.0
    _cache: list[Any] = field(default_factory=lambda: [None, None], init=False, repr=False,
                              compare=False)  # [t, motion(t)]

    def __post_init__(self) -> None:
        for name, value in ((f.name, getattr(self, f.name)) for f in fields(self) if f.init):
            if not math.isfinite(value):
                raise ParameterError(f"base motion: '{name}' must be finite, got {value}")
            if name.endswith("frequency") and value < 0.0:
                raise ParameterError(f"base motion: '{name}' must be >= 0 Hz, got {value}")

    @property
    def moving(self) -> bool:
        """Whether the base ever leaves the fixed, level pose."""
        return any((self.roll_amplitude, self.pitch_amplitude, self.heave_amplitude,
                    self.roll_offset, self.pitch_offset))

    @staticmethod
    def _sine(offset: float, amplitude: float, frequency: float, t: float
              ) -> tuple[float, float, float]:
        w = 2.0 * math.pi * frequency
        s, c = math.sin(w * t), math.cos(w * t)
        return offset + amplitude * s, amplitude * w * c, -amplitude * w * w * s

    def pose(self, t: float) -> tuple[Array, Array]:
        """``(R_wb (3, 3), p_w (3,))`` at time ``t`` [s]."""
        roll = self._sine(self.roll_offset, self.roll_amplitude, self.roll_frequency, t)[0]
        pitch = self._sine(self.pitch_offset, self.pitch_amplitude, self.pitch_frequency, t)[0]
        z = self._sine(0.0, self.heave_amplitude, self.heave_frequency, t)[0]
        return _ry(pitch) @ _rx(roll), np.array([0.0, 0.0, z])

    def motion(self, t: float) -> BaseMotion:
        """The :class:`BaseMotion` at ``t`` (base frame, classical linear acceleration);
        the last one is cached (a step and the IMU after it ask for the same ``t``)."""
        cache = self._cache
        if cache[0] != t:
            cache[:] = [t, self._motion(t)]
        motion: BaseMotion = cache[1]
        return motion

    def _motion(self, t: float) -> BaseMotion:
        phi, dphi, ddphi = self._sine(self.roll_offset, self.roll_amplitude,
                                      self.roll_frequency, t)
        th, dth, ddth = self._sine(self.pitch_offset, self.pitch_amplitude,
                                   self.pitch_frequency, t)
        _, dz, ddz = self._sine(0.0, self.heave_amplitude, self.heave_frequency, t)
        R = _ry(th) @ _rx(phi)
        # w_b = R^T (dth e_y + Ry dphi e_x) = dphi e_x + dth Rx^T e_y
        ey_b = np.array([0.0, math.cos(phi), -math.sin(phi)])
        w = np.array([dphi, 0.0, 0.0]) + dth * ey_b
        dw = np.array([ddphi, 0.0, 0.0]) + ddth * ey_b + \
            dth * dphi * np.array([0.0, -math.sin(phi), -math.cos(phi)])
        return BaseMotion(orientation=R, angular_velocity=w, angular_acceleration=dw,
                          linear_velocity=R.T @ np.array([0.0, 0.0, dz]),
                          linear_acceleration=R.T @ np.array([0.0, 0.0, ddz]))


class Simulator:
    """Integrates ``qdd = ABA_pinocchio(q, qd, tau - damping qd)``."""

    def __init__(self, urdf: str | Path, model: RobotModel, *, dt: float = 1e-3,
                 integrator: str = "semi_implicit", damping: Array | None = None,
                 friction: Array | None = None, payload: Payload | None = None,
                 hard_stops: bool = True, base: RockingBase | None = None) -> None:
        if integrator not in INTEGRATORS:
            raise ParameterError(f"integrator '{integrator}' is not one of {INTEGRATORS}")
        if not dt > 0.0:
            raise ParameterError(f"time step {dt} must be > 0")
        self.model = model
        self.engine = PinocchioOracle(urdf, model)
        self.mimic = bool(model.mimic_joints)
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
        # A moving base: our moving-base dynamics (with the payload, without friction).
        self.base = base if base is not None and base.moving else None
        rigid = model if payload is None else with_payload(model, payload)
        self.rigid = rigid.without_friction()
        self.qdd = np.zeros(model.nv)  # the last step's acceleration
        self._time = 0.0  # the time the next acceleration() is evaluated at
        if self.base is not None:  # load the compiled kernels now, not in the first step
            self.acceleration(np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv))

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
        """``qdd`` from Pinocchio's ABA with joint damping and Coulomb friction (mimic
        models: ``M^-1 (tau - h)``, Pinocchio's M and h); on a moving base,
        ``M^-1 (tau - h(q, qd, base_motion(t)))`` with ours."""
        applied = tau - self.damping * qd - self.friction * np.sign(qd)
        if self.base is not None:
            motion = self.base.motion(self._time)
            h = nonlinear_effects(self.rigid, q, qd, base_motion=motion)
            out = np.linalg.solve(mass_matrix(self.rigid, q), applied - h)
            return np.asarray(out, dtype=np.float64)
        if self.mimic:
            M = self.engine.mass_matrix(q)
            qdd = np.linalg.solve(M, applied - self.engine.nonlinear_effects(q, qd))
            return np.asarray(qdd, dtype=np.float64)
        return self.engine.aba(q, qd, applied)

    def follower_state(self) -> tuple[list[str], Array, Array]:
        """Names, positions (``multiplier q_leader + offset``) and velocities of the
        mimic followers at the current state (empty without mimic joints)."""
        m = self.model
        names = list(m.mimic_joints)
        lead = [m.joint_index(f.leader) for f in m.mimic_joints.values()]
        mult = np.array([f.multiplier for f in m.mimic_joints.values()])
        off = np.array([f.offset for f in m.mimic_joints.values()])
        return names, mult * self.q[lead] + off, mult * self.qd[lead]

    def step(self, tau: Array) -> None:
        """Advance by ``dt`` with the effort ``tau`` (model order) held."""
        tau = np.asarray(tau, dtype=np.float64)
        if tau.shape != (self.model.nv,) or not np.all(np.isfinite(tau)):
            raise StateError(f"effort must be {self.model.nv} finite values, got {tau!r}")
        dt, q, qd, t = self.dt, self.q, self.qd, self.t
        self._time = t
        if self.integrator == "semi_implicit":
            qdd = self.acceleration(q, qd, tau)
            qd = qd + dt * qdd
            q = q + dt * qd
        else:
            k1q, k1v = qd, self.acceleration(q, qd, tau)
            qdd = k1v
            self._time = t + 0.5 * dt
            k2q, k2v = qd + 0.5 * dt * k1v, self.acceleration(q + 0.5 * dt * k1q,
                                                                qd + 0.5 * dt * k1v, tau)
            k3q, k3v = qd + 0.5 * dt * k2v, self.acceleration(q + 0.5 * dt * k2q,
                                                                qd + 0.5 * dt * k2v, tau)
            self._time = t + dt
            k4q, k4v = qd + dt * k3v, self.acceleration(q + dt * k3q, qd + dt * k3v, tau)
            q = q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
            qd = qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        if np.all(np.isfinite(q)) and np.all(np.isfinite(qd)):
            self.q, self.qd = self.stop_at_limits(q, qd) if self.hard_stops else (q, qd)
            self.qdd = np.asarray(qdd, dtype=np.float64)
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


class ImuSensor:
    """What an ideal IMU whose frame is link ``link`` reads, the robot at ``q, qd, qdd``
    on a base moving as ``motion`` at ``pose``: REP-145 fields in the sensor frame,
    ``(orientation [x, y, z, w] world <- sensor, angular velocity [rad/s], specific
    force [m/s^2] = R_ws^T (a_s - g))``. Pinocchio's free-flyer kinematics
    (``getFrameClassicalAcceleration``), independent of our code; ``gravity`` (3,)
    in the world frame."""

    def __init__(self, oracle: PinocchioOracle, link: str, gravity: Array) -> None:
        pin = oracle.pin
        self.oracle, self.pin = oracle, pin
        self.pm, self.pd, _, _, _ = oracle.free_flyer()
        if not self.pm.existFrame(link, pin.BODY):
            raise ParameterError(f"IMU link '{link}' is not a link of the URDF")
        self.frame = self.pm.getFrameId(link, pin.BODY)
        self.gravity = np.asarray(gravity, dtype=np.float64)

    def read(self, q: Array, qd: Array, qdd: Array, motion: BaseMotion, position: Array
             ) -> tuple[Array, Array, Array]:
        pin = self.pin
        qf, vf, af = self.oracle.moving_base_state(motion, q, qd, qdd)
        qf[:3] = position
        pin.forwardKinematics(self.pm, self.pd, qf, vf, af)
        pin.updateFramePlacement(self.pm, self.pd, self.frame)
        R_ws = self.pd.oMf[self.frame].rotation
        w = pin.getFrameVelocity(self.pm, self.pd, self.frame, pin.LOCAL).angular
        a = pin.getFrameClassicalAcceleration(self.pm, self.pd, self.frame, pin.LOCAL).linear
        quat = pin.Quaternion(R_ws).coeffs()
        return np.array(quat), np.array(w), np.array(a) - R_ws.T @ self.gravity


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
