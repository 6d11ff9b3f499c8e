"""Loop files: the closed loops of a robot whose URDF describes the spanning tree.

A YAML file next to the URDF, ``<robot>.loops.yaml`` (or the same mapping in
code)::

    # Closed loops of four_bar: the URDF describes the spanning tree; each loop is
    # closed by a cut joint.
    active: [crank_joint]             # actuated joints (tree joint names); the others are passive
    loops:
      - name: coupler_rocker
        type: revolute                # revolute | prismatic (5) | spherical (3) | weld (6)
        link1: coupler                # tree link carrying frame 1
        frame1: {xyz: [0.35, 0, 0], rpy: [0, 0, 0]}  # cut-joint frame on link1, in link1's frame
        link2: rocker
        frame2: {xyz: [0.3, 0, 0], rpy: [0, 0, 0]}   # cut-joint frame on link2, in link2's frame
        # revolute/prismatic: the joint axis is z of frame1 (== z of frame2 when closed)
    reference: {crank_joint: 0.0}     # optional: a closed configuration [rad, m], unlisted joints 0

Required: ``active``, ``loops`` and, per loop, ``name``, ``type``, ``link1``,
``link2``. Optional: ``frame1``/``frame2`` (identity when absent; ``xyz``
[m] and ``rpy`` [rad], URDF roll-pitch-yaw, each defaulting to zeros) and
``reference`` (default ``q = 0``, which must then close every loop). Unknown
keys are errors (typos must not pass silently). The meaning of each type:
:mod:`rnea_ros.core.coupling.loops`. The one reader of the format: closed-loop
models (:func:`load_loops`) and parallel robots (``rc.GoughStewart.from_urdf``,
:mod:`~rnea_ros.core.coupling.parallel_model`) both read their files here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rnea_ros.core.coupling.loop_build import build_loops
from rnea_ros.core.coupling.loops import LOOP_TYPES, ClosedLoopModel, Loop
from rnea_ros.core.errors import LoopError, options
from rnea_ros.core.model.robot_model import RobotModel

FILE_KEYS = ("active", "loops", "reference")
LOOP_KEYS = ("name", "type", "link1", "frame1", "link2", "frame2")
FRAME_KEYS = ("xyz", "rpy")


@dataclass(frozen=True)
class LoopFile:
    """The content of a loop file, checked for form (not yet against a model)."""

    active: tuple[str, ...]
    loops: tuple[Loop, ...]
    reference: Mapping[str, float] | None = None


LoopSource = str | Path | Mapping[str, Any] | LoopFile  # what a loop file can be given as


def read_loop_file(source: LoopSource) -> LoopFile:
    """Read and check a loop file (path, already-loaded mapping, or a :class:`LoopFile`,
    returned as is): :class:`LoopError` naming the file, loop and key for anything
    malformed.

    Parameters
    ----------
    source : str, Path, Mapping or LoopFile
        The loop file (a :class:`LoopFile` is returned as is).

    Returns
    -------
    LoopFile
        The checked loop file.
    """
    if isinstance(source, LoopFile):
        return source
    where = "loop file"
    if isinstance(source, (str, Path)):
        where = f"loop file '{source}'"
        try:
            with open(source, encoding="utf-8") as stream:
                data = yaml.safe_load(stream)
        except OSError as exc:
            raise LoopError(f"cannot read {where}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise LoopError(f"{where} is not valid YAML: {exc}") from None
    else:
        data = source
    if not isinstance(data, Mapping):
        raise LoopError(f"{where} must be a mapping with keys {options(FILE_KEYS)}")
    _check_keys(data, FILE_KEYS, where)
    for key in ("active", "loops"):
        if key not in data:
            raise LoopError(f"{where} has no '{key}' key")
    active = data["active"]
    if isinstance(active, str):
        active = [active]
    if not isinstance(active, list) or not all(isinstance(a, str) for a in active):
        raise LoopError(f"{where}: 'active' must be a list of joint names, got {active!r}")
    loops = data["loops"]
    if not isinstance(loops, list) or not loops:
        raise LoopError(f"{where}: 'loops' must be a non-empty list of loops")
    reference = data.get("reference")
    if reference is not None and not isinstance(reference, Mapping):
        raise LoopError(f"{where}: 'reference' must map joint names to positions, "
                        f"got {reference!r}")
    return LoopFile(tuple(active), tuple(_loop(entry, k, where) for k, entry in enumerate(loops)),
                    None if reference is None else dict(reference))


def _check_keys(data: Mapping[str, Any], valid: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in valid)
    if unknown:
        raise LoopError(f"{where}: unknown keys {options(unknown)}; valid: {options(valid)}")


def _loop(entry: object, k: int, where: str) -> Loop:
    if not isinstance(entry, Mapping):
        raise LoopError(f"{where}: loop {k} must be a mapping with keys {options(LOOP_KEYS)}")
    name = entry.get("name")
    label = f"{where}, loop '{name}'" if isinstance(name, str) and name else f"{where}, loop {k}"
    _check_keys(entry, LOOP_KEYS, label)
    for key in ("name", "type", "link1", "link2"):
        if key not in entry:
            raise LoopError(f"{label} has no '{key}'")
        if not isinstance(entry[key], str) or not entry[key]:
            raise LoopError(f"{label}: '{key}' must be a non-empty string, got {entry[key]!r}")
    if entry["type"] not in LOOP_TYPES:
        raise LoopError(f"{label}: type '{entry['type']}' is not one of {options(LOOP_TYPES)}")
    frames = {}
    for key in ("frame1", "frame2"):
        frame = entry.get(key, {}) or {}
        if not isinstance(frame, Mapping):
            raise LoopError(f"{label}: '{key}' must be a mapping with keys {options(FRAME_KEYS)}")
        _check_keys(frame, FRAME_KEYS, f"{label}, {key}")
        frames[key] = (frame.get("xyz", (0.0, 0.0, 0.0)), frame.get("rpy", (0.0, 0.0, 0.0)))
    try:
        return Loop(entry["name"], entry["type"], entry["link1"], entry["link2"],
                    xyz1=frames["frame1"][0], rpy1=frames["frame1"][1],
                    xyz2=frames["frame2"][0], rpy2=frames["frame2"][1])
    except LoopError as exc:
        raise LoopError(f"{where}: {exc}") from None


def load_loops(model: RobotModel, source: LoopSource) -> ClosedLoopModel:
    """:class:`ClosedLoopModel` of ``model`` (the spanning tree, e.g. from
    ``rc.load_urdf``) closed by the loop file ``source`` (path, mapping or
    :class:`LoopFile`).

    Parameters
    ----------
    model : RobotModel
        The spanning tree (e.g. from :func:`load_urdf`).
    source : str, Path, Mapping or LoopFile
        The loop file.

    Returns
    -------
    ClosedLoopModel
        The closed-loop model.
    """
    spec = read_loop_file(source)
    try:
        return build_loops(model, spec.loops, spec.active, spec.reference)
    except LoopError as exc:
        if isinstance(source, (str, Path)):
            raise LoopError(f"loop file '{source}': {exc}") from None
        raise


def loop_file_path(urdf: str | Path) -> Path:
    """``<robot>.loops.yaml`` next to ``<robot>.urdf``."""
    path = Path(urdf)
    return path.with_name(path.name.removesuffix(".urdf") + ".loops.yaml")


__all__ = ["LoopFile", "LoopSource", "load_loops", "loop_file_path", "read_loop_file"]
