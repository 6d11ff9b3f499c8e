"""The docs pages say each thing once, and what they list matches the code.

* no page repeats a heading or a paragraph (a copy-paste slip: docs/core.md once
  repeated its H1, its intro and a section heading);
* the robot list of docs/getting-started.md is the set of shipped robots (one
  ``config/NAME_controller.yaml`` each);
* docs/fleet.md lists every key rnea-fleet writes to ``summary.json``;
* the overview on docs/index.md names every offline tool of rnea_ros/commands.py.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from rnea_ros.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs (code blocks, tables and short lines left out), whitespace-normalised."""
    text = FENCE.sub("", text)
    out = []
    for block in re.split(r"\n\s*\n", text):
        flat = " ".join(block.split())
        if len(flat) >= 80 and not flat.startswith(("|", "#", ":::")):
            out.append(flat)
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_no_repeated_heading_or_paragraph(page: Path) -> None:
    text = page.read_text()
    headings = [h.strip() for h in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), re.M)]
    repeated = [h for h, n in Counter(headings).items() if n > 1]
    assert not repeated, f"{page.name}: repeated headings {repeated}"
    paragraphs = [p for p, n in Counter(_paragraphs(text)).items() if n > 1]
    assert not paragraphs, f"{page.name}: repeated paragraphs {[p[:60] for p in paragraphs]}"


def test_the_repeat_check_catches_a_repeat() -> None:
    intro = "`rnea_ros.core` (numpy + numba, no ROS) is one flat namespace, like Pinocchio's pin."
    assert Counter(_paragraphs(f"# A\n\n{intro}\n\n# A\n\n{intro}\n")).most_common(1)[0][1] == 2


def test_getting_started_lists_every_robot() -> None:
    robots = {p.name.removesuffix("_controller.yaml")
              for p in (ROOT / "config").glob("*_controller.yaml")}
    text = (DOCS / "getting-started.md").read_text()
    listed = text.split("**One argument selects a robot.**", 1)[1].split(": the plain URDFs")[0]
    assert set(re.findall(r"`(\w+)`", listed)) - {"NAME"} == robots


def _summary_keys() -> set[str]:
    """The string keys of the ``summary`` dict (and its ``stamp``) rnea-fleet writes."""
    tree = ast.parse((ROOT / "rnea_ros/tools/fleet/cli.py").read_text())
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in {"summary", "stamp"} and isinstance(node.value, ast.Dict):
            keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.targets[0].value, ast.Name) \
                and node.targets[0].value.id == "summary":
            index = node.targets[0].slice
            if isinstance(index, ast.Constant):
                keys.add(index.value)
    return keys


def test_fleet_page_lists_every_summary_key() -> None:
    keys = _summary_keys()
    assert {"version", "bags", "seconds", "engine"} <= keys, keys
    text = (DOCS / "fleet.md").read_text()
    line = text.split("* `summary.json`:", 1)[1].split("\n* ", 1)[0]
    assert set(re.findall(r'"(\w+)"', line)) == keys


def test_index_names_every_offline_tool() -> None:
    overview = (DOCS / "index.md").read_text().split("## ", 1)[0]
    tools = {name for name, c in COMMANDS.items()
             if c.target.startswith(("rnea_ros.tools", "rnea_ros.identification",
                                     "rnea_ros.planning"))}
    assert tools and all(f"`{t}`" in overview for t in tools), sorted(tools)


def test_core_api_page_lists_every_public_name_once() -> None:
    """docs/api/core.md groups ``rc.__all__`` by topic: no name lost, none twice."""
    import rnea_ros.core as rc

    page = (DOCS / "api" / "core.md").read_text()
    listed = re.findall(r"^::: rnea_ros\.core\.(\w+)$", page, re.M)
    assert sorted(listed) == sorted(rc.__all__), (
        set(rc.__all__) ^ set(listed), [n for n, k in Counter(listed).items() if k > 1])
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings[-1] == "Errors" and len(headings) >= 7, headings


def test_node_diagram_is_drawn_from_the_code() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("node_diagram",
                                                  DOCS / "hooks" / "node_diagram.py")
    assert spec and spec.loader
    diagram = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(diagram)
    published, subscribed = diagram.topics("controller")
    assert "effort_controller/commands" in published and "joint_states" in subscribed
    # topics made by the node modules a node imports: the contact ports, the
    # robot_description waiter (a module constant)
    assert "~/external_wrench" in published and "robot_description" in subscribed
    assert "robot_description" in diagram.topics("simulator")[1]
    assert diagram.launches()["sim.launch.py"] == ["controller", "simulator"]
    svg = diagram.render()
    assert svg.startswith("<svg") and svg.count("<rect") > 10 and "/diagnostics" in svg
    assert "nodes.svg" in (DOCS / "index.md").read_text()
