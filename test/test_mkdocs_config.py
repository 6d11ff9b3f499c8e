"""mkdocs.yml has each top-level key once and lists every hook in docs/hooks/.

A repeated key is legal YAML for PyYAML, which keeps the last one: a second ``hooks:``
silently dropped the parameter-table hook, so nodes.md showed empty tables.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "mkdocs.yml").read_text()


def test_top_level_keys_are_unique() -> None:
    keys = re.findall(r"^([A-Za-z_]\w*):", TEXT, flags=re.M)
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    assert not repeated, f"mkdocs.yml repeats {repeated}: YAML keeps only the last"


def test_every_hook_file_is_listed() -> None:
    config = yaml.load(TEXT.replace("!!python/name:", ""), Loader=yaml.BaseLoader)
    listed = set(config["hooks"])
    hooks = {f"docs/hooks/{p.name}" for p in (ROOT / "docs" / "hooks").glob("*.py")
             if re.search(r"^def on_\w+\(", p.read_text(), flags=re.M)}
    assert hooks and hooks <= listed, f"hooks not in mkdocs.yml: {sorted(hooks - listed)}"
