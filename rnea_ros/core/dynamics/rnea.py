"""Recursive Newton-Euler inverse dynamics (RNEA) and what derives from it.

``tau = ID(q, qd, qdd)`` for a fixed-base kinematic tree: Featherstone's RNEA
(Rigid Body Dynamics Algorithms, Table 5.1; Caron's pseudo-code in
``rnea-caron-blog``) in body coordinates, with

* gravity as a fictitious base acceleration ``a_0 = -g`` (Khalil 2010, after eq. 24);
* external wrenches applied *to* the bodies, subtracted from the body forces
  (Caron: ``f_i = I_i a_i + v_i x* I_i v_i - f_i^ext``; Khalil eq. 25 uses the
  opposite sign, the wrench of the link *on* the environment);
* rotor inertia and friction added to each joint torque (Khalil eq. 31:
  ``Gamma_j = ... + Ia_j qdd_j + Fs_j sign(qd_j) + Fv_j qd_j``);
* optionally the internal joint wrenches (Barman 2020, eq. 2.1-2.2: the force
  and moment transmitted through each joint, ``F_p``/``tau_p``).

Shapes: ``q`` (nq,), ``qd, qdd, tau`` (nv,) (``n`` each for 1-DoF joints),
``fext`` (nbodies, 6) as ``[force, torque]`` per body in the body frame at its
origin; batch forms take ``(N, nq)`` / ``(N, nv)``. Units: N m for revolute, N
for prismatic joints; a free-flyer's six entries are the wrench ``[force;
torque]`` on its body, in the body frame (Pinocchio's order). Models with
multi-DoF or mimic joints run the same kernels on their kernel tree
(:mod:`~rnea_ros.core.dynamics.rnea_expanded`).

Kernels: :mod:`~rnea_ros.core.dynamics._rnea_jit` -- each ``FastCall`` below names
its entry (``rnea_call``, ``rnea_general_call``, ``gravity_call``); the batch forms call
``rnea_rows`` / ``gravity_rows`` directly.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import coulomb_signs
from rnea_ros.core._compile import FastCall
from rnea_ros.core._lean import F64_1D, F64_1D_RO, F64_2D_RO, LeanCall
from rnea_ros.core.dynamics import rnea_expanded as expanded
from rnea_ros.core.dynamics._lean_jit import (
    gravity_lean,
    rnea_lean,
    tree_gravity_lean,
    tree_rnea_lean,
)
from rnea_ros.core.dynamics._rnea_jit import (
    gravity_call,
    gravity_rows,
    rnea_call,
    rnea_general_call,
    rnea_rows,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion, base_state
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

_NO_WRENCH = np.zeros((0, 6))
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty  # global lookups are cheaper
_rnea_fast = FastCall(rnea_call)
_rnea_general = FastCall(rnea_general_call)
_gravity_fast = FastCall(gravity_call)
# The signatures the FastCall entries have (the model's arrays and g read-only), so
# the lean entries reuse their compiled code.
_V, _G, _M = F64_1D, F64_1D_RO, F64_2D_RO
_lean_rnea = LeanCall(rnea_lean, (_M, _V, _V, _V, _G, _V))
_lean_tree_rnea = LeanCall(tree_rnea_lean, (_M, _M, _V, _V, _V, _G, _V))
_lean_gravity = LeanCall(gravity_lean, (_M, _V, _G, _V))
_lean_tree_gravity = LeanCall(tree_gravity_lean, (_M, _M, _V, _G, _V))


def rnea(model: RobotModel, q: object, qd: object, qdd: object, *,
         gravity: object | None = None, fext: object | None = None,
         base_motion: BaseMotion | None = None) -> Array:
    """Joint torques ``tau`` (nv,) = ID(q, qd, qdd) with gravity, wrenches, armature, friction.

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``qdd``, ``gravity``, ``fext``,
    ``base_motion`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau : ndarray of shape (nv,)
        Joint torques [N m, N].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> q = np.full(model.nq, 0.3); qd = np.full(model.nv, 0.1)
    >>> tau = rc.rnea(model, q, qd, np.zeros(model.nv))
    >>> bool(np.allclose(tau, rc.nonlinear_effects(model, q, qd)))
    True
    """
    if fext is None and base_motion is None:
        # The 1 kHz path: the lean entry's unboxer accepts C-contiguous float64
        # vectors (TypeError otherwise: the checked path below), the kernel checks
        # the lengths (False: a wrong length or a non-finite result).
        g = model.gravity if gravity is None else gravity_vector(model, gravity)
        tau = _empty(model.nv)
        try:
            if model.expanded:
                ok = _lean_tree_rnea.call(model.kernel_floats, model.kernel_map, q, qd, qdd, g,
                                          tau)
            else:
                ok = _lean_rnea.call(model.kernel_floats, q, qd, qdd, g, tau)
        except TypeError:
            pass
        else:
            if not ok:
                raise_bad_input(model, q=_asc(q), qd=_asc(qd), qdd=_asc(qdd))
            return tau
    # Any other input: made C-contiguous float64 (the entry points need it), then
    # the kernel checks the lengths.
    q, qd, qdd = _asc(q, _f64), _asc(qd, _f64), _asc(qdd, _f64)
    if not q.ndim == qd.ndim == qdd.ndim == 1:
        raise_bad_input(model, q=q, qd=qd, qdd=qdd)
    if model.expanded:
        return expanded.rnea(model, q, qd, qdd, gravity, fext, base_motion)
    tau = _empty(model.nv)
    if fext is None and gravity is None and base_motion is None:
        ok = _rnea_fast.call(model.kernel_floats, q, qd, qdd, model.gravity, tau)
    elif fext is None and base_motion is None:
        ok = _rnea_fast.call(model.kernel_floats, q, qd, qdd, gravity_vector(model, gravity), tau)
    else:
        if q.shape != model.vector_shape or not q.shape == qd.shape == qdd.shape:
            raise_bad_input(model, q=q, qd=qd, qdd=qdd)
        use_fext = fext is not None
        f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
        base = base_state(base_motion, gravity_vector(model, gravity))
        ok = _rnea_general.call(model.kernel_floats, q, qd, qdd, base, f, use_fext, True, tau,
                                _NO_WRENCH, False)
    if not ok:
        raise_bad_input(model, q=q, qd=qd, qdd=qdd)
    return tau


def rnea_with_wrenches(model: RobotModel, q: object, qd: object, qdd: object, *,
                       gravity: object | None = None, fext: object | None = None,
                       base_motion: BaseMotion | None = None) -> tuple[Array, Array]:
    """``(tau (nv,), joint_wrenches (nbodies, 6))``: torques and internal joint wrenches.

    ``joint_wrenches[b]`` is the wrench ``[force, moment]`` that body
    ``parent[b]`` exerts on body ``b`` through its joint, expressed in body
    ``b``'s frame at its origin (on the joint axis) -- Barman's proximal
    reaction ``F_p, tau_p`` (eq. 2.1-2.2). Its projection on the joint axis is
    the actuated part, the rest is carried by the joint's structure.

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``qdd``, ``gravity``, ``fext``,
    ``base_motion`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau : ndarray of shape (nv,)
        :func:`rnea`'s joint torques [N m, N].
    joint_wrenches : ndarray of shape (nbodies, 6)
        ``[force; moment]`` [N, N m] from each body's parent, body frame at its origin.
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    qdd = joint_vector(model, qdd, "qdd")
    base = base_state(base_motion, gravity_vector(model, gravity))
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
    if model.expanded:
        return expanded.general(model, q, qd, qdd, base, f if use_fext else None, True, True)
    tau = np.empty(model.nv)
    wrenches = np.empty((model.nv, 6))
    if not _rnea_general.call(model.kernel_floats, q, qd, qdd, base, f, use_fext,
                              True, tau, wrenches, True):
        raise_non_finite(model, q=q, qd=qd, qdd=qdd)
    return tau, wrenches


def gravity_torques(model: RobotModel, q: object, *, gravity: object | None = None,
                    base_motion: BaseMotion | None = None) -> Array:
    """Generalized gravity ``g(q)`` (nv,): the torques that hold the robot still.

    With ``base_motion``, the torques that hold the joints still *relative to a
    moving base*: ``rnea(q, 0, 0)`` started from the base's motion (Khalil 2010
    §7.1), which adds the base's acceleration and rotation to gravity.

    Arguments as in Conventions: ``model``, ``q``, ``gravity``, ``base_motion``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    g : ndarray of shape (nv,)
        Torques holding the robot still [N m, N].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> q, zero = np.full(model.nq, 0.3), np.zeros(model.nv)
    >>> bool(np.allclose(rc.gravity_torques(model, q), rc.rnea(model, q, zero, zero)))
    True
    """
    g = model.gravity if gravity is None else gravity_vector(model, gravity)
    if base_motion is None:  # the lean path, as in rnea
        tau = _empty(model.nv)
        try:
            if model.expanded:
                ok = _lean_tree_gravity.call(model.kernel_floats, model.kernel_map, q, g, tau)
            else:
                ok = _lean_gravity.call(model.kernel_floats, q, g, tau)
        except TypeError:
            pass
        else:
            if not ok:
                raise_bad_input(model, q=_asc(q))
            return tau
    q = _asc(q, _f64)
    if q.ndim != 1:
        raise_bad_input(model, q=q)
    if model.expanded:
        if base_motion is None:
            return expanded.gravity_torques(model, q, g)
        q = joint_vector(model, q, "q")
        zeros = np.zeros(model.nv)
        return expanded.general(model, q, zeros, zeros, base_state(base_motion, g), None,
                                False, False)[0]
    tau = _empty(model.nv)
    if base_motion is not None:
        if q.shape != model.vector_shape:
            raise_bad_input(model, q=q)
        zeros = np.zeros(model.nv)
        ok = _rnea_general.call(model.kernel_floats, q, zeros, zeros, base_state(base_motion, g),
                                _NO_WRENCH, False, False, tau, _NO_WRENCH, False)
    else:
        ok = _gravity_fast.call(model.kernel_floats, q, g, tau)
    if not ok:
        raise_bad_input(model, q=q)
    return tau


def nonlinear_effects(model: RobotModel, q: object, qd: object, *,
                      gravity: object | None = None,
                      base_motion: BaseMotion | None = None) -> Array:
    """``h(q, qd) = C(q, qd) qd + g(q)`` (nv,): rigid-body bias torques, no friction
    (on a moving base: also the base's motion, as :func:`rnea` with ``qdd = 0``).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``gravity``, ``base_motion``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    h : ndarray of shape (nv,)
        ``C(q, qd) qd + g(q)`` [N m, N].
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    base = base_state(base_motion, gravity_vector(model, gravity))
    zeros = np.zeros(model.nv)
    if model.expanded:
        return expanded.general(model, q, qd, zeros, base, None, False, False)[0]
    tau = np.empty(model.nv)
    if not _rnea_general.call(model.kernel_floats, q, qd, zeros, base, _NO_WRENCH,
                              False, False, tau, _NO_WRENCH, False):
        raise_non_finite(model, q=q, qd=qd)
    return tau


def friction_torques(model: RobotModel, qd: object) -> Array:
    """Joint friction ``Fs clip(qd / b, -1, 1) + Fv qd`` (nv,) (Khalil eq. 31, ``b`` =
    ``model.coulomb_band``; ``b = 0``: ``Fs sign(qd)``), as the kernels compute it.

    Arguments as in Conventions: ``model``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    ndarray of shape (nv,)
        The friction [N m, N].
    """
    qd = joint_vector(model, qd, "qd")
    return np.asarray(model.coulomb * coulomb_signs(qd, model.coulomb_band)
                      + model.viscous * qd, dtype=np.float64)


def rnea_batch(model: RobotModel, q: object, qd: object, qdd: object, *,
               gravity: object | None = None) -> Array:
    """:func:`rnea` over N samples: ``q`` (N, nq), ``qd, qdd`` (N, nv) give ``tau`` (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``qdd`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    tau : ndarray of shape (N, nv)
        Joint torques per sample.

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> Q = np.full((5, model.nq), 0.3); V = np.full((5, model.nv), 0.1)
    >>> tau = rc.rnea_batch(model, Q, V, np.zeros_like(V))
    >>> tau.shape, bool(np.allclose(tau[2], rc.rnea(model, Q[2], V[2], np.zeros(model.nv))))
    ((5, 7), True)
    """
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    QDD = joint_batch(model, qdd, "qdd", Q.shape[0])
    g = gravity_vector(model, gravity)
    if model.expanded:
        return expanded.rnea_batch(model, Q, QD, QDD, g, True)
    tau = np.empty_like(Q)
    if not rnea_rows(model.kernel_floats, Q, QD, QDD, g, True, tau):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD)
    return tau


def gravity_batch(model: RobotModel, q: object, *, gravity: object | None = None) -> Array:
    """:func:`gravity_torques` over N samples: ``q`` (N, nq) gives (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    ndarray of shape (N, nv)
        ``g(q)`` per sample [N m, N].
    """
    Q = joint_batch(model, q, "q")
    if model.expanded:
        return expanded.gravity_batch(model, Q, gravity_vector(model, gravity))
    tau = np.empty_like(Q)
    if not gravity_rows(model.kernel_floats, Q, gravity_vector(model, gravity), tau):
        raise_non_finite(model, q=Q)
    return tau


def nonlinear_effects_batch(model: RobotModel, q: object, qd: object, *,
                            gravity: object | None = None) -> Array:
    """:func:`nonlinear_effects` over N samples: ``q`` (N, nq), ``qd`` (N, nv) give (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    h : ndarray of shape (N, nv)
        Bias torques per sample.
    """
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    if model.expanded:
        return expanded.rnea_batch(model, Q, QD, np.zeros_like(QD),
                                   gravity_vector(model, gravity), False)
    tau = np.empty_like(Q)
    if not rnea_rows(model.kernel_floats, Q, QD, np.zeros_like(Q),
                     gravity_vector(model, gravity), False, tau):
        raise_non_finite(model, q=Q, qd=QD)
    return tau


__all__ = [
    "coulomb_signs",
    "friction_torques",
    "gravity_batch",
    "gravity_torques",
    "nonlinear_effects",
    "nonlinear_effects_batch",
    "rnea",
    "rnea_batch",
    "rnea_with_wrenches",
]
