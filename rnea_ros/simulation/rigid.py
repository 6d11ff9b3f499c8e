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

Moving base: see :mod:`rnea_ros.simulation.rocking_base`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_kinematics import loop_residual
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.rnea import nonlinear_effects
from rnea_ros.core.errors import StateError
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.simulation.plant import (
    Capabilities,
    Index,
    JointStateOut,
    Plant,
    rigid_joint_state,
)
from rnea_ros.simulation.rocking_base import RockingBase

Array = NDArray[np.float64]
INTEGRATORS = ("semi_implicit", "rk4")


def drive_coefficients(value: Array | None, name: str, n: int) -> Array:
    """A plant's per-joint ``damping`` or ``friction`` (n,): None is zeros, one value is
    broadcast; :class:`ParameterError` naming ``name`` for a wrong count, a non-finite or
    a negative value (a negative one would feed energy into the plant)."""
    out = np.zeros(n) if value is None else np.asarray(value, dtype=np.float64).ravel()
    if out.size == 1:
        out = np.full(n, out[0])
    if out.shape != (n,):
        raise ParameterError(f"'{name}' has {out.size} values; give 1 or {n} (one per joint)")
    if not np.all(np.isfinite(out)) or np.any(out < 0.0):
        raise ParameterError(f"'{name}' must be finite and >= 0, got {out.tolist()}")
    return out


class Simulator(Plant):
    """Integrates ``qdd = ABA_pinocchio(q, qd, tau - damping qd)``."""

    capabilities = Capabilities(imu=True)

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
        self.damping = drive_coefficients(damping, "damping", model.nv)
        self.friction = drive_coefficients(friction, "friction", model.nv)
        self.q = np.zeros(model.nv)
        self.qd = np.zeros(model.nv)
        self.t0, self.steps = 0.0, 0  # t = t0 + steps * dt, without accumulating rounding
        self.effort = np.zeros(model.nv)
        self.hard_stops = hard_stops
        self.stops = 0  # steps that met a joint's position limit
        self.stop_lower, self.stop_upper = model.lower_limit, model.upper_limit
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

    def joint_state(self, index: Index | None = None,
                    followers: bool = False) -> JointStateOut:
        """:meth:`Plant.joint_state`: coordinates ``index``, then the mimic followers."""
        return rigid_joint_state(list(self.model.joint_names), self.q, self.qd, self.effort,
                                 index, self.follower_state() if followers else None)

    def diagnostics(self) -> dict[str, str]:
        """Hard stops, diverged steps, and the moving base's pose (roll, pitch, heave)."""
        values = {"steps at a joint limit": str(self.stops),
                  "diverged steps (not taken)": str(self.diverged)}
        if self.base is not None:
            R, p = self.base.pose(self.t)
            roll, pitch = np.degrees([np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(R[2, 0])])
            values.update({"base roll [deg]": f"{roll:+.3f}", "base pitch [deg]": f"{pitch:+.3f}",
                           "base heave [m]": f"{p[2]:+.4f}"})
        return values

    def imu_state(self) -> tuple[Array, Array, Array]:
        return self.q, self.qd, self.qdd

    def imu_engine(self) -> PinocchioOracle:
        return self.engine

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
        """``(q, qd)`` with positions beyond the stops (:attr:`stop_lower`,
        :attr:`stop_upper`: the URDF limits) put back on them and the velocity into
        the stop zeroed (inelastic), counted in :attr:`stops`."""
        q, qd, hit = hard_stop(q, qd, self.stop_lower, self.stop_upper)
        self.stops += hit
        return q, qd


def hard_stop(q: Array, qd: Array, lower: Array, upper: Array) -> tuple[Array, Array, bool]:
    """An inelastic stop: ``(q clipped to [lower, upper], qd with the velocity into a
    stop zeroed, whether a stop was met)``; all (n,), ``-inf``/``inf`` for no stop."""
    below, above = q < lower, q > upper
    if not (below.any() or above.any()):
        return q, qd, False
    q = np.clip(q, lower, upper)
    qd = np.where((below & (qd < 0.0)) | (above & (qd > 0.0)), 0.0, qd)
    return q, qd, True


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
        # Hard stops on the active joints only (inelastic); Baumgarte restores the closure.
        active = np.zeros(model.n, dtype=bool)
        active[model.active_index] = True
        self.stop_lower = np.where(active, model.tree.lower_limit, -np.inf)
        self.stop_upper = np.where(active, model.tree.upper_limit, np.inf)

    def acceleration(self, q: Array, qd: Array, tau: Array) -> Array:
        """Tree ``qdd`` (n,) from Pinocchio's constrained dynamics, damping and friction."""
        e = self.engine
        applied = tau - self.damping * qd - self.friction * np.sign(qd)
        a = e.pin.constraintDynamics(e.pm, e.pd, e.config(q), e.tangent(qd), e.tangent(applied),
                                     self.constraints, self.datas, self.settings)
        return e.ours(a)

    capabilities = Capabilities()  # closed-loop robots run on a fixed base: no IMU

    def diagnostics(self) -> dict[str, str]:
        """:meth:`Simulator.diagnostics` and the loops' closure error."""
        values = super().diagnostics()
        values["loop closure error [m or rad]"] = f"{self.closure_error():.3e}"
        return values

    def closure_error(self) -> float:
        """Largest constraint error of eq. 3 at the current state [m or rad]."""
        return float(np.abs(loop_residual(self.loops, self.q)).max())


PROXIMAL_MU = 1e-8  # Pinocchio's proximal regularisation of the constraint solve
