"""rnea-fleet's critical path (issue 40, fifth pass): the local pool's workers exit while
the client writes its tables, joined before the run returns. Nothing here asserts a
time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
