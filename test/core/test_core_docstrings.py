"""Every public function of ``rnea_ros.core`` documents its parameters and return
(NumPy style), and the examples in those docstrings run and print what they show.

A function in ``rnea_ros.core.__all__`` must have a ``Parameters`` section naming
each of its parameters (those not starting with ``_``) with a type line, and a
``Returns`` section; a standard argument (``model``, ``q``, ``gravity``...) is named
in an entry ``model, q : see Conventions`` linking a table of docs/api/core.md's
Conventions section, which must describe each name it takes from there. The main
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


def _conventions() -> dict[str, set[str]]:
    """The API page's Conventions tables: heading anchor -> the argument names listed."""
    page = (ROOT / "docs" / "api" / "core.md").read_text()
    part = page.partition("\n## Conventions\n")[2].split("\n## ", 1)[0]  # '' if absent
    tables = {}
    for heading, body in re.findall(r"^### ([^\n]+)\n(.*?)(?=^### |\Z)", part, flags=re.S | re.M):
        tables[heading.lower().replace(" ", "-")] = set(re.findall(r"^\| `(\w+)` \|", body,
                                                                   flags=re.M))
    return tables


CONVENTIONS = _conventions()


def test_the_conventions_tables_describe_the_standard_arguments() -> None:
    assert {"rigid-robots", "batches-of-samples", "closed-loops"} <= set(CONVENTIONS)
    assert {"model", "q", "qd", "tau", "gravity", "fext"} <= CONVENTIONS["rigid-robots"]


def _check_conventions(func: str, names: list[str], text: str) -> None:
    """An entry ``a, b, c : see Conventions`` whose description ``text`` links the
    Conventions tables, ``[title](core.md#anchor)`` (one link: every name from it) or
    ``[title](core.md#anchor) for a, b; [title](core.md#anchor) for c``: each name from
    exactly one table that lists it."""
    links = re.findall(r"\]\(core\.md#([\w-]+)\)(?: for ([\w, ]+))?", text)
    assert links, f"{func}: 'see Conventions' without a link: {text!r}"
    one = len(links) == 1 and not links[0][1]
    taken = [(n, links[0][0]) for n in names] if one else \
        [(n, anchor) for anchor, listed in links for n in listed.split(", ")]
    assert sorted(n for n, _ in taken) == sorted(names), \
        f"{func}: {names} vs the links' names in {text!r}"
    for n, anchor in taken:
        assert anchor in CONVENTIONS, f"{func}: no Conventions table #{anchor}"
        assert n in CONVENTIONS[anchor], f"{func}: '{n}' not in Conventions #{anchor}"


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
    documented = set(re.findall(r"^(\w+(?:, \w+)*) : \S", params, flags=re.M))
    names = {n for entry in documented for n in entry.split(", ")}
    wanted = {p for p in inspect.signature(func).parameters if not p.startswith("_")}
    assert wanted <= names, f"{name}: undocumented parameters {sorted(wanted - names)}"
    assert names <= wanted, f"{name}: documents parameters it lacks {sorted(names - wanted)}"
    for entry, text in re.findall(r"^(\w+(?:, \w+)*) : see Conventions\n((?: {4}.*\n?)+)",
                                  params, flags=re.M):
        _check_conventions(name, entry.split(", "), " ".join(text.split()))
    returns = _section(doc, "Returns")
    assert re.search(r"^\S.*\n {4}\S", returns, flags=re.M), f"{name}: no Returns section"


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
