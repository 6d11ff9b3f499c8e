"""Joint torque regressor ``Y(q, qd, qdd)``: inverse dynamics linear in the parameters.

``tau = Y(q, qd, qdd) pi`` (Atkeson, An & Hollerbach 1986): the Newton-Euler
body wrenches are linear in Khalil's standard inertial parameters ``M_j,
MS_j, J_j`` (Khalil 2010 eq. 11: mass, first moments, inertia about the
origin), and the joint torque of eq. 31 in the drive parameters ``Ia_j,
Fv_j, Fs_j``. ``pi`` (p,) = 10 inertial parameters per body, then 3 drive
parameters per joint (``p = 13 n``):

* body ``j``, columns ``10 j .. 10 j + 9``, Pinocchio's order
  (``pin.Inertia.toDynamicParameters``): ``m, m c_x, m c_y, m c_z, Ixx, Ixy,
  Iyy, Ixz, Iyz, Izz`` with ``m c`` the first moment and ``I`` the rotational
  inertia **about the body origin** (the joint frame), in body ``j``'s frame;
* joint ``i``, columns ``10 n + 3 i .. 10 n + 3 i + 2``: armature ``Ia``
  (``qdd_i``), viscous ``Fv`` (``qd_i``), Coulomb ``Fs`` (``sign(qd_i)``):
  Khalil eq. 31.

The body force of body ``j`` (Featherstone: ``f = I a + v x* I v``) is linear
in its 10 parameters: ``f_j = A_j(v_j, a_j) pi_j`` with ``A_j`` (6, 10). Joint
``i`` carries the forces of every body ``j`` of its subtree,
``Y[i, 10 j: 10 j + 10] = S_i^T X_{j->i}^* A_j``. Instead of carrying each
block up the chain body by body, the kernel expresses every ``A_j`` once in
the base frame (at the base origin) and projects it on each ancestor's axis
written in the base frame, ``S_i = (u_i, p_i x u_i)``: ``O(n)`` transforms and
an ``O(6)`` product per (joint, body) pair.

Shapes: ``q, qd, qdd`` (n,) give ``Y`` (n, 13 n); the batch form takes
``(N, n)`` and gives ``(N, n, 13 n)``. Units follow the parameters (N m).

Kernels: :mod:`~rnea_ros.core.dynamics._regressor_jit` (``regressor_pass``,
``regressor_rows``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics._regressor_jit import regressor_rows
from rnea_ros.core.errors import StateError
from rnea_ros.core.inputs import gravity_vector, joint_batch, joint_vector, raise_non_finite
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

INERTIAL_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
DRIVE_NAMES = ("Ia", "Fv", "Fs")
PER_BODY = len(INERTIAL_NAMES)
PER_JOINT = len(DRIVE_NAMES)


def parameter_count(model: RobotModel, drives: bool = True) -> int:
    """Number of regressor columns: ``10 n`` (+ ``3 n`` with the drive terms)."""
    model.require_one_dof("the joint torque regressor")
    return (PER_BODY + (PER_JOINT if drives else 0)) * model.nv


def parameter_names(model: RobotModel, drives: bool = True) -> list[str]:
    """Column names, e.g. ``'m@link1'``, ``'Ixy@link1'``, ``'Fv@joint1'``.

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)); ``drives``
    ([regressors](core.md#regressors)).

    Returns
    -------
    list of str
        p column names.
    """
    model.require_one_dof("the joint torque regressor")
    names = [f"{p}@{body}" for body in model.body_names for p in INERTIAL_NAMES]
    if drives:
        names += [f"{p}@{joint}" for joint in model.joint_names for p in DRIVE_NAMES]
    return names


def parameter_vector(model: RobotModel, drives: bool = True) -> Array:
    """The model's ``pi`` (p,) in the regressor's column order (inertia about the body origin).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)); ``drives``
    ([regressors](core.md#regressors)).

    Returns
    -------
    pi : ndarray of shape (p,)
        Parameters in column order (inertia about the body origin) [SI].
    """
    model.require_one_dof("the joint torque regressor")
    out = np.empty(parameter_count(model, drives))
    for j in range(model.nv):
        m, c, Ic = float(model.mass[j]), model.com[j], model.inertia[j]
        Io = Ic + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
        out[10 * j:10 * j + 10] = (m, *(m * c), Io[0, 0], Io[0, 1], Io[1, 1], Io[0, 2],
                                   Io[1, 2], Io[2, 2])
    if drives:
        out[10 * model.nv:] = np.column_stack(
            [model.armature, model.viscous, model.coulomb]).ravel()
    return out


def joint_torque_regressor(model: RobotModel, q: object, qd: object, qdd: object, *,
                           gravity: object | None = None, drives: bool = True) -> Array:
    """``Y`` (n, 13 n) with ``rnea(model, q, qd, qdd) = Y @ parameter_vector(model)``.

    ``drives=False`` gives the 10 n inertial columns only, Pinocchio's
    ``computeJointTorqueRegressor`` (columns in our body order).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``qdd``, ``gravity``
    ([rigid robots](core.md#rigid-robots)); ``drives`` ([regressors](core.md#regressors)).

    Returns
    -------
    Y : ndarray of shape (n, p)
        p = 13 n (10 n with ``drives=False``) [various units, per column].
    """
    model.require_one_dof("joint_torque_regressor")
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    qdd = joint_vector(model, qdd, "qdd")
    g = gravity_vector(model, gravity)
    Y = np.empty((1, model.nv, parameter_count(model, drives)))
    if not regressor_rows(model.kernel_floats, q[None], qd[None], qdd[None], g, drives, Y):
        raise_non_finite(model, q=q, qd=qd, qdd=qdd)
    result: Array = Y[0]
    return result


def joint_torque_regressor_batch(model: RobotModel, q: object, qd: object, qdd: object, *,
                                 gravity: object | None = None, drives: bool = True,
                                 out: Array | None = None) -> Array:
    """:func:`joint_torque_regressor` over N samples: (N, n) inputs give (N, n, p).

    ``out`` (N, n, p), C-contiguous float64, is filled instead of a new array.

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``qdd`` ([batches of samples](core.md#batches-of-samples)); ``drives``
    ([regressors](core.md#regressors)).

    Parameters
    ----------
    out : ndarray of shape (N, n, p), optional
        C-contiguous float64 array filled instead of a new one.

    Returns
    -------
    Y : ndarray of shape (N, n, p)
        A regressor per sample (``out`` if given).
    """
    model.require_one_dof("joint_torque_regressor_batch")
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    QDD = joint_batch(model, qdd, "qdd", Q.shape[0])
    g = gravity_vector(model, gravity)
    shape = (Q.shape[0], model.nv, parameter_count(model, drives))
    if out is None:
        out = np.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise StateError(f"out must be a C-contiguous float64 array of shape {shape}")
    if not regressor_rows(model.kernel_floats, Q, QD, QDD, g, drives, out):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD)
    return out


__all__ = [
    "DRIVE_NAMES",
    "INERTIAL_NAMES",
    "joint_torque_regressor",
    "joint_torque_regressor_batch",
    "parameter_count",
    "parameter_names",
    "parameter_vector",
]
