"""Speed and memory of rnea-bag: the model part, decoding, and the whole analysis.

1. Model part on the batch core for a 7-DoF arm (arm7): tau, g and tau_dot
   per sample (target: >= 200 000 samples/s).
2. Decoding: the batch decoder (numpy views by message layout) against its
   peer, rosbags' message-by-message deserialisation, on the same raw
   messages of the bag (same run, same machine).
3. Whole analysis of synthetic bags (``--messages`` joint states at 1 kHz
   plus as many commands; several sizes to show that memory does not grow
   with the bag), each in a subprocess: wall time, messages/s, peak resident
   memory, with and without the plots (a fixed cost of ~1-2 s).

    python bench/bench_bag.py --messages 100000 1000000
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

from rnea_ros.core.dynamics.gfd import rnea_time_derivative_batch
from rnea_ros.core.dynamics.rnea import gravity_batch, rnea_batch
from rnea_ros.samples import load_robot, sample_urdf

TARGET = 200_000  # samples/s


def model_throughput(samples: int) -> float:
    model = load_robot("arm7")
    rng = np.random.default_rng(0)
    Q, QD, QDD, QDDD = (rng.uniform(-1, 1, (samples, model.nv)) for _ in range(4))
    rnea_batch(model, Q[:10], QD[:10], QDD[:10])
    gravity_batch(model, Q[:10])
    rnea_time_derivative_batch(model, Q[:10], QD[:10], QDD[:10], QDDD[:10])
    start = time.perf_counter()
    rnea_batch(model, Q, QD, QDD)
    gravity_batch(model, Q)
    rnea_time_derivative_batch(model, Q, QD, QDD, QDDD)
    return samples / (time.perf_counter() - start)


def decode_throughput(bag: Path) -> tuple[float, float]:
    """Messages/s of the batch decoder and of rosbags' deserialize on the same messages."""
    from rnea_ros.tools.bag.options import Options
    from rnea_ros.tools.bag.reading import BATCH, BagReader

    reader = BagReader(Options(bag=bag, out=Path(".")))
    topics = {"/joint_states": "joint_state", "/effort_controller/commands": "multi_array"}
    raws: dict[str, list[bytes]] = {t: [] for t in topics}
    for topic, _, raw in reader.source.messages(list(topics)):
        raws[topic].append(raw)
    count = sum(len(r) for r in raws.values())
    start = time.perf_counter()
    for topic, kind in topics.items():
        for k in range(0, len(raws[topic]), BATCH):
            reader._decode(raws[topic][k:k + BATCH], topic, kind)
    ours = count / (time.perf_counter() - start)
    start = time.perf_counter()
    for topic in topics:
        for raw in raws[topic]:
            reader.source.deserialize(raw, topic)
    theirs = count / (time.perf_counter() - start)
    reader.close()
    return ours, theirs


def end_to_end(bag: Path, out: str, plots: bool) -> tuple[float, float, float]:
    """Wall time [s], CPU time [s] and peak RSS [MB] of ``rnea-bag`` in a fresh interpreter
    (CPU time: what the run costs when other processes share the cores)."""
    code = ("import resource, sys, time\n"
            "from rnea_ros.tools.bag import main\n"
            "t, c = time.perf_counter(), time.process_time()\n"
            f"rc = main([{str(bag)!r}, '--urdf', {str(sample_urdf('arm7'))!r}, "
            f"'--out', {out!r}, '--quiet', '--force'"
            f"{'' if plots else ', ' + repr('--no-plots')}])\n"
            "print('WALL', time.perf_counter() - t)\n"
            "print('CPU', time.process_time() - c)\n"
            "print('RSS_MB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
            "sys.exit(rc)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False)
    values = dict(line.split() for line in result.stdout.splitlines()
                  if line.startswith(("WALL", "CPU", "RSS_MB")))
    if result.returncode != 0 or "WALL" not in values:
        raise RuntimeError(result.stdout + result.stderr)
    return float(values["WALL"]), float(values["CPU"]), float(values["RSS_MB"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, nargs="+", default=[100_000],
                        help="joint states per bag (one bag per value)")
    parser.add_argument("--samples", type=int, default=200_000)
    args = parser.parse_args(argv)
    rate = model_throughput(args.samples)
    print(f"model part (tau, g, tau_dot; arm7, batch of {args.samples}): {rate:,.0f} samples/s "
          f"(target >= {TARGET:,}) {'ok' if rate >= TARGET else 'MISSED'}")
    from rnea_ros.tools.synthetic_bag import write_bag

    for messages in args.messages:
        with tempfile.TemporaryDirectory() as tmp:
            bag = Path(tmp) / "bag"
            start = time.perf_counter()
            write_bag(bag, load_robot("arm7"), duration=messages / 1000.0, storage="mcap")
            print(f"wrote a {messages:,}-state bag in {time.perf_counter() - start:.1f} s")
            if messages <= 200_000:
                ours, theirs = decode_throughput(bag)
                print(f"  decoding: batch decoder {ours:,.0f} messages/s, rosbags deserialize "
                      f"{theirs:,.0f} messages/s (x{ours / theirs:.0f})")
            for plots in (True, False):
                wall, cpu, rss = end_to_end(bag, tmp + "/out", plots)
                print(f"  analysis {'with' if plots else 'without'} plots: {messages:,} states + "
                      f"{messages:,} commands in {wall:.2f} s wall ({2 * messages / wall:,.0f} "
                      f"messages/s), {cpu:.2f} s CPU ({2 * messages / cpu:,.0f} messages/s), "
                      f"reading included; peak RSS {rss:.0f} MB")
    return 0 if rate >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
