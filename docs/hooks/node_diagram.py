"""MkDocs hook: ``nodes.svg``, the package's ROS nodes, their topics and launch files.

Drawn at build time in pure Python (no Graphviz, no CDN at view time) from the code:
each node's topics are the string literals (or module constants) passed to
``create_publisher`` / ``create_subscription`` in ``rnea_ros/nodes/<node>.py`` and the
node modules it imports (another expression shows as that expression); a launch file
starts a node when its source names the node's executable (``"controller"``, ...).
Publishers on the left, topics in the middle, subscribers on the right; the launch
files under the picture.
"""

from __future__ import annotations

import ast
from html import escape
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
NODES = ("controller", "simulator", "rate_limiter")
PAGE = "nodes.svg"


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's string constants (``TOPIC = "robot_description"``)."""
    return {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for t in node.targets if isinstance(t, ast.Name)}


def _modules(node: str) -> list[ast.Module]:
    """``rnea_ros/nodes/<node>.py`` and the node modules it imports (the contact ports,
    the robot_description waiter, ...): their topics are the node's."""
    nodes = ROOT / "rnea_ros" / "nodes"
    tree = ast.parse((nodes / f"{node}.py").read_text())
    helpers = sorted({i.module.rsplit(".", 1)[1] for i in ast.walk(tree)
                      if isinstance(i, ast.ImportFrom) and i.module
                      and i.module.startswith("rnea_ros.nodes.")})
    return [tree, *(ast.parse((nodes / f"{h}.py").read_text()) for h in helpers
                    if (nodes / f"{h}.py").exists())]


def topics(node: str) -> tuple[list[str], list[str]]:
    """``(published, subscribed)`` topic names of ``rnea_ros/nodes/<node>.py`` and the
    node modules it imports."""
    pub: list[str] = []
    sub: list[str] = []
    for tree in _modules(node):
        constants = _constants(tree)
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("create_publisher", "create_subscription")
                    and len(call.args) >= 2):
                continue
            arg = call.args[1]
            if isinstance(arg, ast.Constant):
                name = str(arg.value)
            elif isinstance(arg, ast.Name) and arg.id in constants:
                name = constants[arg.id]
            else:
                name = f"({ast.unparse(arg)})"
            out = pub if call.func.attr == "create_publisher" else sub
            if name not in out:
                out.append(name)
    return pub, sub


def launches() -> dict[str, list[str]]:
    """Launch file name → the package's nodes it starts."""
    return {path.name: [n for n in NODES if f'"{n}"' in path.read_text()]
            for path in sorted((ROOT / "launch").glob("*.launch.py"))}


def _box(x: float, y: float, w: float, h: float, text: str, fill: str) -> str:
    return (f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" '
            f'stroke="#333"/><text x="{x + w / 2}" y="{y + h / 2 + 5}" '
            f'text-anchor="middle">{escape(text)}</text>')


def render() -> str:
    """The SVG text."""
    edges = {n: topics(n) for n in NODES}
    names = sorted({t for pub, sub in edges.values() for t in (*pub, *sub)})
    row, width = 30, 1000
    height = max(len(names) * row, len(NODES) * 110) + 60
    ty = {t: 30 + k * row for k, t in enumerate(names)}
    gap = (height - 60) / len(NODES)
    ny = {n: 30 + k * gap + gap / 2 - 20 for k, n in enumerate(NODES)}
    parts = []
    for node, (pub, sub) in edges.items():
        for t in pub:
            parts.append(f'<line x1="190" y1="{ny[node] + 20}" x2="370" y2="{ty[t] + 10}" '
                         'stroke="#3f51b5" marker-end="url(#a)"/>')
        for t in sub:
            parts.append(f'<line x1="630" y1="{ty[t] + 10}" x2="810" y2="{ny[node] + 20}" '
                         'stroke="#2e7d32" marker-end="url(#a)"/>')
    for t in names:
        parts.append(_box(370, ty[t], 260, 20, t, "#fff8e1"))
    for n in NODES:
        parts.append(_box(30, ny[n], 160, 40, n, "#e8eaf6"))
        parts.append(_box(810, ny[n], 160, 40, n, "#e8f5e9"))
    parts.append('<text x="110" y="18" text-anchor="middle">publishes</text>'
                 '<text x="500" y="18" text-anchor="middle">topic</text>'
                 '<text x="890" y="18" text-anchor="middle">subscribes</text>')
    y = height - 20
    legend = "; ".join(f"{f}: {', '.join(n) or '-'}" for f, n in launches().items())
    parts.append(f'<text x="30" y="{y}">launch files: {escape(legend)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">'
            '<defs><marker id="a" markerWidth="8" markerHeight="8" refX="8" refY="4" '
            'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>'
            '<rect width="100%" height="100%" fill="white"/>' + "".join(parts) + "</svg>")


def on_files(files: Any, config: Any) -> Any:
    """Adds the generated ``nodes.svg``."""
    files.append(File.generated(config, PAGE, content=render()))
    return files
