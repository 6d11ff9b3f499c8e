"""Drive parameters URDF cannot carry: rotor inertia, gear ratio, friction.

A small YAML side file (or the same mapping in code), keyed by joint name::

    joints:
      panda_joint1:
        rotor_inertia: 6.0e-5   # kg m^2, motor side
        gear_ratio: 100.0       # motor turns per joint turn (armature = ratio^2 * rotor)
        coulomb: 0.5            # N m (N for prismatic joints)
        viscous: 0.1            # N m s/rad (N s/m)
      panda_joint2:
        armature: 0.6           # kg m^2: reflected inertia given directly

Joints not listed keep their URDF values (``<dynamics friction damping>``
give Coulomb and viscous friction). ``armature`` and ``rotor_inertia`` are
exclusive.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rnea_ros.core.errors import InertiaError, ModelParameterError, options
from rnea_ros.core.model.robot_model import INERTIAL_BOUNDS, RobotModel

KEYS = ("armature", "rotor_inertia", "gear_ratio", "coulomb", "viscous")


def load_side_file(path: str | Path, what: str = "drive file") -> Mapping[str, Any]:
    """Read a YAML side file (a mapping with a ``joints`` key); ``what`` names it in errors."""
    try:
        with open(path, encoding="utf-8") as stream:
            data = yaml.safe_load(stream)
    except OSError as exc:
        raise ModelParameterError(f"cannot read {what} '{path}': {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ModelParameterError(f"{what} '{path}' is not valid YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise ModelParameterError(f"{what} '{path}' must be a mapping with a 'joints' key")
    return data


def load_drive_file(path: str | Path) -> Mapping[str, Any]:
    """Read a drive side file.

    Parameters
    ----------
    path : str or Path
        The drive side file (YAML).

    Returns
    -------
    Mapping
        The parsed side file.
    """
    return load_side_file(path, "drive file")


def apply_drive_parameters(model: RobotModel, drives: str | Path | Mapping[str, Any]
                           ) -> RobotModel:
    """A copy of ``model`` with the side-file parameters applied (validated).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    drives : str, Path or Mapping
        Drive side file (path or loaded mapping, :func:`load_drive_file`).

    Returns
    -------
    RobotModel
        A copy with the drive parameters applied.
    """
    data = load_drive_file(drives) if isinstance(drives, (str, Path)) else drives
    joints = data.get("joints")
    if not isinstance(joints, Mapping):
        raise ModelParameterError("drive parameters need a 'joints' mapping keyed by joint name")
    values = {key: np.array(getattr(model, key), dtype=np.float64)
              for key in ("armature", "coulomb", "viscous")}
    for joint, params in joints.items():
        if joint not in model.joint_names:
            raise ModelParameterError(
                f"drive parameters for unknown joint '{joint}'; valid joints: "
                f"{options(model.joint_names)}"
            )
        if not isinstance(params, Mapping):
            raise ModelParameterError(f"joint '{joint}': drive parameters must be a mapping")
        unknown = sorted(set(params) - set(KEYS))
        if unknown:
            raise ModelParameterError(
                f"joint '{joint}': unknown drive parameters {options(unknown)}; "
                f"valid: {options(KEYS)}"
            )
        numbers: dict[str, float] = {}
        for key, raw in params.items():
            try:
                number = float(raw)
            except (TypeError, ValueError):
                raise ModelParameterError(
                    f"joint '{joint}': {key} = {raw!r} is not a number") from None
            if not np.isfinite(number) or number < 0.0:
                raise ModelParameterError(
                    f"joint '{joint}': {key} = {raw!r} must be finite and >= 0")
            numbers[key] = number
        if "armature" in numbers and "rotor_inertia" in numbers:
            raise ModelParameterError(f"joint '{joint}': give armature or rotor_inertia, not both")
        if numbers.get("gear_ratio", 1.0) == 0.0:
            raise ModelParameterError(f"joint '{joint}': gear_ratio must be > 0")
        if "gear_ratio" in numbers and "rotor_inertia" not in numbers:
            raise ModelParameterError(f"joint '{joint}': gear_ratio needs rotor_inertia")
        j = model.joint_index(joint)  # a multi-DoF joint: the same on each of its coordinates
        i = slice(int(model.idx_v[j]), int(model.idx_v[j] + model.joint_nv[j]))
        if "rotor_inertia" in numbers:
            numbers["armature"] = numbers.get("gear_ratio", 1.0) ** 2 * numbers["rotor_inertia"]
        if numbers.get("armature", 0.0) > INERTIAL_BOUNDS[2]:
            raise InertiaError(f"joint '{joint}': reflected rotor inertia (armature) "
                               f"{numbers['armature']:.4g} kg m^2 exceeds the physical bound "
                               f"{INERTIAL_BOUNDS[2]:g} kg m^2")
        for key in ("armature", "coulomb", "viscous"):
            if key in numbers:
                values[key][i] = numbers[key]
    return model.replace(**values)
