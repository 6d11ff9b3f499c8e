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
of one of its joints (``time_backwards``), negative or not finite (``bad_stamp``: no clock
gives it, a first state too) or equal to a joint's last (``duplicate_stamp``: no
new sample -- a sender whose clock froze, a bag looped on one message; a stream of
them is a silence, so the watchdog acts, issue 35); it has no velocities in
``inverse_dynamics`` mode (``missing_velocity``, gravity mode then assumes 0).
A position or velocity above ``MAX_STATE`` (1e6) in magnitude is
``out_of_range``. A model joint named twice is rejected (``duplicate_names``: which value wins
would be undefined). Before the first complete state no command is produced;
such messages are merged but counted (``missing_joints``).

Clock resets (a simulator reset, a bag played in a loop): the stamps move onto the
new clock once ``clock_reset.count`` messages agree on it; rejections are worded and
counted there too (:mod:`rnea_ros.control.controller_intake`). Rate limit and
watchdog: every output goes through the slew limiter on the receiver's clock, and a
silence longer than ``watchdog_timeout`` (+ ``watchdog_grace``) gives the stale command
(:mod:`rnea_ros.control.controller_output`).

Moving base (``imu.topic``, :mod:`rnea_ros.control.imu`): IMU samples
(:meth:`TorqueController.imu_sample`) give the base's motion, used at each state's
stamp by gravity compensation and inverse dynamics (``base_motion=``); without
a fresh sample, ``imu.fallback``: the model's gravity on a fixed base, or the
watchdog's stale command.

Mimic joints (URDF ``<mimic>``, :mod:`rnea_ros.mimic`): followers are not coordinates;
with ``mimic.check`` they are compared with their leaders
(:mod:`rnea_ros.control.controller_intake`).

Robots with elastic joints (``elastic``, :mod:`rnea_ros.core.elastic.model`): the
state also holds the motor positions/velocities, named ``<joint>_motor`` in
the joint states (link side of the gearbox, see the convention there) and
merged like any joint; the commands are motor torques. Their rigid-body model
(gravity and inverse-dynamics modes, ``hold``) is the unified bodies' (links
with their motors' masses): at rest a motor torque equals its link's gravity
torque.
"""

from __future__ import annotations

import math
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.clock_rule import ClockRule
from rnea_ros.control.command import (
    BAD_TORQUE,
    HELD,
    OUTPUT,
    finish_fast,
    gravity_fast,
    inverse_dynamics_fast,
    warm_paths,
)
from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.controller_intake import IntakeOutcomes, RejectedState, Result
from rnea_ros.control.controller_output import CommandOutput
from rnea_ros.control.freshness import StampPace
from rnea_ros.control.imu import ImuEstimator, ImuResult, ImuSample
from rnea_ros.control.joint_state import (
    BACKWARDS,
    FUTURE,
    INCOMPLETE,
    MERGED,
    TOO_OLD,
    ClockWatch,
    as_buffer,
    intake_fast,
)
from rnea_ros.control.laws import Reference, Step
from rnea_ros.control.message_map import (
    NameMap,
    name_map,
)
from rnea_ros.control.pipeline import build_pipeline
from rnea_ros.control.rate_limit import SlewLimiter
from rnea_ros.control.trajectory import from_message
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import options
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]
Oracle = Callable[[Step], Array]

_CACHE_NAMES = 4096  # name tuples larger than this (in characters) are not cached
_NO_VELOCITY = array("d")
_monotonic, _perf_counter, _isfinite = time.monotonic, time.perf_counter, math.isfinite
_asc, _f64 = np.ascontiguousarray, np.float64
# Intake statuses after which the message is merged (a command may be out already).
_MERGED = frozenset((MERGED, INCOMPLETE, TOO_OLD, OUTPUT, HELD, BAD_TORQUE))


class TorqueController(IntakeOutcomes, CommandOutput):
    """Joint states in, effort commands out (see the module docstring)."""

    #: The closed-loop model of a closed-chain or parallel controller
    #: (:class:`~rnea_ros.control.closed_loop.ClosedLoopController`); ``None`` for a
    #: serial (or elastic) robot. Callers ask this, never the class.
    loops: ClosedLoopModel | None = None
    passive_mismatches = 0  # passive-encoder checks above the tolerance (closed loops)

    def __init__(self, model: RobotModel, config: ControllerConfig,
                 oracle_factory: Callable[[RobotModel, ControllerConfig], Oracle] | None = None,
                 elastic: ElasticModel | None = None) -> None:
        self.elastic = elastic
        self.base_model = model if elastic is None else elastic.unified
        self.oracle_factory = oracle_factory
        self.state_names = self.measured_names(model, elastic)
        n = len(self.state_names)
        self._state_index = {name: i for i, name in enumerate(self.state_names)}
        # Model order: q, qd, the stamp of each joint's latest sample and the torques of
        # the last fused step (one array: one argument to the compiled step).
        self._state = np.zeros((4, n))
        self._q, self._qd, self._stamp, self._tau = self._state
        self.resent = 0  # states that repeated the merged sample, stamp and values
        self._stamp[:] = -math.inf
        self._name_cache: dict[tuple[str, ...], NameMap] = {}
        self._commanded = Result()  # the last plain command's result (see Result)
        self.clock = ClockWatch()
        self._output_stamp = math.nan  # stamp of the last output, NaN: none or the watchdog's
        self._output_wall = math.nan  # steady time of the last output, NaN: none yet
        # Receipt time (the node's clock) of the last state-driven output, and of the
        # message being handled: the rate limit's bound by the receiver's time.
        self._output_received = math.nan
        self._received = math.nan
        self._plant = math.nan  # the plant's clock [s] at that receipt (/clock or steady)
        # The receipt clock [s] when not the steady 'now' (a node on simulated time sets
        # its /clock, use_plant_clock): read once per joint state, bounded by plant_clock.
        self.receipt_clock: Callable[[], float] | None = None
        self.plant_clock: ClockRule | None = None
        # The last command output (commanded-joint order), written in place by the
        # compiled output path; the slew limiter's previous command once _has_output.
        self._last_output = np.zeros(0)
        self._has_output = False
        self.reference = Reference()
        self.rejected: Counter[str] = Counter()
        self.accepted = 0
        self.ignored = 0
        self.commands = 0
        self.saturated = 0
        self.stale = False
        self.stale_events = 0
        self.watchdog_late = 0  # silences past the timeout (held through the grace)
        self._late_wall: float | None = None  # the last state of the last such silence
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
        self.stamp_pace: StampPace | None = None  # stamps slower than time: stale (issue 35)
        self.configure(config)

    # ------------------------------------------------------------ configuration
    def measured_names(self, model: RobotModel, elastic: ElasticModel | None
                       ) -> tuple[str, ...]:
        """The joints merged from joint_states, in the order of the merged state: the
        model's; elastic robots' motors come as '<joint>_motor' after the joints."""
        return model.joint_names + (elastic.motor_names if elastic else ())

    @property
    def merged_state(self) -> tuple[Array, Array]:
        """The merged joint state ``(q, qd)``, one value per :attr:`state_names` entry
        (model joints, then elastic motors), as read-only views."""
        q, qd = self._q.view(), self._qd.view()
        q.flags.writeable = qd.flags.writeable = False
        return q, qd

    @property
    def reference_names(self) -> tuple[str, ...]:
        """The joints of the reference (trajectories name them), in state order."""
        return self.base_model.joint_names

    @property
    def passive_alarm(self) -> str:
        """A warning on the passive encoders of a closed-loop robot, else '' (a serial
        robot has none)."""
        return ""

    def loop_values(self, recent: int, span: str) -> dict[str, str]:
        """The closed loops' diagnostics (``recent``: passive-encoder mismatches over the
        last ``span``); a serial robot has none: {}."""
        return {}

    def configure(self, config: ControllerConfig) -> None:
        """Apply a validated configuration (mode, gains, payload, limits...). Entering
        another mode releases the reference (:meth:`Reference.release`): without a new
        trajectory the mode holds the pose measured at the switch (bumpless), a
        trajectory sent before the switch is not resumed."""
        previous_config: ControllerConfig | None = getattr(self, "config", None)
        rule = getattr(self, "plant_clock", None)
        if rule is not None:  # (clock_reset.threshold may change at runtime)
            rule.threshold, rule.stall_timeout, rule.max_speed = (
                config.clock_reset.threshold, config.clock_stall_timeout,
                config.clock_max_speed)
        pace = config.params.stamp_pace
        if getattr(self, "stamp_pace", None) is None:
            self.stamp_pace = StampPace(pace.min_ratio, pace.tolerance, config.watchdog_timeout)
        else:  # (runtime settings; the stream's state stays)
            assert self.stamp_pace is not None
            self.stamp_pace.configure(pace.min_ratio, pace.tolerance, config.watchdog_timeout)
        if previous_config is not None and previous_config.mode != config.mode:
            self.reference.release()
        self.build_stages(config)
        # The rate limiter's rates and counters; its previous command is _last_output,
        # kept across configurations (a mode switch or limiting turned on: no jump).
        previous = self.slew
        self.slew = SlewLimiter(config.effort_rate_limits) if config.slew_limit.enable else None
        if self.slew is not None and previous is not None:
            self.slew.limited, self.slew.bad_dt = previous.limited, previous.bad_dt
        m = len(config.joints)
        if self._last_output.shape != (m,):
            self._last_output, self._has_output = np.zeros(m), False
        # Per commanded joint: |tau| limits, |d tau/dt| limits.
        self._bounds = np.ascontiguousarray(np.stack([
            config.effort_limits,
            config.effort_rate_limits if self.slew is None else self.slew.rate]), np.float64)
        self.config = config
        if config.imu is None:
            self.imu = None
        elif self.imu is None:
            self.imu = ImuEstimator(self.base_model, config.imu)
        else:  # runtime settings change, the estimate stays
            self.imu.configure(config.imu)
        self.oracle = self.make_oracle(config)
        # The compiled paths of control/command.py, where the stages need nothing else:
        # gravity mode's whole step (tau = g(q) alone), or inverse-dynamics mode's law
        # and output after the merge. Not for: the live oracle, elastic joints, a moving
        # base (IMU), mimic followers to check or multi-DoF joints (model.expanded), and
        # subclasses' own computations (closed loops): the stage pipeline then.
        plain = (self.oracle is None and self.elastic is None and self.imu is None
                 and not self.model.expanded and type(self) is TorqueController)
        self._gravity_only = (config.mode == "gravity" and not config.friction_compensation
                              and plain)
        self._fused_inverse_dynamics = config.mode == "inverse_dynamics" and plain
        self._gains = np.ascontiguousarray(np.stack([config.kp, config.kd]), np.float64)
        self.warm_up()
        self._warm_paths()
        # Bound to this configuration and to the state, so that only the message's or the
        # reference's part is passed per call (after warm_up, whose calls fixed FastCall's
        # entry points).
        fp, g, index = self.model.kernel_floats, self.model.gravity, config.command_index
        window, threshold = config.watchdog_timeout, config.clock_reset.threshold
        self._intake: Callable[..., int] = partial(
            intake_fast.call, self._state, window, threshold, config.mode != "gravity")
        self._finish: Callable[..., tuple[int, int, int]] = partial(
            finish_fast.call, index, self._bounds, self._last_output)
        self._gravity_command: Callable[..., tuple[int, int, int]] | None = partial(
            gravity_fast.call, fp, g, self._state, window, threshold, index, self._bounds,
            self._last_output) if self._gravity_only else None
        self._inverse_dynamics_command: Callable[..., tuple[int, int, int]] | None = partial(
            inverse_dynamics_fast.call, fp, g, self._gains, self._state, index, self._bounds,
            self._last_output) if self._fused_inverse_dynamics else None

    def make_oracle(self, config: ControllerConfig) -> Oracle | None:
        """The live cross-check (``oracle.enable``), or None."""
        return (self.oracle_factory(self.model, config)
                if config.oracle.enable and self.oracle_factory else None)

    def build_stages(self, config: ControllerConfig) -> None:
        """``full_model``, ``model`` (friction removed unless compensated) and the
        mode's ``stages`` for ``config`` (:func:`~rnea_ros.control.pipeline.build_pipeline`)."""
        self.full_model, self.model, self.stages = build_pipeline(
            config, self.base_model, self.elastic, self.reference)

    def warm_up(self) -> None:
        """Run the mode's stages once on a dummy state, so that the kernels are compiled
        (seconds when numba's cache is cold) before the first joint state, not on it."""
        n, ne = self.model.nv, len(self.state_names) - self.model.nv
        z = np.zeros(n)
        # With an IMU, the moving base's kernels and the fixed base's: its fallback
        # before the first sample, or when the IMU goes stale (issue 35).
        for base_motion in (BaseMotion(), None) if self.imu is not None else (None,):
            step = Step(self.model, 0.0, z, z, z, z, z, tau=np.zeros(n), theta=np.zeros(ne),
                        thetad=np.zeros(ne), qddd_ref=z, qdddd_ref=z, base_motion=base_motion)
            for stage in self.stages:
                # (the reference would take the dummy state as its start; a fused
                # inverse-dynamics step replaces the stages: their kernels would go unused)
                if stage is not self.reference and not self._fused_inverse_dynamics:
                    stage(step)
                reset = getattr(stage, "reset", None)
                if reset is not None and stage is not self.reference:
                    reset()
        gravity_torques(self.full_model, z)  # the watchdog's "hold"
        if self.imu is not None:  # the moving-base kernels
            gravity_torques(self.model, z, base_motion=BaseMotion())

    def _warm_paths(self) -> None:
        """The compiled paths' first calls (:meth:`configure`, after :meth:`warm_up`):
        :func:`~rnea_ros.control.command.warm_paths`."""
        warm_paths(self._state, self._last_output, self.config.command_index, self._bounds,
                   self.model.kernel_floats, self.model.gravity, self._gains,
                   self._gravity_only, self._fused_inverse_dynamics)

    # ------------------------------------------------------------------ inputs
    def _name_map(self, names: Sequence[str]) -> NameMap:
        """:func:`~rnea_ros.control.message_map.name_map` of ``names``, cached by
        ``tuple(names)`` (the caller looks there first)."""
        key = tuple(names)
        found = name_map(key, self.state_names, self._state_index, self.base_model)
        if len(self._name_cache) < 64 and sum(map(len, key)) <= _CACHE_NAMES:
            self._name_cache[key] = found
        return found

    def _reject(self, reason: str, message: str) -> Result:
        self.rejected[reason] += 1
        return Result(reason=reason, message=message)

    def joint_state(self, names: Sequence[str], position: Sequence[float],
                    velocity: Sequence[float], stamp: float, now: float | None = None,
                    out: Array | None = None) -> Result:
        """Check and merge one ``sensor_msgs/JointState``; compute the command.

        ``stamp`` [s] is the message time (the trajectory is sampled at it);
        ``now`` [s] a steady clock for the watchdog (default: ``time.monotonic()``);
        ``out`` (m,) float64, C-contiguous, receives the command (default: a new
        array), e.g. the node's view of its command message: ``Result.command`` is
        ``out``. ``position`` and ``velocity`` are cheapest as ``array('d')``, what
        rclpy's messages hold. The message's receipt time on the node's clock, which
        bounds the rate limiter's time step (module docstring), is ``now``, or
        :attr:`receipt_clock` bounded by :attr:`plant_clock` (:meth:`use_plant_clock`; a
        ``/clock`` jump or stop is then in ``plant_clock.event``).

        The node calls this at 1 kHz, where each Python operation costs several times
        its warm-loop time: the checks run compiled
        (:func:`~rnea_ros.control.joint_state.intake`; in gravity mode with the whole
        step, :func:`~rnea_ros.control.command.gravity_command`) and a command is
        booked in a few lines; Python handles the rest by status.
        """
        now = _monotonic() if now is None else now
        rule, read = self.plant_clock, self.receipt_clock
        if rule is None or read is None:
            self._received = plant = now
        else:  # /clock, bounded by the clock rule (the slew step's clock)
            plant = read()
            self._received = rule.tick(plant, now)
        self._plant = plant
        pace = self.stamp_pace  # stamps against the plant's clock (control/freshness.py)
        if pace is not None and pace.slow(stamp, plant, self._received):
            return self._reject("slow_stamps", pace.message())
        idx, screen, duplicates, followers = self._name_cache.get(tuple(names)) or \
            self._name_map(names)
        p = position if type(position) is array and position.typecode == "d" else \
            as_buffer(position)
        v = velocity if type(velocity) is array and velocity.typecode == "d" else \
            as_buffer(velocity)
        if out is None:
            out = np.empty(len(self.config.joints))
        clock, slew = self.clock, self.slew
        if self._gravity_command is None:
            status = self._intake(p, v, len(names), idx, screen, stamp, now, clock.newest,
                                  clock.newest_wall)
        else:  # check, merge, g(q), saturation and slew limiting in one compiled call
            started = _perf_counter()
            status, clipped, limited = self._gravity_command(
                p, v, len(names), idx, screen, stamp, now, clock.newest, clock.newest_wall,
                self._output_stamp, self._output_wall, self._received - self._output_received,
                slew is not None and self._has_output, out)
            if status >= OUTPUT:  # merged, and a command is in out
                self._count_output(status, clipped, limited, stamp, now)
                self.compute_us.append((_perf_counter() - started) * 1e6)
                self.commands += 1
                if status == OUTPUT:  # the common case: accepted as below
                    clock.streak = 0
                    self.accepted += 1
                    clock.accept(stamp, now)
                    self.last_valid_wall, self.last_state_time, self.stale = now, stamp, False
                    return self._plain(out)
        event = ""
        if status not in _MERGED:
            config = self.config
            if (status == BACKWARDS or status == FUTURE) and clock.confirm(
                    stamp, config.clock_reset.threshold, config.clock_reset.count):
                event = self._resync(stamp)
                status = self._merge(p, v, idx, stamp)
            if status not in _MERGED:
                return self._rejection(status, names, p, v, idx, duplicates, stamp, now)
        else:
            clock.streak = 0
        self.accepted += 1
        clock.accept(stamp, now)
        warning = self._check_followers(followers, p) if followers and \
            self.config.mimic.check else ""
        if status == INCOMPLETE:
            missing = [j for j, s in zip(self.state_names, self._stamp, strict=True)
                       if not math.isfinite(s)]
            self.rejected["missing_joints"] += 1  # merged, but no command yet
            return Result(reason="missing_joints",
                          message=f"no state yet for joints {options(missing)}", event=event,
                          warning=warning)
        if status == TOO_OLD:  # some joint's sample is too old to be combined
            return Result(event=event, warning=warning)
        if status == MERGED:
            try:
                self._compute(stamp, now, out)
            except RejectedState as exc:  # merged, but unusable (e.g. loops that do not close)
                self.accepted -= 1
                self.rejected[exc.reason] += 1
                return Result(reason=exc.reason, message=exc.message, event=event,
                              warning=warning)
        self.last_valid_wall = now
        self.last_state_time = stamp
        self.stale = False
        return Result(command=out, event=event, warning=warning) if event or warning else \
            self._plain(out)

    def _plain(self, out: Array) -> Result:
        """The result of a plain command in ``out`` (one per ``out`` array, see Result)."""
        if self._commanded.command is not out:
            self._commanded = Result(command=out)
        return self._commanded

    def trajectory(self, joint_names: Sequence[str], times: Array, positions: Array,
                   velocities: Array | None, accelerations: Array | None,
                   start: float) -> None:
        """Replace the reference by a ``trajectory_msgs/JointTrajectory``.

        ``times`` (K,) are ``time_from_start`` [s], relative to ``start``; the
        arrays (K, len(joint_names)). Every commanded joint must be named, once,
        every name must be a model joint and every position within its joint's
        limits; model joints that are not commanded hold their current position.
        Raises :class:`StateError` on a bad trajectory (non-finite values and
        non-increasing times too): :func:`~rnea_ros.control.trajectory.from_message`.
        """
        hold = self.reference.last[0] if self.reference.last is not None else \
            self._q[:len(self.reference_names)]
        traj = from_message(self.base_model, self.reference_names, self.config.joints,
                            joint_names, times, positions, velocities, accelerations, start,
                            hold)
        self.reference.replace(traj, self.last_state_time if self.last_state_time is not None
                               else start)

    # --------------------------------------------------------------- computing
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

    def _compute(self, t: float, now: float, out: Array) -> None:
        """The command for the merged state at stamp ``t``, into ``out``; raises
        :class:`RejectedState` for a state that cannot be used (``out`` unwritten)."""
        started = _perf_counter()
        if self._inverse_dynamics_command is not None:  # law and output in one call
            q_ref, qd_ref, qdd_ref = self.reference.sample(t, self._q)
            status, clipped, limited = self._inverse_dynamics_command(
                _asc(q_ref, _f64), _asc(qd_ref, _f64), _asc(qdd_ref, _f64),
                self.slew is not None and self._has_output, t, now, self._output_stamp,
                self._output_wall, self._received - self._output_received, out)
            self._count_output(status, clipped, limited, t, now)
            self.compute_us.append((_perf_counter() - started) * 1e6)
            self.commands += 1
            return
        motion: BaseMotion | None = None
        if self.imu is not None:  # a moving base: its motion at t, or the IMU's fallback
            estimate = self.imu.motion(t, self.config.gravity, self._q, self._qd)
            if isinstance(estimate, str):  # HOLD: the watchdog's stale command
                self.commands += 1
                self._output(self.stale_torque(), now, t, out)
                return
            motion = estimate
        n = self.model.nv
        if self.elastic is None:
            step = Step(self.model, t, self._q.copy(), self._qd.copy(), tau=np.zeros(n),
                        base_motion=motion)
        # (a fresh Step: stages may keep references to its arrays)
        else:  # links, then the motors
            step = Step(self.model, t, self._q[:n].copy(), self._qd[:n].copy(),
                        tau=np.zeros(n), theta=self._q[n:].copy(), thetad=self._qd[n:].copy())
        self._run(step, now, t, started, out)

    def _run(self, step: Step, now: float, t: float, started: float, out: Array) -> None:
        """The mode's stages on ``step``, then the output (limits, slew) into ``out`` and
        the bookkeeping: compute time, command count, the live oracle's check."""
        for stage in self.stages:
            stage(step)
        self._output(step.tau, now, t, out)
        self.compute_us.append((_perf_counter() - started) * 1e6)
        self.commands += 1
        if self.oracle is not None and self.commands % self.config.oracle.every_n == 0:
            reference = self.oracle(step)
            assert step.model_torque is not None
            scale = max(float(np.abs(reference).max()), 1.0)
            self.oracle_discrepancy = float(np.abs(step.model_torque - reference).max()) / scale
            self.oracle_checks += 1


__all__ = ["Oracle", "RejectedState", "Result", "TorqueController"]
