"""rnea-fleet on a Dask LocalCluster bound to loopback (the walkthrough's Dask step).

Starts a scheduler and two single-threaded worker processes on 127.0.0.1 (random
ports, no dashboard, nothing reachable from another machine), runs
``rnea-fleet analyse ... --scheduler <address>`` against it, and exits with
rnea-fleet's exit code. Usage: ``python dask_fleet.py MANIFEST OUT``.
"""

from __future__ import annotations

import logging
import subprocess
import sys

from dask.distributed import LocalCluster


def main(manifest: str, out: str) -> int:
    """Run rnea-fleet on a loopback LocalCluster; return its exit code."""
    with LocalCluster(host="127.0.0.1", n_workers=2, threads_per_worker=1,
                      dashboard_address="127.0.0.1:0",
                      silence_logs=logging.ERROR) as cluster:
        return subprocess.call(["rnea-fleet", "analyse", manifest,
                                "--scheduler", cluster.scheduler_address, "--out", out])


if __name__ == "__main__":  # the workers are spawned processes: guard the entry point
    sys.exit(main(*sys.argv[1:3]))
