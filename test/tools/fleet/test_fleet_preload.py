"""rnea-fleet's Dask preload (``--preload rnea_ros.tools.fleet.preload``): each worker
has the analysis imported and its kernels loaded before any task, a run on such workers
gives the local pool's rows, and a preload that fails is logged and leaves a worker that
serves tasks."""

from __future__ import annotations

import gc
import logging
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from rnea_ros.tools.fleet import main
from rnea_ros.tools.fleet.synthetic import write_fleet

distributed = pytest.importorskip("distributed")
PRELOAD = "rnea_ros.tools.fleet.preload"

# A preload put before ours: it breaks the warm-up and records what the worker's
# rnea-fleet loggers say (a spawned worker's log is not the test's).
BREAK = '''
import logging
import rnea_ros.tools.fleet.warm as warm

RECORDS = []

class Keep(logging.Handler):
    def emit(self, record):
        RECORDS.append((record.levelname, record.getMessage()))

log = logging.getLogger("rnea_ros.tools.fleet.preload")
if not getattr(log, "kept_by_test", False):  # distributed may import a file twice
    log.addHandler(Keep())
    log.kept_by_test = True

def broken(urdf):
    raise RuntimeError("a broken warm-up (test)")

warm.warm_up = broken

def dask_setup(worker):
    pass
'''


def _state() -> dict[str, Any]:
    """On a worker: whether the analysis is imported, how many specialisations the bag
    analysis's kernels hold (serial and mimic robots), how many objects are frozen."""
    loaded: dict[str, Any] = {"task": "rnea_ros.tools.fleet.task" in sys.modules,
                              "frozen": gc.get_freeze_count()}
    for module, names in (("rnea_ros.core.dynamics._rnea_jit", ("rnea_rows", "gravity_rows")),
                          ("rnea_ros.core.dynamics._rnea_expanded_jit", ("rnea_tree_rows",))):
        found = sys.modules.get(module)
        for name in names:
            loaded[name] = len(getattr(found, name).overloads) if found else 0
    return loaded


def _cluster(*preload: str) -> Any:
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=None, host="127.0.0.1",
                                    preload=list(preload))


def _rows(path: Path) -> list[dict[str, Any]]:
    """The table's rows, NaN as 'nan' (so equal tables compare equal)."""
    return [{k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in pq.read_table(path).to_pylist()]


def test_preloaded_workers_hold_the_analysis_before_a_task_and_match_the_pool(
        tmp_path: Path) -> None:
    manifest = write_fleet(tmp_path / "fleet", days=2, duration=0.5)
    local = tmp_path / "local"
    code = main(["analyse", str(manifest), "--out", str(local), "--workers", "2", "--quiet"])
    with _cluster(PRELOAD) as cluster, distributed.Client(cluster) as client:
        state = client.run(_state)  # not a task: what the preload left
        assert len(state) == 2
        for worker, loaded in state.items():
            assert loaded["task"], worker
            assert loaded["rnea_rows"] >= 1 and loaded["gravity_rows"] >= 1, (worker, loaded)
            assert loaded["rnea_tree_rows"] >= 1, (worker, loaded)  # the mimic robot's
            assert loaded["frozen"] > 50_000, (worker, loaded)  # the heap frozen
        dask = tmp_path / "dask"
        assert main(["analyse", str(manifest), "--out", str(dask), "--quiet",
                     "--scheduler", cluster.scheduler_address]) == code
    assert _rows(dask / "bags.parquet") == _rows(local / "bags.parquet")
    assert _rows(dask / "drift.parquet") == _rows(local / "drift.parquet")


def test_a_failing_preload_is_logged_and_the_worker_serves_tasks(tmp_path: Path) -> None:
    breaker = tmp_path / "break_fleet_warm_up.py"
    breaker.write_text(BREAK)
    with _cluster(str(breaker), PRELOAD) as cluster, distributed.Client(cluster) as client:
        records = client.run(lambda: sys.modules["break_fleet_warm_up"].RECORDS)
        assert len(records) == 2
        for worker, logged in records.items():
            assert [level for level, _ in logged] == ["WARNING"], (worker, logged)
            assert "preloading this worker failed" in logged[0][1], logged
            assert "RuntimeError: a broken warm-up (test)" in logged[0][1], logged
        assert client.gather(client.map(lambda x: x * x, range(6))) == [0, 1, 4, 9, 16, 25]


def test_given_to_anything_but_a_worker_it_only_warns(caplog: pytest.LogCaptureFixture) -> None:
    from rnea_ros.tools.fleet.preload import dask_setup

    frozen = gc.get_freeze_count()
    with caplog.at_level(logging.WARNING, logger=PRELOAD):
        dask_setup(object())  # a scheduler or nanny given the module by mistake
    assert "is a worker preload" in caplog.text
    assert gc.get_freeze_count() == frozen  # nothing warmed, nothing frozen


def test_importing_the_preload_imports_nothing_of_the_analysis() -> None:
    """Dask imports the module as it builds the worker, outside any error handling: a
    broken installation must fail in :func:`dask_setup` (logged), not there."""
    code = ("import sys, rnea_ros.tools.fleet.preload; "
            "print(sorted(m for m in sys.modules if m.startswith(('rnea_ros.', 'numba'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["['rnea_ros.tools',", "'rnea_ros.tools.fleet',",
                           "'rnea_ros.tools.fleet.preload']"]
