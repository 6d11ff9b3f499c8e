"""A base that moves, measured by an IMU: ``sensor_msgs/Imu`` samples turned into
the :class:`~rnea_ros.core.dynamics.moving_base.BaseMotion` of the robot's base
(Khalil 2010 §7.1), free of ROS.

What the IMU gives (REP-145), in the sensor frame ``s``, which is the frame of
the URDF link ``imu.link`` (any link of the model, merged fixed links too):

* ``orientation`` ``R_ws`` (world <- sensor), a unit quaternion ``[x, y, z, w]``;
* ``angular_velocity`` ``w_s`` [rad/s];
* ``linear_acceleration`` ``f_s`` [m/s^2], the **specific force**: the sensor's
  classical acceleration minus gravity, ``f_s = R_ws^T (a_s - g)`` -- an IMU at
  rest reads ``+9.81`` along the world's up direction;
* element 0 of a field's covariance at ``-1`` means "not provided" (REP-145):
  that field is not used. The other covariance entries are not used.

Transform to the base frame ``b`` through the model's kinematics at the latest
joint state ``q, qd`` (:func:`frame_motion`: the sensor's pose ``R_bs, r``, and
its angular velocity ``w_rel``, velocity ``v_rel`` and velocity-product
acceleration ``a_rel`` relative to the base, all in base coordinates)::

    R_wb = R_ws R_bs^T                                     orientation
    w_b  = R_bs w_s - w_rel                                angular velocity
    dw_b = d/dt w_b: slope at the newest sample of a least-squares cubic
           through the w_b of the last imu.angular_acceleration_window seconds
    f_b  = R_bs f_s - dw_b x r - w_b x (w_b x r) - 2 w_b x v_rel - a_rel

The differentiator is a one-sided Savitzky-Golay filter (Savitzky & Golay 1964;
on the samples' own stamps, so irregular sampling is fine): no lag for an
angular velocity that is cubic over the window. Gravity mode has no feedback,
so the held arm integrates any error of ``dw_b`` twice; measured on arm7 in
closed loop (base rolling 5 deg at 0.5 Hz, 3 s): a first-order low-pass of the
differences at 50 Hz lags 3 ms and the arm moves 7e-3 rad, the plain backward
difference (0.5 ms lag) 1.1e-3 rad, a quadratic over 20 ms 1.3e-3 rad and
growing (its bias is in phase with a drift), this cubic over 40 ms 1.4e-5 rad.
White gyroscope noise ``sigma`` comes out multiplied by about 125 / s (40 ms at
1 kHz; 330 / s over 20 ms), more in the first samples after the start or a gap
(samples more than ``imu.timeout`` apart restart it), when the fit has fewer
points: with sigma = 3e-3 rad/s at 1 kHz, that start gives a frictionless
held arm a kick it keeps (0.2 rad after 3 s, see the README). Waiting until the
samples span half the window (dw = 0 until then) halved that at 40 ms but,
without noise, left 4e-2 rad with a 100 ms window (the base's real dw is
missed meanwhile); starting with a line left 3e-3 rad without noise and 0.15
rad with it.

``f_b`` is the specific force at the base-frame origin (rigid-body acceleration
transfer, Featherstone 2008 §2.11), exact for a sensor on the base or on a link
welded to it (``w_rel = v_rel = a_rel = 0``, ``r`` constant). **On a moving
link** orientation and angular velocity are exact (the link's motion relative
to the base removed with the measured ``q, qd``), but the accelerometer is not
used: it also measures the link's acceleration due to the joint accelerations,
``J(q) qdd``, which the controller does not measure -- and which its own
commands cause, so feeding it back as a base acceleration closes a loop (on
arm7's flange it diverged within 10 ms). There the base's linear acceleration
(heave) is taken as zero and gravity comes from the model along the IMU's
orientation (``imu.linear_acceleration: ignore``, which ``auto`` selects;
``measured`` is refused).

**How gravity and the accelerometer combine.** RNEA on a moving base needs the
base's classical acceleration ``a_b`` and gravity only through their
difference: its forward recursion starts from ``a0 = a_b - R_wb^T g``
(:func:`~rnea_ros.core.dynamics.moving_base.base_state`, with the base velocity
set to zero: the torques do not depend on the base's linear velocity once
``a_b`` is classical). That difference *is* the specific force at the base
origin, ``f_b``. So (``imu.linear_acceleration: measured``, the default)
``BaseMotion.linear_acceleration = f_b + R_wb^T g`` with ``g`` the controller's
``gravity`` parameter (read as the world frame's gravity): the model's gravity
cancels and RNEA sees exactly ``a0 = f_b`` -- gravity is counted once, as the
accelerometer measured it (tilt, heave, surge and the local value of ``g``
included), and the orientation does not even matter (without one, identity is
used). ``imu.linear_acceleration: ignore`` uses the IMU's orientation and the
model's gravity with ``a_b = 0``: the tilt and the rotation are compensated, the
base's linear acceleration (heave) is not; for accelerometers too noisy or
vibrating to be used. It needs the orientation; without an accelerometer
(covariance ``-1``), ``measured`` falls back to it too. Without angular
velocity (covariance ``-1``), ``w_b = dw_b = 0``.

**Pairing with the joint states.** The sample is used for the joint states
stamped within ``imu.timeout`` of it, propagated to the state's stamp ``t``:
``R_wb exp([w_b + dw_b dt / 2] dt)``, ``w_b + dw_b dt``, ``f_b`` rotated likewise
(``dt = t - t_imu``, typically one sample period). Older than ``imu.timeout``
(or more than that ahead: clocks that disagree) it is **stale**, and the
fallback applies: ``fixed_gravity`` (the model's gravity on a fixed base, WARN)
or ``hold`` (the watchdog's stale command, ERROR) until a good sample arrives.

**Rejected samples** (counted by reason, never used): ``wrong_frame``
(``header.frame_id`` differs from ``imu.frame_id``, when that is set),
``non_finite``, ``no_data`` (neither orientation nor accelerometer; or
``ignore`` without orientation), ``bad_quaternion`` (norm off 1 by more than
``QUATERNION_TOLERANCE``: never silently normalised), ``out_of_range`` (a
component of ``w`` above ``MAX_ANGULAR_VELOCITY``, of ``f`` above
``MAX_SPECIFIC_FORCE``),
``time_backwards`` (older than the last accepted sample; the same stamp again
replaces it, as a repeating sender's joint states do), ``time_future``,
``stale`` (older than the newest joint state by more than ``imu.timeout``).
Clock resets are handled as for the joint states (``clock_reset.count``
agreeing out-of-order stamps re-synchronise).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.joint_state import ClockWatch
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.errors import JointNameError, ParameterError, options
from rnea_ros.core.kernels import joint_transform
from rnea_ros.core.model.configuration import quaternion_matrix as core_quaternion_matrix
from rnea_ros.core.model.robot_model import Frame, RobotModel

Array = NDArray[np.float64]

IMU_FALLBACKS = ("fixed_gravity", "hold")
LINEAR_ACCELERATION_MODES = ("auto", "measured", "ignore")
MAX_ANGULAR_VELOCITY = 100.0  # rad/s (gyroscopes saturate at ~35 rad/s)
MAX_SPECIFIC_FORCE = 1000.0  # m/s^2 (~100 g)
QUATERNION_TOLERANCE = 1e-3  # | |q| - 1 | accepted (float32 drivers)
HOLD = "hold"  # ImuEstimator.motion: the fallback asks for the watchdog's stale command

# The controller's parameters of the IMU (joined to control.config.CONTROLLER_PARAMETERS).
IMU_PARAMETERS: dict[str, tuple[Any, ...]] = {  # name: (default, description[, read-only])
    "imu.topic": ("", "sensor_msgs/Imu topic (relative name, e.g. 'imu') measuring the base's "
                  "motion; empty: no IMU, a fixed base", True),
    "imu.link": ("", "URDF link the IMU frame is (any link, merged fixed links too); "
                 "empty: the model's root link", True),
    "imu.frame_id": ("", "expected header.frame_id of the IMU messages (others are rejected); "
                     "empty: not checked"),
    "imu.timeout": (0.1, "an IMU sample older than the joint state by more than this is "
                    "stale: rejected on arrival, and the fallback applies when no newer "
                    "one came [s]"),
    "imu.fallback": ("fixed_gravity", "without a fresh IMU sample: 'fixed_gravity' (the "
                     "model's gravity on a fixed base, WARN) or 'hold' (the watchdog's stale "
                     "command, ERROR)"),
    "imu.linear_acceleration": (
        "auto", "'measured': RNEA's base acceleration minus gravity is the measured "
        "specific force (tilt, heave and g as measured; only for an IMU on the base or a "
        "link welded to it); 'ignore': tilt from the IMU's orientation with the model's "
        "gravity, no linear acceleration; 'auto': measured on the base, ignore on a moving "
        "link"),
    "imu.angular_acceleration_window": (
        0.04, "the base's angular acceleration is the slope of a least-squares cubic "
        "through its angular velocities of this long (one-sided Savitzky-Golay: no lag) "
        "[s]; 0: taken as zero"),
    "imu.linear_acceleration_cutoff": (
        0.0, "cutoff of a first-order low-pass filter on the specific force [Hz]; "
        "0: unfiltered"),
}


@dataclass(frozen=True)
class ImuConfig:
    """Validated IMU settings (see :data:`IMU_PARAMETERS`)."""

    topic: str
    link: str  # resolved: never empty
    frame_id: str
    timeout: float
    fallback: str
    linear_acceleration: str  # resolved: 'measured' or 'ignore'
    angular_acceleration_window: float
    linear_acceleration_cutoff: float
    clock_reset_threshold: float = 1.0
    clock_reset_count: int = 5


def imu_config(values: Mapping[str, Any], model: RobotModel) -> ImuConfig | None:
    """The IMU settings from parameter ``values`` (None when ``imu.topic`` is empty);
    raises :class:`ParameterError` naming the parameter (an unknown ``imu.link``
    lists the model's links)."""
    topic = str(values.get("imu.topic") or "")
    if not topic:
        return None
    link = str(values.get("imu.link") or "") or model.root_link
    try:
        moving = model.link_frame(link).body >= 0
    except JointNameError as exc:
        raise ParameterError(f"parameter 'imu.link': {exc}") from None
    timeout = float(values["imu.timeout"])
    if not (math.isfinite(timeout) and timeout > 0.0):
        raise ParameterError(f"parameter 'imu.timeout' must be > 0 s, got {timeout}")
    for key, allowed in (("imu.fallback", IMU_FALLBACKS),
                         ("imu.linear_acceleration", LINEAR_ACCELERATION_MODES)):
        if values[key] not in allowed:
            raise ParameterError(f"parameter '{key}' is '{values[key]}'; valid: "
                                 f"{options(allowed)}")
    linear = str(values["imu.linear_acceleration"])
    if linear == "auto":
        linear = "ignore" if moving else "measured"
    elif linear == "measured" and moving:
        raise ParameterError(
            f"parameter 'imu.linear_acceleration' is 'measured' but the IMU's link '{link}' "
            "moves with the joints: its accelerometer measures the arm's own acceleration "
            "J(q) qdd, which the commands change (a feedback loop that diverges on arm7's "
            "flange); use 'ignore' (tilt and rotation from the IMU, gravity from the model) "
            "or mount the IMU on the base")
    cutoffs = []
    for key in ("imu.angular_acceleration_window", "imu.linear_acceleration_cutoff"):
        value = float(values[key])
        if not (math.isfinite(value) and value >= 0.0):
            unit = "s" if key.endswith("window") else "Hz"
            raise ParameterError(f"parameter '{key}' must be >= 0 {unit} (0: off), got {value}")
        cutoffs.append(value)
    return ImuConfig(topic=topic, link=link, frame_id=str(values.get("imu.frame_id") or ""),
                     timeout=timeout, fallback=str(values["imu.fallback"]),
                     linear_acceleration=linear,
                     angular_acceleration_window=cutoffs[0],
                     linear_acceleration_cutoff=cutoffs[1],
                     clock_reset_threshold=float(values.get("clock_reset.threshold", 1.0)),
                     clock_reset_count=int(values.get("clock_reset.count", 5)))


# ------------------------------------------------------------------ kinematics
@dataclass(frozen=True)
class FrameMotion:
    """Pose and motion of a link frame relative to the base, in base coordinates:
    rotation ``R`` (3, 3) base <- frame, origin ``p`` (3,) [m], angular velocity
    ``w`` [rad/s], origin velocity ``v`` [m/s], angular acceleration ``dw`` and
    classical origin acceleration ``a`` (with the given ``qdd``; 0: the
    velocity-product terms only) [rad/s^2, m/s^2]."""

    R: Array
    p: Array
    w: Array
    v: Array
    dw: Array
    a: Array


def _chain(model: RobotModel, body: int) -> list[int]:
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    return chain[::-1]


def frame_motion(model: RobotModel, q: Array, qd: Array, frame: Frame | str,
                 qdd: Array | None = None) -> FrameMotion:
    """:class:`FrameMotion` of link ``frame`` (a name or ``model.link_frame(name)``)
    at ``q, qd`` (and ``qdd``, default zero), the base at rest. Recursion along the
    chain from the root (Featherstone 2008 §2.11: classical accelerations),
    numpy, about 10 us a body."""
    if isinstance(frame, str):
        frame = model.link_frame(frame)
    R, p = np.eye(3), np.zeros(3)
    w, v, dw, a = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
    fp = model.kernel_floats
    for i in _chain(model, frame.body):
        Rl, pl = joint_transform(fp, i, float(q[i]))
        d = R @ np.array(pl)  # parent origin -> body origin, base coordinates
        R_i = R @ np.array(Rl).reshape(3, 3)
        z = R_i @ model.axis[i]  # joint axis in base coordinates
        a = a + np.cross(dw, d) + np.cross(w, np.cross(w, d))
        v = v + np.cross(w, d)
        qddi = 0.0 if qdd is None else float(qdd[i])
        if model.joint_types[i] == "prismatic":
            a = a + 2.0 * np.cross(w, z * qd[i]) + z * qddi
            v = v + z * qd[i]
        else:
            dw = dw + np.cross(w, z * qd[i]) + z * qddi
            w = w + z * qd[i]
        R, p = R_i, p + d
    d = R @ frame.translation
    return FrameMotion(R @ frame.rotation, p + d, w, v + np.cross(w, d), dw,
                       a + np.cross(dw, d) + np.cross(w, np.cross(w, d)))


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


def skew(x: Array) -> Array:
    """``[x]`` (3, 3) with ``[x] y = x cross y``."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rotation_exp(phi: Array) -> Array:
    """``exp([phi])`` (3, 3) by Rodrigues' formula."""
    angle = float(np.linalg.norm(phi))
    K = skew(phi)
    if angle < 1e-8:
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + math.sin(angle) / angle * K + (1.0 - math.cos(angle)) / angle**2 * K @ K


def quaternion_matrix(x: float, y: float, z: float, w: float) -> Array:
    """Rotation (3, 3) of the unit quaternion ``[x, y, z, w]``: the core's
    :func:`~rnea_ros.core.model.configuration.quaternion_matrix`, by components."""
    return core_quaternion_matrix(np.array([x, y, z, w], dtype=np.float64))


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
        future = clock.future(stamp, now, c.clock_reset_threshold)
        if stamp < last or future:
            if not clock.confirm(stamp, c.clock_reset_threshold, c.clock_reset_count):
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
        R_bs = rel.R
        R_wb = None
        if orientation is not None:
            quat = np.asarray(orientation, dtype=np.float64)
            R_wb = quaternion_matrix(*(quat / np.linalg.norm(quat))) @ R_bs.T
        w = R_bs @ w_s - rel.w if w_s is not None else np.zeros(3)
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
            r = rel.p
            f = R_bs @ f_s - np.cross(self._dw, r) - np.cross(w, np.cross(w, r)) \
                - 2.0 * np.cross(w, rel.v) - rel.a
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


__all__ = ["HOLD", "IMU_FALLBACKS", "IMU_PARAMETERS", "FrameMotion", "ImuConfig",
           "ImuEstimator", "ImuResult", "ImuSample", "frame_motion", "imu_config", "provided",
           "quaternion_matrix", "rotation_exp", "skew"]
