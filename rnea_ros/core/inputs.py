"""Shape and finiteness checks for joint-space inputs.

The hot path checks shapes only (cheap); kernels report whether their result
is finite, and only then :func:`raise_non_finite` scans the inputs to name the
offending joint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import StateError

if TYPE_CHECKING:
    from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


CONFIGURATIONS = ("q", "Q")  # input names of configuration-sized (nq) vectors


def _size(model: RobotModel, name: str) -> tuple[int, str]:
    """Expected length of input ``name`` and what it is (nq for q, else nv)."""
    if name in CONFIGURATIONS:
        return model.nq, "nq"
    return model.nv, "nv"


def joint_vector(model: RobotModel, x: object, name: str) -> Array:
    """``x`` as a float64 array of shape ``(nv,)`` (``(nq,)`` for ``q``), else
    :class:`StateError`."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    size, what = _size(model, name)
    if a.shape != (size,):
        raise StateError(
            f"{name} has shape {a.shape}, expected ({size},) ({what}) for model '{model.name}'"
        )
    return a


def joint_batch(model: RobotModel, x: object, name: str, samples: int | None = None) -> Array:
    """``x`` as a C-contiguous float64 array of shape ``(N, nv)`` (``(N, nq)`` for ``q``)."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    size, what = _size(model, name)
    if a.ndim != 2 or a.shape[1] != size or (samples is not None and a.shape[0] != samples):
        want = f"({samples if samples is not None else 'N'}, {size})"
        raise StateError(f"{name} has shape {a.shape}, expected {want} ({what}) for model "
                         f"'{model.name}'")
    return a


def gravity_vector(model: RobotModel, gravity: object | None) -> Array:
    """The gravity vector to use: the model's, or ``gravity`` (3,) [m/s^2]."""
    if gravity is None:
        return model.gravity
    g = np.ascontiguousarray(gravity, dtype=np.float64)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise StateError(f"gravity must be a finite (3,) vector, got {g!r}")
    return g


def body_wrenches(model: RobotModel, fext: object, name: str = "fext") -> Array:
    """External wrenches ``(nbodies, 6)``: per body, ``[force, torque]`` in the body frame."""
    a = np.ascontiguousarray(fext, dtype=np.float64)
    if a.shape != (model.nbodies, 6):
        raise StateError(
            f"{name} has shape {a.shape}, expected ({model.nbodies}, 6): one [force, torque] "
            f"per body of model '{model.name}' ({', '.join(model.body_names)})"
        )
    if not np.all(np.isfinite(a)):
        body = model.body_names[int(np.argwhere(~np.isfinite(a))[0, 0])]
        raise StateError(f"{name} for body '{body}' is not finite")
    return a


def raise_bad_input(model: RobotModel, **inputs: Array) -> None:
    """Raise the :class:`StateError` that explains why a kernel refused ``inputs``
    (joint vectors): a wrong shape, a quaternion off the unit sphere, else a
    non-finite entry."""
    for name, a in inputs.items():
        joint_vector(model, a, name)
    raise_non_finite(model, **inputs)


def raise_non_finite(model: RobotModel, **inputs: Array) -> None:
    """Raise :class:`StateError` naming the first non-finite input entry.

    Called when a kernel's result was not finite (or it refused a configuration).
    ``inputs`` map names (``q``, ``qd``, ...) to arrays whose last axis is the
    coordinate axis (nq for ``q``, nv otherwise). A quaternion (planar cos/sin
    pair) that is not a unit vector is reported first, naming its joint.
    """
    for name, a in inputs.items():
        bad = np.argwhere(~np.isfinite(a))
        if bad.size:
            idx = tuple(int(k) for k in bad[0])
            joint = model.joint_of_coordinate(idx[-1], "q" if name in CONFIGURATIONS else "v")
            where = f" (sample {idx[0]})" if len(idx) > 1 else ""
            raise StateError(f"{name} of joint '{joint}' is {a[idx]}{where}: not finite")
        if name in CONFIGURATIONS and model.expanded:
            for k, row in enumerate(np.atleast_2d(a)):
                try:
                    model.check_configuration(row)
                except StateError as exc:
                    where = f" (sample {k})" if a.ndim > 1 else ""
                    raise StateError(f"{exc}{where}") from None
    raise StateError(
        f"model '{model.name}': result is not finite for finite inputs (overflow?)"
    )
