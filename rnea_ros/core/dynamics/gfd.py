"""Generalized-force derivatives: ``tau_dot`` (needs the jerk) and ``tau_ddot``
(needs the snap) by recursive Newton-Euler, in one pass with ``tau``.

Guarino Lo Bianco & Fantini (2009) differentiate the Luh-Walker-Paul RNEA in
modified-DH frames: forward recursion of angular/linear velocity,
acceleration and **jerk** (eq. 3-9), backward recursion of forces, moments and
their derivatives (eq. 10-19), projection with the ``omega x n`` term (eq.
20-21). We do the same in spatial algebra, in body coordinates, for trees and
any joint axis, and one order further.

Differentiating the body-coordinate vectors of Featherstone's RNEA with
``d/dt X_i = -(S_i qd_i) x X_i`` and writing ``s1..s4 = S q^(1..4)``,
``A = X a_p``, ``J = X j_p``, ``K = X k_p`` (true accelerations, so that the
body-coordinate derivative of ``v`` is ``a``, of ``a`` is ``j``...)::

    v = X v_p + s1
    a = A + s2 + v x s1
    j = J + A x s1 + s3 + a x s1 + v x s2                              (jerk)
    k = K + 2 J x s1 + (A x s1) x s1 + A x s2 + s4 + j x s1 + 2 a x s2 + v x s3

Gravity, the fictitious base acceleration ``-g``, is carried separately in
body coordinates with its own derivatives (it is constant in the world, so
only the rotation of the frames changes it)::

    G = X G_p,   G_dot = X G_dot_p + G x s1,
    G_ddot = X G_ddot_p + G_dot x s1 + G x s2 + (G_dot - G x s1) x s1
    f      = I (a + G) + v x* I v - f_e
    f_dot  = I (j + G_dot) + a x* I v + v x* I a - f_e_dot
    f_ddot = I (k + G_ddot) + j x* I v + 2 a x* I a + v x* I j - f_e_ddot

and backwards, with ``F`` the force transmitted through joint ``i``::

    F_p      += X^T F
    F_dot_p  += X^T (F_dot + s1 x* F)                     (the paper's omega x n term)
    F_ddot_p += X^T (F_ddot + 2 s1 x* F_dot + s1 x* (s1 x* F) + s2 x* F)
    tau^(m) = S^T F^(m) + Ia q^(m+2) + Fv q^(m+1)          (m = 0, 1, 2)

Rotor inertia and viscous friction are included (their derivatives are the
last two terms); Coulomb friction ``Fs sign(qd)`` has zero derivative wherever
``qd != 0`` and is left out of the derivatives (with ``model.coulomb_band`` =
``b`` > 0, ``tau`` has ``Fs clip(qd / b, -1, 1)``; its slope ``Fs / b`` inside the
band is left out too). Shapes: joint vectors (n,),
wrenches and their derivatives (n, 6) ``[force, torque]`` per body in its
frame; batch forms (N, n). Mimic joints (1-DoF followers, no multi-DoF joint) run on
the kernel tree at ``q_k = m q + o``, ``x_k = G x`` for every derivative, and fold
back as ``tau^(m) = G^T tau_k^(m)`` (:mod:`rnea_ros.core.dynamics.derivatives` does
the same); wrenches are then one per body, followers included (nbodies, 6).

Kernels: :mod:`~rnea_ros.core.dynamics._gfd_jit` (``gfd_pass`` over the work array
``GW_*`` of :mod:`rnea_ros.core._layout`; entries ``gfd_call``, ``gfd_general_call``,
``gfd_batch``) and, for the 1 kHz path, ``gfd_lean`` of
:mod:`~rnea_ros.core.dynamics._lean_jit` (``gfd_call`` on borrowed arrays).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core._lean import F64_1D, F64_1D_RO, F64_2D_RO, LeanCall
from rnea_ros.core.dynamics._gfd_jit import (
    gfd_batch,
    gfd_call,
    gfd_general_call,
)
from rnea_ros.core.dynamics._lean_jit import gfd_lean
from rnea_ros.core.expansion import fold_forces, mimic_rows
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def _wrench_or_empty(model: RobotModel, x: object | None, name: str) -> Array:
    return body_wrenches(model, x, name) if x is not None else np.zeros((model.nbodies, 6))


_gfd_fast_call = FastCall(gfd_call)
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty
# The signature the FastCall entry has (the model's arrays and g read-only), so the lean
# entry reuses its compiled code (as rnea's, core/_lean.py).
_V = F64_1D
_lean_gfd = LeanCall(gfd_lean, (F64_2D_RO, _V, _V, _V, _V, F64_1D_RO, _V, _V))


def rnea_time_derivative(model: RobotModel, q: object, qd: object, qdd: object, qddd: object, *,
                         gravity: object | None = None, fext: object | None = None,
                         fext_dot: object | None = None) -> tuple[Array, Array]:
    """``(tau, tau_dot)`` (n,) from positions to jerks; ``fext``/``fext_dot`` (n, 6).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``qdd``, ``qddd``, ``gravity``, ``fext``,
    ``fext_dot`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau, tau_dot : ndarray of shape (nv,)
        Torques [N m] and their time derivative [N m/s].
    """
    if fext is None and fext_dot is None and not model.expanded:
        # The 1 kHz path, as rnea()'s: the lean entry's unboxer accepts C-contiguous
        # float64 vectors (TypeError otherwise: the checked path below), the kernel
        # checks the lengths (False: a wrong length or a non-finite result).
        g = model.gravity if gravity is None else gravity_vector(model, gravity)
        tau, tau_dot = _empty(model.nv), _empty(model.nv)
        try:
            ok = _lean_gfd.call(model.kernel_floats, q, qd, qdd, qddd, g, tau, tau_dot)
        except TypeError:
            pass
        else:
            if not ok:
                raise_bad_input(model, q=_asc(q), qd=_asc(qd), qdd=_asc(qdd), qddd=_asc(qddd))
            return tau, tau_dot
        # Any other input: made C-contiguous float64 (the entry point needs it).
        q, qd, qdd, qddd = _asc(q, _f64), _asc(qd, _f64), _asc(qdd, _f64), _asc(qddd, _f64)
        if q.ndim == qd.ndim == qdd.ndim == qddd.ndim == 1:
            if _gfd_fast_call.call(model.kernel_floats, q, qd, qdd, qddd, g, tau, tau_dot):
                return tau, tau_dot
        raise_bad_input(model, q=q, qd=qd, qdd=qdd, qddd=qddd)
    tau, tau_dot, _ = _evaluate(model, q, qd, qdd, qddd, None, gravity, fext, fext_dot, None)
    return tau, tau_dot


def rnea_second_time_derivative(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
                                qdddd: object, *, gravity: object | None = None,
                                fext: object | None = None, fext_dot: object | None = None,
                                fext_ddot: object | None = None) -> tuple[Array, Array, Array]:
    """``(tau, tau_dot, tau_ddot)`` (n,) from positions to snaps (4th derivatives).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``qdd``, ``qddd``, ``qdddd``,
    ``gravity``, ``fext``, ``fext_dot`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    fext_ddot : array_like of shape (nbodies, 6), optional
        Second time derivatives of ``fext`` [N/s^2, N m/s^2] (``None``: zero).

    Returns
    -------
    tau, tau_dot, tau_ddot : ndarray of shape (nv,)
        Torques [N m] and their first two time derivatives [N m/s, N m/s^2].
    """
    return _evaluate(model, q, qd, qdd, qddd, qdddd, gravity, fext, fext_dot, fext_ddot)


def _evaluate(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
              qdddd: object | None, gravity: object | None, fext: object | None,
              fext_dot: object | None, fext_ddot: object | None) -> tuple[Array, Array, Array]:
    model.require_one_dof("rnea_time_derivative/rnea_second_time_derivative", mimic=True)
    second = qdddd is not None
    args = {"q": joint_vector(model, q, "q"), "qd": joint_vector(model, qd, "qd"),
            "qdd": joint_vector(model, qdd, "qdd"), "qddd": joint_vector(model, qddd, "qddd")}
    if second:
        args["qdddd"] = joint_vector(model, qdddd, "qdddd")
    use_fext = any(x is not None for x in (fext, fext_dot, fext_ddot))
    fe, fe_dot, fe_ddot = (_wrench_or_empty(model, x, name) for x, name in
                           ((fext, "fext"), (fext_dot, "fext_dot"), (fext_ddot, "fext_ddot")))
    x = mimic_rows(model, *args.values())
    tau, tau_dot, tau_ddot = (np.empty(x[0].shape[0]) for _ in range(3))
    if not gfd_general_call(model.kernel_floats, x[0], x[1], x[2], x[3], x[-1],
                            gravity_vector(model, gravity), fe, fe_dot, fe_ddot, use_fext,
                            second, tau, tau_dot, tau_ddot):
        raise_non_finite(model, **args)
    tau, tau_dot, tau_ddot = fold_forces(model, tau, tau_dot, tau_ddot)
    return tau, tau_dot, tau_ddot


def rnea_time_derivative_batch(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
                               *, gravity: object | None = None) -> tuple[Array, Array]:
    """:func:`rnea_time_derivative` over N samples: (N, n) inputs give two (N, n) arrays.

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``qdd``, ``qddd`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    tau, tau_dot : ndarray of shape (N, nv)
        Per sample.
    """
    model.require_one_dof("rnea_time_derivative_batch", mimic=True)
    Q = joint_batch(model, q, "q")
    QD, QDD, QDDD = (joint_batch(model, x, name, Q.shape[0])
                     for x, name in ((qd, "qd"), (qdd, "qdd"), (qddd, "qddd")))
    x = mimic_rows(model, Q, QD, QDD, QDDD)
    TAU, TAU_D = np.empty_like(x[0]), np.empty_like(x[0])
    if not gfd_batch(model.kernel_floats, x[0], x[1], x[2], x[3], x[3],
                     gravity_vector(model, gravity), False, TAU, TAU_D, TAU_D):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD, qddd=QDDD)
    TAU, TAU_D = fold_forces(model, TAU, TAU_D)
    return TAU, TAU_D


def rnea_second_time_derivative_batch(model: RobotModel, q: object, qd: object, qdd: object,
                                      qddd: object, qdddd: object, *,
                                      gravity: object | None = None) -> tuple[Array, Array, Array]:
    """:func:`rnea_second_time_derivative` over N samples: (N, n) inputs give three (N, n).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``qdd``, ``qddd``, ``qdddd`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    tau, tau_dot, tau_ddot : ndarray of shape (N, nv)
        Per sample.
    """
    model.require_one_dof("rnea_second_time_derivative_batch", mimic=True)
    Q = joint_batch(model, q, "q")
    QD, QDD, QDDD, QDDDD = (joint_batch(model, x, name, Q.shape[0]) for x, name in
                            ((qd, "qd"), (qdd, "qdd"), (qddd, "qddd"), (qdddd, "qdddd")))
    x = mimic_rows(model, Q, QD, QDD, QDDD, QDDDD)
    TAU, TAU_D, TAU_DD = np.empty_like(x[0]), np.empty_like(x[0]), np.empty_like(x[0])
    if not gfd_batch(model.kernel_floats, x[0], x[1], x[2], x[3], x[4],
                     gravity_vector(model, gravity), True, TAU, TAU_D, TAU_DD):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD, qddd=QDDD, qdddd=QDDDD)
    TAU, TAU_D, TAU_DD = fold_forces(model, TAU, TAU_D, TAU_DD)
    return TAU, TAU_D, TAU_DD
