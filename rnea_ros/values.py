"""Parameter values (ROS parameters, YAML mappings) read as checked numbers.

Shared by ``control`` (the controller's parameters, ``control/config.py``) and
``simulation`` (the simulator's, ``simulation/factory.py``): it lives below both
so that neither imports the other (docs/design.md, "Layers"). Ranges, defaults
and units stay in the parameter tables (``rnea_ros/params/*.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


def number_list(values: Mapping[str, Any], name: str) -> Array:
    """Parameter ``name`` of ``values`` as a 1-D array of finite floats (a scalar is
    one value); ``ParameterError`` naming it otherwise."""
    raw = values[name]
    try:
        out = np.array([float(x) for x in (raw if isinstance(raw, Sequence) else [raw])])
    except (TypeError, ValueError):
        raise ParameterError(f"parameter '{name}': {raw!r} is not a list of numbers") from None
    if not np.all(np.isfinite(out)):
        raise ParameterError(f"parameter '{name}': {raw!r} must be finite")
    return out


def per_joint(values: Mapping[str, Any], name: str, n: int, minimum: float = 0.0) -> Array:
    """Parameter ``name`` as n finite values >= ``minimum`` (one value is broadcast)."""
    out = number_list(values, name)
    if out.size == 1 or n == 0:
        out = np.full(n, out[0] if out.size else 0.0)
    if out.size != n:
        raise ParameterError(f"parameter '{name}' has {out.size} values; give 1 or {n}")
    if np.any(out < minimum):
        raise ParameterError(f"parameter '{name}' must be >= {minimum:g}, got {out.tolist()}")
    return out


__all__ = ["number_list", "per_joint"]
