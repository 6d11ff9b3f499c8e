"""The Dask worker plugin of rnea-fleet (imported only with ``--scheduler``: it needs
``distributed``)."""

from __future__ import annotations

import gc
import logging
import tempfile
from pathlib import Path
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from rnea_ros.core.errors import RneaError
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.tools.fleet.task import Job, run
from rnea_ros.tools.synthetic_bag import write_bag


def warm_up(urdf: str) -> None:
    """Import the analysis and load (or compile) every kernel a bag of the robot of
    ``urdf`` reaches: analyse a 50 ms synthetic bag of it, in a temporary directory.
    Best effort: a robot the synthetic writer cannot drive leaves the rest to the
    first task."""
    with tempfile.TemporaryDirectory(prefix="rnea-fleet-warm-") as tmp:
        try:
            write_bag(Path(tmp) / "bag", load_urdf(urdf), duration=0.05)
        except (RneaError, ValueError, OSError):
            return
        run(Job("warm-up", str(Path(tmp) / "bag"), urdf, "warm-up"))


class WarmWorker(WorkerPlugin):
    """On each worker (those up now and those that join later), :func:`warm_up` once,
    before its first task: a spawned Dask worker otherwise imports the package and
    loads the kernels inside its first task (0.8 s instead of 0.1 s for a 10 s arm7 bag
    on the loaded test machine); the forked local pool inherits the imports from its
    parent, and its workers load the kernels in their first bag.
    Registered under one name and idempotent, so later runs on the same cluster do not
    repeat it. On a worker started with :mod:`~rnea_ros.tools.fleet.preload` it finds
    the analysis loaded: 0.04-0.05 s of CPU instead of ~0.8 s."""

    name = "rnea-ros-fleet-warm"
    idempotent = True

    def __init__(self, urdf: str) -> None:
        self.urdf = urdf

    def setup(self, worker: Any) -> None:
        """Warm this worker, then freeze its heap (:func:`freeze_heap`); a failure is
        logged, never raised: registering the plugin must not fail the run (the tasks
        then report what is wrong with the bags)."""
        try:
            warm_up(self.urdf)
        except Exception as exc:  # best effort: the first task does it otherwise
            logging.getLogger(__name__).warning(
                "rnea-fleet: warming this worker with %s failed (%s: %s); its first task "
                "loads the kernels instead", self.urdf, type(exc).__name__, exc)
        freeze_heap()


def freeze_heap() -> None:
    """The worker's objects now (the imported package, numba's registries and kernels,
    Dask's own) out of the cyclic garbage collector's reach (``gc.freeze``), the young
    garbage collected first.

    Each full collection otherwise walks them all, ~180 000 objects, 0.08 s of CPU, and a
    bag's temporaries bring one every few bags (docs/performance.md). Objects frozen are
    still freed when their last reference goes; only a cycle among them that becomes
    garbage later stays (the few hundred left in old generations at this point)."""
    gc.collect(1)
    gc.freeze()
