"""A Dask worker's ``MALLOC_TRIM_THRESHOLD_`` (set by its nanny) no longer makes each
bag's arrays fresh page-faulting mmaps: rnea-fleet's batches run with glibc's
thresholds raised (tools/fleet/malloc.py), then put back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnea_ros.tools.fleet.malloc import roomy_malloc

CODE = """
import resource, sys
from rnea_ros.samples import sample_urdf
from rnea_ros.tools.fleet.engines import run_batch, run_one
from rnea_ros.tools.fleet.task import Job, run
job = Job("r", sys.argv[1], str(sample_urdf("arm7")), "k")
assert run(job)["status"] == "ok"  # kernels loaded, modules imported

def faults(f):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    f()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

plain = min(faults(lambda: run(job)) for _ in range(2))
batch = min(faults(lambda: run_batch([job, job])) for _ in range(2)) / 2
one = min(faults(lambda: run_one(job)) for _ in range(2))  # the local pool's task
print(plain, batch, one)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_batch_on_a_trimming_worker_does_not_fault_its_arrays_in(tmp_path: Path) -> None:
    from rnea_ros.samples import load_robot
    from rnea_ros.tools.synthetic_bag import write_bag

    bag = tmp_path / "bag"
    write_bag(bag, load_robot("arm7"), duration=3.0)  # chunks of 3000 x 7: > 128 kB
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536"}  # as a Dask nanny sets it
    out = subprocess.run([sys.executable, "-c", CODE, str(bag)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    plain, batch, one = float(out[0]), float(out[1]), float(out[2])
    assert plain > 2000, plain  # the trim threshold's cost is there to remove
    assert batch < plain / 4, (plain, batch)
    assert one < plain / 2, (plain, one)  # ~4x fewer; its trim at the end costs some


def test_without_the_variable_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with roomy_malloc() as raised:
        assert raised is False
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "not a number")
    with roomy_malloc() as raised:
        assert raised is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_nested_batches_share_one_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    from rnea_ros.tools.fleet import malloc

    calls: list[tuple[str, int, int]] = []

    class Libc:
        def mallopt(self, what: int, value: int) -> int:
            calls.append(("mallopt", what, value))
            return 1

        def malloc_trim(self, pad: int) -> int:
            calls.append(("trim", pad, 0))
            return 1

    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setattr(malloc, "_glibc", Libc)
    with roomy_malloc(), roomy_malloc():
        assert calls == [("mallopt", malloc.M_MMAP_THRESHOLD, malloc.ROOMY),
                         ("mallopt", malloc.M_TRIM_THRESHOLD, malloc.ROOMY)]
    assert calls[2:] == [("mallopt", malloc.M_TRIM_THRESHOLD, 65536),
                         ("mallopt", malloc.M_MMAP_THRESHOLD, malloc.MMAP_DEFAULT),
                         ("trim", 0, 0)]
