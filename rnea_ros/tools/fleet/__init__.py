"""``rnea-fleet``: ``rnea-bag`` over many bags of many robots, tables of per-bag
summaries, drift of the residual and fitted friction over days, a report.

One module per stage: ``manifest`` (robots, URDFs, bag globs) → ``cache`` (content
keys, atomic per-bag results) → ``engines`` (local process pool or a Dask cluster)
running ``task`` (one bag through ``rnea_ros.tools.bag``, reduced to per-joint rows)
→ ``tables`` (``bags.parquet``, ``drift.parquet``) and ``drift`` (Theil-Sen trends,
the flag rule) → ``report`` (``report.html``); ``cli`` is ``main(argv) -> int``.
``synthetic`` writes a test fleet. See docs/fleet.md.
"""

from rnea_ros.tools.fleet.cli import main

__all__ = ["main"]
