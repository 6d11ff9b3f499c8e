"""No import circles inside ``rnea_ros`` (issue 24, "No circles").

The graph is drawn from the sources, not from ``sys.modules``: every import
statement counts, at module level, inside a function or under
``if TYPE_CHECKING:`` (a circle a type checker needs is still a circle a reader
must untangle). Relative imports are resolved against the importing module, and
``from pkg import name`` is an edge to ``pkg.name`` when ``name`` is a
submodule, else to ``pkg`` itself. Importing ``a.b.c`` runs ``a/__init__`` and
``a/b/__init__`` first, but those implicit edges are left out: a package's
``__init__`` re-exports its modules by design (the flat ``rnea_ros.core``
namespace), and counting them would call every such re-export a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rnea_ros"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """Dotted module name of ``path`` (a package's ``__init__.py`` names the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> source file."""
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """Absolute module named by ``from <node.level dots><node.module> import ...``."""
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of ``known`` that the source of ``name`` imports, anywhere in it."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(name, is_package, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:
                    found.add(submodule)
                elif source in known:
                    found.add(source)
    found.discard(name)
    return found


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (module- and function-level)."""
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def a_cycle(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """The shortest closed walk through ``component``'s first module: [a, b, ..., a]."""
    members = set(component)
    start = component[0]
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:  # breadth first, inside the component, back to start
        following: list[str] = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    walk = [v]
                    while walk[-1] != start:
                        walk.append(parent[walk[-1]])
                    return [*reversed(walk), start]
                if w not in parent:
                    parent[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"{component} is not strongly connected")


def cycles(graph: Mapping[str, set[str]]) -> Iterator[str]:
    """One line per circle: its modules and one closed walk through them."""
    for component in strongly_connected(graph):
        walk = " -> ".join(name.removeprefix("rnea_ros.") for name in a_cycle(graph, component))
        yield f"{len(component)} modules: {walk}"


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Relative, lazy, TYPE_CHECKING and ``from pkg import submodule`` imports are edges."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .c import C\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..sub import c\n")
    (pkg / "sub" / "c.py").write_text("from typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    import pkg.a\nC = 1\n")
    (pkg / "d.py").write_text("from pkg.sub import C\n")
    graph = import_graph(pkg)
    assert graph == {"pkg": set(), "pkg.sub": {"pkg.sub.c"}, "pkg.a": {"pkg.sub.b"},
                     "pkg.sub.b": {"pkg.sub.c"}, "pkg.sub.c": {"pkg.a"}, "pkg.d": {"pkg.sub"}}
    assert list(cycles(graph)) == ["3 modules: pkg.a -> pkg.sub.b -> pkg.sub.c -> pkg.a"]


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100, "the package's modules were not found"
    found = list(cycles(graph))
    assert not found, "import cycles in rnea_ros:\n" + "\n".join(found)
