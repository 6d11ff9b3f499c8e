"""Where the bags' tasks run: a local process pool (default) or an existing Dask cluster.

Both take the same :class:`~rnea_ros.tools.fleet.task.Job` list and yield each
result as it finishes (any order); the caller stores it at once (crash safety).

* :func:`run_local`: ``concurrent.futures.ProcessPoolExecutor`` with ``workers``
  processes (default: all cores), forked from this process (or from a fork server
  that has imported the analysis, when this process has other threads); each worker
  analyses one bag at a time, a chunk at a time.
* :func:`run_dask`: ``distributed.Client(address)`` of a running cluster (``dask
  scheduler`` + ``dask worker tcp://HOST:8786 --preload rnea_ros.tools.fleet.preload``
  on each machine, or any Dask deployment: dask-kubernetes, dask-jobqueue for
  SLURM/PBS, ...). The workers need this package installed (same version: the
  results are cached under it). The preload (:mod:`~rnea_ros.tools.fleet.preload`)
  has each worker import the analysis and load its compiled kernels as it starts;
  a worker plugin (:class:`~rnea_ros.tools.fleet.warm.WarmWorker`) does it for the
  run's robot when a run starts, at little cost on a preloaded worker (the forked
  local pool inherits the imports; its workers load the kernels in their first
  bag). Tasks run with the allocator roomy (:mod:`~rnea_ros.tools.fleet.malloc`).
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

from rnea_ros.tools.fleet.malloc import roomy_malloc
from rnea_ros.tools.fleet.task import Job, run


def lost(job: Job, exc: BaseException) -> dict[str, Any]:
    """The result of a task the engine lost (a worker killed, out of memory, ...): an
    error row marked ``transient``, which is not cached (the next run retries it)."""
    message = " ".join(f"{type(exc).__name__}: {exc}".split())
    return {"robot": job.robot, "bag": job.bag, "key": job.key, "status": "error",
            "message": f"the worker was lost ({message}); retried on the next run",
            "rows": [], "report": job.report_dir, "transient": True}


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_local(jobs: Sequence[Job], workers: int | None = None) -> Iterator[dict[str, Any]]:
    """Results of ``jobs`` on a local process pool, as they finish (started in the order
    given: the CLI puts the largest bags first).

    Once the last result is out, the pool shuts down in a thread: its workers exit
    (sentinels, the kernel tearing down each forked address space: 10-18 ms on the test
    machine) while the caller writes its tables; :func:`join_pools` waits for them (the
    CLI calls it before it returns; the interpreter's exit would too). A run that stops
    early (an exception, the generator closed) joins them at once, as before."""
    if not jobs:
        return
    join_pools()  # a previous run's workers: this process forks from a single thread
    workers = max(1, min(workers or default_workers(), len(jobs)))
    context = _context()
    with frozen_heap():
        forked = context.get_start_method() == "fork"
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                   initializer=end_with_parent,
                                   initargs=(os.getpid() if forked else None,))
        finished = False
        try:
            yield from _results(pool, jobs, workers)
            finished = True
        finally:
            if finished:  # joined by a thread of its own, which join_pools() waits for
                closing = threading.Thread(target=pool.shutdown, name="rnea-fleet-pool-join")
                closing.start()
                _CLOSING.append(closing)
            else:
                pool.shutdown(wait=True)


def _results(pool: ProcessPoolExecutor, jobs: Sequence[Job], workers: int
             ) -> Iterator[dict[str, Any]]:
    """Submit ``jobs`` in order, at most 2 per worker in flight (a killed run leaves
    little started); yield each result as it finishes."""
    queue = list(reversed(jobs))
    running: dict[Future[dict[str, Any]], Job] = {}
    while queue or running:
        while queue and len(running) < 2 * workers:
            job = queue.pop()
            running[pool.submit(run_one, job)] = job
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            job = running.pop(future)
            exc = future.exception()
            yield lost(job, exc) if exc is not None else future.result()


_CLOSING: list[threading.Thread] = []  # shutting down finished pools, joining workers


def join_pools() -> None:
    """Wait until the workers of every finished :func:`run_local` pool have exited."""
    while _CLOSING:
        _CLOSING.pop().join()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """This process's objects out of the cyclic garbage collector's reach (``gc.freeze``)
    while the pool forks, and back after (``gc.unfreeze``).

    A forked worker inherits them frozen, so its full collections walk only what it
    made itself instead of the ~95 000 objects of the imported analysis (0.04-0.06 s
    each, one every few bags): a worker's first bag and 9 more of 10 s took 0.98 s of
    CPU instead of 1.13 s (docs/performance.md). Python's gc documentation recommends
    it before a fork; nothing is collected or copied (the reference counts are
    untouched). A process whose heap was frozen already (its own policy) keeps it
    frozen."""
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()


def _context() -> Any:
    """``fork`` where it is safe (POSIX, this process has no other thread): the workers
    inherit the imported analysis (2.5 s instead of 6.2 s to analyse 2 small bags on 2
    workers of the loaded test machine; each loads the compiled kernels in its first
    bag); else a fork server that imports it once."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["rnea_ros.tools.fleet.task"])
        return context
    return multiprocessing.get_context("spawn")


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with_parent(parent: int | None) -> None:
    """A pool worker's initializer: on Linux the worker gets SIGTERM when the process that
    started it ends (``prctl(PR_SET_PDEATHSIG)``), and ends at once if ``parent`` (the
    client's pid, for a forked worker) has already gone.

    A worker waits for its next task on a pipe whose write end it inherited, so a client
    killed with SIGKILL (an OOM kill, ``kill -9``, a CI timeout) left its idle workers
    blocked for good, each holding the analysis' memory. Forked by the fork server, the
    worker's parent is that server, which ends when the client does."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:  # gone before the prctl
        os._exit(1)


def run_one(job: Job) -> dict[str, Any]:
    """The result of ``job`` (one local pool task), with the allocator roomy as in
    :func:`run_batch` (a no-op unless ``MALLOC_TRIM_THRESHOLD_`` is set)."""
    with roomy_malloc():
        return run(job)


def run_batch(jobs: Sequence[Job]) -> list[dict[str, Any]]:
    """The results of ``jobs``, one after the other (one Dask task), with the allocator
    roomy (:func:`~rnea_ros.tools.fleet.malloc.roomy_malloc`: a Dask worker's trim
    threshold otherwise costs ~20 % more CPU per bag)."""
    with roomy_malloc():
        return [run(job) for job in jobs]


def batches(jobs: Sequence[Job], workers: int, per_worker: int = 4) -> list[list[Job]]:
    """``jobs`` in consecutive batches, about ``per_worker`` per worker (each at least
    one job): few enough that Dask's cost per task (a round trip through the scheduler,
    ~10-50 ms on a loaded machine) stays small against the batch's bags, enough that
    the workers finish close together and a killed run loses little."""
    count = max(1, min(len(jobs), workers * per_worker))
    size, extra = divmod(len(jobs), count)  # the first ``extra`` batches one job more
    ends = [k * size + min(k, extra) for k in range(count + 1)]
    return [list(jobs[a:b]) for a, b in pairwise(ends)]


def run_dask(jobs: Sequence[Job], address: str) -> Iterator[dict[str, Any]]:
    """Results of ``jobs`` on the Dask cluster at ``address`` (``tcp://HOST:PORT``),
    its workers warmed by :class:`~rnea_ros.tools.fleet.warm.WarmWorker` first, the
    jobs sent in :func:`batches` (each batch's results come back together)."""
    if not jobs:
        return
    from distributed import Client, as_completed

    from rnea_ros.tools.fleet.warm import WarmWorker

    with Client(address, timeout="30s") as client:  # type: ignore[no-untyped-call]
        client.register_plugin(WarmWorker(jobs[0].urdf))
        workers = max(1, sum(client.nthreads().values()))
        groups = batches(jobs, workers)
        futures = client.map(run_batch, groups, pure=False)
        group_of = {future.key: group for future, group in zip(futures, groups, strict=True)}
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            try:
                yield from future.result()
            except Exception as exc:  # a worker lost, killed, out of memory
                yield from (lost(job, exc) for job in group_of[future.key])
