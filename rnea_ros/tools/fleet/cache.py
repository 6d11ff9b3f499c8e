"""Per-bag results keyed by content, written atomically: incremental and crash-safe runs.

A bag's key is the SHA-256 of: the robot's name; the bag's content identity (per
file of it, a directory's files sorted: relative name, size, mtime in ns, and the
SHA-256 of its first and last MiB); the SHA-256 of the URDF, of the drive file and of
the loop file; the analysis options; the package version and :data:`FORMAT`. A
changed, grown or touched bag, a new URDF, drive file or option, or a new release
re-analyses it; nothing else does.

Results are JSON files ``DIR/cache/<key>.json``, written to a temporary file in the
same directory (``.<key>.json.<random>.tmp``: never matched by ``*.json``) and renamed
over the target (atomic on POSIX): a run killed at any point leaves whole results or
none, so the next run redoes only what is missing, and the tables, rebuilt from the
cache for the manifest's bags, neither duplicate nor lose a row. An entry that cannot
be read or lacks a field (a disk error, an edit by hand, a tool writing another format)
is ignored: the bag is analysed again and the entry replaced, with a warning naming
the file (:attr:`Cache.warnings`).
A cache folder that cannot be written is a :class:`FleetError` before any work.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from rnea_ros.tools.files import atomic_path
from rnea_ros.tools.fleet.manifest import FleetError
from rnea_ros.tools.fleet.tables import RESULT_FIELDS, ROW_FIELDS

MIB = 1 << 20
FORMAT = 4  # bump when a result's fields change (4: a row's unit)


def version() -> str:
    """The package's version, ``rnea_ros.__version__`` (what ``--version`` prints; not
    the installed metadata, which another install into a shared environment may be
    rewriting while a run reads it)."""
    from rnea_ros import __version__

    return __version__


def file_hash(path: Path) -> str:
    """SHA-256 of a small file (URDF, drive or loop file)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def bag_identity(path: Path) -> list[Any]:
    """Size, mtime and head/tail hash of the bag's file, or of every file of a directory."""
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    identity: list[Any] = []
    for file in files:
        try:
            st = file.stat()
            h = hashlib.sha256()
            with open(file, "rb") as f:
                h.update(f.read(MIB))
                if st.st_size > MIB:
                    f.seek(max(st.st_size - MIB, MIB))
                    h.update(f.read(MIB))
            identity.append([str(file.relative_to(path)) if file != path else file.name,
                             st.st_size, st.st_mtime_ns, h.hexdigest()])
        except OSError as exc:  # unreadable: the task will say why
            identity.append([str(file), "unreadable", str(exc)])
    return identity


def bag_bytes(identity: list[Any]) -> int:
    """The size [bytes] of a bag from its :func:`bag_identity` (its readable files)."""
    return sum(entry[1] for entry in identity if isinstance(entry[1], int))


def result_key(robot: str, identity: list[Any], files: dict[str, Path | None],
               options: dict[str, Any]) -> str:
    """The cache key of one bag's result (see the module docstring), from the bag's
    :func:`bag_identity`."""
    parts = {
        "robot": robot, "bag": identity, "options": options,
        "files": {k: (file_hash(p) if p is not None and Path(p).is_file() else None)
                  for k, p in sorted(files.items())},
        "version": version(), "format": FORMAT,
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class Cache:
    """``DIR/cache/<key>.json``: one finished result per file."""

    def __init__(self, out: Path) -> None:
        self.folder = Path(out) / "cache"
        self.warnings: list[str] = []
        writable(self.folder)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result, or None: absent, or unusable (warned: redo it)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self._corrupt(path, getattr(exc, "strerror", None) or str(exc))
        try:
            result = json.loads(text)
        except ValueError:
            return self._corrupt(path, "not JSON")
        problem = _problem(result, key)
        if problem:
            return self._corrupt(path, problem)
        return dict(result)

    def _corrupt(self, path: Path, why: str) -> dict[str, Any] | None:
        """Warn that the entry at ``path`` is unusable; None (analyse the bag again)."""
        self.warnings.append(f"cache entry '{path}' ignored ({why}): analysed again")
        return None

    def put(self, result: dict[str, Any]) -> None:
        write_atomic(self.path(result["key"]), json.dumps(result, allow_nan=True).encode())


def _problem(result: Any, key: str) -> str:
    """What makes a cached result unusable, or ''."""
    if not isinstance(result, dict):
        return "not a result"
    if result.get("format", FORMAT) != FORMAT:
        return f"format {result.get('format')}, not {FORMAT}"
    missing = [f for f in RESULT_FIELDS if f not in result]
    if missing:
        return f"missing '{missing[0]}'"
    if result["key"] != key:
        return f"key '{result['key']}' is not its name"
    if not isinstance(result["rows"], list):
        return "'rows' is not a list"
    for row in result["rows"]:
        if not isinstance(row, dict):
            return "a row is not a mapping"
        lacking = [f for f in ROW_FIELDS if f not in row]
        if lacking:
            return f"a row misses '{lacking[0]}'"
    return ""


def writable(folder: Path) -> None:
    """Create ``folder`` and check a file can be written in it, else :class:`FleetError`
    (one line: the folder and the system's reason)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise FleetError(f"cannot write in '{folder}': {exc.strerror or exc}") from None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it (fsynced; the
    mode ``open()`` would give it): :func:`rnea_ros.tools.files.atomic_path`."""
    with atomic_path(Path(path), "cache") as temporary, open(temporary, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
