"""The torque controller's logic, free of ROS: joint-state validation and
merging, the control pipeline, saturation, slew limiting (``|tau_k -
tau_{k-1}| <= effort_rate_limits * dt``, ``dt`` from the state stamps), the
optional predictive time scaling of the reference, the watchdog and the
statistics that the node reports on ``/diagnostics``.

Joint states are matched **by name** and **merged**: a message may carry any
subset of the model's joints, in any order, with extra joints (ignored); each
model joint keeps its latest position, velocity and stamp. A command is
computed on every accepted message once every model joint has been received
and the oldest joint sample is at most ``watchdog_timeout`` older than the
newest. A message is **rejected** as a whole, counted by reason, and leaves
the merged state untouched when: its ``position``/``velocity`` arrays do not
match ``name`` in length (``length_mismatch``); a model joint's position or
velocity is NaN/inf (``non_finite``); its stamp is older than the last stamp
of one of its joints (``time_backwards``); it has no velocities in
``inverse_dynamics`` mode (``missing_velocity``, gravity mode then assumes 0).
A position or velocity above ``MAX_STATE`` (1e6) in magnitude is
``out_of_range``. A model joint named twice is rejected (``duplicate_names``: which value wins
would be undefined). Before the first complete state no command is produced;
such messages are merged but counted (``missing_joints``).

Clock resets (a simulator reset, a bag played in a loop, a zero stamp followed
by simulated time): a stamp older than a joint's last one is ``time_backwards``,
one ahead of the newest accepted stamp by more than the wall time elapsed since
plus ``clock_reset_threshold`` is ``time_future``; both are rejected. When
``clock_reset_count`` consecutive messages are rejected so and agree with each
other (strictly increasing stamps, each within the threshold of the previous
one), the clock was reset: the merged stamps, the reference trajectory and the
time scaling are shifted onto the new clock (the motion continues), the message
is merged, :attr:`TorqueController.clock_resets` counts it and
:attr:`Result.event` says so. A single out-of-order or future-dated message
never gets that far.

Rate limit: every output (state-driven, watchdog, after a mode switch or a
clock reset) goes through the slew limiter; the time step is the stamp
difference between consecutive state-driven commands, else the steady-clock
time since the previous output.

Watchdog: when no message was accepted for ``watchdog_timeout`` (measured on
a steady clock), :meth:`TorqueController.watchdog` returns the stale command:
``hold`` = gravity compensation at the last valid pose, ``zero`` = zeros.

Moving base (``imu.topic``, :mod:`rnea_ros.control.imu`): IMU samples
(:meth:`TorqueController.imu_sample`) give the base's motion, used at each state's
stamp by gravity compensation and inverse dynamics (``base_motion=``); without
a fresh sample, ``imu.fallback``: the model's gravity on a fixed base, or the
watchdog's stale command.

Mimic joints (URDF ``<mimic>``, :mod:`rnea_ros.mimic`): a follower is not a
coordinate of the model, so it is neither required in the joint states nor
merged nor commanded. When a message carries a follower *and* its leader and
``mimic_check`` is on, the follower's position is compared with
``multiplier * q_leader + offset``: a deviation beyond ``mimic_tolerance`` (or
a non-finite follower) is counted (:attr:`TorqueController.mimic_mismatches`,
the worst one kept for the diagnostics) and said in :attr:`Result.warning`;
the message is still accepted and the command is unaffected.

Robots with elastic joints (``elastic``, :mod:`rnea_ros.core.elastic.model`): the
state also holds the motor positions/velocities, named ``<joint>_motor`` in
the joint states (link side of the gearbox, see the convention there) and
merged like any joint; the commands are motor torques. Their rigid-body model
(gravity and inverse-dynamics modes, ``hold``) is the unified bodies' (links
with their motors' masses): at rest a motor torque equals its link's gravity
torque.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.elastic import ElasticStage
from rnea_ros.control.imu import ImuEstimator, ImuResult, ImuSample
from rnea_ros.control.joint_state import (
    BACKWARDS,
    FUTURE,
    INCOMPLETE,
    MAX_STATE,
    NON_FINITE,
    OUT_OF_RANGE,
    TOO_OLD,
    ClockWatch,
    as_array,
    merge_fast,
)
from rnea_ros.control.laws import (
    FrictionCompensation,
    GravityCompensation,
    InverseDynamicsPD,
    Reference,
    Stage,
    Step,
)
from rnea_ros.control.rate_limit import SlewLimiter, TimeScaling, slew
from rnea_ros.control.trajectory import JointTrajectory
from rnea_ros.core._jit import FastCall, jit
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import StateError, options
from rnea_ros.core.model.payload import with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.mimic import follower_check

Array = NDArray[np.float64]
# (message index, model index, duplicates, followers to check: see mimic.FollowerCheck.rows)
Followers = tuple[tuple[int, int, float, float, str], ...]
Indices = tuple[NDArray[np.int64], NDArray[np.int64], tuple[str, ...], Followers]
Oracle = Callable[[Step], Array]

_CACHE_NAMES = 4096  # name tuples larger than this (in characters) are not cached
_NO_VELOCITY = np.zeros(0)


@jit
def saturate_and_slew(tau: Array, index: NDArray[np.int64], limits: Array, previous: Array,
                      rate: Array, dt: float, out: Array) -> tuple[int, int]:
    """``out = tau[index]`` clipped to ``+-limits``, then (``previous`` not empty) moved
    at most ``rate * dt`` from ``previous``; returns (clipped, rate-limited) counts, or
    (-1, 0) with ``out`` unwritten when some ``tau[index]`` is not finite."""
    clipped = 0
    limited = 0
    for i in range(index.shape[0]):
        if not np.isfinite(tau[index[i]]):
            return -1, 0
    for i in range(index.shape[0]):
        x = tau[index[i]]
        c = min(max(x, -limits[i]), limits[i])
        clipped += c != x
        if previous.shape[0] > 0:
            c, bound = slew(previous[i], c, rate[i] * dt)
            limited += bound
        out[i] = c
    return clipped, limited


_finish_fast = FastCall(saturate_and_slew)


class RejectedState(Exception):  # noqa: N818 -- control flow, not an error
    """Raised by :meth:`TorqueController._compute` for a merged state it cannot use
    (e.g. closed loops that do not close there): the message is rejected under
    ``reason`` and no command is produced."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


@dataclass
class Result:
    """Outcome of one joint-state message: a command (commanded-joint order), or a
    rejection (``reason`` key and a message naming the problem), or neither (not ready)."""

    command: Array | None = None
    reason: str | None = None
    message: str = ""
    event: str = ""  # e.g. a clock reset (the message was accepted)
    warning: str = ""  # e.g. a mimic follower off its coupling (the message was accepted)


class TorqueController:
    """Joint states in, effort commands out (see the module docstring)."""

    def __init__(self, model: RobotModel, config: ControllerConfig,
                 oracle_factory: Callable[[RobotModel, ControllerConfig], Oracle] | None = None,
                 elastic: ElasticModel | None = None) -> None:
        self.elastic = elastic
        self.base_model = model if elastic is None else elastic.unified
        self.oracle_factory = oracle_factory
        self.state_names = self.measured_names(model, elastic)
        n = len(self.state_names)
        self._state_index = {name: i for i, name in enumerate(self.state_names)}
        self._q = np.zeros(n)
        self._qd = np.zeros(n)
        self._stamp = np.full(n, -math.inf)
        self._name_cache: dict[tuple[str, ...], Indices] = {}
        self.clock = ClockWatch()
        self._output_stamp: float | None = None  # stamp of the last state-driven output
        self._output_wall: float | None = None  # steady time of the last output
        self._last_output: Array | None = None
        self.reference = Reference()
        self.rejected: Counter[str] = Counter()
        self.accepted = 0
        self.ignored = 0
        self.commands = 0
        self.saturated = 0
        self.stale = False
        self.stale_events = 0
        self.last_valid_wall: float | None = None
        self.last_state_time: float | None = None
        self.compute_us: deque[float] = deque(maxlen=5000)
        self.oracle_discrepancy = 0.0
        self.oracle_checks = 0
        self.mimic_checks = 0  # messages whose followers were checked
        self.mimic_mismatches = 0  # of them, with a follower off its coupling
        self.mimic_worst = ("", 0.0)  # (follower, deviation [rad or m]) of the worst mismatch
        self.slew: SlewLimiter | None = None
        self.imu: ImuEstimator | None = None  # a moving base measured by an IMU
        self.configure(config)

    # ------------------------------------------------------------ configuration
    def measured_names(self, model: RobotModel, elastic: ElasticModel | None
                       ) -> tuple[str, ...]:
        """The joints merged from joint_states, in the order of the merged state: the
        model's; elastic robots' motors come as '<joint>_motor' after the joints."""
        return model.joint_names + (elastic.motor_names if elastic else ())

    @property
    def reference_names(self) -> tuple[str, ...]:
        """The joints of the reference (trajectories name them), in state order."""
        return self.base_model.joint_names

    def configure(self, config: ControllerConfig) -> None:
        """Apply a validated configuration (mode, gains, payload, limits...)."""
        self.build_stages(config)
        previous = self.slew
        self.slew = SlewLimiter(config.effort_rate_limits) if config.slew_limit else None
        if self.slew is not None and previous is not None:  # keep the last command: no jump
            self.slew.previous, self.slew.last_time = previous.previous, previous.last_time
            self.slew.limited, self.slew.bad_dt = previous.limited, previous.bad_dt
        elif self.slew is not None and self._last_output is not None:  # limiting turned on
            self.slew.previous, self.slew.last_time = self._last_output.copy(), 0.0
        self.config = config
        if config.imu is None:
            self.imu = None
        elif self.imu is None:
            self.imu = ImuEstimator(self.base_model, config.imu)
        else:  # runtime settings change, the estimate stays
            self.imu.configure(config.imu)
        self.oracle = self.make_oracle(config)
        self._gravity_only = (config.mode == "gravity" and not config.friction_compensation
                              and self.oracle is None and self.elastic is None
                              and type(self) is TorqueController)
        self.warm_up()

    def make_oracle(self, config: ControllerConfig) -> Oracle | None:
        """The live cross-check (``oracle.enable``), or None."""
        return (self.oracle_factory(self.model, config)
                if config.oracle_enable and self.oracle_factory else None)

    def build_stages(self, config: ControllerConfig) -> None:
        """``full_model``, ``model`` (friction removed unless compensated) and the
        mode's ``stages`` for ``config``."""
        def loaded(model: RobotModel) -> RobotModel:
            model = model.replace(gravity=config.gravity)
            return model if config.payload is None else with_payload(model, config.payload)

        # An elastic robot's links carry gravity and payload; its rigid model is their
        # unified bodies (links with their motors).
        elastic = None if self.elastic is None else \
            dataclasses.replace(self.elastic, links=loaded(self.elastic.links))
        model = loaded(self.base_model) if elastic is None else elastic.unified
        self.full_model = model  # with friction: used for the "hold" command and the oracle
        self.model = model if config.friction_compensation else model.without_friction()
        self.reference.snap = config.mode == "elastic"
        stages: list[Stage]
        if config.mode == "elastic":
            assert elastic is not None
            if not config.friction_compensation:
                elastic = dataclasses.replace(elastic, links=elastic.links.without_friction())
            stages = [self.reference, ElasticStage(elastic, config.elastic_law, config.kp,
                                                   config.kd, config.elastic_gains)]
        elif config.mode == "gravity":
            stages = [GravityCompensation()]
            if config.friction_compensation:
                stages.append(FrictionCompensation())
        else:
            stages = [self.reference, InverseDynamicsPD(config.kp, config.kd)]
        self.stages = stages
        self.reference.scaling = None
        if config.mode == "inverse_dynamics" and config.time_scaling:
            tau_max = np.full(model.nv, np.inf)
            rate_max = np.full(model.nv, np.inf)
            tau_max[config.command_index] = config.effort_limits
            rate_max[config.command_index] = config.effort_rate_limits
            finite = np.where(np.isfinite(tau_max), tau_max, 1e12)
            self.reference.scaling = TimeScaling(
                self.model, finite, np.where(np.isfinite(rate_max), rate_max, 1e12),
                min_speed=config.time_scaling_min_speed,
                max_acceleration=config.time_scaling_max_acceleration,
                horizon=config.time_scaling_horizon, margin=config.time_scaling_margin)

    def warm_up(self) -> None:
        """Run the mode's stages once on a dummy state, so that the kernels are compiled
        (seconds when numba's cache is cold) before the first joint state, not on it."""
        n, ne = self.model.nv, len(self.state_names) - self.model.nv
        z = np.zeros(n)
        step = Step(self.model, 0.0, z, z, z, z, z, tau=np.zeros(n), theta=np.zeros(ne),
                    thetad=np.zeros(ne), qddd_ref=z, qdddd_ref=z,
                    base_motion=BaseMotion() if self.imu is not None else None)
        for stage in self.stages:
            if stage is not self.reference:  # it would take the dummy state as its start
                stage(step)
            reset = getattr(stage, "reset", None)
            if reset is not None and stage is not self.reference:
                reset()
        gravity_torques(self.full_model, z)  # the watchdog's "hold"
        if self.imu is not None:  # the moving-base kernels
            gravity_torques(self.model, z, base_motion=BaseMotion())

    # ------------------------------------------------------------------ inputs
    def _indices(self, names: Sequence[str]) -> Indices:
        """(message index, model index) of the model joints in ``names``, and the
        model joints named more than once."""
        key = tuple(names)
        cached = self._name_cache.get(key)
        if cached is None:
            position: dict[str, int] = {}
            duplicates: list[str] = []
            for k, name in enumerate(key):
                if name in position and name in self._state_index:
                    duplicates.append(name)
                position.setdefault(name, k)
            model_idx = [i for i, j in enumerate(self.state_names) if j in position]
            msg_idx = [position[self.state_names[i]] for i in model_idx]
            followers = follower_check(self.base_model, key).rows if model_idx else ()
            cached = (np.array(msg_idx, dtype=np.int64), np.array(model_idx, dtype=np.int64),
                      tuple(dict.fromkeys(duplicates)), followers)
            if len(self._name_cache) < 64 and sum(map(len, key)) <= _CACHE_NAMES:
                self._name_cache[key] = cached
        return cached

    def _reject(self, reason: str, message: str) -> Result:
        self.rejected[reason] += 1
        return Result(reason=reason, message=message)

    def joint_state(self, names: Sequence[str], position: Sequence[float],
                    velocity: Sequence[float], stamp: float, now: float | None = None) -> Result:
        """Validate and merge one ``sensor_msgs/JointState``; compute the command.

        ``stamp`` [s] is the message time (the trajectory is sampled at it);
        ``now`` [s] a steady clock for the watchdog (default: ``time.monotonic()``).
        """
        now = time.monotonic() if now is None else now
        n_names = len(names)
        if len(position) != n_names or len(velocity) not in (0, n_names):
            return self._reject("length_mismatch",
                                f"{n_names} names, {len(position)} positions, "
                                f"{len(velocity)} velocities")
        if not math.isfinite(stamp):
            return self._reject("time_backwards", f"stamp {stamp} is not finite")
        msg_idx, model_idx, duplicates, followers = self._indices(names)
        if len(model_idx) == 0:
            self.ignored += 1  # nothing for us (e.g. another robot's joints): not an error
            return Result()
        if duplicates:
            return self._reject("duplicate_names", f"joints {options(duplicates)} are named "
                                                   "more than once")
        has_velocity = len(velocity) > 0
        if not has_velocity and self.config.mode != "gravity":
            return self._reject("missing_velocity", "message has no velocities, "
                                f"{self.config.mode} mode needs them")
        p = as_array(position)
        v = as_array(velocity) if has_velocity else _NO_VELOCITY
        clock, threshold = self.clock, self.config.clock_reset_threshold
        status = FUTURE if clock.future(stamp, now, threshold) else \
            self._merge(p, v, has_velocity, msg_idx, model_idx, stamp)
        event = ""
        if status in (BACKWARDS, FUTURE):
            if clock.confirm(stamp, threshold, self.config.clock_reset_count):
                event = self._resync(stamp)
                status = self._merge(p, v, has_velocity, msg_idx, model_idx, stamp)
            elif status == BACKWARDS:
                return self._reject("time_backwards",
                                    f"stamp {stamp:.6f} s is older than the last one "
                                    f"({float(self._stamp[model_idx].max()):.6f} s)")
            else:
                return self._reject("time_future",
                                    f"stamp {stamp:.6f} s is {stamp - clock.newest:.3f} s after "
                                    f"the last one, {now - clock.newest_wall:.3f} s ago")
        else:
            clock.streak = 0
        if status == OUT_OF_RANGE:
            return self._reject("out_of_range", f"a position or velocity is beyond "
                                                f"{MAX_STATE:g} in magnitude")
        if status == NON_FINITE:
            bad = [self.state_names[i] for k, i in enumerate(model_idx)
                   if not (math.isfinite(p[msg_idx[k]])
                           and (not has_velocity or math.isfinite(v[msg_idx[k]])))]
            return self._reject("non_finite", f"non-finite position or velocity for joints "
                                              f"{options(bad)}")
        self.accepted += 1
        clock.accept(stamp, now)
        warning = self._check_followers(followers, p) if followers and \
            self.config.mimic_check else ""
        if status == INCOMPLETE:
            missing = [j for j, s in zip(self.state_names, self._stamp, strict=True)
                       if not math.isfinite(s)]
            self.rejected["missing_joints"] += 1  # merged, but no command yet
            return Result(reason="missing_joints",
                          message=f"no state yet for joints {options(missing)}", event=event,
                          warning=warning)
        if status == TOO_OLD:
            return Result(event=event, warning=warning)  # a joint's sample is too old
        try:
            command = self._compute(stamp, now)
        except RejectedState as exc:  # merged, but unusable (e.g. loops that do not close)
            self.accepted -= 1
            result = self._reject(exc.reason, exc.message)
            result.event = event
            return result
        self.last_valid_wall = now
        self.last_state_time = stamp
        self.stale = False
        return Result(command=command, event=event, warning=warning)

    def _check_followers(self, rows: Followers, p: Array) -> str:
        """Compare the followers of an accepted message with their leaders (see the
        module docstring); returns the warning text ("" when all agree)."""
        self.mimic_checks += 1
        tolerance = self.config.mimic_tolerance
        bad = ""
        worst = 0.0
        for follower, leader, multiplier, offset, name in rows:
            d = float(p[follower]) - (multiplier * float(p[leader]) + offset)
            if not abs(d) <= tolerance:  # NaN too
                if bad == "" or not abs(d) <= abs(worst):
                    bad, worst = name, d
        if not bad:
            return ""
        self.mimic_mismatches += 1
        if not abs(worst) <= abs(self.mimic_worst[1]):
            self.mimic_worst = (bad, worst)
        m = self.base_model.mimic_joints[bad]
        return (f"mimic follower '{bad}' is {worst:+.6g} off its coupling "
                f"{m.multiplier:g} * '{m.leader}' + {m.offset:g} (tolerance {tolerance:g}); "
                "check the URDF's <mimic> or the driver (the command uses the leader only)")

    def _merge(self, p: Array, v: Array, has_velocity: bool, msg_idx: NDArray[np.int64],
               model_idx: NDArray[np.int64], stamp: float) -> int:
        return int(merge_fast.call(self._q, self._qd, self._stamp, p, v, has_velocity, msg_idx,
                                    model_idx, stamp, self.config.watchdog_timeout))

    def _resync(self, stamp: float) -> str:
        """Move the merged stamps, the reference and the time scaling onto the new
        clock (the newest sample at ``stamp``); returns the event text."""
        jump = self.clock.resync(stamp)
        known = np.isfinite(self._stamp)
        self._stamp[known] += jump
        self._output_stamp = None  # the next rate-limit step is measured on the steady clock
        reference = self.reference
        if reference.trajectory is not None:
            reference.trajectory = dataclasses.replace(reference.trajectory,
                                                       times=reference.trajectory.times + jump)
        scaling = reference.scaling
        if scaling is not None:
            if scaling.t_prev is not None:
                scaling.t_prev += jump
            scaling.last_update += jump
        if self.last_state_time is not None:
            self.last_state_time += jump
        return (f"clock reset: joint-state stamps jumped by {jump:+.6f} s; "
                "re-synchronised on the new clock")

    def trajectory(self, joint_names: Sequence[str], times: Array, positions: Array,
                   velocities: Array | None, accelerations: Array | None,
                   start: float) -> None:
        """Replace the reference by a ``trajectory_msgs/JointTrajectory``.

        ``times`` (K,) are ``time_from_start`` [s], relative to ``start``; the
        arrays (K, len(joint_names)). Every commanded joint must be named, once,
        every name must be a model joint and every position within its joint's
        limits; model joints that are not commanded hold their current position.
        Raises :class:`StateError` on a bad trajectory (non-finite values and
        non-increasing times too).
        """
        missing = [j for j in self.config.joints if j not in joint_names]
        if missing:
            raise StateError(f"trajectory lacks commanded joints {options(missing)}")
        model = self.base_model
        followers = [f"'{j}' (follows '{model.mimic_joints[j].leader}')" for j in joint_names
                     if j in model.mimic_joints]
        if followers:
            raise StateError(f"trajectory names mimic followers {', '.join(followers)}: they "
                             "are not coordinates; give their leaders only")
        names = self.reference_names
        unknown = [j for j in joint_names if j not in names]
        if unknown:
            raise StateError(f"trajectory names joints {options(unknown)} not in the model; "
                             f"valid: {options(names)}")
        if len(set(joint_names)) != len(joint_names):
            raise StateError("trajectory names a joint more than once")
        given = np.asarray(positions, dtype=np.float64)
        if given.ndim == 2 and given.shape[1] == len(joint_names) and \
                np.all(np.isfinite(given)):
            index = [model.joint_index(j) for j in joint_names]
            low, high = model.lower_limit[index], model.upper_limit[index]
            outside = np.any((given < low) | (given > high), axis=0)
            if np.any(outside):
                bad = [j for j, o in zip(joint_names, outside, strict=True) if o]
                raise StateError(f"trajectory positions of joints {options(bad)} are beyond "
                                 "their limits")
        K = len(times)
        base = self.reference.last[0] if self.reference.last is not None else \
            self._q[:len(names)]

        def expand(values: Array | None, fill: Array) -> Array | None:
            if values is None:
                return None
            values = np.asarray(values, dtype=np.float64)
            if values.shape != (K, len(joint_names)):
                raise StateError(f"trajectory values have shape {values.shape}, expected "
                                 f"({K}, {len(joint_names)})")
            out = np.tile(fill, (K, 1))
            for k, name in enumerate(joint_names):
                out[:, names.index(name)] = values[:, k]
            return out

        zeros = np.zeros(len(names))
        P = expand(positions, base)
        assert P is not None
        traj = JointTrajectory(start + np.asarray(times, dtype=np.float64), P,
                               expand(velocities, zeros), expand(accelerations, zeros))
        self.reference.replace(traj, self.last_state_time if self.last_state_time is not None
                               else start)

    # --------------------------------------------------------------- computing
    def _output(self, tau: Array, now: float, stamp: float | None) -> Array:
        """The command from model-order torques ``tau``: commanded joints, saturated,
        slew-limited (``stamp`` None: a watchdog output) on the command clock -- stamp
        differences between state-driven outputs, else steady time."""
        if self._output_wall is None:
            dt = 0.0
        elif stamp is not None and self._output_stamp is not None:
            dt = stamp - self._output_stamp
        else:
            dt = now - self._output_wall
        self._output_stamp, self._output_wall = stamp, now
        slew = self.slew
        previous = _NO_VELOCITY if slew is None or slew.previous is None else slew.previous
        if previous.shape[0] and not (math.isfinite(dt) and dt > 0.0):
            assert slew is not None
            slew.bad_dt += 1  # no time has passed: keep the previous command
            held: Array = previous.copy()
            return held
        command = np.empty(len(self.config.joints))
        clipped, limited = _finish_fast.call(
            np.ascontiguousarray(tau, dtype=np.float64), self.config.command_index,
            self.config.effort_limits, previous,
            self.config.effort_rate_limits if slew is None else slew.rate, dt, command)
        if clipped < 0:  # a non-finite torque (no finite state gives one; never published)
            self.rejected["non_finite_torque"] += 1
            held = np.zeros(len(self.config.joints)) if slew is None or slew.previous is None \
                else slew.previous.copy()
            return held
        self.saturated += clipped
        if slew is not None:
            slew.limited += limited
            slew.last_time = 0.0 if slew.previous is None else slew.last_time + dt
            slew.previous = command
        self._last_output = command
        return command

    def imu_sample(self, sample: ImuSample, now: float | None = None) -> ImuResult:
        """Validate one IMU sample and update the base's estimated motion
        (:class:`rnea_ros.control.imu.ImuEstimator`; the sensor's link pose from the
        latest merged joint state)."""
        if self.imu is None:
            return ImuResult(reason="no_imu", message="no IMU configured ('imu.topic')")
        n = self.model.nv
        return self.imu.update(sample, self._q[:n], self._qd[:n], self.clock.newest,
                               self.last_valid_wall is not None,
                               time.monotonic() if now is None else now)

    def _compute(self, t: float, now: float) -> Array:
        started = time.perf_counter()
        motion: BaseMotion | None = None
        if self.imu is not None:  # a moving base: its motion at t, or the IMU's fallback
            estimate = self.imu.motion(t, self.config.gravity, self._q, self._qd)
            if isinstance(estimate, str):  # HOLD: the watchdog's stale command
                self.commands += 1
                return self._output(self.stale_torque(), now, t)
            motion = estimate
        if self._gravity_only:  # tau = g(q): no Step, no stage loop (the common case)
            command = self._output(gravity_torques(self.model, self._q, base_motion=motion),
                                   now, t)
            self.compute_us.append((time.perf_counter() - started) * 1e6)
            self.commands += 1
            return command
        n = self.model.nv
        if self.elastic is None:
            step = Step(self.model, t, self._q.copy(), self._qd.copy(), tau=np.zeros(n),
                        base_motion=motion)
        # (a fresh Step: stages may keep references to its arrays)
        else:  # links, then the motors
            step = Step(self.model, t, self._q[:n].copy(), self._qd[:n].copy(),
                        tau=np.zeros(n), theta=self._q[n:].copy(), thetad=self._qd[n:].copy())
        return self._run(step, now, t, started)

    def _run(self, step: Step, now: float, t: float, started: float) -> Array:
        """The mode's stages on ``step``, then the output (limits, slew) and the
        bookkeeping: compute time, command count, the live oracle's check."""
        for stage in self.stages:
            stage(step)
        command = self._output(step.tau, now, t)
        self.compute_us.append((time.perf_counter() - started) * 1e6)
        self.commands += 1
        if self.oracle is not None and self.commands % self.config.oracle_every_n == 0:
            reference = self.oracle(step)
            assert step.model_torque is not None
            scale = max(float(np.abs(reference).max()), 1.0)
            self.oracle_discrepancy = float(np.abs(step.model_torque - reference).max()) / scale
            self.oracle_checks += 1
        return command

    def watchdog(self, now: float | None = None) -> Array | None:
        """The stale command when joint states stopped for ``watchdog_timeout``, else None."""
        now = time.monotonic() if now is None else now
        if self.last_valid_wall is None or now - self.last_valid_wall <= \
                self.config.watchdog_timeout:
            return None
        if not self.stale:
            self.stale = True
            self.stale_events += 1
        return self._output(self.stale_torque(), now, None)

    def stale_torque(self) -> Array:
        """The stale behaviour's torques (model order): ``hold`` = gravity compensation
        at the last valid pose (fixed base, the model's gravity), ``zero``."""
        if self.config.stale_behavior == "zero":
            return np.zeros(len(self.reference_names))
        return self.hold_torque()

    def hold_torque(self) -> Array:
        """The watchdog's ``hold``: gravity compensation at the last valid pose."""
        return gravity_torques(self.full_model, self._q[:self.model.nv])

    # ------------------------------------------------------------- statistics
    @property
    def clock_resets(self) -> int:
        """Clock resets detected (see the module docstring)."""
        return self.clock.resets

    @property
    def last_clock_jump(self) -> float:
        """The last reset's jump [s], new clock minus old."""
        return self.clock.last_jump

    def compute_percentiles(self) -> tuple[float, float]:
        """(p50, p99) of the recent compute times [us] (0 when none)."""
        if not self.compute_us:
            return 0.0, 0.0
        p50, p99 = np.percentile(np.fromiter(self.compute_us, float), [50, 99])
        return float(p50), float(p99)
