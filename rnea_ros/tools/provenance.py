"""What every offline CLI shares about itself: ``--version``, defaults in ``--help``, the
stamp its outputs carry, and temporary files removed on a catchable signal.

* :func:`parser` — an :class:`argparse.ArgumentParser` that shows each option's default
  in ``--help`` and has ``--version`` (``rnea_ros.__version__``, its one source);
* :func:`stamp` — ``{tool, version, command, inputs: {path: sha256}}`` for an output's
  header (YAML, JSON, HTML), so a result says which code and which files made it;
* :func:`exit_on_signals` — SIGTERM and SIGHUP end the process through ``SystemExit``
  (exit 128 + signal number), so ``finally`` blocks (:mod:`rnea_ros.tools.files`'s
  temporary files) run as on Ctrl-C. SIGKILL cannot be caught: a temporary file it
  leaves starts with ``.`` and ends in ``.tmp``.
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import signal
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from rnea_ros import __version__

CHUNK = 1 << 20     # bytes read at a time when hashing an input
MAX_DIGEST_FILES = 10_000  # files hashed in one input directory (a rosbag2 folder has a few)


class DefaultsFormatter(argparse.RawDescriptionHelpFormatter):
    """Each option's default appended to its help (not when it has none: None, False, an
    empty list; a list shown space-separated, as typed); the description kept as
    written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        quiet = action.default in (None, False, [], argparse.SUPPRESS) or "%(default)" in text
        if quiet or not action.option_strings:
            return text
        default = action.default
        shown = " ".join(map(str, default)) if isinstance(default, list) else "%(default)s"
        return f"{text} (default: {shown})"


def parser(prog: str, description: str, *,
           cls: type[argparse.ArgumentParser] = argparse.ArgumentParser,
           **kwargs: Any) -> argparse.ArgumentParser:
    """An argument parser (of class ``cls``) for ``prog`` with ``--version`` and
    defaults in ``--help``."""
    p = cls(prog=prog, description=description, formatter_class=DefaultsFormatter, **kwargs)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                   help="print the version and exit")
    return p


def command_line(prog: str, argv: Sequence[str] | None) -> str:
    """The command as a user would type it again (shell-quoted)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return shlex.join([prog, *args])


def digest(path: Path) -> str:
    """``sha256:<hex>`` of a file, or of a directory's files (sorted relative paths and
    contents; a rosbag2 folder); ``missing`` when it does not exist."""
    path = Path(path)
    h = hashlib.sha256()
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())[:MAX_DIGEST_FILES]
    else:
        return "missing"
    for f in files:
        if f is not path:  # the name, then its contents (the NUL keeps them apart)
            h.update(str(f.relative_to(path)).encode() + b"\0")
        with open(f, "rb") as stream:
            while chunk := stream.read(CHUNK):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def stamp(prog: str, argv: Sequence[str] | None,
          inputs: Iterable[Path | None] = ()) -> dict[str, Any]:
    """What made an output: the tool, its version, the command line and the sha256 of
    each input file (``None`` entries skipped)."""
    return {"tool": prog, "version": __version__, "command": command_line(prog, argv),
            "inputs": {str(p): digest(Path(p)) for p in inputs if p is not None}}


def _raise_exit(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP raise ``SystemExit(128 + signum)`` in the main thread, so
    cleanup in ``finally`` blocks runs (a no-op outside the main thread)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, _raise_exit)
        except ValueError:  # not the main thread: the caller's process keeps its handlers
            return
