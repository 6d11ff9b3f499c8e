"""Speed of the analytic RNEA sensitivities against Pinocchio, in one run.

For Panda and UR5 (example-robot-data): per call, our ``rnea_derivatives``
(``dtau/dq``, ``dtau/dqd``, ``M``) against ``pinocchio.computeRNEADerivatives``
(target: ratio <= 1.0); per sample, our ``rnea_derivatives_batch`` over 10^3
samples against ``computeRNEADerivatives`` looped in Python (target: >= 2x
faster); for information, the joint-wrench sensitivities and the ``tau_dot``
sensitivities per call, and both libraries' plain RNEA. Timings are the best
of several repeats of process CPU time, ours and Pinocchio's alternating; the
ratios are what matter (targets from issue 14, sec. 4).

    python bench/bench_derivatives.py [--robots panda ur5] [--samples 1000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pinocchio as pin
import timing  # the script's directory is on sys.path

from rnea_ros.core.dynamics.derivatives import (
    joint_wrench_derivatives,
    rnea_derivatives,
    rnea_derivatives_batch,
    rnea_time_derivative_sensitivities,
)
from rnea_ros.core.dynamics.rnea import rnea
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, robot_urdf

PER_CALL = 1.0  # ours / Pinocchio per call, at most
BATCH = 2.0  # Pinocchio looped / our batch, per sample, at least

Row = tuple[str, float, float, str, bool]


def best_times(fns: Sequence[Callable[[], Any]], number: int, repeat: int = 15) -> list[float]:
    """Best per-call CPU time [s] of each of ``fns`` (:func:`timing.best_times` on the
    process's CPU time: a machine shared with other jobs slows all of them alike)."""
    return timing.best_times(fns, number, repeat, timer=time.process_time)


def bench_robot(name: str, samples: int, calls: int) -> list[Row]:
    model = load_robot(name).without_friction()
    oracle = PinocchioOracle(robot_urdf(name), model)
    pm, pd = oracle.pm, oracle.pd
    rng = np.random.default_rng(0)
    q, qd, qdd, qddd = (rng.uniform(-1, 1, model.nv) for _ in range(4))
    pq, pv, pa = oracle.config(q), oracle.tangent(qd), oracle.tangent(qdd)

    ours = lambda: rnea_derivatives(model, q, qd, qdd)  # noqa: E731
    theirs = lambda: pin.computeRNEADerivatives(pm, pd, pq, pv, pa)  # noqa: E731
    ours(), theirs()
    t_ours, t_pin = best_times((ours, theirs), calls)
    rows: list[Row] = [("rnea_derivatives per call", t_ours, t_pin,
                        f"ours/pin <= {PER_CALL} (got {t_ours / t_pin:.2f})",
                        t_ours / t_pin <= PER_CALL)]

    Q, QD, QDD = (rng.uniform(-1, 1, (samples, model.nv)) for _ in range(3))
    PQ = [oracle.config(x) for x in Q]
    PV, PA = ([oracle.tangent(x) for x in X] for X in (QD, QDD))

    def pin_loop() -> None:
        for x, xd, xdd in zip(PQ, PV, PA, strict=True):
            pin.computeRNEADerivatives(pm, pd, x, xd, xdd)

    rnea_derivatives_batch(model, Q[:2], QD[:2], QDD[:2])
    t_batch, t_loop = (t / samples for t in best_times(
        (lambda: rnea_derivatives_batch(model, Q, QD, QDD), pin_loop), 1, 7))
    rows.append((f"batch ({samples} samples), per sample", t_batch, t_loop,
                 f"pin/ours >= {BATCH} (got {t_loop / t_batch:.2f})", t_loop / t_batch >= BATCH))

    wrench = lambda: joint_wrench_derivatives(model, q, qd, qdd)  # noqa: E731
    sens = lambda: rnea_time_derivative_sensitivities(model, q, qd, qdd, qddd)  # noqa: E731
    ours_rnea = lambda: rnea(model, q, qd, qdd)  # noqa: E731
    pin_rnea = lambda: pin.rnea(pm, pd, pq, pv, pa)  # noqa: E731
    for f in (wrench, sens, ours_rnea, pin_rnea):
        f()
    t_w, t_s = best_times((wrench, sens), calls // 4, 7)
    t_r, t_pr = best_times((ours_rnea, pin_rnea), calls)
    rows.append(("joint wrench sensitivities per call", t_w, t_pin,
                 "(information: vs computeRNEADerivatives)", True))
    rows.append(("tau_dot sensitivities per call", t_s, t_pin,
                 "(information: vs computeRNEADerivatives)", True))
    rows.append(("rnea per call", t_r, t_pr,
                 f"(information: derivatives/rnea ours {t_ours / t_r:.1f}, "
                 f"pin {t_pin / t_pr:.1f})", True))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="RNEA sensitivities' speed against Pinocchio")
    parser.add_argument("--robots", nargs="+", default=["panda", "ur5"])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=5000, help="calls per timing repeat")
    args = parser.parse_args(argv)
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'robot':<8}{'measure':<38}{'ours us':>9}{'pin us':>9}  target")
    failures = 0
    for name in args.robots:
        for label, t_ours, t_pin, target, ok in bench_robot(name, args.samples, args.calls):
            print(f"{name:<8}{label:<38}{t_ours * 1e6:9.3f}{t_pin * 1e6:9.3f}  {target} "
                  f"{'ok' if ok else 'MISSED'}")
            failures += not ok
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
