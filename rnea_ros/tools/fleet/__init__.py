"""``rnea-fleet``: ``rnea-bag`` over many bags of many robots, tables of per-bag
summaries, drift of the residual and fitted friction over days, a report.

One module per stage: ``manifest`` (robots, URDFs, bag globs) → ``cache`` (content
keys, atomic per-bag results) → ``engines`` (local process pool or a Dask cluster)
running ``task`` (one bag through ``rnea_ros.tools.bag``, reduced to per-joint rows)
→ ``tables`` (``bags.parquet``, ``drift.parquet``) and ``drift`` (Theil-Sen trends,
the flag rule) → ``report`` (``report.html``); ``cli`` is ``main(argv) -> int``.
``synthetic`` writes a test fleet; ``warm`` and ``preload`` warm Dask workers. See
docs/fleet.md.

``main`` is loaded on first access, so that importing a submodule alone (a Dask
worker's ``--preload rnea_ros.tools.fleet.preload``, imported as the worker is built)
does not import the CLI and the analysis with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rnea_ros.tools.fleet.cli import main

__all__ = ["main"]


def __getattr__(name: str) -> Any:
    """``main``, imported from :mod:`rnea_ros.tools.fleet.cli` on first access."""
    if name == "main":
        from rnea_ros.tools.fleet.cli import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
