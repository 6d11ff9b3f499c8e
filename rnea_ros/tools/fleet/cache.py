"""Per-bag results keyed by content, written atomically: incremental and crash-safe runs.

A bag's key is the SHA-256 of: the robot's name; the bag's content identity (per
file of it, a directory's files sorted: relative name, size, mtime in ns, and the
SHA-256 of its first and last MiB); the SHA-256 of the URDF, of the drive file and of
the loop file; the analysis options; the package version and :data:`FORMAT`. A
changed, grown or touched bag, a new URDF, drive file or option, or a new release
re-analyses it; nothing else does.

Results are JSON files ``DIR/cache/<key>.json``, written to a temporary file in the
same directory and renamed over the target (atomic on POSIX): a run killed at any
point leaves whole results or none, so the next run redoes only what is missing,
and the tables, rebuilt from the cache for the manifest's bags, neither duplicate
nor lose a row.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

MIB = 1 << 20
FORMAT = 3  # bump when a result's fields change


def version() -> str:
    """The installed package's version (``0+unknown`` from a source tree)."""
    try:
        from importlib.metadata import version as _version

        return _version("rnea_ros")
    except Exception:  # not installed: a source checkout
        return "0+unknown"


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


def result_key(robot: str, bag: Path, files: dict[str, Path | None],
               options: dict[str, Any]) -> str:
    """The cache key of one bag's result (see the module docstring)."""
    parts = {
        "robot": robot, "bag": bag_identity(bag), "options": options,
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
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored result, or None (absent or unreadable: redo it)."""
        try:
            result: dict[str, Any] = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return result if result.get("key") == key else None

    def put(self, result: dict[str, Any]) -> None:
        write_atomic(self.path(result["key"]), json.dumps(result, allow_nan=True).encode())


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it (fsynced)."""
    path = Path(path)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
