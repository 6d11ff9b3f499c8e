"""rnea-fleet's engines: Dask workers warmed before their first task, as the forked
local pool inherits the analysis; a progress ETA the engine's start-up does not inflate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rnea_ros.samples import sample_urdf
from rnea_ros.tools.fleet.cli import eta
from rnea_ros.tools.fleet.engines import batches
from rnea_ros.tools.fleet.warm import WarmWorker, warm_up


def _loaded() -> dict[str, int]:
    """On a worker: whether the analysis is imported, and how many compiled
    specialisations the bag analysis's batch kernels hold."""
    loaded = {"task": int("rnea_ros.tools.fleet.task" in sys.modules)}
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
        client.register_plugin(WarmWorker(str(sample_urdf("arm7"))))
        warm = client.run(_loaded)
        assert len(warm) == 2
        for worker, loaded in warm.items():
            assert loaded["task"] == 1, worker
            assert loaded["rnea_rows"] >= 1 and loaded["gravity_rows"] >= 1, (worker, loaded)


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
    WarmWorker(str(broken)).setup(worker=None)  # logged, not raised
