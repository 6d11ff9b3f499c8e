"""Speed and memory of rnea-fleet (issue 23), ratios measured in one run.

1. Scaling: a fleet of ``--bags`` arm7 bags (``--seconds`` at 1 kHz each, two robots)
   analysed from scratch with 1 then 2 local workers (target: 2 workers >= 1.8x the
   throughput of 1), then on a fresh Dask ``LocalCluster`` of 2 worker processes
   (127.0.0.1) started as docs/fleet.md tells users to start workers, with the preload
   ``rnea_ros.tools.fleet.preload`` (the package imported and its kernels loaded as each
   worker starts, which the cluster's start-up pays: timed apart, and printed as "first
   with the cluster's start-up"): a first run on it (target: within 1.5x the local
   pool's time) and a second on the same, warm workers (within 1.15x). Then, for the
   reader only (no target), a first run on a fresh cluster started *without* the
   preload, whose workers import the package and load the kernels inside that run (the
   run's worker plugin). The workers' CPU [s] of each phase (start-up, first run, warm
   run: ``RUSAGE_SELF`` of both, read through ``client.run``) is printed beside the
   walls. ``--repeat N`` rounds; the medians are judged, each printed with its target
   and PASS/FAIL.
2. The cached re-run of the same fleet (target: < 5 % of the first run).
3. Peak resident memory of one task (one worker analysing one bag) for bags of
   ``--states`` joint states (target: 10^5 vs 10^6 within 10 %), each in a fresh
   process.

    python bench/bench_fleet.py --bags 20 --seconds 10 --states 100000 1000000 --repeat 3

The machine is shared: CPU time is printed beside wall time where it matters, and a
local pool worker's fixed and per-bag CPU (:func:`worker_cpu`), which bound the 2-worker
speed-up whatever the load: ``(F + B b) / (F + B b / 2)`` for ``B`` bags.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The package is imported inside the functions, not here: a LocalCluster's spawned
# workers re-import this module, and a fresh worker must not start with the analysis
# already imported (a `dask worker` does not).


# The bench's own processes import the package this one does: without it, ``python -c``
# puts the working directory first on sys.path, so a run from one checkout with
# PYTHONPATH at another timed the local pool of the first and Dask of the second.
SAFE = {**os.environ, "PYTHONSAFEPATH": "1"}


def fleet(root: Path, bags: int, seconds: float) -> Path:
    from rnea_ros.samples import load_robot, sample_urdf
    from rnea_ros.tools.synthetic_bag import write_bag

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
    from rnea_ros.tools.fleet.cli import main

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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=SAFE,
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


TARGETS = {  # issue 40: (the ratio's name, its target, whether it must be at most it)
    "speedup": ("2 workers' throughput / 1 worker's", 1.8, False),
    "first": ("Dask first run (fresh workers) / local pool", 1.5, True),
    "warm": ("Dask on warm workers / local pool", 1.15, True),
}


def children_cpu() -> float:
    """CPU seconds [s] of this process's finished children (the pool's workers, the
    LocalCluster's nannies and workers once they exit)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def verdict(name: str, value: float) -> str:
    """``value`` against the target of ``name`` (:data:`TARGETS`): PASS or FAIL."""
    what, target, at_most = TARGETS[name]
    ok = value <= target if at_most else value >= target
    return (f"{what}: {value:.3f}x (target {'<=' if at_most else '>='} {target:g}): "
            f"{'PASS' if ok else 'FAIL'}")


def timed_apart(argv: list[str]) -> tuple[float, float, float]:
    """The engine phase [s] of ``rnea-fleet argv`` in a fresh process (single-threaded:
    its local pool forks, with its start-up counted, whatever threads Dask left in
    this one), the CPU [s] of that process and its workers, and the whole run's wall
    time [s] (the interpreter's start, imports, manifest and keys, the engine, the
    trends, tables and report, the exit: what a user waits for)."""
    before = children_cpu()
    code = "import sys; from rnea_ros.tools.fleet.cli import main; sys.exit(main(sys.argv[1:]))"
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *argv, "--quiet"], check=True, env=SAFE,
                   stdout=subprocess.DEVNULL)
    whole = time.perf_counter() - began
    out = Path(argv[argv.index("--out") + 1])
    engine = json.loads((out / "summary.json").read_text())["engine_seconds"]
    return engine, children_cpu() - before, whole


WORKER_CPU = """
import json, resource, sys
from rnea_ros.tools.fleet.cli import main  # what rnea-fleet's parent imports
from rnea_ros.tools.fleet.engines import join_pools, run_local
from rnea_ros.tools.fleet.task import Job

def children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

urdf, bags = sys.argv[1], sys.argv[2:]
cpu = []
for n in (1, len(bags)):
    before = children()
    assert all(r["status"] == "ok" for r in run_local(
        [Job("r", b, urdf, str(k)) for k, b in enumerate(bags[:n])], workers=1))
    join_pools()  # the worker reaped: its CPU is in RUSAGE_CHILDREN
    cpu.append(children() - before)
print(json.dumps(cpu))
"""


def worker_cpu(root: Path, count: int = 11) -> tuple[float, float]:
    """CPU [s] of a local pool worker (forked, as rnea-fleet's) on 1 and on ``count`` of
    the fleet's bags: per bag ``b = (C_count - C_1) / (count - 1)``, and the fixed cost of
    a worker ``C_1 - b`` (its fork, the first bag's imports, numba's typing registries,
    the kernels' loading, its exit). Run in a fresh single-threaded process (the pool
    forks); CPU, so what other jobs on the machine change little."""
    from rnea_ros.samples import sample_urdf

    bags = sorted(str(b) for b in root.glob("r*/bag*"))[:count]
    code = "import sys; exec(sys.argv.pop(1))"
    out = subprocess.run([sys.executable, "-c", code, WORKER_CPU, str(sample_urdf("arm7")),
                          *bags], capture_output=True, text=True, check=True, env=SAFE).stdout
    one, many = json.loads(out.strip().splitlines()[-1])
    per_bag = (many - one) / (len(bags) - 1)
    return one - per_bag, per_bag


def local_round(root: Path, manifest: Path, k: int) -> dict[str, float]:
    """The engine phases [s] of 1 and 2 local workers into fresh directories (no
    cache), each in its own process (:func:`timed_apart`), with their CPU [s] and the
    whole runs' wall times [s] (``local{n}_run``)."""
    t: dict[str, float] = {}
    for n in (1, 2):
        t[f"local{n}"], t[f"local{n}_cpu"], t[f"local{n}_run"] = timed_apart(
            ["analyse", str(manifest), "--out", str(root / f"w{n}-{k}"), "--workers", str(n)])
    return t


PRELOAD = "rnea_ros.tools.fleet.preload"  # docs/fleet.md: dask worker --preload ...


def process_cpu() -> float:
    """CPU [s] of the calling process (run on each worker through ``client.run``)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def workers_cpu(address: str) -> float:
    """The CPU [s] the cluster's worker processes have used so far, summed."""
    from distributed import Client

    with Client(address, timeout="30s") as client:  # type: ignore[no-untyped-call]
        return float(sum(client.run(process_cpu).values()))


def dask_round(root: Path, manifest: Path, k: int, preload: bool = True) -> dict[str, float]:
    """A fresh 2-worker ``LocalCluster`` on 127.0.0.1, with the :data:`PRELOAD` (keys
    ``cluster_up``, ``dask_first``, ``dask_warm``) or without it (``plain_up``,
    ``plain_first``; one run only): its start-up [s] timed apart, then the engine
    phases [s] of a first ``--scheduler`` run on it and, preloaded, of a second one
    (warm workers), into fresh directories; each phase's workers' CPU [s] beside it
    (``..._cpu``)."""
    from distributed import LocalCluster

    up, first = ("cluster_up", "dask_first") if preload else ("plain_up", "plain_first")
    runs = [first, "dask_warm"] if preload else [first]
    t: dict[str, float] = {}
    began = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1",
                      preload=[PRELOAD] if preload else []) as cluster:
        t[up] = time.perf_counter() - began
        cpu = t[f"{up}_cpu"] = workers_cpu(cluster.scheduler_address)
        for name in runs:
            _, t[name] = timed(["analyse", str(manifest), "--out", str(root / f"{name}-{k}"),
                                "--scheduler", cluster.scheduler_address])
            now = workers_cpu(cluster.scheduler_address)
            t[f"{name}_cpu"], cpu = now - cpu, now
    return t


def main_bench() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bags", type=int, default=20)
    p.add_argument("--seconds", type=float, default=10.0, help="per bag, at 1 kHz")
    p.add_argument("--states", type=int, nargs="*", default=[100_000, 1_000_000])
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="rounds of the engine comparisons; the ratios' medians are judged")
    a = p.parse_args()
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}: must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        manifest = fleet(root / "fleet", a.bags, a.seconds)
        print(f"wrote {a.bags} bags of {a.seconds:g} s in {time.perf_counter() - start:.1f} s")
        states = a.bags * a.seconds * 1000
        rounds: list[dict[str, float]] = []
        cpu0 = time.process_time()
        for k in range(a.repeat):  # each round's runs close in time (a shared machine)
            fixed, per_bag = worker_cpu(root / "fleet")
            t = {"load": os.getloadavg()[0], "worker_fixed_cpu": fixed,
                 "bag_cpu": per_bag, **local_round(root, manifest, k),
                 **dask_round(root, manifest, k), **dask_round(root, manifest, k, False)}
            rounds.append(t)
            t["same_rows"] = float(same_rows(root / f"w2-{k}" / "bags.parquet",
                                             root / f"dask_first-{k}" / "bags.parquet"))
            t["speedup"] = t["local1"] / t["local2"]
            t["run_speedup"] = t["local1_run"] / t["local2_run"]
            t["first"] = t["dask_first"] / t["local2"]
            t["warm"] = t["dask_warm"] / t["local2"]
            t["with_up"] = (t["dask_first"] + t["cluster_up"]) / t["local2"]
            t["plain"] = t["plain_first"] / t["local2"]
            t["plain_with_up"] = (t["plain_first"] + t["plain_up"]) / t["local2"]
            print(f"round {k + 1}/{a.repeat} (load {t['load']:.1f}, "
                  f"{os.getloadavg()[0]:.1f} after): tasks 1 worker "
                  f"{t['local1']:.2f} s ({states / t['local1']:,.0f} states/s; the run's CPU "
                  f"{t['local1_cpu']:.2f} s), 2 workers {t['local2']:.2f} s "
                  f"(CPU {t['local2_cpu']:.2f} s); same rows in bags.parquet (pool, Dask "
                  f"first run): {bool(t['same_rows'])}")
            print(f"  whole runs (process start to exit): 1 worker {t['local1_run']:.2f} s, "
                  f"2 workers {t['local2_run']:.2f} s: {t['run_speedup']:.2f}x")
            print(f"  Dask, workers preloaded: LocalCluster up {t['cluster_up']:.2f} s "
                  f"(workers' CPU {t['cluster_up_cpu']:.2f} s), first run "
                  f"{t['dask_first']:.2f} s (CPU {t['dask_first_cpu']:.2f} s), warm "
                  f"{t['dask_warm']:.2f} s (CPU {t['dask_warm_cpu']:.2f} s)")
            print(f"  Dask, workers not preloaded: LocalCluster up {t['plain_up']:.2f} s "
                  f"(workers' CPU {t['plain_up_cpu']:.2f} s), first run "
                  f"{t['plain_first']:.2f} s (CPU {t['plain_first_cpu']:.2f} s)")
            print(f"  a pool worker's CPU: fixed {t['worker_fixed_cpu']:.3f} s, per bag "
                  f"{t['bag_cpu']:.3f} s")
            print(f"  speed-up {t['speedup']:.2f}x, first {t['first']:.2f}x, warm "
                  f"{t['warm']:.2f}x, first with the cluster's start-up {t['with_up']:.2f}x; "
                  f"not preloaded: first {t['plain']:.2f}x, with the start-up "
                  f"{t['plain_with_up']:.2f}x")
        print(f"parent CPU over the rounds {time.process_time() - cpu0:.2f} s")
        median = {name: statistics.median(r[name] for r in rounds) for name in TARGETS}
        print(f"medians of {a.repeat} round(s) (the pool's times include its start-up; "
              "the cluster's start-up, the preload's import and warm-up included, is "
              "not in the Dask runs):")
        for name in TARGETS:
            print("  " + verdict(name, median[name]))
        fixed = statistics.median(r["worker_fixed_cpu"] for r in rounds)
        per_bag = statistics.median(r["bag_cpu"] for r in rounds)
        half = a.bags / 2
        print(f"  a pool worker's fixed CPU {fixed:.3f} s (target <= 0.2), {per_bag:.3f} s "
              f"per bag: 2 workers on 2 idle cores at most "
              f"{(fixed + a.bags * per_bag) / (fixed + half * per_bag):.2f}x one worker")
        print(f"  whole runs, 2 workers / 1 worker (no target; the serial client "
              f"included): {statistics.median(r['run_speedup'] for r in rounds):.2f}x")
        print(f"  (Dask first with the cluster's start-up: "
              f"{statistics.median(r['with_up'] for r in rounds):.2f}x; workers not "
              f"preloaded, no target: first "
              f"{statistics.median(r['plain'] for r in rounds):.2f}x, with the start-up "
              f"{statistics.median(r['plain_with_up'] for r in rounds):.2f}x)")
        cached, _ = timed(["analyse", str(manifest), "--out", str(root / "w2-0"),
                           "--workers", "2"])
        two = rounds[0]["local2"]
        print(f"cached re-run {cached:.3f} s: {100 * cached / two:.1f} % of the first "
              f"run's tasks (target < 5 %)")
        from rnea_ros.samples import load_robot
        from rnea_ros.tools.synthetic_bag import write_bag

        rss = {}
        for n in a.states:
            bag = root / f"long{n}"
            write_bag(bag, load_robot("arm7"), duration=n / 1000.0, commands=False)
            rss[n] = task_rss(bag)
            print(f"one task on {n:,} states: peak RSS {rss[n]:.0f} MB")
        if len(rss) >= 2:
            values = list(rss.values())
            print(f"RSS growth {100 * (values[-1] / values[0] - 1):+.1f} % (target within 10 %)")
        print(json.dumps({"rounds": rounds, "medians": median, "cached": cached,
                          "rss_mb": rss}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
