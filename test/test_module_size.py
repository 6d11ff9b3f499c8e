"""No module of the package is over 550 lines (issue 36: "every module <= 550 lines";
a module that grows past it is split by concept, as ``control/controller.py`` was into
``controller.py``, ``controller_intake.py`` and ``controller_output.py``). Counted as
``wc -l`` counts, on every ``.py`` file under ``rnea_ros/``, kernels included."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rnea_ros"
LIMIT = 550


def test_no_module_is_over_the_limit() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 150  # the whole package, not a corner of it
    sizes = {str(p.relative_to(PACKAGE)): p.read_bytes().count(b"\n") for p in files}
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by concept): {over}"
    assert max(sizes.values()) > 300  # (the count is real)
