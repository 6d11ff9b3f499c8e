"""The docs site's runnable examples run as written, and the README's links into it exist.

Convention: a Python block in ``docs/**/*.md`` fenced as ```` ```{.python .run} ````
is run from the repository root, each in a fresh namespace (like the README's
``python`` blocks, test_readme.py); a plain ```` ```python ```` block is a fragment,
only shown.
``mkdocs build --strict`` (``make lint``) checks the site's own links and API pages.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN_FENCE = re.compile(r"^```\{\s*\.python\s+\.run\s*\}\n(.*?)^```", re.S | re.M)


def runnable_blocks() -> list[tuple[str, str]]:
    """``(page:index, code)`` of every runnable block, pages in name order."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        for k, code in enumerate(RUN_FENCE.findall(page.read_text())):
            blocks.append((f"{page.relative_to(DOCS)}:{k}", code))
    return blocks


BLOCKS = runnable_blocks()


def test_the_docs_have_runnable_examples() -> None:
    # The core, free-floating, elastic, loops/parallel, identification and planning pages.
    pages = {name.split(":")[0] for name, _ in BLOCKS}
    assert {"core.md", "free-floating.md", "elastic.md", "loops.md", "identify.md",
            "plan.md"} <= pages, sorted(pages)


@pytest.mark.parametrize(("name", "code"), BLOCKS, ids=[n for n, _ in BLOCKS])
def test_docs_example_runs(name: str, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process, each block in a fresh namespace: starting an interpreter and
    # importing numpy + numba for each block cost ~4 s of the ~5 s a block took.
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"docs/{name}", "exec"), {"__name__": "__main__"})


def test_readme_links_into_the_docs_exist() -> None:
    """GitHub renders the README, not the site: its relative links must point at files."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(((?:docs/)[^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets, "the README links into docs/"
    missing = sorted({t for t in targets if not (ROOT / t).is_file()})
    assert not missing, f"README links to missing files: {missing}"
