"""``rnea-plan``'s command line: ``main(argv) -> int``.

    rnea-plan --urdf robot.urdf --from 0 -2 --to 1 -1 [--via ...] \\
              --limits torque=10 torque_rate=400 --out traj.yaml

Limits default to the URDF's (position, velocity, effort); ``--limits``
overrides any of ``lower upper velocity torque torque_rate force`` with one
value for all joints or a comma-separated list (``inf`` to drop one). Writes
the JointTrajectory YAML and, unless ``--no-plot``, ``<out>.png``. Exit 1
with one message, and nothing written, when the problem is infeasible or the
solver stops.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import rnea_ros.core as rc
from rnea_ros.core.errors import PlanningError, RneaError
from rnea_ros.planning.limits import FIELDS, limits_from_arguments
from rnea_ros.planning.optimize import plan_min_time
from rnea_ros.planning.output import plot_plan, write_trajectory
from rnea_ros.tools.files import check_outputs, one_line

PROG = "rnea-plan"


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
    p = argparse.ArgumentParser(prog=PROG, description="minimum-time joint trajectory "
                                "within torque, torque-rate and internal-force limits")
    p.add_argument("--urdf", type=Path, required=True)
    p.add_argument("--from", dest="start", type=float, nargs="+", required=True,
                   help="start positions (one per joint)")
    p.add_argument("--to", dest="goal", type=float, nargs="+", required=True)
    p.add_argument("--via", type=float, nargs="+", action="append", default=[],
                   help="intermediate waypoint (repeatable)")
    p.add_argument("--limits", nargs="+", default=[], metavar="KEY=VALUE",
                   help=f"override limits, KEY in {list(FIELDS)}")
    p.add_argument("--weight", type=float, default=0.0,
                   help="Barman's u: minimise (1-u) T + u int sum tau^2 dt (0: minimum time)")
    p.add_argument("--gravity", type=float, nargs=3, help="override the model's gravity")
    p.add_argument("--dt", type=float, default=0.01, help="output step [s]")
    p.add_argument("--control-points", type=int)
    p.add_argument("--grid", type=int, default=4, help="constraint points per knot interval")
    p.add_argument("--max-iter", type=int, default=300, help="SLSQP iterations")
    p.add_argument("--out", type=Path, default=Path("traj.yaml"))
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out (and its .png); never an input")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Plan and write; 0 on success, 1 with one message (and no file) otherwise."""
    a = _parser().parse_args(argv)
    numbers = [a.dt, a.weight, *a.start, *a.goal, *(x for v in a.via for x in v),
               *(a.gravity or [])]
    if not (0 < a.dt < np.inf and 0 <= a.weight <= 1 and np.isfinite(numbers).all()
            and a.grid >= 1 and a.max_iter >= 1
            and (a.control_points is None or a.control_points >= 4)):
        print(f"{PROG}: error: need finite numbers, --dt > 0, 0 <= --weight <= 1, --grid >= 1, "
              "--max-iter >= 1, --control-points >= 4 (a cubic B-spline)", file=sys.stderr)
        return 1
    try:
        outputs = [a.out] if a.no_plot else [a.out, a.out.with_suffix(".png")]
        check_outputs(outputs, [a.urdf], force=a.force)
        refuse_loops(a.urdf)
        model = (rc.load_urdf(a.urdf) if a.gravity is None
                 else rc.load_urdf(a.urdf, gravity=a.gravity))
        limits = limits_from_arguments(model, a.limits)
        waypoints = [a.start, *a.via, a.goal]
        for k, w in enumerate(waypoints):
            if len(w) != model.nv:
                raise RneaError(f"waypoint {k} has {len(w)} values; {model.name} has "
                                f"{model.nv} joints {list(model.joint_names)}")
        plan = plan_min_time(model, np.array(waypoints), limits, weight=a.weight,
                             control_points=a.control_points, grid_per_interval=a.grid,
                             max_iter=a.max_iter)
        write_trajectory(plan, a.out, a.dt)
        if not a.no_plot:
            plot_plan(plan, a.out.with_suffix(".png"))
    except (RneaError, OSError, ValueError) as exc:  # ValueError: numbers the NLP refuses
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    c = plan.check
    print(f"{PROG}: {model.name}: T = {plan.T:.4f} s ({plan.iterations} SLSQP iterations, "
          f"{plan.solve_time:.2f} s); worst |tau|/limit {c.torque:.4f}, |tau_dot|/limit "
          f"{c.torque_rate:.4f}, |qd|/limit {c.velocity:.4f} (10x finer than the grid); "
          f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
