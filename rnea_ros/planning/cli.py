"""``rnea-plan``'s command line: ``main(argv) -> int``.

    rnea-plan --urdf robot.urdf --from 0 -2 --to 1 -1 [--via ...] \\
              --limits torque=10 torque_rate=400 --out traj.yaml

Limits default to the URDF's (position, velocity, effort); ``--controller-config
config/arm7_controller.yaml`` (the documented way to plan for execution) takes the
controller's ``effort_limits`` and, with its slew limiter on, ``effort_rate_limits``,
times ``--margin`` (0.9), so the executed motion leaves the controller room for its
feedback. ``--limits`` overrides any of ``lower upper velocity torque torque_rate
force`` with one value for all joints or a comma-separated list (``inf`` to drop
one). Writes the JointTrajectory YAML and, unless ``--no-plot``, ``<out>.png``. Exit
1 with one message, and nothing written, on bad input, when the problem is
infeasible or the solver stops. User docs: docs/plan_solver.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import rnea_ros.core as rc
from rnea_ros.core.errors import RneaError
from rnea_ros.planning.errors import PlanningError
from rnea_ros.planning.limits import FIELDS, limits_from_arguments
from rnea_ros.planning.optimize import SOLVERS, Plan, plan_min_time
from rnea_ros.planning.output import plot_plan, write_trajectory
from rnea_ros.tools.files import check_outputs, make_directory, one_line
from rnea_ros.tools.provenance import exit_on_signals, parser, stamp

PROG = "rnea-plan"
MARGIN = 0.9     # --controller-config: plan within this fraction of the controller's limits
# More --via points than this are refused. Measured 2026-11-27 (CPU time, warm): arm7 through
# one via point takes 82 IPOPT iterations, 1.8 s (torque limits only; 148 and 3.6 s before
# branch plan8, 549 and 15 s with L-BFGS), two via points 206 and 7.7 s; each segment adds
# 8 knot spans (7 n variables) and their grid rows, and IPOPT's time per iteration grows
# with the rows (~15 ms at 1100): issue 25's 30 via points in < 10 s is out of reach of
# this NLP.
MAX_VIA = 4
# Sizes bounded before any allocation or solver (a --grid of 1e9 allocated 97 GiB): the NLP
# has grid x spans rows per limit and n x control points variables; adaptive knots stop at
# 150 coordinates (optimize.MAX_ADAPTIVE_VARIABLES), so these bounds leave ample room.
MAX_GRID = 64              # constraint points per knot span
MAX_CONTROL_POINTS = 200   # per joint
MIN_DT = 1e-4              # [s] output step: 10 kHz, above any controller's rate
MAX_SAMPLES = 1_000_000    # output points (T / --dt): about 500 MB of YAML for 7 joints
MAX_ITER = 100_000         # NLP iterations per solve
# The motion's duration implied by the velocity limits alone, sum over segments of
# max_j |dq_j| / v_j, must stay below this: a velocity limit of 1e-300 rad/s made the
# initial T 1e300 s and the NLP's first evaluation NaN.
MAX_DURATION = 3600.0      # [s]


def refuse_loops(urdf: Path) -> None:
    """:class:`PlanningError` when a loop file sits beside ``urdf``: planning the tree's
    joints independently would move the motors with the passive joints fixed, a motion
    that breaks the mechanism (the loop constraint is not in the NLP)."""
    from rnea_ros.core.coupling.loop_file import loop_file_path

    path = loop_file_path(urdf)
    if path.is_file():
        raise PlanningError(f"{path} closes kinematic loops in this URDF: {PROG} plans open "
                            "trees only (closed chains are not supported: the tree's plan "
                            "would move the motors with the passive joints fixed, breaking "
                            "the mechanism); nothing written")


def _parser() -> argparse.ArgumentParser:
    p = parser(PROG, "minimum-time joint trajectory within torque, torque-rate and "
               "internal-force limits (Barman 2020 ch. IV); docs/plan.md")
    p.add_argument("--urdf", type=Path, required=True, help="the robot's URDF")
    p.add_argument("--from", dest="start", type=float, nargs="+", required=True,
                   help="start positions (one per joint)")
    p.add_argument("--to", dest="goal", type=float, nargs="+", required=True,
                   help="goal positions (one per joint)")
    p.add_argument("--via", type=float, nargs="+", action="append", default=[],
                   help="intermediate waypoint (repeatable)")
    p.add_argument("--limits", nargs="+", default=[], metavar="KEY=VALUE",
                   help=f"override limits, KEY in {list(FIELDS)}")
    p.add_argument("--controller-config", type=Path, metavar="FILE",
                   help="plan inside the controller's effort and slew (effort_rate) limits "
                   "of this parameter file (config/<robot>_controller.yaml), times --margin")
    p.add_argument("--margin", type=float, default=MARGIN,
                   help="fraction of the controller's limits planned for (0 < m <= 1)")
    p.add_argument("--end-torque", choices=("rest", "free"),
                   help="torque at both ends: 'rest' (zero acceleration: the torque ramps "
                   "from and to its static value; default with a torque-rate limit) or 'free'")
    p.add_argument("--weight", type=float, default=0.0,
                   help="Barman's u in [0, 1): minimise (1-u) T + u int sum tau^2 dt "
                   "(0: minimum time; u = 1 has no minimum: T grows without bound)")
    p.add_argument("--gravity", type=float, nargs=3, help="override the model's gravity "
                   "[m/s^2, base frame]")
    p.add_argument("--dt", type=float, default=0.01,
                   help=f"output step [s], >= {MIN_DT:g}")
    p.add_argument("--control-points", type=int,
                   help="B-spline control points per joint (fixed basis, no adaptive knots; "
                   f"at most {MAX_CONTROL_POINTS}); default: adaptive")
    p.add_argument("--grid", type=int, default=4,
                   help=f"constraint points per knot interval (1 to {MAX_GRID})")
    p.add_argument("--max-iter", type=int, default=1000,
                   help=f"NLP solver iterations per solve (1 to {MAX_ITER})")
    p.add_argument("--solver", choices=SOLVERS, default="ipopt",
                   help="NLP solver: IPOPT (sparse) or SciPy's SLSQP (dense, small problems)")
    p.add_argument("--tol-T", type=float, default=1e-3,
                   help="adaptive knots: stop when T changes less than this (relative)")
    p.add_argument("--out", type=Path, default=Path("traj.yaml"),
                   help="the JointTrajectory YAML written (and <out>.png)")
    p.add_argument("--no-plot", action="store_true", help="write no <out>.png")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out (and its .png); never an input")
    return p


def _check_arguments(a: argparse.Namespace) -> str | None:
    """The first bad argument, as one line (None when all are fine)."""
    numbers = [a.dt, a.weight, a.margin, a.tol_T, *a.start, *a.goal,
               *(x for v in a.via for x in v), *(a.gravity or [])]
    if not np.isfinite(numbers).all():
        return "need finite numbers (--dt, --weight, --margin, --tol-T, waypoints, --gravity)"
    checks = [
        (a.dt > 0, f"--dt {a.dt:g}: the output step must be > 0 s"),
        (a.dt >= MIN_DT, f"--dt {a.dt:g}: the output step must be >= {MIN_DT:g} s "
         f"({1 / MIN_DT:g} Hz, above any controller's rate)"),
        (0 <= a.weight < 1, f"--weight {a.weight:g}: Barman's u must be in [0, 1) "
         "(eq. 4.18: at u = 1 the objective falls as T grows, no minimum)"),
        (1 <= a.grid <= MAX_GRID, f"--grid {a.grid}: need --grid >= 1 and <= {MAX_GRID} "
         "constraint points per knot span"),
        (1 <= a.max_iter <= MAX_ITER, f"--max-iter {a.max_iter}: need 1 to {MAX_ITER}"),
        (0 < a.margin <= 1, f"--margin {a.margin:g}: need 0 < --margin <= 1"),
        (a.tol_T > 0, f"--tol-T {a.tol_T:g}: need > 0"),
        (len(a.via) <= MAX_VIA, f"{len(a.via)} --via points: at most {MAX_VIA} are planned "
         "(the NLP grows with every segment; split the path into several plans)"),
        (not a.out.is_dir(), f"--out: '{a.out}' is a directory; give a file name"),
    ]
    for ok, message in checks:
        if not ok:
            return message
    if a.control_points is not None and not 4 <= a.control_points <= MAX_CONTROL_POINTS:
        return (f"--control-points {a.control_points}: need --control-points >= 4 and <= "
                f"{MAX_CONTROL_POINTS} (degree + 1 of a cubic B-spline; 5 with a torque-rate "
                "limit, degree 4)")
    if len(a.start) == len(a.goal) and not a.via and np.array_equal(a.start, a.goal):
        return "--from equals --to and no --via: nothing to plan (the robot is there)"
    return None


def check_sizes(waypoints: np.ndarray, velocity: np.ndarray) -> None:
    """:class:`PlanningError` when the velocity limits alone make the motion through
    ``waypoints`` (W, n) last longer than :data:`MAX_DURATION` (no NLP can start from
    such a T: a limit of 1e-300 rad/s gave NaN at the first evaluation)."""
    steps = np.abs(np.diff(waypoints, axis=0))               # (W - 1, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_joint = np.where(steps > 0, steps / velocity, 0.0)
    bound = float(per_joint.max(axis=1).sum())
    if not bound <= MAX_DURATION:
        j = int(np.unravel_index(np.argmax(per_joint), per_joint.shape)[1])
        raise PlanningError(f"the velocity limits make this motion last at least {bound:.3g} "
                            f"s (joint {j + 1}: velocity limit {velocity[j]:.3g}); at most "
                            f"{MAX_DURATION:g} s is planned: check --limits velocity=...")


def check_samples(T: float, dt: float) -> None:
    """:class:`PlanningError` when writing the plan every ``dt`` would exceed
    :data:`MAX_SAMPLES` points."""
    samples = T / dt + 1
    if samples > MAX_SAMPLES:
        raise PlanningError(f"T = {T:.4g} s at --dt {dt:g} is {samples:.3g} points, more than "
                            f"{MAX_SAMPLES}: raise --dt; nothing written")


def controller_limits(model: rc.RobotModel, path: Path, margin: float) -> dict[str, object]:
    """``{torque, torque_rate}`` overrides from a controller parameter file: its
    ``effort_limits`` ([0.0]: the URDF's) and, with ``slew_limit.enable``, its
    ``effort_rate_limits``, per joint of ``model`` (the file's ``joints`` order), times
    ``margin``. :class:`PlanningError` naming the file and the parameter."""
    import yaml

    try:
        params = yaml.safe_load(path.read_text())["/**"]["ros__parameters"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise PlanningError(f"--controller-config '{path}': not a controller parameter "
                            f"file (/**: ros__parameters: ...): {one_line(exc)}") from None
    joints = list(params.get("joints") or model.joint_names)
    unknown = [j for j in joints if j not in model.joint_names]
    if unknown or len(joints) != model.nv:
        raise PlanningError(f"--controller-config '{path}': joints {joints} are not the "
                            f"{model.nv} joints of {model.name} {list(model.joint_names)}")
    index = [joints.index(j) for j in model.joint_names]

    def per_joint(name: str, default: np.ndarray) -> np.ndarray:
        raw = np.asarray(params.get(name, [0.0]), dtype=float).ravel()
        if raw.size == 1:
            raw = np.full(model.nv, raw[0])
        if raw.size != model.nv or not np.all(raw >= 0):
            raise PlanningError(f"--controller-config '{path}': '{name}' needs one value or "
                                f"{model.nv} values >= 0, got {raw.tolist()}")
        raw = raw[index]
        return np.where(raw > 0, raw, default)

    out: dict[str, object] = {"torque": margin * per_joint("effort_limits", model.effort_limit)}
    slew = params.get("slew_limit", {})
    if not isinstance(slew, dict) or slew.get("enable", True):
        out["torque_rate"] = margin * per_joint("effort_rate_limits", np.full(model.nv, 1000.0))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Plan and write; 0 on success, 1 with one message (and no file) otherwise."""
    a = _parser().parse_args(argv)
    exit_on_signals()
    bad = _check_arguments(a)
    if bad:
        print(f"{PROG}: error: {bad}", file=sys.stderr)
        return 1
    try:
        outputs = [a.out] if a.no_plot else [a.out, a.out.with_suffix(".png")]
        check_outputs(outputs, [a.urdf, a.controller_config], force=a.force)
        make_directory(a.out.parent)
        refuse_loops(a.urdf)
        model = (rc.load_urdf(a.urdf) if a.gravity is None
                 else rc.load_urdf(a.urdf, gravity=a.gravity))
        limits = limits_from_arguments(model, a.limits)
        if a.controller_config is not None:
            given = {item.partition("=")[0] for item in a.limits}
            from_controller = controller_limits(model, a.controller_config, a.margin)
            limits = limits.with_(model, **{k: v for k, v in from_controller.items()
                                            if k not in given})
        waypoints = [a.start, *a.via, a.goal]
        for k, w in enumerate(waypoints):
            if len(w) != model.nv:
                raise RneaError(f"waypoint {k} has {len(w)} values; {model.name} has "
                                f"{model.nv} joints {list(model.joint_names)}")
        check_sizes(np.array(waypoints, dtype=float), np.asarray(limits.velocity, dtype=float))
        degree = 4 if np.isfinite(limits.torque_rate).any() else 3
        if a.control_points is not None and a.control_points < degree + 1:
            raise PlanningError(f"--control-points {a.control_points}: a degree-{degree} "
                                f"B-spline needs at least {degree + 1}")
        plan = plan_min_time(model, np.array(waypoints), limits, weight=a.weight,
                             control_points=a.control_points, grid_per_interval=a.grid,
                             max_iter=a.max_iter, solver=a.solver, tol_T=a.tol_T,
                             zero_acceleration=None if a.end_torque is None
                             else a.end_torque == "rest")
        check_samples(plan.T, a.dt)
        write_trajectory(plan, a.out, a.dt,
                         made_by=stamp(PROG, argv, [a.urdf, a.controller_config]))
        if not a.no_plot:
            plot_plan(plan, a.out.with_suffix(".png"))
    except (RneaError, OSError, ValueError) as exc:  # ValueError: numbers the NLP refuses
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    print(f"{PROG}: {model.name}: T = {plan.T:.4f} s ({plan.iterations} {a.solver.upper()} "
          f"iterations, {_refinement_note(plan, a.tol_T)}, {plan.solve_time:.2f} s); worst "
          f"{_ratios(plan)} (10x finer than the grid); wrote {a.out}")
    return 0


def _ratios(plan: Plan) -> str:
    """The summary's worst ratios to the limits, for the limits the plan had (a torque-rate
    or internal-force ratio without its limit read as 0)."""
    c, limits = plan.check, plan.limits
    parts = [f"|tau|/limit {c.torque:.4f}"]
    if np.isfinite(limits.torque_rate).any():
        parts.append(f"|tau_dot|/limit {c.torque_rate:.4f}")
    if np.isfinite(limits.force).any():
        parts.append(f"|F|/limit {c.force:.4f}")
    return ", ".join([*parts, f"|qd|/limit {c.velocity:.4f}"])


STOPS = {"max_intervals": "the knot-span cap was reached",
         "max_knot_refinements": "the refinement rounds ran out",
         "failed": "the next refinement failed; the coarser plan is kept"}


def _refinement_note(plan: Plan, tol_T: float) -> str:
    """The summary's knot-refinement part: the rounds and the last change of T; when none
    was made, why (no change of T to report: it printed 'last change of T nan'); when
    refinement stopped before T changed by less than --tol-T, that T may still be up to
    about the last change above what a finer basis would give."""
    if plan.knot_refinements == 0:
        why = ("--control-points given" if plan.refinement_stop == "off"
               else STOPS.get(plan.refinement_stop, plan.refinement_stop))
        return f"no knot refinement made ({why})"
    rounds = plan.knot_refinements
    note = (f"{rounds} knot refinement{'s' if rounds > 1 else ''}, last change of T "
            f"{plan.T_change:.2g}")
    if plan.refinement_stop not in STOPS or plan.T_change < tol_T:
        return note
    return (f"{note}, NOT below --tol-T {tol_T:g}: {STOPS[plan.refinement_stop]}, T may be "
            "that much above the optimum")


if __name__ == "__main__":
    raise SystemExit(main())
