"""control/ and nodes/ reach the core's compiled layer only through its documented API,
rnea_ros.core.kernels (docs/design.md, "Compiled layer"): no import of a private core
module (``_compile``, ``_layout``, ``_algebra``, ``_X_jit``) nor of a private name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rnea_ros"


def private_core_imports(path: Path) -> list[str]:
    """``module:name`` of every import in ``path`` of a private core module or name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                "rnea_ros.core"):
            parts = node.module.split(".")
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in parts) or any(n.startswith("_") for n in names):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{path.relative_to(PACKAGE)}:{node.lineno} {a.name}" for a in node.names
                      if a.name.startswith("rnea_ros.core")
                      and any(p.startswith("_") for p in a.name.split("."))]
    return found


def test_control_and_nodes_use_only_the_documented_kernel_api() -> None:
    files = sorted((PACKAGE / "control").glob("*.py")) + sorted((PACKAGE / "nodes").glob("*.py"))
    assert files
    offenders = [hit for f in files for hit in private_core_imports(f)]
    assert not offenders, offenders


def test_every_name_of_the_kernel_api_exists_and_is_listed() -> None:
    kernels = importlib.import_module("rnea_ros.core.kernels")
    for name in kernels.__all__:
        assert hasattr(kernels, name), name
    public = {n for n in vars(kernels) if not n.startswith("_") and n != "annotations"}
    assert public == set(kernels.__all__), public ^ set(kernels.__all__)
