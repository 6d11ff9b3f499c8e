"""glibc's allocator thresholds while rnea-fleet's bags run on a Dask worker.

A Dask nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``: freed memory goes back to the system at
once). Setting that variable also freezes glibc's mmap threshold at 128 kB (mallopt(3):
the dynamic threshold is off), so every array above 128 kB, which a bag's chunks
(10^4 samples x joints) all are, is a fresh ``mmap`` whose pages fault in one by one
and a ``munmap`` when freed: ten 10 s arm7 bags took 1.19-1.24 s of CPU with the
variable set against 0.90-1.01 s with :func:`roomy_malloc` (0.22-0.27 s of it in the
kernel, 130 000-146 000 page faults against ~600; load ~5; docs/performance.md).

:func:`roomy_malloc` raises both thresholds while a batch of bags runs (the arrays
are reused from the heap), then puts the worker's back and returns the freed memory
to the system (``malloc_trim``), as the nanny wants between tasks. Nested or
concurrent batches (a worker with several threads) share one raise. Elsewhere (no
such variable, not glibc) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

M_TRIM_THRESHOLD = -1  # mallopt(3) parameters (glibc malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_DEFAULT = 128 * 1024  # glibc's fixed mmap threshold once a trim threshold is set
ROOMY = 64 * 1024 * 1024  # [bytes] while bags run: above any chunk's array
VARIABLE = "MALLOC_TRIM_THRESHOLD_"
MMAP_VARIABLE = "MALLOC_MMAP_THRESHOLD_"  # the mmap threshold, when set with it

_lock = threading.Lock()
_depth = 0


@functools.cache
def _glibc() -> Any | None:
    """glibc's ``mallopt`` and ``malloc_trim``, or None (another C library, no ctypes);
    looked up once per process (``find_library`` runs ``ldconfig``)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.mallopt  # noqa: B018 (absent from musl, macOS)
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def _threshold(variable: str) -> int | None:
    """A threshold [bytes] from the environment ``variable``, or None."""
    try:
        return int(os.environ[variable])
    except (KeyError, ValueError):
        return None


@contextmanager
def roomy_malloc() -> Iterator[bool]:
    """Raise glibc's mmap and trim thresholds to :data:`ROOMY` inside the block when
    the process runs with :data:`VARIABLE` set; yields whether it did."""
    global _depth
    trim = _threshold(VARIABLE)
    libc = _glibc() if trim is not None else None
    if libc is None or trim is None:
        yield False
        return
    with _lock:
        _depth += 1
        if _depth == 1:
            libc.mallopt(M_MMAP_THRESHOLD, ROOMY)
            libc.mallopt(M_TRIM_THRESHOLD, ROOMY)
    try:
        yield True
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                libc.mallopt(M_TRIM_THRESHOLD, trim)
                libc.mallopt(M_MMAP_THRESHOLD, _threshold(MMAP_VARIABLE) or MMAP_DEFAULT)
                libc.malloc_trim(0)
