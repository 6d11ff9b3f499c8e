"""Speed and memory of rnea-fleet (issue 23), ratios measured in one run.

1. Scaling: a fleet of ``--bags`` arm7 bags (``--seconds`` at 1 kHz each, two robots)
   analysed from scratch with 1 then 2 local workers (target: 2 workers >= 1.8x the
   throughput of 1), then on a Dask ``LocalCluster`` of 2 worker processes (target:
   within 15 % of the local pool's time).
2. The cached re-run of the same fleet (target: < 5 % of the first run).
3. Peak resident memory of one task (one worker analysing one bag) for bags of
   ``--states`` joint states (target: 10^5 vs 10^6 within 10 %), each in a fresh
   process.

    python bench/bench_fleet.py --bags 20 --seconds 10 --states 100000 1000000

The machine is shared: CPU time is printed beside wall time where it matters.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.fleet.cli import main
from rnea_ros.tools.synthetic_bag import write_bag


def fleet(root: Path, bags: int, seconds: float) -> Path:
    arm = load_robot("arm7")
    for k in range(bags):
        robot = f"r{k % 2 + 1}"
        write_bag(root / robot / f"bag{k:03d}", arm, duration=seconds, seed=k,
                  clock=1.78e9 + 86400.0 * (k // 2))
    urdf = sample_urdf("arm7")
    manifest = root / "fleet.yaml"
    manifest.write_text(f"robots:\n  r1: {{urdf: {urdf}, bags: r1/*}}\n"
                        f"  r2: {{urdf: {urdf}, bags: r2/*}}\n")
    return manifest


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall time of the whole run, and of its engine phase (the tasks: from the first
    submission to the last result, the pool's or cluster's start-up included)."""
    start = time.perf_counter()
    code = main([*argv, "--quiet"])
    assert code == 0, code
    out = Path(argv[argv.index("--out") + 1])
    engine = json.loads((out / "summary.json").read_text())["engine_seconds"]
    return time.perf_counter() - start, engine


def task_rss(bag: Path) -> float:
    """Peak RSS [MB] of a fresh process running one task on ``bag``."""
    code = (
        "import resource, sys\n"
        "from rnea_ros.tools.fleet.task import Job, run\n"
        "from rnea_ros.samples import sample_urdf\n"
        f"r = run(Job('r', {str(bag)!r}, str(sample_urdf('arm7')), 'k'))\n"
        "assert r['status'] == 'ok', r['message']\n"
        "print(r['rows'][0]['samples'], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[1]) / 1024


def same_rows(a: Path, b: Path) -> bool:
    """Whether two runs' tables hold the same rows (NaN equal to NaN). The files' bytes
    differ by design: each is stamped with its own command line (--out, --scheduler)."""
    import math

    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a).to_pylist(), pq.read_table(b).to_pylist()

    def same(x: object, y: object) -> bool:
        both_nan = (isinstance(x, float) and isinstance(y, float)
                    and math.isnan(x) and math.isnan(y))
        return both_nan or x == y

    return len(ta) == len(tb) and all(
        ra.keys() == rb.keys() and all(same(ra[k], rb[k]) for k in ra)
        for ra, rb in zip(ta, tb, strict=True))


def main_bench() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bags", type=int, default=20)
    p.add_argument("--seconds", type=float, default=10.0, help="per bag, at 1 kHz")
    p.add_argument("--states", type=int, nargs="*", default=[100_000, 1_000_000])
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        manifest = fleet(root / "fleet", a.bags, a.seconds)
        print(f"wrote {a.bags} bags of {a.seconds:g} s in {time.perf_counter() - start:.1f} s")
        states = a.bags * a.seconds * 1000
        cpu0 = time.process_time()
        one, one_e = timed(["analyse", str(manifest), "--out", str(root / "w1"),
                            "--workers", "1"])
        two, two_e = timed(["analyse", str(manifest), "--out", str(root / "w2"),
                            "--workers", "2"])
        cached, _ = timed(["analyse", str(manifest), "--out", str(root / "w2"),
                           "--workers", "2"])
        from distributed import LocalCluster

        began = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            up = time.perf_counter() - began
            dask, dask_e = timed(["analyse", str(manifest), "--out", str(root / "dask"),
                                  "--scheduler", cluster.scheduler_address])
            # Again on the same workers (a long-lived cluster: the package imported and
            # numba's kernels loaded by the first run), into a new directory (no cache).
            _, warm_e = timed(["analyse", str(manifest), "--out", str(root / "dask2"),
                               "--scheduler", cluster.scheduler_address])
        same = same_rows(root / "w2" / "bags.parquet", root / "dask" / "bags.parquet")
        print(f"tasks: 1 worker {one_e:.2f} s ({states / one_e:,.0f} states/s), 2 workers "
              f"{two_e:.2f} s ({states / two_e:,.0f} states/s): speed-up "
              f"{one_e / two_e:.2f}x (target >= 1.8)")
        print(f"whole runs (tables, drift, report.html included): 1 worker {one:.2f} s, "
              f"2 workers {two:.2f} s: {one / two:.2f}x")
        print(f"Dask LocalCluster (2 processes, cluster already up) tasks {dask_e:.2f} s: "
              f"{dask_e / two_e:.2f}x the local pool's (target <= 1.15; the pool's time "
              f"includes its start-up); with the cluster's start-up ({up:.2f} s) "
              f"{(dask_e + up) / two_e:.2f}x; whole run {dask:.2f} s; same rows in "
              f"bags.parquet: {same}")
        print(f"Dask again on the same (warm) workers: tasks {warm_e:.2f} s: "
              f"{warm_e / two_e:.2f}x the local pool's")
        print(f"cached re-run {cached:.3f} s: {100 * cached / two:.1f} % of the first "
              f"(target < 5 %)")
        print(f"(parent CPU {time.process_time() - cpu0:.1f} s)")
        rss = {}
        for n in a.states:
            bag = root / f"long{n}"
            write_bag(bag, load_robot("arm7"), duration=n / 1000.0, commands=False)
            rss[n] = task_rss(bag)
            print(f"one task on {n:,} states: peak RSS {rss[n]:.0f} MB")
        if len(rss) >= 2:
            values = list(rss.values())
            print(f"RSS growth {100 * (values[-1] / values[0] - 1):+.1f} % (target within 10 %)")
        print(json.dumps({"one": one, "two": two, "dask": dask, "cached": cached,
                          "one_tasks": one_e, "two_tasks": two_e, "dask_tasks": dask_e,
                          "dask_warm_tasks": warm_e,
                          "rss_mb": rss}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
