"""The torque controller for closed-loop robots (a URDF spanning tree + a loop file,
:mod:`rnea_ros.core.coupling`), free of ROS.

Only the **active** joints are measured, merged and commanded: the joint states
must carry every active joint (position, and velocity in ``inverse_dynamics``);
the passive joints are solved from them on every message (Newton on the loop
closure, Khalil 2010 eq. 3, warm-started from the previous solution so it stays
in the same assembly mode: :func:`~rnea_ros.core.coupling.loop_kinematics.solve_loops`),
and the torques are the closed-loop inverse dynamics projected on the active
joints, ``tau_a = G^T tau_tree`` (eq. 55-57,
:func:`~rnea_ros.core.coupling.loop_dynamics.loop_rnea`):

* ``gravity``: ``tau_a = G^T g_tree(q)`` at the measured, closed ``q``
  (+ ``G^T F(G qd_a)``, every tree joint's friction, with ``friction_compensation``);
* ``inverse_dynamics``: the reference is in active coordinates (trajectories name
  the active joints); its passive joints are solved too (a second warm-started
  solve), ``tau_a = G^T ID_tree(q_d, qd_d, qdd_d) + Kp (q_a,d - q_a) + Kd (qd_a,d - qd_a)``.

A measured state at which the loops cannot close, or close only at a singular
configuration (passive joints not determined), is **rejected** (``loop_closure``),
counted, and produces no command: the last command stays, then the watchdog's
``hold`` (gravity compensation at the last closed configuration). A reference that
cannot close is rejected likewise (``loop_reference``); trajectories are checked at
their points when received. Good states afterwards are used again (the solver
restarts from the last closed configuration).

One message must not stall the executor (and starve the watchdog): each solve is
capped at :data:`SOLVE_BUDGET` Newton iterations (deterministic; ~1-3 us each on the
sample robots), with a wall-time backstop of :func:`solve_seconds` (a fifth of
``watchdog_timeout``, at most 20 ms); a state not solved within it is rejected
(``loop_budget``). A continuous active joint's angle counts modulo a turn (a far but
legal crank angle is solved from the nearest equivalent one); a revolute or
prismatic active joint more than :data:`LIMIT_MARGIN` beyond its URDF limits is
rejected before solving (``joint_limits``: an encoder fault, not a pose).

Passive-joint encoders, when the joint states carry them, are a consistency check
only: their deviation from the solved passive positions (angles wrapped to
[-pi, pi)) is kept (:attr:`ClosedLoopController.passive_deviation`, its maximum,
the count above ``loops.passive_tolerance``) for ``/diagnostics``.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.controller import Oracle, RejectedState, Result, TorqueController
from rnea_ros.control.laws import Stage, Step
from rnea_ros.control.modes import family_mode
from rnea_ros.core.coupling.loop_build import build_loops
from rnea_ros.core.coupling.loop_dynamics import loop_gravity, loop_rnea
from rnea_ros.core.coupling.loop_kinematics import (
    loop_jacobian,
    loop_velocities,
    solve_loops,
    solve_loops_batch,
)
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.rnea import friction_torques
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import (
    LoopBudgetError,
    LoopClosureError,
    ParameterError,
    StateError,
    options,
)
from rnea_ros.core.model.payload import with_payload
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]
LoopOracleFactory = Callable[[ClosedLoopModel, ControllerConfig], Oracle]

SOLVE_BUDGET = 2000  # Newton iterations per solve: a few ms on the sample robots
LIMIT_MARGIN = 0.5  # [rad or m] beyond a revolute/prismatic active joint's limits: rejected


def solve_seconds(watchdog_timeout: float) -> float:
    """The wall-time backstop of one solve [s]: well inside one watchdog period."""
    return min(0.02, 0.2 * watchdog_timeout)


class LoopSolver:
    """Tree configurations closing the loops from active positions, each solve
    warm-started from the previous solution (``last``) and bounded by ``budget``
    Newton iterations and ``seconds`` of wall time; times every solve [us]."""

    def __init__(self, model: ClosedLoopModel, budget: int = SOLVE_BUDGET,
                 seconds: float | None = None) -> None:
        self.model, self.budget, self.seconds = model, budget, seconds
        self.last: Array | None = None  # the last closed tree configuration (n,)
        self.solve_us: deque[float] = deque(maxlen=5000)

    def solve(self, q_active: Array) -> Array:
        """The closed tree configuration (n,) at ``q_active`` (N,); raises
        :class:`~rnea_ros.core.errors.LoopClosureError` (``last`` unchanged),
        :class:`~rnea_ros.core.errors.LoopBudgetError` when out of budget."""
        started = time.perf_counter()
        try:
            q = solve_loops(self.model, q_active, self.last, budget=self.budget,
                            seconds=self.seconds)
        finally:
            self.solve_us.append((time.perf_counter() - started) * 1e6)
        self.last = q
        return q


@dataclass
class LoopStep(Step):
    """A control step of a closed-loop robot: ``q``, ``qd``, the reference and ``tau``
    are active (N,); ``q_tree`` is the measured configuration closed by the solver (n,)."""

    q_tree: Array | None = None
    q_ref_tree: Array | None = None  # inverse_dynamics: the reference closed by its solver


class LoopGravityCompensation:
    """``tau += G^T g_tree(q)`` [+ ``G^T F(G qd_a)`` with friction] at the closed ``q_tree``."""

    def __init__(self, model: ClosedLoopModel, friction: bool) -> None:
        self.model, self.friction = model, friction

    def __call__(self, step: Step) -> None:
        assert isinstance(step, LoopStep) and step.q_tree is not None
        g = loop_gravity(self.model, step.q_tree)
        step.model_torque = g
        step.tau += g
        if self.friction:
            qd = loop_velocities(self.model, step.q_tree, step.qd)
            step.tau += loop_jacobian(self.model, step.q_tree).T @ \
                friction_torques(self.model.tree, qd)


class LoopInverseDynamicsPD:
    """``tau += G^T ID_tree(q_d, qd_d, qdd_d) + Kp e + Kd de`` in active coordinates
    (a continuous joint's ``e`` wrapped to [-pi, pi)); the reference's passive joints
    from ``solver`` (``loop_reference`` rejection if it cannot close)."""

    def __init__(self, model: ClosedLoopModel, kp: Array, kd: Array, solver: LoopSolver
                 ) -> None:
        self.model, self.kp, self.kd, self.solver = model, kp, kd, solver
        self.continuous = model.active_period > 0.0  # (N,)

    def __call__(self, step: Step) -> None:
        assert step.q_ref is not None and step.qd_ref is not None and step.qdd_ref is not None
        try:
            q_ref = self.solver.solve(step.q_ref)
        except LoopClosureError as exc:
            raise RejectedState("loop_reference", f"reference: {exc}") from None
        if isinstance(step, LoopStep):
            step.q_ref_tree = q_ref
        ff = loop_rnea(self.model, q_ref, step.qd_ref, step.qdd_ref)
        step.model_torque = ff
        error = step.q_ref - step.q
        if self.continuous.any():  # an angle modulo a turn: the shortest way round
            error = wrapped(error, self.continuous)
        step.tau += ff + self.kp * error + self.kd * (step.qd_ref - step.qd)


def closed(loops: ClosedLoopModel, tree: RobotModel) -> ClosedLoopModel:
    """``loops`` on another tree of the same kinematics (gravity, payload, friction)."""
    return build_loops(tree, loops.loops, loops.active, loops.q_reference)


def wrapped(delta: Array, rotational: NDArray[np.bool_]) -> Array:
    """Position differences with angles wrapped to [-pi, pi)."""
    out: Array = np.where(rotational, (delta + math.pi) % (2 * math.pi) - math.pi, delta)
    return out


def percentiles(samples: Iterable[float]) -> tuple[float, float]:
    """(p50, p99) of recent solve times ``samples`` [us]; (0, 0) when there are none."""
    values = np.fromiter(samples, float)
    if values.size == 0:
        return 0.0, 0.0
    p50, p99 = np.percentile(values, [50, 99])
    return float(p50), float(p99)


class ClosedLoopController(TorqueController):
    """:class:`TorqueController` for a closed-loop robot (see the module docstring).

    ``config`` comes from :func:`~rnea_ros.control.config.controller_config` with
    ``loops``: commanded joints, gains and limits are per active joint.
    ``oracle_factory`` receives the controller's closed-loop model.
    """

    loops: ClosedLoopModel  # never None here (the base class: None for serial robots)

    def __init__(self, loops: ClosedLoopModel, config: ControllerConfig,
                 oracle_factory: LoopOracleFactory | None = None) -> None:
        self.loops = self.loop_model = self.full_loops = loops
        self.solver = LoopSolver(loops)
        self.reference_solver = LoopSolver(loops)
        self.loop_oracle_factory = oracle_factory
        self.passive_deviation = 0.0  # last check: largest |measured - solved| [rad, m]
        self.passive_deviation_max = 0.0
        self.passive_worst = ""  # the joint of the last check's largest deviation
        self.passive_checks = 0
        self.passive_mismatches = 0  # checks above loops.passive_tolerance
        self._period = (0.0, 0, "")  # since the last passive_period(): max, mismatches, joint
        self._passive_cache: dict[tuple[str, ...], tuple[NDArray[np.int64],
                                                         NDArray[np.int64]]] = {}
        tree = loops.tree
        self._rotational = np.array([t != "prismatic" for t in tree.joint_types])
        index = loops.active_index
        self._low = tree.lower_limit[index] - LIMIT_MARGIN  # continuous: -inf
        self._high = tree.upper_limit[index] + LIMIT_MARGIN
        super().__init__(tree, config)

    # ------------------------------------------------------------ configuration
    def measured_names(self, model: RobotModel, elastic: ElasticModel | None
                       ) -> tuple[str, ...]:
        return self.loops.active_names

    @property
    def reference_names(self) -> tuple[str, ...]:
        return self.loops.active_names

    def build_stages(self, config: ControllerConfig) -> None:
        tree = self.loops.tree.replace(gravity=config.gravity,  # the Coulomb law's band too
                                       coulomb_band=float(config.friction.coulomb_band))
        if config.payload is not None:
            tree = with_payload(tree, config.payload)
        self.full_loops = closed(self.loops, tree)
        self.loop_model = self.full_loops if config.friction_compensation else \
            closed(self.loops, tree.without_friction())
        self.full_model, self.model = self.full_loops.tree, self.loop_model.tree
        # The solvers keep their last solutions: the kinematics did not change.
        self.solver.model = self.reference_solver.model = self.loop_model
        self.solver.seconds = self.reference_solver.seconds = \
            solve_seconds(config.watchdog_timeout)
        self.reference.snap = False
        self.reference.scaling = None
        family_mode("closed_chain", config.mode)  # (control/modes.py) known, or refused
        stages: list[Stage]
        if config.mode == "gravity":
            stages = [LoopGravityCompensation(self.loop_model, config.friction_compensation)]
        elif config.mode == "inverse_dynamics":
            stages = [self.reference, LoopInverseDynamicsPD(self.loop_model, config.kp,
                                                            config.kd, self.reference_solver)]
        else:  # a mode listed in control/modes.py without its stages here
            raise ParameterError(f"parameter 'mode': no stages built for '{config.mode}'")
        self.stages = stages

    def make_oracle(self, config: ControllerConfig) -> Oracle | None:
        factory = self.loop_oracle_factory
        return factory(self.loop_model, config) if config.oracle.enable and factory else None

    def warm_up(self) -> None:
        """Compile the kernels (closure, gravity, inverse dynamics) before the first state."""
        q, z = self.loops.q_reference, np.zeros(self.loops.n_active)
        solve_loops(self.loop_model, q[self.loops.active_index], q)
        loop_gravity(self.full_loops, q)
        loop_rnea(self.loop_model, q, z, z)

    # --------------------------------------------------------------- computing
    def _compute(self, t: float, now: float, out: Array) -> None:
        started = time.perf_counter()
        qa, qda = self._q.copy(), self._qd.copy()
        if not (np.all(qa >= self._low) and np.all(qa <= self._high)):
            raise RejectedState("joint_limits", self._beyond_limits(qa))
        try:
            q_tree = self.solver.solve(qa)
        except LoopBudgetError as exc:
            raise RejectedState("loop_budget", str(exc)) from None
        except LoopClosureError as exc:
            raise RejectedState("loop_closure", str(exc)) from None
        if self.reference_solver.last is None:  # the reference starts where the robot is
            self.reference_solver.last = q_tree
        step = LoopStep(self.model, t, qa, qda, tau=np.zeros(self.loops.n_active),
                        q_tree=q_tree)
        self._run(step, now, t, started, out)

    def _beyond_limits(self, qa: Array) -> str:
        """The message for active positions beyond their limits + :data:`LIMIT_MARGIN`."""
        tree, index = self.loops.tree, self.loops.active_index
        bad = [f"'{name}' = {q:.6g} (limits [{tree.lower_limit[j]:g}, "
               f"{tree.upper_limit[j]:g}])"
               for name, q, j, lo, hi in zip(self.loops.active_names, qa, index, self._low,
                                             self._high, strict=True) if not lo <= q <= hi]
        return (f"active joint(s) {', '.join(bad)} beyond the URDF limits by more than "
                f"{LIMIT_MARGIN:g} rad or m: not a pose of the mechanism, not solved")

    def hold_torque(self) -> Array:
        """Gravity compensation at the last closed configuration."""
        q = self.solver.last if self.solver.last is not None else self.loops.q_reference
        return loop_gravity(self.full_loops, q)

    # ------------------------------------------------------------------ inputs
    def joint_state(self, names: Sequence[str], position: Sequence[float],
                    velocity: Sequence[float], stamp: float, now: float | None = None,
                    out: Array | None = None) -> Result:
        """:meth:`TorqueController.joint_state` on the active joints, then the passive
        encoders of the message (if any) checked against the solution."""
        result = super().joint_state(names, position, velocity, stamp, now, out)
        if result.reason is None and self.solver.last is not None:
            self._check_passive(names, position)
        return result

    def _check_passive(self, names: Sequence[str], position: Sequence[float]) -> None:
        key = tuple(names)
        cached = self._passive_cache.get(key)
        if cached is None:
            where = {name: k for k, name in enumerate(key)}
            passive = self.loops.passive_names
            found = [i for i, name in enumerate(passive) if name in where]
            cached = (np.array([where[passive[i]] for i in found], dtype=np.int64),
                      np.array(found, dtype=np.int64))
            if len(self._passive_cache) < 64:
                self._passive_cache[key] = cached
        msg_idx, passive_idx = cached
        if not passive_idx.size:
            return
        measured = np.asarray(position, dtype=np.float64)[msg_idx]
        if not np.all(np.isfinite(measured)):
            return
        assert self.solver.last is not None
        tree_idx = self.loops.passive_index[passive_idx]
        deviation = np.abs(wrapped(measured - self.solver.last[tree_idx],
                                   self._rotational[tree_idx]))
        worst = int(np.argmax(deviation))
        self.passive_deviation = float(deviation[worst])
        self.passive_worst = self.loops.passive_names[int(passive_idx[worst])]
        self.passive_deviation_max = max(self.passive_deviation_max, self.passive_deviation)
        self.passive_checks += 1
        largest, mismatches, joint = self._period
        if self.passive_deviation > largest:
            largest, joint = self.passive_deviation, self.passive_worst
        if self.passive_deviation > self.config.loops.passive_tolerance:
            self.passive_mismatches += 1
            mismatches += 1
        self._period = (largest, mismatches, joint)

    def passive_period(self) -> tuple[float, int, str]:
        """Since the previous call: the largest passive-encoder deviation [rad or m], the
        checks above the tolerance and the joint of the largest (for periodic reports:
        a wrong encoder is seen even when correct messages come in between)."""
        period, self._period = self._period, (0.0, 0, "")
        return period

    @property
    def passive_alarm(self) -> str:
        """A message when the last passive-encoder check exceeded the tolerance, else ''."""
        if self.passive_checks == 0 or \
                not self.passive_deviation > self.config.loops.passive_tolerance:
            return ""
        return (f"passive encoder '{self.passive_worst}' is {self.passive_deviation:.4g} "
                f"(rad or m) from the position solved from the active joints (tolerance "
                f"{self.config.loops.passive_tolerance:g}): a wrong encoder, a wrong loop file, or "
                "the mechanism in another assembly mode")

    def trajectory(self, joint_names: Sequence[str], times: Array, positions: Array,
                   velocities: Array | None, accelerations: Array | None,
                   start: float) -> None:
        """:meth:`TorqueController.trajectory` in active joints; its points must close
        the loops (checked along them, warm-started from the current reference), else
        :class:`StateError` and the previous reference stays."""
        passive = [j for j in joint_names if j in self.loops.passive_names]
        if passive:
            raise StateError(f"trajectory names passive joints {options(passive)}: a "
                             f"closed-loop robot's trajectories name its active joints "
                             f"{options(self.loops.active_names)}")
        previous = self.reference.trajectory
        super().trajectory(joint_names, times, positions, velocities, accelerations, start)
        trajectory = self.reference.trajectory
        assert trajectory is not None
        guess = self.reference_solver.last if self.reference_solver.last is not None \
            else self.solver.last
        try:
            solve_loops_batch(self.loop_model, trajectory.positions, guess,
                              budget=self.reference_solver.budget)
        except (LoopClosureError, StateError) as exc:
            self.reference.trajectory = previous
            raise StateError(f"trajectory does not close the loops: {exc}") from None

    # ------------------------------------------------------------- statistics
    def loop_values(self, recent: int, span: str) -> dict[str, str]:
        """The diagnostics of the loops: their names, solve times, passive-encoder
        checks (``recent``: mismatches over the last ``span``)."""
        deviation, mismatches, where = self.passive_period()
        s50, s99 = self.solve_percentiles()
        return {
            "closed loops": ", ".join(lp.name for lp in self.loops.loops),
            "loop solve p50 [us]": f"{s50:.1f}",
            "loop solve p99 [us]": f"{s99:.1f}",
            "passive encoder checks": str(self.passive_checks),
            "passive encoder deviation [rad or m]": f"{deviation:.3e}"
            + (f" ({where})" if where else ""),
            "passive encoder mismatches (period)": str(mismatches),
            f"passive encoder mismatches ({span})": str(recent),
            "passive encoder max deviation [rad or m]": f"{self.passive_deviation_max:.3e}",
            "passive encoder mismatches": str(self.passive_mismatches),
        }

    def solve_percentiles(self) -> tuple[float, float]:
        """(p50, p99) of the recent measured-state loop solves [us] (0 when none)."""
        return percentiles(self.solver.solve_us)
