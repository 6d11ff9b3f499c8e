"""The package's kernels load from numba's cache without refreshing numba's contexts
(:func:`rnea_ros.core._compile._load_without_refresh`), and a process that loaded them
so still compiles and calls what it did before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from rnea_ros.core._compile import _load_without_refresh

ROOT = Path(__file__).resolve().parents[2]

# A kernel module of the test's own, in a directory and cache of its own: the first
# process compiles and stores it, the next ones load it.
KERNELS = '''
import numpy as np
from rnea_ros.core._algebra import add3
from rnea_ros.core._compile import jit


@jit
def grow(n, x):
    """A heap array (the runtime, NRT) holding add3's sum n times."""
    out = np.empty((n, 3))
    for k in range(n):
        s = add3((x[0], x[1], x[2]), (float(k), 1.0, -1.0))
        out[k, 0], out[k, 1], out[k, 2] = s
    return out
'''

PROBE = '''
import json, sys
import numba
import numpy as np
from numba.core.registry import cpu_target
import kernels

x = np.array([0.5, -2.0, 3.25])
out = kernels.grow(7, x)
loaded = {
    "hits": int(sum(kernels.grow.stats.cache_hits.values())),
    "misses": int(sum(kernels.grow.stats.cache_misses.values())),
    "typing_registries": len(cpu_target.typing_context._registries),
    "cache_class": type(kernels.grow._cache).__name__,
    "out": out.tolist(),
}

@numba.njit  # compiled here, after the lean load: numba refreshes its contexts first
def twice(n, x):
    a = kernels.grow(n, x)
    return a + a

loaded["twice"] = twice(3, x).tolist()
loaded["typing_registries_after_compile"] = len(cpu_target.typing_context._registries)
print(json.dumps(loaded))
'''


def probe(tmp_path: Path) -> dict[str, Any]:
    """Run :data:`PROBE` in a fresh interpreter with the test's kernel module and cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop("RNEA_ROS_NO_JIT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_a_cached_kernel_loads_without_the_registries_and_later_compiles_work(
        tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(textwrap.dedent(KERNELS))
    first = probe(tmp_path)  # compiles and stores: numba refreshes to compile
    assert first["misses"] == 1 and first["hits"] == 0
    assert first["typing_registries"] > 0
    second = probe(tmp_path)
    assert second["cache_class"] == "LeanLoadCache"
    assert second["hits"] == 1 and second["misses"] == 0
    assert second["typing_registries"] == 0  # the load refreshed nothing
    x = [0.5, -2.0, 3.25]
    expected = [[x[0] + k, x[1] + 1.0, x[2] - 1.0] for k in range(7)]
    assert second["out"] == first["out"] == expected  # exact: sums of representable values
    # a function compiled after the lean load types and calls the loaded kernel
    assert second["typing_registries_after_compile"] > 0
    assert second["twice"] == [[2 * v for v in row] for row in expected[:3]]


def test_numba_without_the_internals_keeps_its_own_loader() -> None:
    class Other:
        def load_overload(self, sig: Any, target_context: Any) -> None:
            return None

    assert _load_without_refresh(Other) is None


def test_the_package_kernels_use_the_lean_loader() -> None:
    from rnea_ros.core._compile import _CACHE
    from rnea_ros.core.dynamics import _rnea_jit

    if not _CACHE:
        pytest.fail("the suite runs with numba's cache on (make test); RNEA_ROS_NO_JIT_CACHE?")
    assert type(_rnea_jit.rnea_rows._cache).__name__ == "LeanLoadCache"
