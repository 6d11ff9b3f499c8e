"""Inverse and direct dynamics of parallel robots as a platform and legs (Khalil 2010 §5).

Given the platform's pose, twist and acceleration (Cartesian, base frame), each
leg's joint values come from its inverse geometric model (closed form) and its
rates from its Jacobian (eq. 63-64: ``v_i = J_i qd_i = J_vi V_p``,
``J_vi = [I_3  -P_i^]`` for a leg on a spherical joint, eq. 65); each leg's
inverse dynamics ``Gamma_i`` is our RNEA on the leg alone; the platform's
``F_p`` is its Newton-Euler wrench (eq. 9); and the active forces are

    Gamma = J_p^T [F_p + sum_i J_vi^T J_i^-T Gamma_i]          (eq. 66)

with ``J_p^-1`` (eq. 60) assembled row by row from ``J_i^-1 J_vi`` (eq. 62).
Gravity is included (as ``-g``, in ``F_p`` and in every leg's RNEA). A
translating platform (Delta) keeps the force rows only (``J_vi = I_3``).

Direct dynamics (eq. 58 for the platform): ``Gamma = A_x(x) xdd + h(x, xd)``,
``A_x`` column by column from the inverse model (Khalil §3.3.1), then one solve.

Platform coordinates (base frame): Gough-Stewart ``x = [p, qx, qy, qz, qw]``
(origin of the platform frame, unit quaternion), ``xd = [v, w]`` (velocity of
that origin, angular velocity), ``xdd = [dv/dt, dw/dt]``; Delta ``x = p``,
``xd = v``, ``xdd = dv/dt``. ``tau`` is in the order of ``robot.active``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.coupling import _parallel_jit as pk
from rnea_ros.core.coupling import _parallel_legs as lk
from rnea_ros.core.coupling.parallel_model import ParallelRobot, quaternion_of
from rnea_ros.core.errors import ParallelRobotError, StateError
from rnea_ros.core.inputs import gravity_vector

Array = NDArray[np.float64]

_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty
_id_fast = FastCall(pk.inverse_dynamics_call)
_NO_LEGS, _NO_JINV = np.empty((0, pk.LEG_OUT)), np.empty((0, pk.JINV_OUT))  # per call: no detail
_ZERO_G = np.zeros(3)
_ZERO_G.flags.writeable = False


# ------------------------------------------------------------------ inputs, errors
def _sizes(robot: ParallelRobot) -> dict[str, int]:
    return {"x": robot.nx, "xd": robot.nv, "xdd": robot.nv, "tau": robot.nv}


def _vector(robot: ParallelRobot, name: str, a: object) -> Array:
    v = _asc(a, _f64)
    n = _sizes(robot)[name]
    if v.shape != (n,):
        raise StateError(f"{name} has shape {v.shape}, expected ({n},) for {_what(robot)}")
    return v


def _rows(robot: ParallelRobot, name: str, a: object, count: int | None = None) -> Array:
    v = _asc(a, _f64)
    if not v.flags.writeable:  # a writable copy: the kernel's one specialisation (_gravity)
        v = v.copy()
    n = _sizes(robot)[name]
    if v.ndim != 2 or v.shape[1] != n or (count is not None and v.shape[0] != count):
        want = f"({count if count is not None else 'N'}, {n})"
        raise StateError(f"{name} has shape {v.shape}, expected {want} for {_what(robot)}")
    return v


def _what(robot: ParallelRobot) -> str:
    layout = ("x = [p, qx, qy, qz, qw], xd = [v, w]" if robot.nx == 7 else "x = p, xd = v")
    return f"{type(robot).__name__} '{robot.name}' ({layout})"


def _gravity(robot: ParallelRobot, gravity: object | None) -> Array:
    """Gravity, read-only like the model's (the kernels' argument types stay the same:
    each other combination of read-only flags would compile the kernel again, ~35 s)."""
    if gravity is None:
        return robot.tree.gravity
    g: Array = gravity_vector(robot.tree, gravity).copy()
    g.flags.writeable = False
    return g


def _rotation(robot: ParallelRobot, x: Array) -> Array:
    if robot.nx == 3:
        return robot.orientation
    _, R = lk.unit_quaternion_matrix(float(x[3]), float(x[4]), float(x[5]), float(x[6]))
    return np.array(R).reshape(3, 3)


def _raise(robot: ParallelRobot, status: int, sample: str = "", **inputs: Array) -> None:
    """Raise the error a kernel's ``status`` stands for (see ``_parallel_jit``)."""
    reason, index = divmod(status, lk.STATUS_LEG)
    for name, a in inputs.items():
        if name in _sizes(robot) and a.shape != (_sizes(robot)[name],):
            _vector(robot, name, a)
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise StateError(f"{sample}{name}[{bad[0]}] = {a[bad[0]]} is not finite")
    x = inputs["x"]
    pose = np.round(x, 6).tolist()
    if reason == lk.BAD_QUATERNION:
        raise StateError(f"{sample}x[3:7] = {x[3:7].tolist()} is not a unit quaternion "
                         f"(norm {np.linalg.norm(x[3:7]):.9g})")
    if reason == lk.PLATFORM_SINGULAR:
        raise ParallelRobotError(
            f"{sample}the platform pose {pose} is singular: J_p^-1 (Khalil eq. 60) is "
            "not invertible, so the active forces do not determine the platform's wrench")
    if reason == lk.NOT_FINITE or not 0 <= index < len(robot.legs):
        raise StateError(f"{sample}the active forces are not finite at x = {pose}")
    leg = robot.legs[index]
    B = x[:3] + _rotation(robot, x) @ leg.attachment
    anchor = f"its platform anchor at {np.round(B, 6).tolist()} m (base frame)"
    where = f"{sample}the platform pose {pose} is out of reach of leg '{leg.name}'"
    if reason == lk.UNREACHABLE:
        raise ParallelRobotError(f"{where}: no joint values put its end on {anchor}")
    if reason == lk.LEG_SINGULAR:
        raise ParallelRobotError(f"{sample}leg '{leg.name}' is singular at the platform pose "
                                 f"{pose} (its Jacobian J_i, eq. 63, is not invertible)")
    q = np.empty(3)
    lk.leg_geometry_call(robot.KIND, robot.leg_geometry, index, B, q)
    lower, upper = leg.model.lower_limit, leg.model.upper_limit
    k = int(np.argmax(np.maximum(lower - q, q - upper)))
    raise ParallelRobotError(
        f"{where}: to reach {anchor}, joint '{leg.joints[k]}' would be at {q[k]:.6g}, outside "
        f"its limits [{lower[k]:.6g}, {upper[k]:.6g}]")


def warm_up_errors(robot: ParallelRobot) -> None:
    """Compile (or load) the kernels :func:`_raise` calls only to word an error (a leg's
    joint values beyond its limits, the platform's rotation): a controller calls this at
    start-up, so that its first rejected state does not compile them in its callback
    (issue 35: 1.2-1.5 s without a command on a cold cache)."""
    x = robot.zero_pose
    q = np.empty(3)
    for index, leg in enumerate(robot.legs):
        lk.leg_geometry_call(robot.KIND, robot.leg_geometry, index,
                             x[:3] + _rotation(robot, x) @ leg.attachment, q)


# ------------------------------------------------------------------ dynamics
def platform_inverse_dynamics(robot: ParallelRobot, x: object, xd: object, xdd: object, *,
                              gravity: object | None = None) -> Array:
    """Active joint forces ``tau`` (n_a,) that give the platform the acceleration ``xdd``
    at pose ``x`` and twist ``xd`` (Khalil eq. 66; gravity included; N for
    prismatic, N m for revolute joints). Raises :class:`ParallelRobotError`
    naming the leg if the pose is out of reach (or beyond a joint limit).

    Arguments as in Conventions: ``robot``, ``x``, ``xd``, ``xdd``
    ([parallel robots](core.md#parallel-robots)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau : ndarray of shape (n_a,)
        Active joint forces [N, N m].
    """
    x, xd, xdd = _asc(x, _f64), _asc(xd, _f64), _asc(xdd, _f64)
    if not x.ndim == xd.ndim == xdd.ndim == 1:
        _raise(robot, 0, x=_vector(robot, "x", x), xd=_vector(robot, "xd", xd),
               xdd=_vector(robot, "xdd", xdd))
    tau = _empty(robot.nv)
    g = _gravity(robot, gravity)
    status = _id_fast.call(robot.leg_floats, robot.leg_geometry, robot.platform_floats,
                           robot.KIND, x, xd, xdd, g, tau, _NO_LEGS, _NO_JINV)
    if status:
        _raise(robot, status, x=x, xd=xd, xdd=xdd)
    return tau


def _batch_error(robot: ParallelRobot, status: int, **rows: Array) -> None:
    sample, status = divmod(status, pk.BATCH_SAMPLE)
    _raise(robot, status, f"sample {sample}: ", **{k: v[sample] for k, v in rows.items()})


def platform_inverse_dynamics_batch(robot: ParallelRobot, x: object, xd: object, xdd: object,
                                    *, gravity: object | None = None) -> Array:
    """:func:`platform_inverse_dynamics` over N samples: ``(N, nx), (N, nv), (N, nv)``
    give ``tau`` (N, n_a).

    Arguments as in Conventions: ``robot`` ([parallel robots](core.md#parallel-robots)); ``x``,
    ``xd``, ``xdd`` ([parallel batches](core.md#parallel-batches)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau : ndarray of shape (N, n_a)
        Active joint forces per sample.
    """
    X = _rows(robot, "x", x)
    XD = _rows(robot, "xd", xd, X.shape[0])
    XDD = _rows(robot, "xdd", xdd, X.shape[0])
    tau = np.empty((X.shape[0], robot.nv))
    status = pk.inverse_dynamics_rows(robot.leg_floats, robot.leg_geometry, robot.platform_floats,
                                     robot.KIND, X, XD, XDD, _gravity(robot, gravity), tau)
    if status:
        _batch_error(robot, status, x=X, xd=XD, xdd=XDD)
    return tau


def platform_forward_dynamics(robot: ParallelRobot, x: object, xd: object, tau: object, *,
                              gravity: object | None = None) -> Array:
    """Platform acceleration ``xdd`` (nv,) under the active forces ``tau`` (n_a,) at pose
    ``x`` and twist ``xd``: ``tau = A_x(x) xdd + h(x, xd)`` solved for ``xdd``.

    Arguments as in Conventions: ``robot``, ``x``, ``xd``, ``tau``
    ([parallel robots](core.md#parallel-robots)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    xdd : ndarray of shape (nv,)
        Platform acceleration.
    """
    xdd: Array = platform_forward_dynamics_batch(
        robot, _vector(robot, "x", x)[None], _vector(robot, "xd", xd)[None],
        _vector(robot, "tau", tau)[None], gravity=gravity)[0]
    return xdd


def platform_forward_dynamics_batch(robot: ParallelRobot, x: object, xd: object, tau: object,
                                    *, gravity: object | None = None) -> Array:
    """:func:`platform_forward_dynamics` over N samples: ``xdd`` (N, nv).

    Arguments as in Conventions: ``robot`` ([parallel robots](core.md#parallel-robots)); ``x``,
    ``xd``, ``tau`` ([parallel batches](core.md#parallel-batches)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    xdd : ndarray of shape (N, nv)
        Platform acceleration per sample.
    """
    X = _rows(robot, "x", x)
    XD = _rows(robot, "xd", xd, X.shape[0])
    TAU = _rows(robot, "tau", tau, X.shape[0])
    xdd = np.empty((X.shape[0], robot.nv))
    status = pk.forward_dynamics_rows(robot.leg_floats, robot.leg_geometry, robot.platform_floats,
                                     robot.KIND, X, XD, TAU, _gravity(robot, gravity), _ZERO_G,
                                     xdd)
    if status:
        _batch_error(robot, status, x=X, xd=XD, tau=TAU)
    return xdd

__all__ = [
    "platform_forward_dynamics",
    "platform_forward_dynamics_batch",
    "platform_inverse_dynamics",
    "platform_inverse_dynamics_batch",
    "quaternion_of",
    "warm_up_errors",
]
