"""Cost of contact monitoring on arm7 (7 DoF).

1. Per state, as a node would run it: ``ContactMonitor.update`` (``p``, ``beta``,
   friction, eq. (5) of control/contact/observer.py and the detector, one compiled
   call) against one ``rc.rnea`` call (target: <= 2x), interleaved best-of timings;
   and the unfused ``MomentumObserver`` + ``ContactDetector`` (multi-DoF/mimic models).
2. The core term alone: ``rc.momentum_and_bias`` against ``rc.rnea``.
3. Offline: ``residuals`` + ``detect`` over a recording, states/s (target: >= 100 000
   states/s on one core).

    python bench/bench_contact.py --samples 200000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from timing import best_times

import rnea_ros.core as rc
from rnea_ros.control.contact import (
    ContactDetector,
    ContactMonitor,
    DetectionSettings,
    MomentumObserver,
    detect,
    residuals,
)
from rnea_ros.samples import load_robot

RATIO_TARGET, OFFLINE_TARGET = 2.0, 100_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    args = parser.parse_args()
    model = load_robot("arm7")
    n = model.nv
    rng = np.random.default_rng(0)
    q, qd, qdd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(4))
    settings = DetectionSettings(np.full(n, 1.0), np.full(n, 0.1), np.zeros(n), 0.5, 0.002)
    fused = ContactMonitor(model, 50.0, settings, max_gap=1.0)
    observer = MomentumObserver(model, 50.0, max_gap=1.0)
    detector = ContactDetector(model, settings)
    clock = [0.0, 0.0]

    def monitor() -> None:
        clock[0] += 1e-3
        fused.update(clock[0], q, qd, tau)

    def separate() -> None:
        clock[1] += 1e-3
        r = observer.update(clock[1], q, qd, tau)
        detector.update(clock[1], r, qd)

    monitor()
    separate()
    rc.rnea(model, q, qd, qdd)
    rc.momentum_and_bias(model, q, qd)
    for clock_name, timer in (("CPU", time.process_time), ("wall", time.perf_counter)):
        t_monitor, t_separate, t_rnea, t_terms = best_times(
            (monitor, separate, lambda: rc.rnea(model, q, qd, qdd),
             lambda: rc.momentum_and_bias(model, q, qd)), number=5000, repeat=9, timer=timer)
        print(f"per state ({clock_name} time): ContactMonitor.update {t_monitor * 1e6:.2f} us, "
              f"rnea {t_rnea * 1e6:.2f} us -> ratio {t_monitor / t_rnea:.2f} "
              f"(target <= {RATIO_TARGET:g}); momentum_and_bias {t_terms * 1e6:.2f} us; "
              f"unfused MomentumObserver + ContactDetector (multi-DoF/mimic models) "
              f"{t_separate * 1e6:.2f} us")

    N = args.samples
    t = np.arange(N) * 1e-3
    Q, QD, TAU = (rng.uniform(-1.0, 1.0, (N, n)) for _ in range(3))
    residuals(model, t[:10], Q[:10], QD[:10], TAU[:10], 50.0)
    detect(model, settings, t[:10], np.zeros((10, n)), QD[:10])
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        r = residuals(model, t, Q, QD, TAU, 50.0)
        detect(model, settings, t, r, QD)
        best = min(best, time.perf_counter() - start)
    print(f"offline: {N} states in {best:.3f} s -> {N / best:,.0f} states/s "
          f"(target >= {OFFLINE_TARGET:,})")


if __name__ == "__main__":
    main()
