"""Every public function of ``rnea_ros.core`` documents its parameters and return
(NumPy style), and the examples in those docstrings run and print what they show.

A function in ``rnea_ros.core.__all__`` must have a ``Parameters`` section naming
each of its parameters (those not starting with ``_``) with a type line, and a
``Returns`` section; the main entry points carry an ``Examples`` section, run here
with doctest from the repository root (the examples load ``urdf/arm7.urdf``).
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
