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
``rc.rnea_batch`` on the tree (process CPU time). Times are the best of
interleaved repeats; the ratios, measured in the same run, are what matter.
``--stages`` adds where the batch's time goes (issue 28): the row kernel's
stages run cumulatively in one compiled loop (``stage_times``, 500 samples,
best of 200), each increment against the tree's batch kernel per sample.

    python bench/bench_loops.py [--stages]   # or: make bench
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from timing import best_times  # the script's directory is on sys.path

import rnea_ros.core as rc
from rnea_ros.core._compile import jit_fma
from rnea_ros.core.coupling import _loop_dynamics_jit as kd
from rnea_ros.core.coupling._loop_dynamics_jit import row_workspace
from rnea_ros.core.coupling._loop_jit import L_NROWS, L_ROW, W_P, W_R, WS_COLS, workspace_rows
from rnea_ros.core.dynamics._rnea_jit import backward_span, forward_span, pose_span, rnea_rows
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


STAGES = ("joint transforms (pose_span)", "world poses", "loop poses + closure residual",
          "K (eq. 4)", "K_p factors (2 x 2 blocks or QR)", "passive velocities",
          "motion pass, qdd = [qdd_a; 0]",
          "gamma + passive qdd", "forward pass, consistent qdd", "backward pass",
          "cut wrenches + projection (eq. 57)")


@jit_fma
def _staged(fp: Any, lp: Any, perm: Any, blk: Any, Q: Any, QDA: Any, QDDA: Any, g: Any,
            TAU: Any, stage: int) -> float:  # pragma: no cover (compiled)
    """``loop_rnea_rows`` (``_loop_dynamics_jit.loop_rnea_row``'s steps, closure and rank
    checks left out) up to ``stage`` (0..10, :data:`STAGES`), for the stage shares."""
    n, na = Q.shape[1], QDA.shape[1]
    p, loops = n - na, lp.shape[0]
    m = int(lp[loops - 1, L_ROW] + lp[loops - 1, L_NROWS])
    buf = np.empty((workspace_rows(n, m, p, loops), WS_COLS))
    work, P, F, K, A, b, rdiag, tau, xp, qd, qdd, tree, lam, u = row_workspace(buf, n, m, p,
                                                                                loops)
    pairs = blk[0] > 0
    acc = 0.0
    for k in range(Q.shape[0]):
        pose_span(fp, Q, k, work, 0, 0)
        if stage >= 1:
            for i in range(n):
                kd._put_world_pose(fp, P, i, kd._mat3(work, i, W_R), kd._vec3(work, i, W_P))
        if stage >= 2:
            kd._loop_poses(lp, P, F)
            acc += kd._residual(lp, F, b)
        if stage >= 3:
            kd._constraint_jacobian(fp, lp, P, F, K)
        if stage >= 4:
            acc += (kd._factor_pairs(K, perm, na, blk, A) if pairs
                    else kd.factor_passive(K, perm, na, A, rdiag, tau))
        if stage >= 5:
            for r in range(m):
                s = 0.0
                for c in range(na):
                    s += K[r, perm[c]] * QDA[k, c]
                b[r] = s
            if pairs:
                kd._pairs_solve(blk, A, b, u, xp)
            else:
                kd.qr_solve(A, m, p, rdiag, tau, b, xp)
            for c in range(na):
                qd[0, perm[c]], qdd[0, perm[c]] = QDA[k, c], QDDA[k, c]
            for c in range(p):
                qd[0, perm[na + c]], qdd[0, perm[na + c]] = -xp[c], 0.0
        if stage >= 6:
            forward_span(fp, qd, qdd, 0, g, work, 0, False)
        if stage >= 7:
            kd._relative_acceleration(lp, F, work, (-g[0], -g[1], -g[2]), b)
            if pairs:
                kd._pairs_solve(blk, A, b, u, xp)
            else:
                kd.qr_solve(A, m, p, rdiag, tau, b, xp)
            for c in range(p):
                qdd[0, perm[na + c]] = -xp[c]
        if stage >= 8:
            forward_span(fp, qd, qdd, 0, g, work, 0, True)
        if stage >= 9:
            acc += backward_span(fp, qd, qdd, 0, True, tree, work, 0)
        if stage >= 10:
            for c in range(p):
                xp[c] = tree[0, perm[na + c]]
            if pairs:
                kd._pairs_transpose_solve(blk, A, xp, u, lam)
            else:
                kd.qr_transpose_solve(A, m, p, rdiag, tau, xp, lam)
            for c in range(na):
                s = tree[0, perm[c]]
                for r in range(m):
                    s -= K[r, perm[c]] * lam[r]
                TAU[k, c] = s
    return acc


def stage_times(model: rc.ClosedLoopModel, Q: np.ndarray, QDA: np.ndarray,
                QDDA: np.ndarray, QD: np.ndarray, QDD: np.ndarray
                ) -> list[tuple[str, float, float, float, bool | None]]:
    """Per-sample increment of each stage of the closed-loop batch, against the tree's
    batch kernel ``rnea_rows`` at the consistent states (best of interleaved repeats)."""
    tree = model.tree
    fp, lp, perm, g = tree.kernel_floats, model.loop_floats, model.permutation, tree.gravity
    Q, QDA, QDDA = Q[:500], QDA[:500], QDDA[:500]  # 500 samples, best of 200 (a busy machine)
    TAU, T = np.empty_like(QDA), np.empty_like(QD)
    blk = model.passive_blocks
    fns = [lambda st=st: _staged(fp, lp, perm, blk, Q, QDA, QDDA, g, TAU, st)
           for st in range(len(STAGES))]
    fns.append(lambda: rnea_rows(fp, Q[:500], QD[:500], QDD[:500], g, True, T))
    for fn in fns:
        fn()
    times = [t / 500 for t in best_times(fns, 1, 200)]
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
                                  lambda: rc.rnea_batch(tree, Q, QD, QDD)), 1, 20,
                                 timer=time.process_time)  # CPU time: a 10^4-sample
    # call on a busy machine is nearly always preempted, which wall time would count
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
