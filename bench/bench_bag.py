"""Speed and memory of rnea-bag: the model part separately from bag decoding.

1. Model part on the batch core for a 7-DoF arm (arm7): tau, g and tau_dot
   per sample (target: >= 200 000 samples/s).
2. Whole analysis of a synthetic bag (``--messages`` joint states at 1 kHz
   plus as many commands), in a subprocess: wall time, messages/s and peak
   memory (resident set size), to show that memory stays bounded as the bag
   grows.

    python bench/bench_bag.py --messages 1000000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rnea_ros.core.dynamics.gfd import rnea_derivative_batch
from rnea_ros.core.dynamics.rnea import gravity_batch, rnea_batch
from rnea_ros.samples import load_robot, sample_urdf

TARGET = 200_000  # samples/s


def model_throughput(samples: int) -> float:
    model = load_robot("arm7")
    rng = np.random.default_rng(0)
    Q, QD, QDD, QDDD = (rng.uniform(-1, 1, (samples, model.nv)) for _ in range(4))
    rnea_batch(model, Q[:10], QD[:10], QDD[:10])
    gravity_batch(model, Q[:10])
    rnea_derivative_batch(model, Q[:10], QD[:10], QDD[:10], QDDD[:10])
    start = time.perf_counter()
    rnea_batch(model, Q, QD, QDD)
    gravity_batch(model, Q)
    rnea_derivative_batch(model, Q, QD, QDD, QDDD)
    return samples / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200_000)
    args = parser.parse_args(argv)
    rate = model_throughput(args.samples)
    print(f"model part (tau, g, tau_dot; arm7, batch of {args.samples}): {rate:,.0f} samples/s "
          f"(target >= {TARGET:,}) {'ok' if rate >= TARGET else 'MISSED'}")
    from rnea_ros.tools.synthetic_bag import write_bag

    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / "bag"
        start = time.perf_counter()
        write_bag(bag, load_robot("arm7"), duration=args.messages / 1000.0, storage="mcap")
        print(f"wrote a {args.messages:,}-state bag in {time.perf_counter() - start:.1f} s")
        code = ("import resource, sys, time\n"
                "from rnea_ros.tools.bag import main\n"
                "t = time.perf_counter()\n"
                f"rc = main([{str(bag)!r}, '--urdf', {str(sample_urdf('arm7'))!r}, "
                f"'--out', {tmp + '/out'!r}, '--quiet'])\n"
                "print('WALL', time.perf_counter() - t)\n"
                "print('RSS_MB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
                "sys.exit(rc)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=False)
        values = dict(line.split() for line in out.stdout.splitlines()
                      if line.startswith(("WALL", "RSS_MB")))
        if out.returncode != 0 or "WALL" not in values:
            print(out.stdout, out.stderr)
            return 1
        wall = float(values["WALL"])
        print(f"analysis: {args.messages:,} states + {args.messages:,} commands in {wall:.1f} s "
              f"({2 * args.messages / wall:,.0f} messages/s, decoding included); peak RSS "
              f"{float(values['RSS_MB']):.0f} MB")
    return 0 if rate >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
