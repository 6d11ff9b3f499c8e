"""Per-call time against Pinocchio, split into our compiled entry and the Python around it.

For Panda and UR5 (fixed base), Solo12 and Talos (free-flyer roots): RNEA, gravity,
ABA and (free-flyers) the free-floating dynamics of Khalil 2010 §7.2. Three columns,
timed in one process, interleaved, best of ``--rounds`` runs of ``--number`` calls of
process time: our whole call (the face: checks, result arrays, dispatch), our compiled
entry alone (the entry point the face calls -- for RNEA, gravity and ABA the lean entry
of ``core/_lean.py``, else the ``FastCall`` one -- on preallocated results: argument
unboxing and the kernel), and Pinocchio's whole call. ``ours - kernel`` is the Python
share (issues 28 and 40; docs/performance.md, "Per call: the kernel and the Python
around it").

    python bench/bench_percall.py [--robots panda ur5 solo12 talos]
"""

from __future__ import annotations

import argparse
import os
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from bench_floating import states  # the script's directory is on sys.path

import rnea_ros.core.dynamics.aba as aba_face
import rnea_ros.core.dynamics.floating_base as ff_face
import rnea_ros.core.dynamics.rnea as rnea_face
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, robot_urdf

Fn = Callable[[], Any]
FIXED_BASE = ("panda", "ur5")  # the others get a free-flyer root


def best(fns: Sequence[Fn], number: int, rounds: int) -> list[float]:
    """Best per-call process time [s] of each of ``fns``, their runs interleaved."""
    b = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, f in enumerate(fns):
            b[i] = min(b[i], timeit.timeit(f, number=number, timer=time.process_time) / number)
    return b


def rows(name: str) -> list[tuple[str, Fn, Fn, Fn]]:
    """(measure, ours, our kernel alone, Pinocchio) for robot ``name``."""
    free = name not in FIXED_BASE
    model = load_robot(name, root_joint="free-flyer" if free else None).without_friction()
    oracle = PinocchioOracle(robot_urdf(name), model)
    pm, pd = oracle.pm, oracle.pd
    if free:
        Q, V, A = states(model, oracle, 2)
        q, v, a = Q[0], V[0], A[0]
    else:
        rng = np.random.default_rng(0)
        q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    pq, pv, pa = oracle.config(q), oracle.tangent(v), oracle.tangent(a)
    tau = rnea_face.rnea(model, q, v, a)
    ptau = oracle.tangent(tau)
    out = np.empty(model.nv)
    kf, km, kl, g = model.kernel_floats, model.kernel_map, model.kernel_last_row, model.gravity
    none = np.zeros((0, 6))
    if model.expanded:  # the lean entries the faces call
        k_rnea = lambda: rnea_face._lean_tree_rnea.call(kf, km, q, v, a, g, out)  # noqa: E731
        k_grav = lambda: rnea_face._lean_tree_gravity.call(kf, km, q, g, out)  # noqa: E731
        k_aba = lambda: aba_face._lean_aba_tree.call(kf, km, kl, q, v, tau, g,  # noqa: E731
                                                     none, out)
    else:
        k_rnea = lambda: rnea_face._lean_rnea.call(kf, q, v, a, g, out)  # noqa: E731
        k_grav = lambda: rnea_face._lean_gravity.call(kf, q, g, out)  # noqa: E731
        k_aba = lambda: aba_face._lean_aba.call(kf, q, v, tau, g, none, out)  # noqa: E731
    table: list[tuple[str, Fn, Fn, Fn]] = [
        ("rnea", lambda: rnea_face.rnea(model, q, v, a), k_rnea,
         lambda: pin.rnea(pm, pd, pq, pv, pa)),
        ("gravity", lambda: rnea_face.gravity_torques(model, q), k_grav,
         lambda: pin.computeGeneralizedGravity(pm, pd, pq)),
        ("aba", lambda: aba_face.aba(model, q, v, tau), k_aba,
         lambda: pin.aba(pm, pd, pq, pv, ptau)),
    ]
    if free:
        aj = a[6:].copy()
        res = ff_face.free_floating_dynamics(model, q, v, aj)
        pfree = oracle.tangent(np.r_[np.zeros(6), res.tau])
        r0, fused = ff_face._free_flyer_layout(model)
        t, acc, base = np.empty(model.nv - 6), np.empty(6), np.empty((1, 25))
        if fused:  # the entry the face takes
            k_ff = lambda: ff_face._free_floating_free.call(kf, q, v, aj, g, t, acc)  # noqa: E731
        else:
            k_ff = lambda: ff_face._free_floating.call(kf, km, kl, r0, 6, q, v, aj,  # noqa: E731
                                                       g, base, none, False, t, acc)
        table.append(("free-floating", lambda: ff_face.free_floating_dynamics(model, q, v, aj),
                      k_ff, lambda: pin.aba(pm, pd, pq, pv, pfree)))
    for _, ours, kernel, theirs in table:
        ours(), kernel(), theirs()
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Per-call time: ours, our kernel, Pinocchio")
    parser.add_argument("--robots", nargs="+", default=["panda", "ur5", "solo12", "talos"])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'robot':<8}{'measure':<15}{'ours us':>9}{'kernel us':>10}{'pin us':>9}"
          f"{'ours/pin':>9}{'kernel/pin':>11}{'Python share':>13}")
    for name in args.robots:
        for label, ours, kernel, theirs in rows(name):
            t_o, t_k, t_p = best((ours, kernel, theirs), args.number, args.rounds)
            print(f"{name:<8}{label:<15}{t_o * 1e6:9.3f}{t_k * 1e6:10.3f}{t_p * 1e6:9.3f}"
                  f"{t_o / t_p:9.2f}{t_k / t_p:11.2f}{(t_o - t_k) / t_o:12.0%}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
