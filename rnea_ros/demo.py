"""Demo: load the sample robots, print gravity torques and the agreement with Pinocchio.

Run with ``make demo`` (or ``python -m rnea_ros.demo``). For each robot it
prints ``g(q)`` at a random pose and the largest relative difference to
Pinocchio over random states for RNEA, gravity, mass matrix and forward
dynamics, then exits non-zero if any exceeds 1e-9.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np

from rnea_ros.core.aba import aba
from rnea_ros.core.crba import mass_matrix
from rnea_ros.core.errors import InertiaWarning, RneaError
from rnea_ros.core.rnea import gravity_torques, rnea
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import SAMPLE_ROBOTS, load_robot, robot_urdf

TOLERANCE = 1e-9
DEFAULT_ROBOTS = (*SAMPLE_ROBOTS, "panda", "ur5", "kinova", "baxter")


def _relative(ours: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12))


def check_robot(name: str, samples: int, rng: np.random.Generator) -> tuple[str, float]:
    """One line of the report and the worst relative error for robot ``name``."""
    model = load_robot(name).without_friction()
    oracle = PinocchioOracle(robot_urdf(name), model)
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -np.pi)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, np.pi)
    worst = 0.0
    for _ in range(samples):
        q = rng.uniform(lo, hi)
        qd, qdd = rng.normal(0, 2, model.nv), rng.normal(0, 5, model.nv)
        worst = max(worst,
                    _relative(rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd)),
                    _relative(gravity_torques(model, q), oracle.gravity(q)),
                    _relative(mass_matrix(model, q), oracle.mass_matrix(q)),
                    _relative(aba(model, q, qd, qdd), oracle.aba(q, qd, qdd)))
    q = rng.uniform(lo, hi)
    g = gravity_torques(model, q)
    start = time.perf_counter()
    for _ in range(2000):
        gravity_torques(model, q)
    per_call = (time.perf_counter() - start) / 2000 * 1e6
    shown = " ".join(f"{x:8.3f}" for x in g[:7]) + (" ..." if model.nv > 7 else "")
    line = f"{name:<16}{model.nv:>4}  {shown:<68}{worst:10.1e}{per_call:8.2f}"
    return line, worst


def main(argv: Sequence[str] | None = None) -> int:
    """Print the report; return 0 when every robot agrees with Pinocchio to 1e-9."""
    parser = argparse.ArgumentParser(prog="rnea-demo", description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=list(DEFAULT_ROBOTS),
                        help="sample or example-robot-data robot names")
    parser.add_argument("--samples", type=int, default=1000,
                        help="random states per robot for the Pinocchio check")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("rnea_ros: gravity torques g(q) at a random pose [N m or N], and the largest\n"
          f"relative difference to Pinocchio over {args.samples} random states "
          "(RNEA, g, M, ABA).\n")
    print(f"{'robot':<16}{'dof':>4}  {'g(q) (first 7 joints)':<68}{'max rel.':>10}"
          f"{'g us':>8}")
    worst = 0.0
    for name in args.robots:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InertiaWarning)
                line, err = check_robot(name, args.samples, rng)
        except RneaError as exc:
            print(f"{name:<16} error: {exc}")
            return 2
        print(line)
        worst = max(worst, err)
    ok = worst <= TOLERANCE
    print(f"\nworst relative difference {worst:.1e} "
          f"({'within' if ok else 'ABOVE'} the {TOLERANCE:g} tolerance)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
