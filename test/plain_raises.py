"""Where the package raises a plain ``ValueError``/``RuntimeError`` rather than one of
its typed errors (``RneaError`` and the packages' own): shared by
``test_parameter_errors.py`` and ``test_error_packages.py``."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rnea_ros"


def plain_raises(path: Path) -> list[str]:
    """``'<file>:<line> ValueError'`` for each ``raise ValueError(...)`` or
    ``raise RuntimeError(...)`` in ``path`` (a file of :data:`PACKAGE`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            func = node.exc.func
            if isinstance(func, ast.Name) and func.id in ("ValueError", "RuntimeError"):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {func.id}")
    return found
