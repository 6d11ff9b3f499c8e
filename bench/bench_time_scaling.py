"""Cost of predictive time scaling per joint state, against the same controller without it.

arm7 in ``inverse_dynamics`` mode, 1 kHz joint states from a simulated plant
(Pinocchio's ABA) following a fast quintic (the one of
test/control/test_rate_limit.py: ~1430 N m/s needed, 400 N m/s allowed, so the
scaling slows it down) and back, repeated. Two controllers get the same stream
of states: one with ``time_scaling.enable`` (the plant follows its commands), one
without (the peer). Per state: ``TorqueController.joint_state`` wall time (warm:
after a first pass), p50 and p99 [us], and their ratio to the peer's. The time
scaling's ``feasible_speed`` runs every ``update_period`` = 5 ms, so one state in
five carries it (it sets the p99).

    PYTHONPATH=. python bench/bench_time_scaling.py [--passes 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Sequence

import numpy as np

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation import Simulator

URDF = "package://rnea_ros/urdf/arm7.urdf"
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
Q1 = Q0 + np.array([1.2, 0.8, 1.0, 0.9, 1.0, -0.8, 1.0])
DURATION = 0.45  # s
STATES = 1500  # per leg: the scaled motion takes ~0.9 s, then it rests


def controller(scaling: bool) -> TorqueController:
    values = default_values()
    values.update(urdf_path=URDF, mode="inverse_dynamics",
                  kp=[60, 60, 60, 60, 20, 20, 10], kd=[8, 8, 8, 4, 1, 1, 0.5],
                  effort_rate_limits=[400.0])
    values["time_scaling.enable"] = scaling
    model = load_model(values)
    return TorqueController(model, controller_config(values, model))


def quintic_legs(ctl: TorqueController, start: float, a: np.ndarray, b: np.ndarray) -> None:
    s = np.linspace(0, 1, 81)
    quintic = np.polynomial.Polynomial([0, 0, 0, 10, -15, 6])
    names = list(ctl.model.joint_names)
    ctl.trajectory(names, start + s * DURATION, a + np.outer(quintic(s), b - a),
                   np.outer(quintic.deriv(1)(s) / DURATION, b - a),
                   np.outer(quintic.deriv(2)(s) / DURATION**2, b - a), start)


def run(passes: int, profile: bool
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, pstats.Stats | None]:
    """Per-state times [us] of the scaled controller, of the peer, and whether the
    scaled state ran the feasible-speed search (after the warm-up pass)."""
    scaled, plain = controller(True), controller(False)
    scaling = scaled.reference.scaling
    assert scaling is not None
    sim = Simulator(sample_urdf("arm7"), scaled.model)
    sim.reset(Q0)
    names = list(scaled.model.joint_names)
    times: dict[bool, list[float]] = {True: [], False: []}
    updates: list[bool] = []
    profiler = cProfile.Profile() if profile else None
    for k in range(passes + 1):  # pass 0 warms up
        a, b = (Q0, Q1) if k % 2 == 0 else (Q1, Q0)
        for ctl in (scaled, plain):
            first = ctl.joint_state(names, sim.q, sim.qd, sim.t, now=sim.t)
            if ctl is scaled:
                assert first.command is not None
                command = first.command
            quintic_legs(ctl, sim.t, a, b)
        sim.step(command)  # the controllers drop an identical resend of the state just given
        for i in range(STATES):
            q, qd, t = sim.q.copy(), sim.qd.copy(), sim.t
            for ctl in ((plain, scaled) if i % 2 else (scaled, plain)):  # alternate who is first
                if profiler is not None and ctl is scaled and k > 0:
                    profiler.enable()
                started = time.perf_counter()
                result = ctl.joint_state(names, q, qd, t, now=t)
                elapsed = (time.perf_counter() - started) * 1e6
                if profiler is not None:
                    profiler.disable()
                if k > 0:
                    times[ctl is scaled].append(elapsed)
                if ctl is scaled:
                    assert result.command is not None
                    if k > 0:
                        updates.append(scaling.last_update == t)
                    command = result.command
            sim.step(command)
    stats = pstats.Stats(profiler) if profiler is not None else None
    return np.array(times[True]), np.array(times[False]), np.array(updates), stats


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3, help="timed legs (after one warm-up)")
    parser.add_argument("--profile", action="store_true", help="cProfile the scaled controller")
    args = parser.parse_args(argv)
    scaled, plain, updates, stats = run(args.passes, args.profile)
    if stats is not None:
        stats.sort_stats("tottime").print_stats(25)
        return 0
    print(f"arm7 inverse_dynamics, {len(scaled)} joint states at 1 kHz (us per state)")
    print(f"{'':34s}{'p50':>8s}{'p99':>8s}{'max':>8s}{'mean':>8s}")
    rows = (("with time scaling", scaled), ("  states with the speed search", scaled[updates]),
            ("  the other states", scaled[~updates]), ("without (peer)", plain))
    for label, x in rows:
        print(f"{label:34s}{np.percentile(x, 50):8.1f}{np.percentile(x, 99):8.1f}"
              f"{x.max():8.1f}{x.mean():8.1f}")
    print(f"ratio scaled/peer: p50 {np.percentile(scaled, 50) / np.percentile(plain, 50):.2f}, "
          f"p99 {np.percentile(scaled, 99) / np.percentile(plain, 99):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
