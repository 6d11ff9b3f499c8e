"""Output files of the offline tools (``rnea-identify``, ``rnea-plan``, ``rnea-bag``):
never silently overwritten, never half-written, never written over an input.

* :func:`check_outputs`: before any work, an output that is one of the inputs is
  always refused; an existing output is refused unless ``force``;
* :func:`atomic_path` / :func:`write_text`: a file is written under a temporary name in
  its own directory and renamed over its final name (``os.replace``: atomic on POSIX),
  so a crash or an error leaves the old file (or none), never a truncated one;
* :func:`staged_directory`: a directory of outputs written by code that opens files
  itself (``rnea-bag``'s CSV and plots) goes to a temporary directory beside the
  final files and each file is renamed into place at the end;
* files get the mode a plain ``open()`` would give them (``0o666`` less the umask), not
  the ``0o600`` of :func:`tempfile.mkstemp`;
* every failure is an :class:`OutputError` whose message is one line naming the path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rnea_ros.core.errors import RneaError


class OutputError(RneaError, OSError):
    """An output path that must not or cannot be written (one line, naming it)."""


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_outputs(outputs: Iterable[Path], inputs: Iterable[Path | None], *, force: bool,
                  option: str = "--out") -> None:
    """Refuse an output equal to an input (always) or already existing (unless ``force``).

    ``outputs``: the files (or the directory) the tool will write; ``inputs``: what it
    reads (``None`` entries are ignored). Raises :class:`OutputError`.
    """
    ins = [Path(p) for p in inputs if p is not None]
    outs = [Path(p) for p in outputs]
    for out in outs:
        for source in ins:
            if _same(out, source):
                raise OutputError(f"{option}: '{out}' is the input '{source}': refusing to "
                                  "write over an input (choose another output)")
    existing = [str(out) for out in outs if out.exists() and not out.is_dir()]
    if existing and not force:
        raise OutputError(f"{option}: {', '.join(repr(e) for e in existing)} already "
                          f"exist{'s' if len(existing) == 1 else ''}: not overwritten "
                          "(--force replaces)")


def make_directory(path: Path, option: str = "--out") -> None:
    """``path`` and its parents, or :class:`OutputError` (one line)."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"{option}: '{path}' exists and is not a directory") from None
    except OSError as exc:
        raise OutputError(f"{option}: cannot create directory '{path}': "
                          f"{exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{option}: directory '{path}' is not writable")


def default_mode() -> int:
    """The permission bits a new file gets from ``open()``: ``0o666`` less the umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path: Path, option: str = "--out", *,
                keep_suffix: bool = False) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed to ``path`` when the block ends
    without an exception, removed otherwise. It ends in ``.tmp``, so neither a write in
    progress nor one a killed process left is taken for an output by a glob (``*.json``
    of the fleet cache, DuckDB's ``*.parquet``); with ``keep_suffix`` in ``.tmp`` plus
    ``path``'s suffix, for a writer that picks its format by it (matplotlib's
    ``savefig``)."""
    path = Path(path)
    make_directory(path.parent, option)
    suffix = ".tmp" + path.suffix if keep_suffix else ".tmp"
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{option}: cannot write in '{path.parent}': "
                          f"{exc.strerror or exc}") from None
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, default_mode())
        os.replace(temporary, path)
    except OSError as exc:
        raise OutputError(f"{option}: cannot write '{path}': {exc.strerror or exc}") from None
    finally:
        if temporary.exists():
            temporary.unlink()


def write_text(path: Path, text: str, option: str = "--out") -> None:
    """``text`` (UTF-8) to ``path`` atomically (:func:`atomic_path`)."""
    with atomic_path(path, option) as temporary:
        try:
            temporary.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"{option}: cannot write '{path}': "
                              f"{exc.strerror or exc}") from None


@contextmanager
def staged_directory(out: Path, option: str = "--out") -> Iterator[Path]:
    """A temporary directory inside ``out`` to write into; when the block ends without an
    exception, each file in it is renamed into ``out`` (replacing one of that name: the
    caller checked with :func:`check_outputs`); the temporary directory is removed in any
    case (and ``out`` when this created it and it stayed empty)."""
    out = Path(out)
    created = not out.exists()
    make_directory(out, option)
    try:
        stage = Path(tempfile.mkdtemp(prefix=".staging.", dir=out))
    except OSError as exc:
        raise OutputError(f"{option}: cannot write in '{out}': {exc.strerror or exc}") from None
    done = False
    try:
        yield stage
        for item in sorted(stage.iterdir()):
            os.replace(item, out / item.name)
        done = True
    except OSError as exc:
        raise OutputError(f"{option}: cannot write in '{out}': {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if created and not done:
            try:
                out.rmdir()
            except OSError:
                pass


def one_line(exc: BaseException) -> str:
    """An exception as one line (its message's lines joined)."""
    text = " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
    return text or type(exc).__name__

