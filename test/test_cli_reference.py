"""Every option of every CLI has help, and the generated CLI reference shows it.

The parsers are found as the docs hook (docs/hooks/cli_reference.py) finds them: each
command of rnea_ros/commands.py run with ``--help`` and ``parse_args`` captured.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "docs/hooks/cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


HOOK = _hook()
PARSERS = list(HOOK.parsers())


def test_every_cli_is_found() -> None:
    progs = {prog.split()[0] for prog, _ in PARSERS}
    assert {"rnea-bag", "rnea-fleet", "rnea-identify", "rnea-plan", "rnea-sample",
            "rnea-config", "rnea-demo", "rnea-precompile"} <= progs, progs
    assert "rnea-identify excite" in {prog for prog, _ in PARSERS}


@pytest.mark.parametrize(("prog", "parser"), PARSERS, ids=[p for p, _ in PARSERS])
def test_every_option_has_help(prog: str, parser: object) -> None:
    missing = [a.option_strings or a.dest for a in HOOK.options(parser)
               if not (a.help or "").strip()]
    assert not missing, f"{prog}: options without help: {missing}"


def test_the_page_shows_options_and_defaults() -> None:
    page = HOOK.render()
    assert page.startswith("# Command-line reference")
    for prog, parser in PARSERS:
        assert f"## `{prog}`" in page
        for action in HOOK.options(parser):
            assert f"`{', '.join(action.option_strings) or action.dest}`" in page
    assert "| `--out`" in page


def test_a_zero_default_is_shown() -> None:
    """``rnea-demo --seed`` defaults to 0: the page shows it (0 == False once hid it)."""
    demo = next(parser for prog, parser in PARSERS if prog == "rnea-demo")
    seed = next(a for a in HOOK.options(demo) if "--seed" in a.option_strings)
    assert seed.default == 0
    assert HOOK._row(demo, seed).startswith("| `--seed` `SEED` | `0` |")
