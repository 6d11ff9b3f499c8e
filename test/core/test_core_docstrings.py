"""Every public function of ``rnea_ros.core`` documents its parameters and return
(NumPy style), and the examples in those docstrings run and print what they show.

A function in ``rnea_ros.core.__all__`` must document each of its parameters (those
not starting with ``_``) exactly once, and have a ``Returns`` section. A standard
argument (``model``, ``q``, ``gravity``...) is named in one sentence of the
description, ``Arguments as in Conventions: ``model``, ``q`` ([rigid
robots](core.md#rigid-robots)); ...``, whose links name tables of docs/api/core.md's
Conventions section that must describe each name taken from them; every other
parameter has an entry with a type line in the ``Parameters`` section, written in
one docstring only (a description two functions share is a Conventions row). The main
entry points carry an ``Examples`` section, run here with doctest from the repository
root (the examples load ``urdf/arm7.urdf``).
"""

from __future__ import annotations

import doctest
import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import rnea_ros.core as rc

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = sorted(n for n in rc.__all__ if inspect.isfunction(getattr(rc, n)))
WITH_EXAMPLES = ["aba", "coriolis_matrix", "frame_jacobian", "gravity_torques", "load_urdf",
                 "mass_matrix", "rnea", "rnea_batch"]


def _conventions() -> dict[str, tuple[str, set[str]]]:
    """The API page's Conventions tables: heading anchor -> (heading, the argument names listed)."""
    page = (ROOT / "docs" / "api" / "core.md").read_text()
    part = page.partition("\n## Conventions\n")[2].split("\n## ", 1)[0]  # '' if absent
    tables = {}
    for heading, body in re.findall(r"^### ([^\n]+)\n(.*?)(?=^### |\Z)", part, flags=re.S | re.M):
        names = set(re.findall(r"^\| `(\w+)` \|", body, flags=re.M))
        tables[heading.lower().replace(" ", "-")] = (heading, names)
    return tables


CONVENTIONS = _conventions()
SENTENCE = re.compile(r"Arguments as in Conventions: (.*?)\.(?:\n\n|\n?\Z)", flags=re.S)
GROUP = re.compile(r"((?:``\w+``, )*``\w+``) \(\[([^\]]+)\]\(core\.md#([\w-]+)\)\)")


def test_the_conventions_tables_describe_the_standard_arguments() -> None:
    assert {"rigid-robots", "batches-of-samples", "closed-loops"} <= set(CONVENTIONS)
    assert {"model", "q", "qd", "tau", "gravity", "fext"} <= CONVENTIONS["rigid-robots"][1]


def _conventional(func: str, doc: str) -> list[str]:
    """The names ``func``'s sentence ``Arguments as in Conventions: ``a``, ``b``
    ([title](core.md#anchor)); ``c`` ([title](core.md#anchor)).`` takes from the
    Conventions tables ([] without one), each checked against the table its link
    names (the link's title is that table's heading)."""
    found = SENTENCE.findall(doc)
    assert len(found) <= 1, f"{func}: {len(found)} 'Arguments as in Conventions' sentences"
    if not found:
        assert "Conventions" not in doc.replace("[Conventions]", ""), \
            f"{func}: mentions Conventions without the sentence 'Arguments as in Conventions: ...'"
        return []
    text = " ".join(found[0].split())
    groups = GROUP.findall(text)
    assert "; ".join(f"{n} ([{t}](core.md#{a}))" for n, t, a in groups) == text, \
        f"{func}: not '``a``, ``b`` ([title](core.md#anchor)); ...': {text!r}"
    names = []
    for listed, title, anchor in groups:
        assert anchor in CONVENTIONS, f"{func}: no Conventions table #{anchor}"
        heading, table = CONVENTIONS[anchor]
        assert title.lower() == heading.lower(), f"{func}: link '{title}' to table '{heading}'"
        for n in re.findall(r"``(\w+)``", listed):
            assert n in table, f"{func}: '{n}' not in Conventions #{anchor}"
            names.append(n)
    return names


def _section(doc: str, title: str) -> str:
    """The body of a NumPy-style section ``title`` of ``doc`` ('' if absent)."""
    match = re.search(rf"^{title}\n-{{{len(title)}}}\n(.*?)(?=^\S[^\n]*\n-{{3,}}\n|\Z)", doc,
                      flags=re.S | re.M)
    return match.group(1) if match else ""


def test_the_public_functions_are_many() -> None:
    assert len(PUBLIC) > 80


@pytest.mark.parametrize("name", PUBLIC)
def test_parameters_and_return_are_documented(name: str) -> None:
    func: Callable[..., object] = getattr(rc, name)
    doc = inspect.getdoc(func) or ""
    params = _section(doc, "Parameters")
    entries = re.findall(r"^(\w+(?:, \w+)*) : \S", params, flags=re.M)
    listed = [n for entry in entries for n in entry.split(", ")] + _conventional(name, doc)
    names = set(listed)
    assert len(listed) == len(names), f"{name}: parameters documented twice in {listed}"
    wanted = {p for p in inspect.signature(func).parameters if not p.startswith("_")}
    assert wanted <= names, f"{name}: undocumented parameters {sorted(wanted - names)}"
    assert names <= wanted, f"{name}: documents parameters it lacks {sorted(names - wanted)}"
    returns = _section(doc, "Returns")
    assert re.search(r"^\S.*\n {4}\S", returns, flags=re.M), f"{name}: no Returns section"


def test_no_parameter_is_described_twice() -> None:
    """A parameter described word for word in two docstrings is a Conventions row
    (named in the sentence), not a copy: every ``Parameters`` entry is one function's."""
    seen: dict[str, list[str]] = {}
    for name in PUBLIC:
        params = _section(inspect.getdoc(getattr(rc, name)) or "", "Parameters")
        for entry in re.findall(r"^\w.*\n(?: {4}.*\n?)*", params, flags=re.M):
            seen.setdefault(" ".join(entry.split()), []).append(name)
    twice = {entry: names for entry, names in seen.items() if len(names) > 1}
    assert not twice, twice


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    func = getattr(rc, name)
    assert "Examples\n--------" in (inspect.getdoc(func) or ""), name
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(func, name, globs={}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 2 and result.failed == 0, name
