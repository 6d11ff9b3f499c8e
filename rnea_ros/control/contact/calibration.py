"""Contact thresholds from a contact-free recording.

:func:`propose_thresholds`: per velocity coordinate, the worst residual the observer
produced without contact -- after removing the speed and acceleration terms the
detector adds (``|r_j| - velocity_j |qd_j| - acceleration_j |qdd_j|``) -- times a
stated ``margin`` (e.g. 1.5: 50 % above the worst seen), never below ``floor``.
:func:`write_thresholds` writes them as a controller parameter fragment::

    /**:
      ros__parameters:
        contact.thresholds: [...]

(a ROS 2 parameter file, merged by ``--params-file`` after the robot's own).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import StateError
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


def propose_thresholds(r: object, margin: float, *, floor: float, qd: object | None = None,
                       qdd: object | None = None, velocity: object = 0.0,
                       acceleration: object = 0.0) -> Array:
    """``max(margin * max_k (|r_kj| - velocity_j |qd_kj| - acceleration_j |qdd_kj|),
    floor)`` (nv,) over the samples ``k`` of a contact-free run; ``r`` (N, nv)."""
    R = np.asarray(r, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 1 or not np.all(np.isfinite(R)):
        raise StateError(f"residuals must be a finite (N, nv) array, got shape {R.shape}")
    if not (np.isfinite(margin) and margin >= 1.0):
        raise ParameterError(f"threshold margin {margin} must be finite and >= 1")
    if not (np.isfinite(floor) and floor > 0.0):
        raise ParameterError(f"threshold floor {floor} must be finite and > 0")
    excess = np.abs(R)
    for name, x, coefficient in (("qd", qd, velocity), ("qdd", qdd, acceleration)):
        if x is None:
            continue
        X = np.asarray(x, dtype=np.float64)
        if X.shape != R.shape:
            raise StateError(f"{name} has shape {X.shape}, the residuals {R.shape}")
        excess = excess - np.asarray(coefficient, dtype=np.float64) * np.abs(X)
    return np.asarray(np.maximum(margin * excess.max(axis=0), floor), dtype=np.float64)


def thresholds_fragment(thresholds: Array, comment: str = "") -> str:
    """The YAML text of the parameter fragment (``comment``: a first ``#`` line)."""
    values = ", ".join(f"{float(x):.6g}" for x in thresholds)
    head = "".join(f"# {line}\n" for line in comment.splitlines())
    return f"{head}/**:\n  ros__parameters:\n    contact.thresholds: [{values}]\n"


def write_thresholds(path: str | Path, thresholds: Array, *, comment: str = "",
                     force: bool = False) -> Path:
    """Write :func:`thresholds_fragment` to ``path`` atomically (a temporary file in the
    same folder, then renamed); an existing file is replaced only with ``force``."""
    out = Path(path)
    if out.exists() and not force:
        raise ParameterError(f"'{out}' exists: pass force=True to replace it")
    if not out.parent.is_dir():
        raise ParameterError(f"folder '{out.parent}' of the threshold file does not exist")
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(thresholds_fragment(thresholds, comment))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


__all__ = ["propose_thresholds", "thresholds_fragment", "write_thresholds"]
