"""MkDocs hook: the CLI reference page (``cli.md``) generated from the parsers, and the
package version in the site's footer.

Every command of :data:`rnea_ros.commands.COMMANDS` whose ``main`` builds an
``argparse`` parser is rendered from that parser (found by running ``main(["--help"])``
with ``ArgumentParser.parse_args`` replaced by a capture: nothing else runs), so the
page's options, defaults and help never drift from the code. The ROS nodes take ROS
parameters, not options: their page is [Nodes](nodes.md). ``test/test_cli_reference.py``
checks that every option of every command has help.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator
from typing import Any

from mkdocs.structure.files import File

PAGE = "cli.md"
ROS_NODES = {"rnea-controller", "rnea-simulator", "rnea-rate-limiter"}
# Subcommands reached through argv[0] rather than argparse subparsers.
EXTRA_ARGV = {"rnea-identify": [["excite", "--help"]]}


class _CapturedParserError(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def _capture(target: str, argv: list[str]) -> argparse.ArgumentParser:
    """The parser ``target`` (``module:function``) builds when run with ``argv``."""
    module, function = target.split(":")
    main = getattr(importlib.import_module(module), function)
    saved = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _CapturedParserError(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[assignment,method-assign]
    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[assignment,method-assign]
    try:
        main(argv)
    except _CapturedParserError as found:
        return found.parser
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = saved
    raise RuntimeError(f"{target} returned without parsing its arguments")


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command line, parser)`` of every CLI and subcommand, in the table's order."""
    from rnea_ros.commands import COMMANDS

    for name, command in COMMANDS.items():
        if name in ROS_NODES:
            continue
        for argv in [["--help"], *EXTRA_ARGV.get(name, [])]:
            parser = _capture(command.target, argv)
            yield parser.prog, parser
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for sub in action.choices.values():
                        yield sub.prog, sub


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options and positionals, without ``--help`` and subparser groups."""
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    names = ", ".join(action.option_strings) or action.dest
    metavar = ""
    if action.option_strings and action.nargs != 0:
        metavar = formatter._format_args(action, action.dest.upper())
    help_text = formatter._expand_help(action) if action.help else ""
    default = action.default
    # by identity: a default of 0 (== False) or 0.0 is a value to show
    hidden = default is None or default is False or default is argparse.SUPPRESS
    shown = "" if hidden or action.nargs == 0 else f"`{default}`"
    return (f"| `{names}`{' `' + _cell(metavar) + '`' if metavar else ''} | "
            f"{shown} | {_cell(help_text)} |")


def render() -> str:
    """The page, Markdown."""
    lines = ["# Command-line reference", "",
             "Generated at build time from each command's `argparse` parser "
             "(`docs/hooks/cli_reference.py`): what `COMMAND --help` prints, as tables. "
             "The ROS nodes (`rnea-controller`, `rnea-simulator`, `rnea-rate-limiter`) "
             "take ROS parameters instead: [Nodes and controller](nodes.md). "
             "Every command also takes `--version`.", ""]
    for prog, parser in parsers():
        lines += [f"## `{prog}`", ""]
        if parser.description:
            lines += [" ".join(parser.description.split()), ""]
        lines += ["```text", parser.format_usage().strip(), "```", "",
                  "| option | default | help |", "|---|---|---|"]
        lines += [_row(parser, a) for a in options(parser)]
        if parser.epilog:
            lines += ["", " ".join(parser.epilog.split())]
        lines.append("")
    return "\n".join(lines)


def on_config(config: Any) -> Any:
    """The version in the footer (``copyright``) and as ``extra.version``."""
    from rnea_ros import __version__

    config.copyright = f"rnea_ros {__version__}"
    config.extra["version"] = __version__
    return config


def on_files(files: Any, config: Any) -> Any:
    """Adds the generated ``cli.md``."""
    files.append(File.generated(config, PAGE, content=render()))
    return files
