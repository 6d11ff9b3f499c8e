"""Speed of the closed-loop dynamics (Khalil 2010 §4) against our RNEA on the same tree.

For each closed-loop sample robot (four-bar, five-bar, palletizer), per call:

* ``rc.loop_rnea`` (active torques from a closed ``q`` and the active rates:
  eq. 4 and its derivative, the tree's RNEA, ``G^T``) against ``rc.rnea`` on the
  equivalent tree at the consistent state -- target: at most 3x;
* ``rc.solve_loops`` warm-started from the previous sample of a 1 kHz
  trajectory (the Newton solve of eq. 3, reported separately);
* ``rc.loop_forward_dynamics`` (eq. 58) against Pinocchio's
  ``constraintDynamics`` (information: a different algorithm, proximal
  Cholesky on the tree with 3D point constraints);

and per sample over 10^4 samples, ``rc.loop_rnea_batch`` against
``rc.rnea_batch`` on the tree. Times are the best of interleaved repeats; the
ratios, measured in the same run, are what matter. ``--stages`` adds where the
batch's time goes (issue 28): the batch kernel's stages run cumulatively in one
compiled loop (``stage_times``), each increment against the tree's batch
kernel per sample.

    python bench/bench_loops.py [--stages]   # or: make bench
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
import pinocchio as pin
from timing import best_times  # the script's directory is on sys.path

import rnea_ros.core as rc
from rnea_ros.core.coupling._loop_dynamics_jit import inverse_dynamics
from rnea_ros.core.coupling._loop_jit import (
    WS_COLS,
    constraint_jacobian,
    factor_passive,
    loop_poses,
    qr_solve,
    residual,
    solve_passive,
    views,
    workspace_rows,
)
from rnea_ros.core.coupling._loop_kinematics_jit import (
    motion_pass,
    pose_pass,
    relative_acceleration,
)
from rnea_ros.core.dynamics._rnea_jit import rnea_rows
from rnea_ros.loop_oracle import pinocchio_constraints
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import LOOP_ROBOTS, load_loop_robot, robot_urdf

LOOP_OF_RNEA = 3.0  # loop_rnea / rnea on the tree, per call, at most




def trajectory(model: rc.ClosedLoopModel, samples: int, rate: float = 1000.0
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Active positions, velocities, accelerations of a smooth motion sampled at ``rate``
    Hz, within half the active joints' ranges around the reference."""
    t = np.arange(samples) / rate
    a = model.active_index
    tree = model.tree
    ref = model.q_reference[a]
    half = np.where(np.isfinite(tree.upper_limit[a] - tree.lower_limit[a]),
                    0.25 * (tree.upper_limit[a] - tree.lower_limit[a]), 1.0)
    w = 2.0 * np.pi * (0.5 + 0.3 * np.arange(a.size))
    QA = ref + half * np.sin(np.outer(t, w))
    QD = half * w * np.cos(np.outer(t, w))
    QDD = -half * w**2 * np.sin(np.outer(t, w))
    return QA, QD, QDD


STAGES = ("work-array views", "tree poses + loop poses", "K + closure residual",
          "QR of K_p", "passive velocities", "motion pass + gamma + passive qdd",
          "passive qdd added + backward + cut wrenches")


@numba.njit
def _staged(fp: Any, lp: Any, perm: Any, Q: Any, QDA: Any, QDDA: Any, g: Any, TAU: Any,
            LAM: Any, stage: int) -> float:  # pragma: no cover (compiled)
    """``inverse_dynamics_rows`` up to ``stage`` (0-5: the stages of ``closed_state``
    in its order, 6: the whole ``inverse_dynamics``), for the stage shares."""
    n, na, m = Q.shape[1], QDA.shape[1], LAM.shape[1]
    p = n - na
    qd, qdd = np.empty(n), np.empty(n)
    buf = np.empty((workspace_rows(n, m, p, lp.shape[0]), WS_COLS))
    a0 = (-g[0], -g[1], -g[2])
    acc = 0.0
    for k in range(Q.shape[0]):
        q, qda, qdda = Q[k], QDA[k], QDDA[k]
        if stage == 6:
            acc += inverse_dynamics(fp, lp, perm, q, qda, qdda, g, 1e-6, TAU[k], qd, qdd,
                                    LAM[k], buf)
            continue
        work, P, _, F, K, A, b, rdiag, tau, xp, _, _ = views(buf, n, m, p, lp.shape[0])
        if stage >= 1:
            pose_pass(fp, q, work, P)
            loop_poses(lp, P, F)
        if stage >= 2:
            constraint_jacobian(fp, lp, P, F, K)
            acc += residual(lp, F, b)
        if stage >= 3:
            acc += factor_passive(K, perm, na, A, rdiag, tau)
        if stage >= 4:
            solve_passive(K, perm, na, qda, b, False, A, rdiag, tau, b, xp)
            for c in range(na):
                qd[perm[c]], qdd[perm[c]] = qda[c], qdda[c]
            for c in range(p):
                qd[perm[na + c]], qdd[perm[na + c]] = xp[c], 0.0
        if stage >= 5:
            motion_pass(fp, qd, qdd, a0, work)
            relative_acceleration(lp, F, work, a0, b)
            qr_solve(A, m, p, rdiag, tau, b, xp)
    return acc


def stage_times(model: rc.ClosedLoopModel, Q: np.ndarray, QDA: np.ndarray,
                QDDA: np.ndarray, QD: np.ndarray, QDD: np.ndarray
                ) -> list[tuple[str, float, float, float, bool | None]]:
    """Per-sample increment of each stage of the closed-loop batch, against the tree's
    batch kernel ``rnea_rows`` at the consistent states (best of interleaved repeats)."""
    tree = model.tree
    fp, lp, perm, g = tree.kernel_floats, model.loop_floats, model.permutation, tree.gravity
    samples = Q.shape[0]
    TAU, LAM = np.empty_like(QDA), np.empty((samples, model.n_constraints))
    T = np.empty_like(QD)
    fns = [lambda st=st: _staged(fp, lp, perm, Q, QDA, QDDA, g, TAU, LAM, st)
           for st in range(len(STAGES))]
    fns.append(lambda: rnea_rows(fp, Q, QD, QDD, g, True, T))
    for fn in fns:
        fn()
    times = [t / samples for t in best_times(fns, 1, 7)]
    t_tree = times[-1]
    rows: list[tuple[str, float, float, float, bool | None]] = []
    before = 0.0
    for label, t in zip(STAGES, times, strict=False):
        rows.append((f"  stage: {label}", t - before, t_tree, (t - before) / t_tree, None))
        before = t
    return rows


def bench_robot(name: str, samples: int, stages: bool = False
                ) -> list[tuple[str, float, float, float, bool | None]]:
    model = load_loop_robot(name)
    tree = model.tree
    QA, QDA, QDDA = trajectory(model, samples)
    Q = rc.solve_loops_batch(model, QA)
    k = samples // 3
    q, qda, qdda = Q[k], QDA[k], QDDA[k]
    qd = rc.loop_velocities(model, q, qda)
    qdd = rc.loop_accelerations(model, q, qda, qdda)
    rows: list[tuple[str, float, float, float, bool | None]] = []

    loop = lambda: rc.loop_rnea(model, q, qda, qdda)  # noqa: E731
    tree_rnea = lambda: rc.rnea(tree, q, qd, qdd)  # noqa: E731
    loop(), tree_rnea()
    t_loop, t_rnea = best_times((loop, tree_rnea), 20000)
    rows.append(("loop_rnea per call vs tree rnea", t_loop, t_rnea, t_loop / t_rnea,
                 t_loop / t_rnea <= LOOP_OF_RNEA))

    state = {"i": 0, "q": Q[0]}

    def newton() -> None:  # the next sample of the 1 kHz trajectory, warm-started
        i = state["i"] = (state["i"] + 1) % samples
        state["q"] = rc.solve_loops(model, QA[i], state["q"] if i else Q[0])

    newton()
    t_newton, = best_times((newton,), 2000)
    rows.append(("solve_loops (1 kHz warm start) per call", t_newton, t_rnea, t_newton / t_rnea,
                 None))

    tau = rc.loop_rnea(model, q, qda, qdda)
    oracle = PinocchioOracle(robot_urdf(name), tree)
    models, datas = pinocchio_constraints(oracle, model)
    pm, pd = oracle.pm, oracle.pd
    settings = pin.ProximalSettings(1e-12, 1e-8, 20)
    tau_tree = np.zeros(model.n)
    tau_tree[model.active_index] = tau
    pq, pv, pt = oracle.config(q), oracle.tangent(qd), oracle.tangent(
        tau_tree - rc.friction_torques(tree, qd))
    ours_fd = lambda: rc.loop_forward_dynamics(model, q, qda, tau)  # noqa: E731
    pin_fd = lambda: pin.constraintDynamics(pm, pd, pq, pv, pt, models, datas,  # noqa: E731
                                            settings)
    ours_fd(), pin_fd()
    t_fd, t_pin = best_times((ours_fd, pin_fd), 2000)
    rows.append(("loop_forward_dynamics vs pin.constraintDynamics", t_fd, t_pin, t_fd / t_pin,
                 None))

    QD = np.array([rc.loop_velocities(model, x, y) for x, y in zip(Q, QDA, strict=True)])
    QDD = np.array([rc.loop_accelerations(model, x, y, z)
                    for x, y, z in zip(Q, QDA, QDDA, strict=True)])
    rc.loop_rnea_batch(model, Q[:2], QDA[:2], QDDA[:2])
    rc.rnea_batch(tree, Q[:2], QD[:2], QDD[:2])
    t_batch, t_tree = best_times((lambda: rc.loop_rnea_batch(model, Q, QDA, QDDA),
                                  lambda: rc.rnea_batch(tree, Q, QD, QDD)), 1, 5)
    rows.append((f"loop_rnea_batch ({samples}) per sample vs tree", t_batch / samples,
                 t_tree / samples, t_batch / t_tree, None))
    if stages:
        rows += stage_times(model, Q, QDA, QDDA, QD, QDD)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Closed-loop dynamics speed")
    parser.add_argument("--robots", nargs="+", default=list(LOOP_ROBOTS))
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--stages", action="store_true",
                        help="also time the batch kernel's stages (compiles a staged copy)")
    args = parser.parse_args(argv)
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"{'robot':<11}{'measure':<50}{'ours us':>9}{'ref us':>9}{'ratio':>8}  target")
    failures = 0
    for name in args.robots:
        for label, t_ours, t_ref, ratio, ok in bench_robot(name, args.samples, args.stages):
            target = (f"<= {LOOP_OF_RNEA} {'ok' if ok else 'MISSED'}" if ok is not None
                      else "(information)")
            print(f"{name:<11}{label:<50}{t_ours * 1e6:9.3f}{t_ref * 1e6:9.3f}{ratio:8.2f}  "
                  f"{target}")
            failures += ok is False
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
