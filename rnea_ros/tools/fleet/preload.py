"""Dask's preload for rnea-fleet's workers: the package imported and its kernels loaded
as each worker process starts, before it joins the cluster.

    dask worker tcp://HOST:8786 --nthreads 1 --preload rnea_ros.tools.fleet.preload

or, in Python, ``LocalCluster(..., preload=["rnea_ros.tools.fleet.preload"])`` (the
keyword goes to each worker; distributed's "Customize Initialization" documents the
protocol: the module is imported when the worker is built, :func:`dask_setup` called
with the worker as it starts, before it connects to the scheduler).

Why: a spawned Dask worker otherwise imports the package (~0.55 s of CPU: numba,
``rnea_ros.core``'s namespace, ``scipy.ndimage``, the contact observer) and loads the
kernels (~0.27 s) inside the first ``rnea-fleet analyse --scheduler`` run, when its
:class:`~rnea_ros.tools.fleet.warm.WarmWorker` plugin runs; the forked local pool
inherits the imports. With the preload that cost is the cluster's start-up, paid once
per worker process, and the run's plugin (still registered, for the run's own robot)
finds the kernels loaded.

The warm-up analyses a 50 ms synthetic bag of each of :data:`ROBOTS`
(:func:`~rnea_ros.tools.fleet.warm.warm_up`): numba's kernels are compiled per argument
signature, not per robot, so a bag of any serial robot reaches ``arm7``'s six (a legged
robot's URDF, Solo12's, reached no other: the bag analysis loads it fixed-base, and
refuses a URDF whose root joint is ``floating``, its base not being in the joint
states); a robot with mimic joints reaches three more (the expanded tree's
``rnea_tree_rows``, ``gravity_tree_rows``, ``momentum_tree_rows``), hence
``arm7_gripper``. A closed-loop robot's kernels are left to the run's plugin.

Best effort: a failure is logged and the worker starts all the same (the run's plugin
or its first task loads what is missing). Dask imports this module as it builds the
worker, outside its error handling, so the module (and ``rnea_ros.tools.fleet``'s
``__init__``) imports nothing of the analysis: a broken installation fails in
:func:`preload`, logged. The costs, CPU of a
spawned process that imported ``distributed`` first (load ~3.5): the import 0.54-0.56 s,
``arm7``'s bag 0.28 s, ``arm7_gripper``'s 0.06 s; the run's plugin afterwards 0.04-0.05 s
(docs/performance.md).
"""

from __future__ import annotations

import logging
import time
from typing import Any

ROBOTS = ("arm7", "arm7_gripper")  # the sample robots warmed (rnea_ros.samples.sample_urdf)

logger = logging.getLogger(__name__)


def dask_setup(worker: Any) -> None:
    """Dask's preload hook: on a worker (``distributed.Worker``), :func:`preload`; on
    anything else (a scheduler, nanny or client given this module) only a warning."""
    from distributed import Worker

    if not isinstance(worker, Worker):
        logger.warning("rnea-fleet: %s is a worker preload (dask worker --preload %s); "
                       "nothing done for a %s", __name__, __name__, type(worker).__name__)
        return
    preload()


def preload() -> bool:
    """Import the analysis, load the kernels a bag reaches (a 50 ms synthetic bag of
    each of :data:`ROBOTS`), then freeze the heap (:func:`~rnea_ros.tools.fleet.warm.freeze_heap`,
    as :meth:`~rnea_ros.tools.fleet.warm.WarmWorker.setup`). Whether it all worked; a
    failure is logged with its cause, never raised."""
    start = time.process_time()
    try:
        from rnea_ros.samples import sample_urdf
        from rnea_ros.tools.fleet.warm import freeze_heap, warm_up

        for robot in ROBOTS:
            warm_up(str(sample_urdf(robot)))
    except Exception as exc:  # best effort: the worker must start all the same
        logger.warning("rnea-fleet: preloading this worker failed (%s: %s); the run's "
                       "warm-up or first task loads the analysis instead",
                       type(exc).__name__, exc)
        return False
    freeze_heap()
    logger.info("rnea-fleet: worker preloaded (analysis imported, kernels loaded) in "
                "%.2f s of CPU", time.process_time() - start)
    return True
