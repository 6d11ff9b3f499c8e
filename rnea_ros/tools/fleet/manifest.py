"""The fleet manifest: robots, their URDF (and drive file), and the globs of their bags.

``robots: {NAME: {urdf: FILE, bags: GLOB or [GLOB, ...], drives: FILE, states_topic: ...}}``,
paths relative to the manifest. Besides ``urdf``/``bags``/``drives`` a robot may set
any ``rnea-bag`` option of :data:`OPTION_KEYS` (topics, window, order, loops, mimic
tolerance, ...). A bag is a ``.mcap``/``.db3``/``.bag`` file or a rosbag2 directory.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rnea_ros.core.errors import RneaError


class FleetError(RneaError):
    """A bad manifest or fleet option (one line naming the key, robot or file)."""


# rnea-bag options a robot's entry may set, with their types
OPTION_KEYS: dict[str, type] = {
    "states_topic": str, "commands_topic": str, "time_base": str, "window": float,
    "order": int, "recorded_velocity": bool, "chunk": int, "mimic_tolerance": float,
    "loops": str, "joints": list, "effort_rate_limits": list,
}
ROBOT_KEYS = ("urdf", "bags", "drives", *OPTION_KEYS)


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


def load_manifest(path: Path) -> Manifest:
    """Parse and check the manifest; :class:`FleetError` with one line on a bad one."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise FleetError(f"manifest '{path}': {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise FleetError(f"manifest '{path}' is not YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("robots"), dict) \
            or not data["robots"]:
        raise FleetError(f"manifest '{path}': needs a 'robots:' mapping of robot names to "
                         "{urdf: FILE, bags: GLOB}")
    base = Path(path).resolve().parent
    robots, warnings = [], []
    for name, entry in data["robots"].items():
        robot = _robot(str(name), entry, base, path)
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
    bags: list[Path] = []
    for pattern in patterns:
        for match in sorted(glob.glob(str(base / pattern), recursive=True)):
            bag = Path(match)
            if bag not in bags:
                bags.append(bag)
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
    return Robot(name, urdf, bags, drives, options)


def _file(base: Path, value: Any, where: str) -> Path:
    if not isinstance(value, str):
        raise FleetError(f"{where}: expected a file path, got {value!r}")
    file = (base / value).resolve()
    if not file.is_file():
        raise FleetError(f"{where}: file '{file}' does not exist")
    return file
