"""A base that moves, measured by an IMU: ``sensor_msgs/Imu`` samples turned into
the :class:`~rnea_ros.core.dynamics.moving_base.BaseMotion` of the robot's base
(Khalil 2010 §7.1), free of ROS. Settings: :mod:`rnea_ros.control.imu_config`; the
frame kinematics (sensor readings moved to the base frame, the formulas):
:mod:`rnea_ros.core.dynamics.imu_kinematics`; why the choices below were made, with
the measurements: ``docs/imu_notes.md``.

The IMU's frame is the URDF link ``imu.link`` (any link, merged fixed links too); its
fields (REP-145) are used unless element 0 of their covariance is -1 ("not provided").
Each accepted sample gives, through the model's kinematics at the latest joint state:

* the base's orientation ``R_wb`` and angular velocity ``w_b``, exact on any link;
* its angular acceleration ``dw_b``: the slope at the newest sample of a least-squares
  cubic through the ``w_b`` of the last ``imu.angular_acceleration_window`` seconds
  (:func:`derivative_at_newest`, a one-sided Savitzky-Golay differentiator: no lag;
  restarted after a gap longer than ``imu.timeout``);
* the specific force at the base origin ``f_b`` (``imu.linear_acceleration``):
  ``measured`` (the default on the base or a link welded to it) makes RNEA's
  ``a0 = f_b``, gravity counted once, as measured; ``ignore`` (``auto`` on a moving
  link, where the accelerometer also measures the arm's own ``J(q) qdd`` and feeding it
  back diverges; ``measured`` is refused there) uses the orientation and the model's
  gravity, no heave. Optionally low-passed (``imu.linear_acceleration_cutoff``).

**Pairing with the joint states.** A sample serves the joint states stamped within
``imu.timeout`` of it, propagated to the state's stamp (``dt = t - t_imu``):
``R_wb exp([w_b + dw_b dt / 2] dt)``, ``w_b + dw_b dt``, ``f_b`` rotated likewise.
Older (or further ahead: clocks that disagree) it is **stale** and the fallback applies:
``fixed_gravity`` (the model's gravity on a fixed base, WARN) or ``hold`` (the
watchdog's stale command, ERROR) until a good sample arrives.

**Rejected samples** (counted by reason, never used): ``wrong_frame``
(``header.frame_id`` differs from ``imu.frame_id``, when that is set),
``non_finite``, ``no_data`` (neither orientation nor accelerometer; or
``ignore`` without orientation), ``bad_quaternion`` (norm off 1 by more than
``QUATERNION_TOLERANCE``: never silently normalised), ``out_of_range`` (a
component of ``w`` above ``MAX_ANGULAR_VELOCITY``, of ``f`` above
``MAX_SPECIFIC_FORCE``), ``time_backwards`` (older than the last accepted sample; the
same stamp again replaces it), ``time_future``, ``stale`` (older than the newest joint
state by more than ``imu.timeout``). Clock resets are handled as for the joint states
(``clock_reset.count`` agreeing out-of-order stamps re-synchronise).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.imu_config import IMU_FALLBACKS, ImuConfig, imu_config
from rnea_ros.control.joint_state import ClockWatch
from rnea_ros.core.dynamics.imu_kinematics import (
    FrameMotion,
    base_angular_velocity,
    base_orientation,
    base_specific_force,
    frame_motion,
    rotation_exp,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.model.configuration import quaternion_matrix as _quaternion_matrix
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]

MAX_ANGULAR_VELOCITY = 100.0  # rad/s (gyroscopes saturate at ~35 rad/s)
MAX_SPECIFIC_FORCE = 1000.0  # m/s^2 (~100 g)
QUATERNION_TOLERANCE = 1e-3  # | |q| - 1 | accepted (float32 drivers)
HOLD = "hold"  # ImuEstimator.motion: the fallback asks for the watchdog's stale command

MAX_WINDOW_SAMPLES = 256  # the differentiator's window, at most
SG_DEGREE = 3  # of the differentiator's polynomial (fewer samples: n - 1)
# Largest condition number of the fit's design matrix (evenly spaced samples: 4 for a
# line, 23 for a parabola, 125 for a cubic): beyond it the samples' times do not
# determine that degree, which is lowered.
MAX_CONDITION = 1e3


def derivative_at_newest(history: deque[tuple[float, Array]], window: float) -> Array:
    """Slope at the newest sample of the least-squares cubic (degree n - 1 for n < 4
    samples) through the ``(t, x)`` of ``history`` within ``window`` [s] of it:
    a one-sided Savitzky-Golay differentiator on the samples' own times. Drops
    the samples older than the window from ``history``; zeros for one sample.

    The degree is lowered (down to a line, always determined by two distinct times)
    while the design matrix's condition number exceeds :data:`MAX_CONDITION`: samples
    that come in bursts (a sender descheduled and catching up, a driver stamping on
    receipt) can sit at two or three distinct times, which do not determine a cubic;
    its normal equations were then singular, and the IMU callback raised."""
    t_new = history[-1][0]
    while t_new - history[0][0] > window * (1.0 + 1e-9):
        history.popleft()
    n = len(history)
    span = t_new - history[0][0]
    if n < 2 or not span > 0.0:  # (stamps increase: a repeated one replaces the sample)
        return np.zeros(3)
    tau = np.array([t - t_new for t, _ in history]) / span  # in [-1, 0], conditioned
    X = np.array([x for _, x in history])
    A = np.vander(tau, min(n, SG_DEGREE + 1), increasing=True)
    G, B = A.T @ A, A.T @ X  # a lower degree's normal equations are their leading block
    m = A.shape[1]  # coefficients: degree m - 1
    while m > 2:  # cond(A)^2 = cond(G), from G's eigenvalues (ascending)
        eig = np.linalg.eigvalsh(G[:m, :m])
        if eig[0] * MAX_CONDITION**2 >= eig[-1]:
            break
        m -= 1
    out: Array = np.linalg.solve(G[:m, :m], B[:m])[1] / span
    return out


def quaternion_matrix(x: float, y: float, z: float, w: float) -> Array:
    """Rotation (3, 3) of the unit quaternion ``[x, y, z, w]`` given as four numbers
    (:func:`rnea_ros.core.model.configuration.quaternion_matrix` takes the array)."""
    return _quaternion_matrix(np.array([x, y, z, w], dtype=np.float64))


# --------------------------------------------------------------------- samples
@dataclass(frozen=True)
class ImuSample:
    """One ``sensor_msgs/Imu``: stamp [s], frame id, and each field or None when its
    covariance's element 0 is -1 (REP-145): ``orientation`` (4,) ``[x, y, z, w]``
    world <- sensor, ``angular_velocity`` (3,) [rad/s], ``linear_acceleration``
    (3,) [m/s^2] specific force, sensor frame."""

    stamp: float
    frame_id: str = ""
    orientation: Array | None = None
    angular_velocity: Array | None = None
    linear_acceleration: Array | None = None


def provided(covariance: Any) -> bool:
    """REP-145: a field is provided unless element 0 of its covariance is -1."""
    return len(covariance) == 0 or float(covariance[0]) != -1.0


@dataclass
class ImuResult:
    """Outcome of one sample: ``reason`` is None when accepted (or ignored, with
    ``message`` saying why), else the rejection's key."""

    reason: str | None = None
    message: str = ""
    event: str = ""  # a clock reset


@dataclass(frozen=True)
class _Estimate:
    """The base's state at ``stamp`` from one accepted sample (base frame)."""

    stamp: float
    R_wb: Array | None
    w: Array
    dw: Array
    f: Array | None  # specific force at the base origin


class ImuEstimator:
    """Validates IMU samples and gives the base's motion at a joint state's stamp
    (see the module docstring)."""

    def __init__(self, model: RobotModel, config: ImuConfig) -> None:
        self.model = model
        self.frame = model.link_frame(config.link)
        self.moving = self.frame.body >= 0
        fixed = None if self.moving else frame_motion(model, np.zeros(model.nv),
                                                      np.zeros(model.nv), self.frame)
        self._fixed = fixed
        self.clock = ClockWatch()
        self.rejected: Counter[str] = Counter()
        self.accepted = 0
        self.fresh_steps = 0  # joint states computed with the IMU
        self.fallback_steps = 0  # ... and with the fallback
        self.state = "waiting"  # 'waiting' (none yet), 'ok', 'stale'
        self.stale_events = 0
        self.last_age = math.nan  # joint-state stamp minus the sample's [s]
        self.estimate: _Estimate | None = None
        self._history: deque[tuple[float, Array]] = deque(maxlen=MAX_WINDOW_SAMPLES)
        self._dw = np.zeros(3)
        self._f_filtered: Array | None = None
        # A sample that came before the first complete joint state (sensor on a moving link).
        self._pending: tuple[float, Array | None, Array | None, Array | None] | None = None
        self.configure(config)

    def configure(self, config: ImuConfig) -> None:
        """Apply new runtime settings (timeout, fallback, filters...), keeping the state."""
        if config.link != getattr(getattr(self, "config", None), "link", config.link):
            raise ParameterError("parameter 'imu.link' is read-only")
        self.config = config

    # ---------------------------------------------------------------- samples
    def _reject(self, reason: str, message: str) -> ImuResult:
        self.rejected[reason] += 1
        return ImuResult(reason=reason, message=message)

    def update(self, sample: ImuSample, q: Array, qd: Array, state_stamp: float,
               known: bool, now: float) -> ImuResult:
        """Validate ``sample`` and, when good, estimate the base's state from it.

        ``q, qd`` (n,): the latest merged joint state (``known``: complete), used
        when the sensor sits on a moving link; ``state_stamp`` [s] the newest
        joint-state stamp (-inf: none yet); ``now`` [s] a steady clock.
        """
        c = self.config
        if c.frame_id and sample.frame_id != c.frame_id:
            return self._reject("wrong_frame", f"frame_id '{sample.frame_id}', expected "
                                               f"'{c.frame_id}' (parameter 'imu.frame_id')")
        fields = (sample.orientation, sample.angular_velocity, sample.linear_acceleration)
        if not math.isfinite(sample.stamp) or any(
                x is not None and not np.all(np.isfinite(x)) for x in fields):
            names = [n for n, x in zip(("orientation", "angular_velocity",
                                        "linear_acceleration"), fields, strict=True)
                     if x is not None and not np.all(np.isfinite(x))]
            return self._reject("non_finite", f"non-finite {', '.join(names) or 'stamp'}")
        orientation, w_s, f_s = fields
        if c.linear_acceleration == "ignore":
            f_s = None
        if orientation is None and f_s is None:
            return self._reject("no_data", "neither orientation nor linear acceleration "
                                "(covariance element 0 at -1)" +
                                (" with imu.linear_acceleration 'ignore'"
                                 if c.linear_acceleration == "ignore" else ""))
        if orientation is not None:
            norm = float(np.linalg.norm(orientation))
            if abs(norm - 1.0) > QUATERNION_TOLERANCE:
                return self._reject("bad_quaternion", f"orientation quaternion norm "
                                    f"{norm:.6g}, not 1 (tolerance {QUATERNION_TOLERANCE:g})")
        for name, x, limit, unit in (("angular_velocity", w_s, MAX_ANGULAR_VELOCITY, "rad/s"),
                                     ("linear_acceleration", f_s, MAX_SPECIFIC_FORCE, "m/s^2")):
            if x is not None and float(np.abs(x).max()) > limit:
                return self._reject("out_of_range", f"{name} component "
                                    f"{float(np.abs(x).max()):.4g} {unit} above {limit:g}")
        event = ""
        stamp, clock = sample.stamp, self.clock
        last = self.estimate.stamp if self.estimate is not None else -math.inf
        future = clock.future(stamp, now, c.clock_reset.threshold)
        if stamp < last or future:
            if not clock.confirm(stamp, c.clock_reset.threshold, c.clock_reset.count):
                if future:
                    return self._reject("time_future", f"stamp {stamp:.6f} s is "
                                        f"{stamp - clock.newest:.3f} s after the last one")
                return self._reject("time_backwards", f"stamp {stamp:.6f} s is not after the "
                                    f"last one ({last:.6f} s)")
            jump = clock.resync(stamp)
            self._restart()
            event = f"IMU clock reset: stamps jumped by {jump:+.6f} s; re-synchronised"
        else:
            clock.streak = 0
        if math.isfinite(state_stamp) and stamp < state_stamp - c.timeout:
            return self._reject("stale", f"stamp {stamp:.6f} s is {state_stamp - stamp:.3f} s "
                                f"older than the joint states (imu.timeout {c.timeout:g} s)")
        clock.accept(stamp, now)
        self.accepted += 1
        if self.moving and not known:  # the link's pose is unknown: at the first state
            self._pending = (stamp, orientation, w_s, f_s)
            return ImuResult(message="kept for the first complete joint state (the IMU's "
                             "link pose depends on it)", event=event)
        self._pending = None
        self._estimate(stamp, orientation, w_s, f_s, q, qd)
        return ImuResult(event=event)

    def _restart(self) -> None:
        self._history.clear()
        self._dw, self._f_filtered, self.estimate, self._pending = np.zeros(3), None, None, None

    def _estimate(self, stamp: float, orientation: Array | None, w_s: Array | None,
                  f_s: Array | None, q: Array, qd: Array) -> None:
        c = self.config
        rel = self._fixed if self._fixed is not None else \
            frame_motion(self.model, q, qd, self.frame)
        R_wb = base_orientation(rel, orientation) if orientation is not None else None
        w = base_angular_velocity(rel, w_s) if w_s is not None else np.zeros(3)
        previous = self.estimate
        dt = stamp - previous.stamp if previous is not None else math.inf
        if dt == 0.0:  # the same stamp again (a sender repeating itself): dw stays
            pass
        elif not 0.0 < dt <= c.timeout or w_s is None or \
                c.angular_acceleration_window == 0.0:  # first sample, a gap, or no gyro
            self._history.clear()
            self._dw = np.zeros(3)
        if dt != 0.0 and w_s is not None and c.angular_acceleration_window > 0.0:
            self._history.append((stamp, w))
            self._dw = derivative_at_newest(self._history, c.angular_acceleration_window)
        f = None
        if f_s is not None:
            f = base_specific_force(rel, f_s, w, self._dw)
            if c.linear_acceleration_cutoff > 0.0:
                if self._f_filtered is not None and 0.0 < dt <= c.timeout:
                    alpha = 1.0 - math.exp(-2.0 * math.pi * c.linear_acceleration_cutoff * dt)
                    f = self._f_filtered + alpha * (f - self._f_filtered)
                self._f_filtered = f
        self.estimate = _Estimate(stamp, R_wb, w, self._dw.copy(), f)

    # ----------------------------------------------------------------- motion
    def motion(self, t: float, gravity: Array, q: Array, qd: Array
               ) -> BaseMotion | str | None:
        """The base's motion at joint-state stamp ``t`` [s] under the controller's
        ``gravity`` (3,) [m/s^2, world frame] (``q, qd``: the joint state, for a sample
        that came before the first one); when no sample is fresh, the fallback: None
        (``fixed_gravity``: a fixed base) or :data:`HOLD`."""
        if self._pending is not None:
            self._estimate(*self._pending, q, qd)
            self._pending = None
        e = self.estimate
        timeout = self.config.timeout
        dt = t - e.stamp if e is not None else math.nan
        self.last_age = dt
        if e is None or not abs(dt) <= timeout:
            if self.state == "ok":
                self.stale_events += 1
            self.state = "waiting" if e is None and self.state == "waiting" else "stale"
            self.fallback_steps += 1
            return HOLD if self.config.fallback == "hold" else None
        self.state = "ok"
        self.fresh_steps += 1
        step = rotation_exp((e.w + 0.5 * e.dw * dt) * dt)  # w varies linearly over dt
        R = np.eye(3) if e.R_wb is None else e.R_wb @ step
        if e.f is not None:  # a0 = f_b (propagated): the model's gravity cancels
            linear = step.T @ e.f + R.T @ gravity
        else:  # tilt from the orientation, the model's gravity, no linear acceleration
            linear = np.zeros(3)
        return BaseMotion(orientation=R, angular_velocity=e.w + e.dw * dt,
                          angular_acceleration=e.dw, linear_acceleration=linear)

    def status(self, recent_rejections: int | None = None) -> tuple[str, str]:
        """('ok' | 'warn' | 'error', message) for diagnostics; ``recent_rejections``: the
        samples rejected lately (a sliding window: the warning clears), default all."""
        c = self.config
        rejected = sum(self.rejected.values()) if recent_rejections is None \
            else recent_rejections
        if self.state == "ok":
            return ("warn", "rejecting some IMU samples") if rejected else ("ok", "fresh")
        what = "no IMU sample yet" if self.state == "waiting" else \
            f"IMU stale (older than {c.timeout:g} s)"
        if c.fallback == "hold":
            return "error", f"{what}: holding (watchdog's stale command)"
        return "warn", f"{what}: model gravity on a fixed base"

    def values(self) -> dict[str, str]:
        """Diagnostic key/values."""
        e = self.estimate
        out = {"imu link": self.config.link, "imu state": self.state,
               "imu fallback": self.config.fallback,
               "imu accepted": str(self.accepted),
               "imu rejected": str(sum(self.rejected.values())),
               "imu steps with IMU": str(self.fresh_steps),
               "imu steps on fallback": str(self.fallback_steps),
               "imu stale events": str(self.stale_events),
               "imu age [s]": f"{self.last_age:.4f}"}
        if e is not None:
            if e.R_wb is not None:
                R = e.R_wb
                roll = math.degrees(math.atan2(R[2, 1], R[2, 2]))
                pitch = math.degrees(math.asin(max(-1.0, min(1.0, -R[2, 0]))))
                out["base roll [deg]"], out["base pitch [deg]"] = f"{roll:+.3f}", f"{pitch:+.3f}"
            out["base |w| [rad/s]"] = f"{float(np.linalg.norm(e.w)):.4f}"
            out["base |dw| [rad/s^2]"] = f"{float(np.linalg.norm(e.dw)):.4f}"
            if e.f is not None:
                out["base |f| [m/s^2]"] = f"{float(np.linalg.norm(e.f)):.4f}"
        out.update({f"imu rejected: {k}": str(v) for k, v in sorted(self.rejected.items())})
        return out


# FrameMotion, frame_motion, rotation_exp (core), IMU_FALLBACKS, ImuConfig, imu_config
# (imu_config) re-exported: the estimator's callers and tests find them here too.
__all__ = ["HOLD", "IMU_FALLBACKS", "FrameMotion", "ImuConfig", "ImuEstimator", "ImuResult",
           "ImuSample", "derivative_at_newest", "frame_motion", "imu_config", "provided",
           "quaternion_matrix", "rotation_exp"]
