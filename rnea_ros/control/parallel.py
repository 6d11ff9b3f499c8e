"""The torque controller for parallel robots as a platform and legs (Khalil 2010 §5:
:class:`~rnea_ros.core.DeltaRobot`, :class:`~rnea_ros.core.GoughStewart`), free of ROS.

The robot is the same URDF spanning tree + loop file as any closed-loop robot
(:mod:`rnea_ros.control.closed_loop`), run as a platform and legs when the
controller's ``loops.parallel`` names its family. Only the **active** joints are
measured and commanded. On every message:

* the **platform pose** ``x`` is solved from the active positions: Newton's method on
  the legs' closed-form inverse geometric models, ``x <- x (+) J_p (q_a - IGM(x))``
  (eq. 60), warm-started from the previous pose so it stays in the same assembly
  mode (:class:`PlatformSolver`; a far jump of the actives walks there in steps of
  :data:`ACTIVE_STEP`);
* its twist ``xd = J_p qd_a``;
* the torques are the platform + legs inverse dynamics (eq. 66,
  :func:`~rnea_ros.core.platform_inverse_dynamics`):

  - ``gravity``: ``tau_a = Gamma(x, 0, 0)``;
  - ``inverse_dynamics``: the reference is in active coordinates (trajectories name
    the active joints); its pose ``x_d`` is solved by a second warm-started solver,
    ``xd_d = J_p qd_a,d``, ``xdd_d = J_p (qdd_a,d - (d/dt J_p^-1) xd_d)`` (the active
    acceleration at ``xdd = 0``: :func:`~rnea_ros.core.platform_active_motion`), and
    ``tau_a = Gamma(x_d, xd_d, xdd_d) + Kp (q_a,d - q_a) + Kd (qd_a,d - qd_a)``.

One message must not stall the executor: each pose solve is capped at
:data:`PLATFORM_BUDGET` Newton iterations (~20-50 us each: one pass of the legs'
models), with the closed-loop controller's wall-time backstop
(:func:`~rnea_ros.control.closed_loop.solve_seconds`). Rejected, counted, no
command (the last one stays, then the watchdog's ``hold``: ``Gamma`` at the last
solved pose): an active joint more than
:data:`~rnea_ros.control.closed_loop.LIMIT_MARGIN` beyond its limits
(``joint_limits``); a pose not solved within the budget (``platform_budget``); a pose
out of reach of a leg, beyond a leg joint's limits or singular (``platform_pose``); a
reference that cannot be solved likewise (``platform_reference``). Good states
afterwards are used again (the solver restarts from the last solved pose).

Passive-joint encoders, when the joint states carry them, are checked as for any
closed-loop robot (:class:`~rnea_ros.control.closed_loop.ClosedLoopController`): the
tree configuration closing the loops at the measured actives (Khalil eq. 3, the
warm-started loop solver, only for messages that carry passive joints) against the
encoders. Friction compensation is not available: the platform + legs model has no
joint friction (``loops.parallel: ''`` runs the general closed-loop controller).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.closed_loop import (
    LIMIT_MARGIN,
    ClosedLoopController,
    LoopOracleFactory,
    LoopStep,
    percentiles,
    solve_seconds,
)
from rnea_ros.control.config import PARALLEL_FAMILIES, ControllerConfig
from rnea_ros.control.controller import Oracle, RejectedState
from rnea_ros.control.laws import Stage, Step
from rnea_ros.control.modes import family_mode
from rnea_ros.core.coupling.loop_file import LoopFile
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.coupling.parallel import platform_inverse_dynamics, warm_up_errors
from rnea_ros.core.coupling.parallel_kinematics import platform_active_motion, platform_tree_state
from rnea_ros.core.coupling.parallel_model import DeltaRobot, GoughStewart, ParallelRobot
from rnea_ros.core.errors import (
    LoopBudgetError,
    LoopClosureError,
    ParallelRobotError,
    ParameterError,
    StateError,
    options,
)
from rnea_ros.core.model.configuration import quaternion_exp, quaternion_multiply
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

FAMILIES: dict[str, type[ParallelRobot]] = {"delta": DeltaRobot, "gough_stewart": GoughStewart}
assert set(FAMILIES) == set(PARALLEL_FAMILIES) - {""}

PLATFORM_BUDGET = 100  # Newton iterations per pose solve (over the whole walk)
ACTIVE_STEP = 0.1  # [rad or m] largest move of an active joint per step of a walk
CHUNK = 10  # Newton iterations between looks at the clock (one hiccup is not a failure)
TOLERANCE = 1e-12  # Newton stops at |q_a - IGM(x)| <= TOLERANCE max(1, |q_a|) [rad or m]


def parallel_robot(family: str, tree: RobotModel, loops: ClosedLoopModel) -> ParallelRobot:
    """The platform + legs model of ``family`` (``'delta'``, ``'gough_stewart'``) on
    ``tree`` (the spanning tree: gravity, payload) closed by ``loops``'s cut joints;
    :class:`ParameterError` naming the parameter when the loops do not fit it."""
    if family not in FAMILIES:
        raise ParameterError(f"parameter 'loops.parallel' is '{family}'; valid: "
                             f"{options(PARALLEL_FAMILIES)}")
    cls = FAMILIES[family]
    try:
        return cls.from_model(tree, LoopFile(loops.active_names, loops.loops))
    except ParallelRobotError as exc:
        raise ParameterError(f"parameter 'loops.parallel' is '{family}', but model "
                             f"'{tree.name}' with its loop file is not a {cls.__name__}: {exc}"
                             ) from None


def _solve(a: Array, b: Array) -> Array:
    """``a^-1 b`` for ``a = J_p^-1`` (float64); :class:`ParallelRobotError` when singular."""
    try:
        return np.asarray(np.linalg.solve(a, b), dtype=np.float64)
    except np.linalg.LinAlgError:
        raise ParallelRobotError("the platform pose is singular (J_p^-1, eq. 60, not "
                                 "invertible): the actives do not determine its motion") from None


def retract(robot: ParallelRobot, x: Array, step: Array) -> Array:
    """Pose ``x`` moved by the twist increment ``step`` (nv,): position + ``step[:3]``;
    a Gough-Stewart's orientation turned by the rotation vector ``step[3:]`` (base
    frame, on the left) and renormalised."""
    out: Array = x.copy()
    out[:3] += step[:3]
    if robot.nx == 7:
        turned = quaternion_multiply(quaternion_exp(step[3:]), x[3:])
        out[3:] = turned / np.linalg.norm(turned)
    return out


class PlatformSolver:
    """Platform poses from active positions (the forward geometric model), each solve
    warm-started from the previous pose (``last``; None: ``start``) and bounded by
    ``budget`` Newton iterations and ``seconds`` of wall time; times every solve [us].
    ``jinv`` is ``J_p^-1`` (n_a, nv) at ``last``."""

    def __init__(self, robot: ParallelRobot, start: Array, budget: int = PLATFORM_BUDGET,
                 seconds: float | None = None) -> None:
        self.robot, self.start, self.budget, self.seconds = robot, start, budget, seconds
        self.last: Array | None = None
        self.jinv: Array | None = None
        self.solve_us: deque[float] = deque(maxlen=5000)

    def solve(self, q_active: Array) -> Array:
        """The pose ``x`` (nx,) with active positions ``q_active`` (n_a,); sets ``last``
        and ``jinv``. Raises :class:`~rnea_ros.core.errors.LoopBudgetError` out of
        budget, :class:`~rnea_ros.core.errors.ParallelRobotError` when a leg cannot reach
        an iterate or ``J_p^-1`` is singular, :class:`StateError` for a non-finite
        input (``last`` unchanged)."""
        started = time.perf_counter()
        try:
            x, jinv = self._walk(np.asarray(q_active, dtype=np.float64), started)
        finally:
            self.solve_us.append((time.perf_counter() - started) * 1e6)
        self.last, self.jinv = x, jinv
        return x

    def _walk(self, target: Array, started: float) -> tuple[Array, Array]:
        robot = self.robot
        if target.shape != (robot.nv,) or not np.all(np.isfinite(target)):
            raise StateError(f"active positions must be {robot.nv} finite values, got "
                             f"{target.tolist()}")
        x = self.start if self.last is None else self.last
        q, _, _, jinv = platform_active_motion(robot, x)
        q_from, spent = q, [0]
        steps = max(1, math.ceil(float(np.abs(target - q_from).max()) / ACTIVE_STEP))
        for k in range(1, steps + 1):  # continuation: the actives walk to the target
            goal = target if k == steps else q_from + (target - q_from) * (k / steps)
            x, q, jinv = self._newton(goal, target, x, q, jinv, spent, started)
        return x, jinv

    def _newton(self, goal: Array, target: Array, x: Array, q: Array, jinv: Array,
                spent: list[int], started: float) -> tuple[Array, Array, Array]:
        """Newton from pose ``x`` (its actives ``q``, ``J_p^-1 = jinv``) to actives
        ``goal`` (a step of the walk to ``target``); ``spent`` counts the iterations."""
        robot = self.robot
        scale = max(1.0, float(np.abs(goal).max()))
        while True:
            error = goal - q
            if float(np.abs(error).max()) <= TOLERANCE * scale:
                return x, q, jinv
            if spent[0] >= self.budget or (self.seconds is not None and spent[0] and
                                           spent[0] % CHUNK == 0 and
                                           time.perf_counter() - started > self.seconds):
                wall = "" if self.seconds is None else f" or {self.seconds * 1e3:.3g} ms"
                raise LoopBudgetError(
                    f"platform pose for active positions {np.round(target, 6).tolist()} not "
                    f"solved within the budget of {self.budget} Newton iterations{wall} "
                    f"(spent {spent[0]}; residual {float(np.abs(error).max()):.3g}): "
                    "unreachable, or too far from the last pose")
            x = retract(robot, x, _solve(jinv, error))
            spent[0] += 1
            q, _, _, jinv = platform_active_motion(robot, x)


@dataclass
class ParallelStep(LoopStep):
    """A control step of a parallel robot: :class:`LoopStep`'s active vectors, the
    platform's measured pose ``x`` and twist ``xd``, and the reference's (base frame)."""

    x: Array | None = None
    xd: Array | None = None
    x_ref: Array | None = None
    xd_ref: Array | None = None
    xdd_ref: Array | None = None


class PlatformGravityCompensation:
    """``tau += Gamma(x, 0, 0)`` (eq. 66 at rest): the active forces holding the platform
    and the legs against gravity."""

    def __init__(self, robot: ParallelRobot) -> None:
        self.robot = robot
        self.zero = np.zeros(robot.nv)

    def __call__(self, step: Step) -> None:
        assert isinstance(step, ParallelStep) and step.x is not None
        try:
            g = platform_inverse_dynamics(self.robot, step.x, self.zero, self.zero)
        except ParallelRobotError as exc:  # (a singular pose)
            raise RejectedState("platform_pose", str(exc)) from None
        step.model_torque = g
        step.tau += g


class PlatformInverseDynamicsPD:
    """``tau += Gamma(x_d, xd_d, xdd_d) + Kp e + Kd de`` (see the module docstring); the
    reference pose from ``solver`` (``platform_reference`` rejection if it fails)."""

    def __init__(self, robot: ParallelRobot, kp: Array, kd: Array, solver: PlatformSolver
                 ) -> None:
        self.robot, self.kp, self.kd, self.solver = robot, kp, kd, solver

    def __call__(self, step: Step) -> None:
        assert step.q_ref is not None and step.qd_ref is not None and step.qdd_ref is not None
        try:
            x = self.solver.solve(step.q_ref)
            assert self.solver.jinv is not None
            xd, xdd = platform_rates(self.robot, x, self.solver.jinv, step.qd_ref,
                                     step.qdd_ref)
            ff = platform_inverse_dynamics(self.robot, x, xd, xdd)
        except (LoopClosureError, ParallelRobotError, StateError) as exc:
            raise RejectedState("platform_reference", f"reference: {exc}") from None
        if isinstance(step, ParallelStep):
            step.x_ref, step.xd_ref, step.xdd_ref = x, xd, xdd
        step.model_torque = ff
        step.tau += ff + self.kp * (step.q_ref - step.q) + self.kd * (step.qd_ref - step.qd)


def platform_rates(robot: ParallelRobot, x: Array, jinv: Array, qd_active: Array,
                   qdd_active: Array) -> tuple[Array, Array]:
    """The platform's twist ``xd = J_p qd_a`` and acceleration ``xdd = J_p (qdd_a -
    (d/dt J_p^-1) xd)`` (nv,) at pose ``x`` with ``J_p^-1 = jinv`` (eq. 60 and its
    derivative)."""
    xd = _solve(jinv, qd_active)
    bias = platform_active_motion(robot, x, xd)[2]
    xdd = _solve(jinv, qdd_active - bias)
    return xd, xdd


class ParallelController(ClosedLoopController):
    """:class:`ClosedLoopController` run as a platform and legs (module docstring).

    ``config.loops.parallel`` names the family (``delta``, ``gough_stewart``); ``loops`` is the
    robot's closed-loop model (its URDF tree and loop file). ``oracle_factory``: the
    closed-loop one, fed the tree configuration of the step's platform pose
    (:func:`~rnea_ros.core.platform_tree_state`)."""

    def __init__(self, loops: ClosedLoopModel, config: ControllerConfig,
                 oracle_factory: LoopOracleFactory | None = None) -> None:
        self.robot = parallel_robot(config.loops.parallel, loops.tree, loops)
        self.home = platform_pose_of(self.robot, loops)
        self.platform = PlatformSolver(self.robot, self.home)
        self.reference_platform = PlatformSolver(self.robot, self.home)
        self._carries_passive: dict[tuple[str, ...], bool] = {}
        self.passive_unsolved = 0  # messages with passive encoders whose tree did not close
        self._robot_key: tuple[object, ...] = ()  # what self.robot was built for
        super().__init__(loops, config, oracle_factory)
        self.solver.last = loops.q_reference.copy()  # the passive check's warm start

    # ------------------------------------------------------------ configuration
    def build_stages(self, config: ControllerConfig) -> None:
        if config.loops.parallel not in FAMILIES:
            raise ParameterError("ParallelController needs parameter 'loops.parallel' (one "
                                 f"of {options(FAMILIES)}), got '{config.loops.parallel}'")
        family_mode("parallel", config.mode)  # (control/modes.py) known, or refused
        super().build_stages(config)  # the loop models (gravity, payload), the loop solver
        key = (config.loops.parallel, tuple(config.gravity.tolist()), config.payload)
        if key != self._robot_key:  # (30-50 ms: not for a change of gains or limits)
            self.robot, self._robot_key = parallel_robot(config.loops.parallel, self.full_model,
                                                         self.loops), key
        robot = self.robot
        seconds = solve_seconds(config.watchdog_timeout)
        for solver in (self.platform, self.reference_platform):
            solver.robot, solver.seconds = robot, seconds  # (their last poses stay)
        stages: list[Stage]
        if config.mode == "gravity":
            stages = [PlatformGravityCompensation(robot)]
        elif config.mode == "inverse_dynamics":
            stages = [self.reference, PlatformInverseDynamicsPD(
                robot, config.kp, config.kd, self.reference_platform)]
        else:  # a mode listed in control/modes.py without its stages here
            raise ParameterError(f"parameter 'mode': no stages built for '{config.mode}'")
        self.stages = stages

    def make_oracle(self, config: ControllerConfig) -> Oracle | None:
        inner = super().make_oracle(config)
        if inner is None:
            return None

        def oracle(step: Step) -> Array:
            """The closed-loop oracle at the tree configurations of the step's poses."""
            assert isinstance(step, ParallelStep) and step.x is not None
            step.q_tree = platform_tree_state(self.robot, step.x)[0]
            if step.x_ref is not None:
                step.q_ref_tree = platform_tree_state(self.robot, step.x_ref)[0]
            return inner(step)
        return oracle

    def warm_up(self) -> None:
        """Compile the platform and loop kernels before the first state, and those that
        word a rejection (:func:`~rnea_ros.core.coupling.parallel.warm_up_errors`)."""
        super().warm_up()
        zero = np.zeros(self.robot.nv)
        platform_active_motion(self.robot, self.home, zero, zero)
        platform_inverse_dynamics(self.robot, self.home, zero, zero)
        warm_up_errors(self.robot)

    # --------------------------------------------------------------- computing
    def _compute(self, t: float, now: float, out: Array) -> None:
        started = time.perf_counter()
        qa, qda = self._q.copy(), self._qd.copy()
        if not (np.all(qa >= self._low) and np.all(qa <= self._high)):
            raise RejectedState("joint_limits", self._beyond_limits(qa))
        try:
            x = self.platform.solve(qa)
            assert self.platform.jinv is not None
            xd = _solve(self.platform.jinv, qda)
        except LoopBudgetError as exc:
            raise RejectedState("platform_budget", str(exc)) from None
        except (ParallelRobotError, StateError) as exc:
            raise RejectedState("platform_pose", f"platform pose not solved: {exc}") from None
        if self.reference_platform.last is None:  # the reference starts where the robot is
            self.reference_platform.last = x
        step = ParallelStep(self.model, t, qa, qda, tau=np.zeros(self.loops.n_active), x=x,
                            xd=xd)
        self._run(step, now, t, started, out)

    def hold_torque(self) -> Array:
        """``Gamma`` at rest at the last solved pose (the home pose before any)."""
        x = self.platform.last if self.platform.last is not None else self.home
        zero = np.zeros(self.robot.nv)
        return platform_inverse_dynamics(self.robot, x, zero, zero)

    # ------------------------------------------------------------------ inputs
    def _check_passive(self, names: Sequence[str], position: Sequence[float]) -> None:
        """The passive encoders of a message that carries some, against the tree closed
        at the measured actives (warm-started loop solve)."""
        key = tuple(names)
        carries = self._carries_passive.get(key)
        if carries is None:
            passive = set(self.loops.passive_names)
            carries = any(name in passive for name in key)
            if len(self._carries_passive) < 64:
                self._carries_passive[key] = carries
        if not carries:
            return
        try:
            self.solver.solve(self._q.copy())
        except LoopClosureError:
            self.passive_unsolved += 1
            return
        super()._check_passive(names, position)

    def trajectory(self, joint_names: Sequence[str], times: Array, positions: Array,
                   velocities: Array | None, accelerations: Array | None,
                   start: float) -> None:
        """:meth:`ClosedLoopController.trajectory`, and every point's platform pose
        solved (warm-started along the points, each within the budget), else
        :class:`StateError` naming the point and the previous reference stays."""
        previous = self.reference.trajectory
        super().trajectory(joint_names, times, positions, velocities, accelerations, start)
        trajectory = self.reference.trajectory
        assert trajectory is not None
        solver = PlatformSolver(self.robot, self.home, self.platform.budget)
        solver.last = self.reference_platform.last if self.reference_platform.last is not None \
            else self.platform.last
        for k, qa in enumerate(trajectory.positions):
            try:
                solver.solve(qa)
            except (LoopClosureError, ParallelRobotError, StateError) as exc:
                self.reference.trajectory = previous
                raise StateError(f"trajectory point {k}: no platform pose: {exc}") from None

    # ------------------------------------------------------------- statistics
    def solve_percentiles(self) -> tuple[float, float]:
        """(p50, p99) of the recent measured-state pose solves [us] (0 when none)."""
        return percentiles(self.platform.solve_us)


def platform_pose_of(robot: ParallelRobot, loops: ClosedLoopModel) -> Array:
    """The platform pose at the loop file's reference configuration (its assembly mode):
    the forward geometric model from the robot's zero pose."""
    solver = PlatformSolver(robot, robot.zero_pose)
    try:
        return solver.solve(loops.q_reference[loops.active_index])
    except (LoopClosureError, ParallelRobotError) as exc:
        raise ParameterError(f"model '{robot.name}': no platform pose at the loop file's "
                             f"reference configuration: {exc}") from None


__all__ = [
    "ACTIVE_STEP",
    "LIMIT_MARGIN",
    "PLATFORM_BUDGET",
    "ParallelController",
    "ParallelStep",
    "PlatformGravityCompensation",
    "PlatformInverseDynamicsPD",
    "PlatformSolver",
    "parallel_robot",
    "platform_pose_of",
    "platform_rates",
    "retract",
]
