"""rnea-fleet's engines: Dask workers warmed before their first task, as the forked
local pool inherits the analysis, and both with the imported heap frozen out of the
cyclic garbage collector's walks; a progress ETA the engine's start-up does not
inflate."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnea_ros.samples import sample_urdf
from rnea_ros.tools.fleet.cli import eta
from rnea_ros.tools.fleet.engines import batches
from rnea_ros.tools.fleet.warm import WarmWorker, warm_up


def _loaded() -> dict[str, int]:
    """On a worker: whether the analysis is imported, how many compiled specialisations
    the bag analysis's batch kernels hold, and how many objects are frozen."""
    loaded = {"task": int("rnea_ros.tools.fleet.task" in sys.modules),
              "frozen": gc.get_freeze_count()}
    module = sys.modules.get("rnea_ros.core.dynamics._rnea_jit")
    for name in ("rnea_rows", "gravity_rows"):
        loaded[name] = len(getattr(module, name).overloads) if module else 0
    return loaded


def test_dask_workers_load_the_analysis_and_its_kernels_before_a_task() -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        cold = client.run(_loaded)
        assert all(v["rnea_rows"] == 0 for v in cold.values())  # spawned: nothing yet
        assert all(v["frozen"] == 0 for v in cold.values())
        client.register_plugin(WarmWorker(str(sample_urdf("arm7"))))
        warm = client.run(_loaded)
        assert len(warm) == 2
        for worker, loaded in warm.items():
            assert loaded["task"] == 1, worker
            assert loaded["rnea_rows"] >= 1 and loaded["gravity_rows"] >= 1, (worker, loaded)
            # the imported package and numba's registries: out of the full collections
            assert loaded["frozen"] > 50_000, (worker, loaded)


POOL = """
import gc, json, sys
from rnea_ros.tools.fleet import engines
from rnea_ros.tools.fleet.task import Job

def frozen(job):  # a pool task: what its forked worker inherited frozen
    return {"robot": job.robot, "frozen": gc.get_freeze_count()}

engines.run_one = frozen
jobs = [Job(f"r{k}", "bag", "robot.urdf", str(k)) for k in range(4)]
found = [r["frozen"] for r in engines.run_local(jobs, workers=2)]
print(json.dumps({"workers": found, "parent_after": gc.get_freeze_count(),
                  "imported": len(sys.modules)}))
"""


def test_local_pool_workers_inherit_the_imported_heap_frozen() -> None:
    """The pool forks with the parent's objects frozen (each worker's full collections
    then skip the ~95 000 objects of the imported analysis), and the parent's heap is
    unfrozen when the pool is done."""
    out = subprocess.run([sys.executable, "-c", POOL], capture_output=True, text=True,
                         check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert len(result["workers"]) == 4
    assert all(count > 50_000 for count in result["workers"]), result
    assert result["parent_after"] == 0


def test_the_eta_counts_from_the_first_finished_bag() -> None:
    # 60 s of start-up, then one bag a second on one worker, 20 bags: at the second
    # bag 18 are left, 18 s, not the 18 x 31 s an average since the start would say.
    assert eta(1, 20, first=61.0, now=61.0) is None
    assert eta(2, 20, first=61.0, now=62.0) == pytest.approx(18.0)
    assert eta(11, 20, first=61.0, now=71.0) == pytest.approx(9.0)
    # two workers in step: bags finish in pairs, one bag per 0.5 s on average
    assert eta(3, 20, first=61.0, now=62.0) == pytest.approx(17 * 0.5)
    assert eta(20, 20, first=61.0, now=80.0) == 0.0


@pytest.mark.parametrize(("jobs", "workers"), [(20, 2), (7, 2), (1, 4), (3, 8), (100, 3)])
def test_batches_keep_every_job_once_in_order_and_few_tasks(jobs: int, workers: int) -> None:
    groups = batches(list(range(jobs)), workers)  # type: ignore[arg-type]
    assert [j for g in groups for j in g] == list(range(jobs))
    assert all(groups) and len(groups) <= max(1, min(jobs, 4 * workers))
    assert max(map(len, groups)) - min(map(len, groups)) <= 1  # balanced


def test_a_warm_up_that_cannot_load_its_robot_does_not_raise(tmp_path: Path) -> None:
    missing = tmp_path / "missing.urdf"
    assert warm_up(str(missing)) is None  # best effort: the tasks report the bad URDF
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link name='a'/>")
    try:
        WarmWorker(str(broken)).setup(worker=None)  # logged, not raised
        assert gc.get_freeze_count() > 0  # the heap frozen all the same
    finally:
        gc.unfreeze()  # this test process is no worker


def test_a_heap_frozen_by_its_process_stays_frozen() -> None:
    from rnea_ros.tools.fleet.engines import frozen_heap

    assert gc.get_freeze_count() == 0
    with frozen_heap():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # put back
    gc.freeze()  # the process's own policy
    try:
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


ORPHANS = """
import multiprocessing, sys, time
from rnea_ros.tools.fleet.engines import run_local
from rnea_ros.tools.fleet.task import Job

jobs = [Job("r", f"/nonexistent/bag{k}", sys.argv[1], str(k)) for k in range(2)]
results = run_local(jobs, workers=2)
next(results)  # the pool is up, its workers idle once the second job is done
time.sleep(0.5)
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
time.sleep(600)  # killed here
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_killed_client_leaves_no_pool_worker_behind() -> None:
    """SIGKILL to the client (an OOM kill, a CI timeout): its idle pool workers end too,
    instead of waiting for a task on their inherited pipe for good."""
    client = subprocess.Popen([sys.executable, "-c", ORPHANS, str(sample_urdf("arm7"))],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = client.stdout.readline() if client.stdout else ""
        workers = [int(p) for p in line.split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
    finally:
        client.kill()
        client.wait(timeout=30)
    deadline = time.monotonic() + 20.0
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in workers if _alive(p)]
    for pid in left:  # (the old behaviour: clean up, then fail)
        os.kill(pid, signal.SIGKILL)
    assert left == []
