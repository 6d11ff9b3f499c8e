"""The fleet manifest: robots, their URDF (and drive file), and the globs of their bags.

``robots: {NAME: {urdf: FILE, bags: GLOB or [GLOB, ...], drives: FILE, states_topic: ...}}``.
Besides ``urdf``/``bags``/``drives`` a robot may set any ``rnea-bag`` option of
:data:`OPTION_KEYS` (topics, window, order, loops, mimic tolerance, ...). A bag is a
``.mcap``/``.db3``/``.bag`` file or a rosbag2 directory.

Checked, each refusal one line naming the robot, key or file:

* a robot name is an identifier (:data:`NAME_RULE`): it names the robot's report
  folder and page under ``--out``, so it is never a path (``../x``, ``/x``);
* a key given twice anywhere in the file (a robot, or a robot's key) is refused:
  YAML would silently keep the last one;
* every path (``urdf``, ``drives``, ``loops``, the ``bags`` globs) is relative to the
  manifest's folder (or absolute);
* the globs' matches are resolved (symlinks followed once): a bag reached through two
  paths or a symlink loop is one bag, and a file or folder inside a matched rosbag2
  directory is part of that recording, not another bag. Folders that are not bags
  (``**`` matches every folder on the way) are skipped.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rnea_ros.core.errors import RneaError


class FleetError(RneaError):
    """A bad manifest, fleet option or output place (one line naming the key, robot or
    file)."""


# rnea-bag options a robot's entry may set, with their types
OPTION_KEYS: dict[str, type] = {
    "states_topic": str, "commands_topic": str, "time_base": str, "window": float,
    "order": int, "recorded_velocity": bool, "chunk": int, "mimic_tolerance": float,
    "loops": str, "joints": list, "effort_rate_limits": list,
    "contact_thresholds": list, "contact_gain": float,
}
ROBOT_KEYS = ("urdf", "bags", "drives", *OPTION_KEYS)
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
NAME_RULE = ("a robot name is an identifier: a letter or '_', then up to 63 letters, "
             "digits, '_' or '-'")
BAG_SUFFIXES = (".mcap", ".db3", ".bag")


@dataclass
class Robot:
    name: str
    urdf: Path
    bags: list[Path]
    drives: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Manifest:
    path: Path
    robots: list[Robot]
    warnings: list[str]


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing a mapping key given twice (YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False
                          ) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise FleetError(f"line {line}: key '{key}' is given twice (first on line "
                                 f"{seen[key]}); each robot and key once")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_manifest(path: Path) -> Manifest:
    """Parse and check the manifest; :class:`FleetError` with one line on a bad one."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"),
                         Loader=_UniqueKeyLoader)
    except OSError as exc:
        raise FleetError(f"manifest '{path}': {exc.strerror or exc}") from None
    except FleetError as exc:
        raise FleetError(f"manifest '{path}', {exc}") from None
    except yaml.YAMLError as exc:
        raise FleetError(f"manifest '{path}' is not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("robots"), dict) \
            or not data["robots"]:
        raise FleetError(f"manifest '{path}': needs a 'robots:' mapping of robot names to "
                         "{urdf: FILE, bags: GLOB}")
    base = Path(path).resolve().parent
    robots, warnings = [], []
    for name, entry in data["robots"].items():
        if not isinstance(name, str) or NAME.fullmatch(name) is None:
            raise FleetError(f"manifest '{path}': robot name {str(name)!r}: {NAME_RULE}")
        robot = _robot(name, entry, base, path)
        if not robot.bags:
            warnings.append(f"robot '{name}': no bag matches {entry['bags']!r}")
        robots.append(robot)
    return Manifest(Path(path), robots, warnings)


def _robot(name: str, entry: Any, base: Path, path: Path) -> Robot:
    where = f"manifest '{path}', robot '{name}'"
    if not isinstance(entry, dict):
        raise FleetError(f"{where}: expected a mapping with 'urdf' and 'bags'")
    unknown = [k for k in entry if k not in ROBOT_KEYS]
    if unknown:
        raise FleetError(f"{where}: unknown key '{unknown[0]}'; keys: {', '.join(ROBOT_KEYS)}")
    for key in ("urdf", "bags"):
        if key not in entry:
            raise FleetError(f"{where}: missing key '{key}'")
    urdf = _file(base, entry["urdf"], f"{where}, key 'urdf'")
    drives = _file(base, entry["drives"], f"{where}, key 'drives'") if "drives" in entry \
        else None
    patterns = entry["bags"] if isinstance(entry["bags"], list) else [entry["bags"]]
    if not patterns or not all(isinstance(p, str) for p in patterns):
        raise FleetError(f"{where}, key 'bags': a glob or a list of globs")
    options: dict[str, Any] = {}
    for key, kind in OPTION_KEYS.items():
        if key in entry:
            value = entry[key]
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise FleetError(f"{where}, key '{key}': expected {kind.__name__}, got "
                                 f"{value!r}")
            options[key] = value
    if "contact_thresholds" in options:  # numbers, or [a parameter file]
        options["contact_thresholds"] = _contact_thresholds(
            base, options["contact_thresholds"], f"{where}, key 'contact_thresholds'")
    if options.get("loops") not in (None, "none"):  # relative to the manifest, too
        options["loops"] = str(_file(base, options["loops"], f"{where}, key 'loops'"))
    return Robot(name, urdf, find_bags(base, patterns), drives, options)


def find_bags(base: Path, patterns: list[str]) -> list[Path]:
    """The bags the globs match (relative to ``base``), each recording once.

    A match is resolved (symlinks followed); one already seen, or inside a matched
    bag directory (its ``.mcap``, its ``metadata.yaml``), is the same recording; a
    folder that is not a rosbag2 directory is skipped. Order: the patterns', then
    sorted matches; a bag keeps the first path it was reached by.
    """
    found: dict[Path, Path] = {}  # resolved -> as matched
    for pattern in patterns:
        for match in sorted(glob.glob(str(base / pattern), recursive=True)):
            real = Path(os.path.realpath(match))
            if real not in found and (not real.is_dir() or _bag_folder(real)):
                found[real] = Path(match)
    folders = {real for real in found if real.is_dir()}
    return [path for real, path in found.items()
            if not any(parent in folders for parent in real.parents)]


def _bag_folder(folder: Path) -> bool:
    """A rosbag2 directory: ``metadata.yaml`` or a bag file directly inside."""
    try:
        return any(p.name == "metadata.yaml" or p.suffix in BAG_SUFFIXES
                   for p in folder.iterdir() if p.is_file())
    except OSError:  # unreadable: let the task say why
        return True


def _file(base: Path, value: Any, where: str) -> Path:
    if not isinstance(value, str):
        raise FleetError(f"{where}: expected a file path, got {value!r}")
    file = (base / value).resolve()
    if not file.is_file():
        raise FleetError(f"{where}: file '{file}' does not exist")
    return file


def _contact_thresholds(base: Path, values: list[Any], where: str) -> list[str]:
    """rnea-bag's ``--contact-thresholds`` words: the numbers, or the one parameter file
    (relative to the manifest)."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) \
            and values:
        return [repr(float(v)) for v in values]
    if len(values) == 1 and isinstance(values[0], str):
        return [str(_file(base, values[0], where))]
    raise FleetError(f"{where}: one number per joint (or one for all), or [a parameter "
                     f"file with contact.thresholds]; got {values!r}")
