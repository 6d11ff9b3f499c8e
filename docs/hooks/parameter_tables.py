"""MkDocs hook: ``<!-- parameter-table: controller -->`` in a page becomes that node's
parameter table (``rnea_ros/params/<node>.yaml`` rendered by
:func:`rnea_ros.parameters.markdown`, as ``python -m rnea_ros.parameters <node>``
prints it): ranges, units, safety bounds and their reasons are written once, in the
YAML, and shown here."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^( *)<!-- parameter-table: (\w+) -->$", re.M)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """The page with each marker replaced by its table."""
    if not MARKER.search(markdown):
        return markdown
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from rnea_ros.parameters import load_table
    from rnea_ros.parameters import markdown as table_markdown

    def table(match: re.Match[str]) -> str:
        indent = match.group(1)  # (inside an admonition: its indentation)
        rows = table_markdown(load_table(match.group(2))).splitlines()
        return "\n".join(indent + row for row in rows)

    return MARKER.sub(table, markdown)
