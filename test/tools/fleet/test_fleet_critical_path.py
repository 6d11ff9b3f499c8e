"""rnea-fleet's critical path (issue 40, fifth pass): the largest bags start first, and
the local pool's workers exit while the client writes its tables, joined before the
run returns. Nothing here asserts a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.fleet import cli
from rnea_ros.tools.synthetic_bag import write_bag

DURATIONS = {"a_short": 0.3, "b_long": 1.2, "c_middle": 0.6, "d_short": 0.3}  # [s]


def test_the_engine_gets_the_largest_bags_first(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Bags listed short, long, middle, short (by name) go to the engine long, middle,
    then the two short ones in the manifest's order; the tables do not depend on it."""
    arm = load_robot("arm7")
    for k, (name, seconds) in enumerate(DURATIONS.items()):
        write_bag(tmp_path / "bags" / name, arm, duration=seconds, seed=k)
    manifest = tmp_path / "fleet.yaml"
    manifest.write_text(f"robots:\n  r1: {{urdf: {sample_urdf('arm7')}, bags: bags/*}}\n")
    given: list[list[Any]] = []
    run_local = cli.run_local

    def recording(jobs: Any, workers: int | None = None) -> Any:
        given.append([(Path(j.bag).name, j.size) for j in jobs])
        return run_local(jobs, workers)

    monkeypatch.setattr(cli, "run_local", recording)
    out = tmp_path / "out"
    assert cli.main(["analyse", str(manifest), "--out", str(out), "--workers", "1",
                     "--quiet"]) == 0
    names = [name for name, _ in given[0]]
    assert names == ["b_long", "c_middle", "a_short", "d_short"]
    sizes = [size for _, size in given[0]]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] > 0
    for name, size in given[0]:  # the bag's bytes: its files' sizes
        assert size == sum(p.stat().st_size for p in (tmp_path / "bags" / name).iterdir())
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["analysed"], summary["failed"]) == (4, 0)


EXITS = """
import json, multiprocessing, os, sys, time
import concurrent.futures.process as cfp
from multiprocessing.util import Finalize
from pathlib import Path
from rnea_ros.tools.fleet import engines
from rnea_ros.tools.fleet.task import Job

release = Path(sys.argv[1])

def hold(path):  # a worker's exit waits for the parent's release (at most 20 s)
    end = time.monotonic() + 20
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.01)
    path.with_name(f"exited-{os.getpid()}").write_text(json.dumps(path.exists()))

worker = cfp._process_worker

def held_worker(*args, **kwargs):  # every forked worker, whether it gets a task or not
    Finalize(None, hold, args=(release,), exitpriority=0)
    return worker(*args, **kwargs)

cfp._process_worker = held_worker
def task(job):
    return {"key": job.key}

engines.run_one = task
jobs = [Job("r", "bag", "robot.urdf", str(k)) for k in range(4)]
results = list(engines.run_local(jobs, workers=2))  # returns with the workers still alive
alive = len(multiprocessing.active_children())
release.touch()
engines.join_pools()
print(json.dumps({"results": len(results), "alive_after_results": alive,
                  "alive_after_join": len(multiprocessing.active_children())}), flush=True)
"""


def test_the_pool_returns_its_last_result_before_its_workers_exit(tmp_path: Path) -> None:
    """run_local's generator ends with its workers still exiting (here: held by a
    finalizer until the parent releases them, which it does only after the generator
    ended: a pool joined inside the generator would wait 20 s, then report no release);
    join_pools() then waits for them."""
    out = subprocess.run([sys.executable, "-c", EXITS, str(tmp_path / "release")],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    parent = json.loads(out.strip().splitlines()[-1])
    assert parent == {"results": 4, "alive_after_results": 2, "alive_after_join": 0}
    exits = [json.loads(p.read_text()) for p in tmp_path.glob("exited-*")]
    assert exits == [True, True]  # both workers exited after the release
