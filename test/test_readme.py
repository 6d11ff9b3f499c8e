"""The README's Python examples run as written (from the repository root)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    with warnings.catch_warnings():
        result = subprocess.run([sys.executable, "-c", BLOCKS[index]], cwd=ROOT,
                                capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
