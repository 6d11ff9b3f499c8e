"""Torque-rate limiting: a final slew limiter and predictive time scaling.

:class:`SlewLimiter` bounds the published command, ``|tau_k - tau_{k-1}| <=
tau_dot_max * dt`` with ``dt`` from the state stamps, but never more than the
time between the two inputs' receipts on the receiver's clock when that is
given (the limit protects the hardware in the hardware's time: a sender's
stamps dated ahead, or running faster than real time as in a bag replayed at
``--rate 10``, must not loosen it); a zero, negative or non-finite ``dt`` keeps
the previous command (no time has passed) and is counted.

:class:`TimeScaling` replays a reference ``q_d(s)`` along a time scale
``s(t)``, ``0 < s_dot <= 1``, so that the *predicted* torque and torque rate
of the scaled reference stay within ``|tau| <= tau_max`` and
``|tau_dot| <= tau_dot_max`` (the online scaling idea of Dahl & Nielsen 1990
and Gerelli & Guarino Lo Bianco 2008, cited by Guarino Lo Bianco & Fantini
2009). The path is kept; only time stretches, and ``s_dot`` returns to 1 when
the limits allow. With ``q' = dq_d/ds`` (and ``q'', q'''``) at a path point,
RNEA without gravity is homogeneous in the path speed, so at constant
``s_dot``::

    tau(s_dot)     = A s_dot^2 + Fv q' s_dot + g(q) + Fs sign(q')
    tau_dot(s_dot) = A_dot s_dot^3 + Fv q'' s_dot^2 + (dg/dq q') s_dot

with ``(A, A_dot) = GFD(q, q', q'', q'''; g = 0)`` (our recursive
derivatives, :mod:`rnea_ros.core.dynamics.gfd`). Every ``update_period`` the largest
``s_dot`` of a grid that keeps both inside ``margin`` times the limits over a
look-ahead ``horizon`` of the path becomes the target speed.

The speed follows the target as a triple integrator driven by ``s_dddot``,
with ``|s_ddot|`` bounded. At the current point the torque rate is affine in
``s_dddot`` (the jerk of the scaled reference is
``q3 s_dot^3 + 3 q2 s_dot s_ddot + q1 s_dddot`` with ``q1..q3`` the path
derivatives)::

    tau_dot = GFD(q, q1 s_dot, q2 s_dot^2 + q1 s_ddot, q3 s_dot^3 + 3 q2 s_dot s_ddot)
              + M(q) q1 s_dddot

so each step ``s_dddot`` is clipped to the interval that keeps every
``|tau_dot|`` within its limit: the look-ahead anticipates, this bound is
exact (up to the time step) for the reference's own torque rate.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control._rate_limit_jit import (
    B_ROWS,
    D_Q,
    D_Q1,
    D_Q2,
    D_Q3,
    NONE_BINDING,
    NOT_FINITE,
    W_ROWS,
    bounded_dt,
    feasible_speed_kernel,
    scaling_step,
    slew_step,
)
from rnea_ros.control.trajectory import JointTrajectory
from rnea_ros.core.errors import ModelError, StateError
from rnea_ros.core.inputs import raise_non_finite
from rnea_ros.core.kernels import FastCall
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


_slew_fast = FastCall(slew_step)
_feasible_fast = FastCall(feasible_speed_kernel)
_step_fast = FastCall(scaling_step)


def positive_limits(values: Array, name: str) -> Array:
    """``values`` if all are finite and > 0, else :class:`ParameterError` naming ``name``."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0.0):
        raise ParameterError(f"parameter '{name}' must be finite and > 0, got {values.tolist()}")
    return values


class SlewLimiter:
    """``|tau_k - tau_{k-1}| <= rate * dt`` per joint."""

    def __init__(self, rate: Array, name: str = "effort_rate_limits") -> None:
        self.rate = np.ascontiguousarray(positive_limits(rate, name), dtype=np.float64)
        self.previous: Array | None = None
        self.last_time = -math.inf
        self.last_received = math.nan  # receipt time of the previous command
        self.limited = 0
        self.bad_dt = 0

    def reset(self) -> None:
        """Forget the previous command (the next one passes unchanged)."""
        self.previous = None

    def __call__(self, tau: Array, t: float, received: float | None = None) -> Array:
        """The limited command at time ``t`` [s] (e.g. the input's stamp), received at
        ``received`` [s] on the receiver's clock (None: no such bound). The time step
        is ``t`` minus the previous command's, bounded by ``received`` minus its (NaN,
        e.g. no receipt time before: held); a held command keeps the previous times."""
        if self.previous is None:
            self.previous, self.last_time = tau.copy(), t
            self.last_received = math.nan if received is None else received
            return tau
        dt = t - self.last_time
        if received is not None:
            dt = bounded_dt(dt, received - self.last_received)
        if not (math.isfinite(dt) and dt > 0.0):
            self.bad_dt += 1
            held: Array = self.previous.copy()
            return held
        out = np.empty_like(tau)
        self.limited += _slew_fast.call(np.ascontiguousarray(tau, dtype=np.float64),
                                        self.previous, self.rate, dt, out)
        self.previous, self.last_time = out, t
        self.last_received = math.nan if received is None else received
        return out


class TimeScaling:
    """Predictive time scaling of a reference trajectory (see the module docstring).

    The work is two compiled calls (:mod:`rnea_ros.control._rate_limit_jit`): the
    feasible-speed search every ``update_period``, and one step per joint state."""

    def __init__(self, model: RobotModel, tau_max: Array, tau_dot_max: Array, *,
                 min_speed: float = 0.05, max_acceleration: float = 5.0,
                 max_jerk: float = 100.0, horizon: float = 0.25, points: int = 16,
                 margin: float = 0.9, update_period: float = 0.005) -> None:
        try:
            model.require_one_dof("time scaling")
        except ModelError as exc:  # refused at configuration, not at the first trajectory
            raise ParameterError(f"parameter 'time_scaling.enable': {exc}") from None
        self.model = model
        self.rigid = model.without_friction()  # friction is added in closed form below
        self.tau_max = positive_limits(tau_max, "effort_limits")
        self.tau_dot_max = positive_limits(tau_dot_max, "effort_rate_limits")
        if not 0.0 < min_speed < 1.0:
            raise ParameterError(f"parameter 'time_scaling.min_speed' must be in (0, 1), "
                                 f"got {min_speed}")
        if not (max_acceleration > 0 and max_jerk > 0 and horizon > 0 and 0 < margin <= 1):
            raise ParameterError("time scaling needs max_acceleration, max_jerk, horizon > 0 "
                                 "and 0 < margin <= 1")
        self.min_speed, self.max_acceleration, self.max_jerk = min_speed, max_acceleration, \
            max_jerk
        self.offsets = np.linspace(0.0, horizon, points)
        self.margin, self.update_period = margin, update_period
        self.grid = np.linspace(1.0, min_speed, 60)
        self.s = 0.0
        self.speed, self.acceleration = 1.0, 0.0
        self.target = 1.0
        self.constraint = "none"
        self.t_prev: float | None = None
        self.last_update = -math.inf
        # The kernels' arrays (_rate_limit_jit's layouts), built once.
        n = model.nv
        S = self.grid[:, None, None]
        self._grid = np.ascontiguousarray(np.stack([S, S**2, S**3]).reshape(3, -1))
        self._limits = np.ascontiguousarray(np.stack(
            [model.coulomb, model.viscous, margin * self.tau_max, margin * self.tau_dot_max]),
            dtype=np.float64)
        self._gravity = np.ascontiguousarray([np.zeros(3), model.gravity], dtype=np.float64)
        self._rate_max = np.ascontiguousarray(self.tau_dot_max, dtype=np.float64)
        self._g = np.ascontiguousarray(model.gravity, dtype=np.float64)
        self._lookahead = np.empty((points, W_ROWS, n))
        self._buffer = np.empty((B_ROWS, n))
        self._offsets = np.ascontiguousarray(self.offsets)
        self._warm_up()

    def _warm_up(self) -> None:
        """Both kernels once on a still dummy path, state untouched: compiled (or loaded
        from numba's cache) when the controller is configured, not on the first
        trajectory."""
        n = self.model.nv
        still = JointTrajectory(np.array([0.0, 1.0]), np.zeros((2, n)))
        _feasible_fast.call(self.rigid.kernel_floats, self._gravity, self._limits, self._grid,
                            *still.kernel_arrays, 0.0, self._offsets, self._lookahead)
        _step_fast.call(self.model.kernel_floats, self._g, self._rate_max,
                        *still.kernel_arrays, 0.0, 1.0, 0.0, 1.0, 1e-3, 1.0, 1.0, 0.5,
                        self._buffer, np.empty((3, n)))

    def restart(self, s: float, t: float, trajectory: JointTrajectory) -> None:
        """A new trajectory: continue at path time ``s``, now ``t``. The speed is kept,
        unless the reference is at rest there: then it starts at the feasible speed
        at once (a speed change at rest moves nothing), e.g. before a start whose
        jerk alone would exceed the torque-rate limits."""
        self.s, self.t_prev = s, t
        self.target, self.constraint = self.feasible_speed(trajectory)
        self.last_update = t
        D = trajectory.derivatives(np.array([s]))[:, 0]
        if not (np.any(np.abs(D[1]) > 1e-9) or np.any(np.abs(D[2]) > 1e-9)):
            self.speed, self.acceleration = self.target, 0.0

    def feasible_speed(self, trajectory: JointTrajectory) -> tuple[float, str]:
        """Largest grid speed within the limits over the look-ahead, and what binds next."""
        first_ok, joint, rate = _feasible_fast.call(
            self.rigid.kernel_floats, self._gravity, self._limits, self._grid,
            *trajectory.kernel_arrays, float(self.s), self._offsets, self._lookahead)
        if first_ok == NOT_FINITE:
            W = self._lookahead
            raise_non_finite(self.rigid, q=W[:, D_Q], qd=W[:, D_Q1], qdd=W[:, D_Q2],
                             qddd=W[:, D_Q3])
            raise StateError("time scaling: a torque over the look-ahead is not finite")
        if first_ok == NONE_BINDING:
            return 1.0, "none"
        kind = "effort_rate" if rate else "effort"
        return float(self.grid[first_ok]), f"{kind} {self.model.joint_names[joint]}"

    def advance(self, t: float, trajectory: JointTrajectory) -> tuple[Array, Array, Array]:
        """Move along the path to time ``t``; the scaled ``(q, qd, qdd)``."""
        dt = 0.0 if self.t_prev is None else t - self.t_prev
        if math.isfinite(dt) and dt > 0.0:
            if t - self.last_update >= self.update_period:
                self.target, self.constraint = self.feasible_speed(trajectory)
                self.last_update = t
            if self.s >= trajectory.end_time:
                self.target = 1.0
            self.t_prev = t
        else:
            dt = 0.0
            if self.t_prev is None:
                self.t_prev = t
        out = np.empty((3, self.model.nv))
        self.s, self.speed, self.acceleration = _step_fast.call(
            self.model.kernel_floats, self._g, self._rate_max,
            *trajectory.kernel_arrays, float(self.s), float(self.speed),
            float(self.acceleration), float(self.target), float(dt), float(self.max_jerk),
            float(self.max_acceleration), float(self.min_speed), self._buffer, out)
        return out[0], out[1], out[2]
