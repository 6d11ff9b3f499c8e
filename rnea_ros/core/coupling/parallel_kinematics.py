"""Geometry and kinematics of parallel robots as a platform and legs (Khalil 2010 §5):
each leg's inverse geometric model (closed form), the active joints' motion from the
platform's (eq. 60-64: ``v_i = J_i qd_i = J_vi V_p``, ``J_vi = [I_3  -P_i^]``, eq. 65),
``J_p^-1`` (eq. 60, 62), the forward geometric model by Newton's method on the
platform's pose, and the whole tree's state (the spanning tree's joints) at a platform
state. The dynamics on top of them are :mod:`rnea_ros.core.coupling.parallel`; the
platform coordinates are that module's (Gough-Stewart ``x = [p, qx, qy, qz, qw]``,
Delta ``x = p``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling import _parallel_jit as pk
from rnea_ros.core.coupling import _parallel_legs as lk
from rnea_ros.core.coupling.parallel import _id_fast, _raise, _rotation, _vector
from rnea_ros.core.coupling.parallel_model import ParallelRobot
from rnea_ros.core.errors import ParallelRobotError, StateError
from rnea_ros.core.spatial import axis_angle

Array = NDArray[np.float64]

_asc, _f64 = np.ascontiguousarray, np.float64


# ------------------------------------------------------------------ geometry, kinematics
def _detail(robot: ParallelRobot, x: Array, xd: Array, xdd: Array) -> tuple[Array, Array]:
    """Each leg's ``[q, qd, qdd]`` (m, 9) and ``J_p^-1`` (m, nv) at one sample."""
    m = len(robot.legs)
    legs, jinv, tau = np.empty((m, pk.LEG_OUT)), np.empty((m, pk.JINV_OUT)), np.empty(m)
    status = _id_fast.call(robot.leg_floats, robot.leg_geometry, robot.platform_floats,
                           robot.KIND, x, xd, xdd, robot.tree.gravity, tau, legs, jinv)
    if status:
        _raise(robot, status, x=x, xd=xd, xdd=xdd)
    return legs, jinv[:, :robot.nv]


def _state(robot: ParallelRobot, x: object, xd: object | None = None,
           xdd: object | None = None) -> tuple[Array, Array, Array]:
    """The checked platform state ``x`` (nx,), ``xd``, ``xdd`` (nv,) (``None``: zero)."""
    zero = np.zeros(robot.nv)
    return (_vector(robot, "x", x), zero if xd is None else _vector(robot, "xd", xd),
            zero if xdd is None else _vector(robot, "xdd", xdd))


def platform_inverse_geometry(robot: ParallelRobot, x: object) -> Array:
    """Active joint values ``q_a`` (n_a,) placing the platform at ``x`` (the legs'
    closed-form inverse geometric models; :class:`ParallelRobotError` naming the
    leg if out of reach).

    Arguments as in Conventions: ``robot``, ``x`` ([parallel robots](core.md#parallel-robots)).

    Returns
    -------
    q_a : ndarray of shape (n_a,)
        Active joint values [rad, m].
    """
    legs, _ = _detail(robot, *_state(robot, x))
    return np.array([legs[k, leg.active] for k, leg in enumerate(robot.legs)])


def platform_active_motion(robot: ParallelRobot, x: object, xd: object | None = None,
                           xdd: object | None = None) -> tuple[Array, Array, Array, Array]:
    """The active joints' ``q_a, qd_a, qdd_a`` (n_a,) at platform state ``(x, xd, xdd)``
    (zero rates by default) and ``J_p^-1`` (n_a, nv) at ``x``, from one pass of the legs'
    inverse models (eq. 60-64): e.g. a Newton step of the forward geometric model
    (``q_a`` and ``J_p^-1`` at once), or the active acceleration at ``xdd = 0``, the
    ``(d/dt J_p^-1) xd`` of ``qdd_a = J_p^-1 xdd + (d/dt J_p^-1) xd``.
    :class:`ParallelRobotError` naming the leg if ``x`` is out of reach.

    Arguments as in Conventions: ``robot``, ``x``, ``xd``, ``xdd``
    ([parallel robots](core.md#parallel-robots)).

    Returns
    -------
    q_a, qd_a, qdd_a : ndarray of shape (n_a,)
        Active joint positions, velocities, accelerations.
    Jinv : ndarray of shape (n_a, nv)
        ``J_p^-1`` at ``x``.
    """
    legs, jinv = _detail(robot, *_state(robot, x, xd, xdd))
    a = np.array([leg.active for leg in robot.legs])
    k = np.arange(len(robot.legs))
    return legs[k, a], legs[k, 3 + a], legs[k, 6 + a], jinv


def platform_inverse_jacobian(robot: ParallelRobot, x: object) -> Array:
    """``J_p^-1`` (n_a, nv) at pose ``x``: ``qd_a = J_p^-1 xd`` (eq. 60, 62).

    Arguments as in Conventions: ``robot``, ``x`` ([parallel robots](core.md#parallel-robots)).

    Returns
    -------
    Jinv : ndarray of shape (n_a, nv)
        ``qd_a = Jinv xd``.
    """
    return _detail(robot, *_state(robot, x))[1]


def _retract(robot: ParallelRobot, x: Array, step: Array) -> Array:
    """``x`` moved by the twist increment ``step`` (base frame; rotation on the left)."""
    out: Array = x.copy()
    out[:3] += step[:3]
    if robot.nx == 7:
        angle = float(np.linalg.norm(step[3:]))
        axis = step[3:] / angle if angle > 0.0 else np.zeros(3)
        dq = np.concatenate([np.sin(0.5 * angle) * axis, [np.cos(0.5 * angle)]])
        qx, qy, qz, qw = x[3:]
        ax, ay, az, aw = dq
        out[3:] = (aw * qx + ax * qw + ay * qz - az * qy, aw * qy - ax * qz + ay * qw + az * qx,
                   aw * qz + ax * qy - ay * qx + az * qw, aw * qw - ax * qx - ay * qy - az * qz)
        out[3:] /= np.linalg.norm(out[3:])
    return out


def platform_forward_geometry(robot: ParallelRobot, q_active: object, x0: object | None = None,
                              *, tolerance: float = 1e-12, max_iterations: int = 50) -> Array:
    """Platform pose ``x`` with active joint values ``q_active`` (n_a,): Newton's method
    on the inverse geometric model, ``x <- x + J_p (q_a - IGM(x))``, from ``x0``
    (default ``robot.zero_pose``). Converges to the assembly mode nearest ``x0``.

    Arguments as in Conventions: ``robot`` ([parallel robots](core.md#parallel-robots)).

    Parameters
    ----------
    q_active : array_like of shape (n_a,)
        Active joint values [rad, m].
    x0 : array_like of shape (nx,), optional
        Starting pose (``None``: ``robot.zero_pose``); the result is the assembly mode
        nearest it.
    tolerance : float, default 1e-12
        Newton tolerance on the active joints [rad, m].
    max_iterations : int, default 50
        Newton iterations.

    Returns
    -------
    x : ndarray of shape (nx,)
        Platform pose.
    """
    target = _asc(q_active, _f64)
    if target.shape != (robot.nv,) or not np.all(np.isfinite(target)):
        raise StateError(f"q_active must be {robot.nv} finite values in the order "
                         f"{', '.join(robot.active)}")
    x: Array = robot.zero_pose.copy() if x0 is None else _vector(robot, "x", x0).copy()
    zero = np.zeros(robot.nv)
    scale = max(1.0, float(np.abs(target).max()))
    for _ in range(max_iterations):
        try:
            legs, jinv = _detail(robot, x, zero, zero)
        except ParallelRobotError as exc:
            raise ParallelRobotError(f"forward geometric model for q_a = {target.tolist()}: "
                                     f"Newton's iterate left the workspace ({exc})") from None
        error = target - np.array([legs[k, leg.active] for k, leg in enumerate(robot.legs)])
        if float(np.abs(error).max()) <= tolerance * scale:
            return x
        x = _retract(robot, x, np.linalg.solve(jinv, error))
    raise ParallelRobotError(f"forward geometric model for q_a = {target.tolist()} did not "
                             f"converge in {max_iterations} Newton steps from x0")


def _angles(axes: list[Array], Q: Array) -> list[float]:
    """Revolute angles with ``Rot(w1, t1) ... Rot(wk, tk) = Q`` (k = 2 or 3), the branch
    nearest zero (Paden-Kahan subproblems 1 and 2)."""
    def normal(w: Array) -> Array:
        p: Array = np.eye(3)[int(np.argmin(np.abs(w)))]
        return p - w * float(w @ p)

    def tup(v: Array) -> tuple[float, float, float]:
        return float(v[0]), float(v[1]), float(v[2])

    w1, w2 = axes[0], axes[1]
    if len(axes) == 2:
        t1 = lk.angle_between(tup(w1), tup(w2), tup(Q @ w2))
        p = normal(w2)
        t2 = lk.angle_between(tup(w2), tup(p), tup(axis_angle(w1, -t1) @ Q @ p))
        angles = [t1, t2]
    else:
        w3 = axes[2]
        _, t1, t2 = lk.two_angles(tup(w1), tup(w2), tup(w3), tup(Q @ w3))
        p = normal(w3)
        R12 = axis_angle(w1, t1) @ axis_angle(w2, t2)
        t3 = lk.angle_between(tup(w3), tup(p), tup(R12.T @ Q @ p))
        angles = [t1, t2, t3]
    check = np.eye(3)
    for w, t in zip(axes, angles, strict=True):
        check = check @ axis_angle(w, t)
    if float(np.abs(check - Q).max()) > 1e-9:
        raise ParallelRobotError("the platform's orientation cannot be reached through the "
                                 "joints connecting a leg to it")
    return angles


def _leg_rotation(model: Any, q: Array, qd: Array, qdd: Array) -> tuple[Array, Array, Array]:
    """Orientation, angular velocity and acceleration of a leg's last body (base frame)."""
    R, w, dw = np.eye(3), np.zeros(3), np.zeros(3)
    for k in range(3):
        R = R @ model.placement_rotation[k]
        if model.joint_types[k] != "prismatic":
            z = R @ model.axis[k]
            dw = dw + np.cross(w, z) * qd[k] + z * qdd[k]
            w = w + z * qd[k]
            R = R @ axis_angle(model.axis[k], q[k])
    return R, w, dw


def platform_tree_state(robot: ParallelRobot, x: object, xd: object | None = None,
                        xdd: object | None = None) -> tuple[Array, Array, Array]:
    """The spanning tree's ``(q, qd, qdd)`` (tree joint order) at platform state
    ``(x, xd, xdd)`` (zero rates by default): the legs' joints from their inverse
    models, the joints connecting legs to the platform from the platform's
    orientation relative to the leg (the branch nearest their zero; their limits
    are not checked: the platform + legs model does not use them), so that every
    loop of ``robot.loops`` closes. The tree state of Khalil §4 (eq. 55-57), e.g.
    for :func:`~rnea_ros.core.dynamics.rnea.rnea` on ``robot.tree`` or a
    closed-loop formulation.

    Arguments as in Conventions: ``robot``, ``x``, ``xd``, ``xdd``
    ([parallel robots](core.md#parallel-robots)).

    Returns
    -------
    q, qd, qdd : ndarray of shape (n,)
        The spanning tree's state, tree joint order.
    """
    x, xd, xdd = _state(robot, x, xd, xdd)
    legs, _ = _detail(robot, x, xd, xdd)
    tree = robot.tree
    q, qd, qdd = np.zeros(tree.nv), np.zeros(tree.nv), np.zeros(tree.nv)
    Rp = _rotation(robot, x)
    wp = xd[3:] if robot.nv == 6 else np.zeros(3)
    dwp = xdd[3:] if robot.nv == 6 else np.zeros(3)
    for k, leg in enumerate(robot.legs):
        idx = [tree.joint_index(j) for j in leg.joints]
        q[idx], qd[idx], qdd[idx] = legs[k, :3], legs[k, 3:6], legs[k, 6:]
        if not leg.connection:
            continue
        RL, wL, dwL = _leg_rotation(leg.model, legs[k, :3], legs[k, 3:6], legs[k, 6:])
        conn = [tree.joint_index(j) for j in leg.connection]
        P = [tree.placement_rotation[c] for c in conn]
        frame = RL @ P[0]  # the first connection joint's frame
        axes, chain = [], np.eye(3)
        for c, Pc in zip(conn, [np.eye(3), *P[1:]], strict=True):
            chain = chain @ Pc
            axes.append(chain @ tree.axis[c])
        Q = frame.T @ Rp @ leg.body_rotation @ chain.T
        angles = _angles(axes, Q)
        # World axes at the solved angles; rates from w_T - w_L = sum z_j qd_j and
        # dw_T - dw_L - sum w_(j-1) x z_j qd_j = sum z_j qdd_j.
        R, z = frame, []
        for c, Pc, t in zip(conn, [np.eye(3), *P[1:]], angles, strict=True):
            R = R @ Pc
            z.append(R @ tree.axis[c])
            R = R @ axis_angle(tree.axis[c], t)
        Z = np.column_stack(z)
        rates = np.linalg.lstsq(Z, wp - wL, rcond=None)[0]
        w, bias = wL.copy(), np.zeros(3)
        for zj, r in zip(z, rates, strict=True):
            bias += np.cross(w, zj) * r
            w = w + zj * r
        accels = np.linalg.lstsq(Z, dwp - dwL - bias, rcond=None)[0]
        q[conn], qd[conn], qdd[conn] = angles, rates, accels
    return q, qd, qdd


__all__ = [
    "platform_active_motion",
    "platform_forward_geometry",
    "platform_inverse_geometry",
    "platform_inverse_jacobian",
    "platform_tree_state",
]
