"""A ``bench/`` script loaded as a module for its tests (``bench/`` is not a package):
shared by test/test_bench_*.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(script: str, with_its_folder: bool = False) -> ModuleType:
    """``bench/<script>`` as a fresh module named ``<stem>_under_test``;
    ``with_its_folder``: ``bench/`` on ``sys.path`` while it loads (a script that imports
    its neighbours)."""
    if with_its_folder:
        sys.path.insert(0, str(BENCH))
    try:
        path = BENCH / script
        spec = importlib.util.spec_from_file_location(f"{path.stem}_under_test", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if with_its_folder:
            sys.path.remove(str(BENCH))
