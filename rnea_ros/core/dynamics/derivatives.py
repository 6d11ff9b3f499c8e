"""Analytic sensitivities of inverse dynamics: ``dtau/dq``, ``dtau/dqd``, ``M``, the
internal joint wrenches' derivatives, and the sensitivities of ``tau_dot``.

* :func:`rnea_derivatives` -- ``(dtau/dq, dtau/dqd, dtau/dqdd = M)`` (n, n), the layout of
  Pinocchio's ``computeRNEADerivatives``: row ``i`` is ``tau_i``, column ``k`` the
  variable ``q_k``. One O(n d) recursion (d: depth of the tree), not n RNEA calls,
  derived in the kernel module :mod:`rnea_ros.core.dynamics._derivatives_jit`.
* :func:`joint_wrench_derivatives` -- the wrenches every joint transmits (exactly
  :func:`~rnea_ros.core.dynamics.rnea.rnea_with_wrenches`' ``[force, moment]`` onto
  body ``i`` in body ``i``'s frame; Barman 2020 eq. 2.1-2.2) and their derivatives
  w.r.t. ``q, qd, qdd`` (Barman ch. III, step 9: ``F_jp,i``, ``tau_jp,i``, ``,i'``,
  ``,i''``, eq. 3.72-3.91), so that joint reaction forces can be optimisation
  constraints.
* :func:`rnea_time_derivative_sensitivities` -- ``tau_dot`` from the gfd recursion
  (:func:`~rnea_ros.core.dynamics.gfd.rnea_time_derivative`) and its derivatives
  w.r.t. ``q, qd, qdd, qddd``. With ``x = (q, qd, qdd)`` and ``tau_dot = tau_x(x) x_dot``,
  symmetry of second derivatives gives::

      d tau_dot/d q    = d/dt (dtau/dq)
      d tau_dot/d qd   = d/dt (dtau/dqd) + dtau/dq
      d tau_dot/d qdd  = d/dt M + dtau/dqd         (d/dt M = M_dot)
      d tau_dot/d qddd = M

  where ``d/dt`` is the derivative along the motion. It is evaluated exactly
  (to rounding, no truncation error) by running the same analytic kernel once
  in complex arithmetic at ``x + i h x_dot`` (complex step, Martins et al. 2003).

Drive terms (Khalil eq. 31) are included as in :func:`~rnea_ros.core.dynamics.rnea.rnea`:
armature on the diagonal of ``M``; viscous friction ``Fv`` on the diagonal of
``dtau/dqd``; Coulomb friction ``Fs sign(qd)`` contributes nothing (its
derivative is 0 wherever ``qd != 0``; at ``qd = 0`` it is not differentiable and
0 is returned). With a Coulomb band (``model.coulomb_band`` = ``b`` > 0) the
law is ``Fs clip(qd / b, -1, 1)``, whose slope ``Fs / b`` for ``|qd| < b`` is also
left out. External wrenches ``fext`` (n, 6) are ``[force, torque]`` fixed
in each body's frame (they turn with the body, which the ``q`` derivatives
account for). Fixed-base trees only (no floating base yet).

Mimic joints (1-DoF followers ``q_f = m q_l + o``; no multi-DoF joint): the kernels
run on the kernel tree, one row per body, at ``q_k = m q + o``, ``x_k = G x`` for
every derivative ``x`` (:func:`~rnea_ros.core.expansion.mimic_rows`), and the
results fold back by the chain rule: ``tau = G^T tau_k``, ``dtau/dq = G^T (dtau_k/dq_k)
G`` (the same for ``qd, qdd, qddd``), ``dW/dq = (dW/dq_k) G`` with the wrenches one
per body (followers included, as :func:`~rnea_ros.core.dynamics.rnea.rnea_with_wrenches`).
Followers carry no drive, so the leaders' armature and friction fold back unchanged.

Kernels: :mod:`~rnea_ros.core.dynamics._derivatives_jit` (``derivatives_pass``,
``tau_dot_sensitivities_pass``; entries ``derivatives_call`` behind the ``FastCall``
below, ``derivatives_general_call``, ``derivatives_rows``, ``sensitivities_call``,
``sensitivities_rows``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.dynamics._derivatives_jit import (
    derivatives_call,
    derivatives_general_call,
    derivatives_rows,
    sensitivities_call,
    sensitivities_rows,
)
from rnea_ros.core.errors import StateError
from rnea_ros.core.expansion import mimic_rows, velocity_matrix
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
AnyArray = NDArray[Any]  # float64, or complex128 for the complex step

_NO_W2 = np.zeros((0, 6))
_NO_W3 = np.zeros((0, 6, 0))
_NO_W3B = np.zeros((1, 0, 6))


_fast = FastCall(derivatives_call)
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty


def rnea_derivatives(model: RobotModel, q: object, v: object, a: object, *,
                     gravity: object | None = None, fext: object | None = None
                     ) -> tuple[Array, Array, Array]:
    """``(dtau/dq, dtau/dqd, M)``, each (n, n), of :func:`~rnea_ros.core.dynamics.rnea.rnea`.

    ``v, a`` are ``qd, qdd``. ``M`` includes armature (as
    :func:`~rnea_ros.core.dynamics.crba.mass_matrix`), ``dtau/dqd`` the viscous
    friction; Coulomb friction has zero derivative (see the module docstring).
    ``gravity`` (3,) overrides ``model.gravity``; ``fext`` (n, 6) ``[force, torque]``
    applied to each body in its frame. The three arrays are views of one (3, n, n) block.

    Arguments as in Conventions: ``model``, ``q``, ``v``, ``a``, ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    dtau_dq, dtau_dqd, M : ndarray of shape (nv, nv)
        Views of one (3, nv, nv) block.
    """
    if fext is None and not model.expanded:  # the lean path: the kernel checks the lengths
        q, v, a = _asc(q, _f64), _asc(v, _f64), _asc(a, _f64)
        if q.ndim == v.ndim == a.ndim == 1:
            n = model.nv
            out = _empty((3, n, n))
            g = model.gravity if gravity is None else gravity_vector(model, gravity)
            if _fast.call(model.kernel_floats, q, v, a, g, out):
                return out[0], out[1], out[2]
        raise_bad_input(model, q=q, qd=v, qdd=a)
    _, dq, dv, M, _, _, _, _ = _general(model, q, v, a, gravity, fext, False)
    return dq, dv, M


def joint_wrench_derivatives(model: RobotModel, q: object, v: object, a: object, *,
                             gravity: object | None = None, fext: object | None = None
                             ) -> tuple[Array, Array, Array, Array]:
    """``(W (n, 6), dW/dq, dW/dqd, dW/dqdd (n, 6, n))``: internal joint wrenches and sensitivities.

    ``W[i]`` is the wrench ``[force, moment]`` that body ``parent[i]`` exerts on
    body ``i`` through joint ``i``, in body ``i``'s frame at its origin -- exactly
    the second output of :func:`~rnea_ros.core.dynamics.rnea.rnea_with_wrenches`.
    ``dW_dq[i, r, k] = d W[i, r] / d q_k``. Armature and friction act in the
    drive, not through the joint structure, so they do not appear here. With mimic
    joints, ``W`` has a row per body (followers included): (nbodies, 6), and
    ``dW/dx`` (nbodies, 6, n).

    Arguments as in Conventions: ``model``, ``q``, ``v``, ``a``, ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    W : ndarray of shape (n, 6)
        Joint wrenches ``[force; moment]`` [N, N m], body frame at its origin.
    dW_dq, dW_dqd, dW_dqdd : ndarray of shape (n, 6, n)
        Their sensitivities.
    """
    _, _, _, _, W, dWq, dWv, dWa = _general(model, q, v, a, gravity, fext, True)
    return W, dWq, dWv, dWa


def _general(model: RobotModel, q: object, v: object, a: object, gravity: object | None,
             fext: object | None, want_wrenches: bool
             ) -> tuple[Array, Array, Array, Array, Array, Array, Array, Array]:
    model.require_one_dof("rnea_derivatives/joint_wrench_derivatives", mimic=True)
    q = joint_vector(model, q, "q")
    v = joint_vector(model, v, "qd")
    a = joint_vector(model, a, "qdd")
    g = gravity_vector(model, gravity)
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else _NO_W2
    qk, vk, ak = mimic_rows(model, q, v, a)
    n = qk.shape[-1]
    tau = np.empty(n)
    dq, dv, M = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    if want_wrenches:
        W = np.empty((n, 6))
        dWq, dWv, dWa = np.zeros((n, 6, n)), np.zeros((n, 6, n)), np.zeros((n, 6, n))
    else:
        W, dWq, dWv, dWa = _NO_W2, _NO_W3, _NO_W3, _NO_W3
    if not derivatives_general_call(model.kernel_floats, qk, vk, ak, g, f, use_fext, True, tau,
                                    dq, dv, M, want_wrenches, W, dWq, dWv, dWa):
        raise_non_finite(model, q=q, qd=v, qdd=a)
    if not model.expanded:
        return tau, dq, dv, M, W, dWq, dWv, dWa
    G = velocity_matrix(model)
    dq, dv, M = (_fold(G, x) for x in (dq, dv, M))
    if want_wrenches:
        dWq, dWv, dWa = dWq @ G, dWv @ G, dWa @ G
    return tau @ G, dq, dv, M, W, dWq, dWv, dWa


def _fold(G: Array, K: Array) -> Array:
    """``G^T K G`` (n, n) or (N, n, n) from a kernel-row Jacobian ``K`` (..., nk, nk)."""
    return np.ascontiguousarray(G.T @ K @ G)


def _batch_inputs(model: RobotModel, q: object, v: object, a: object
                  ) -> tuple[Array, Array, Array]:
    model.require_one_dof("the derivatives' batch forms", mimic=True)
    Q = joint_batch(model, q, "q")
    return Q, joint_batch(model, v, "qd", Q.shape[0]), joint_batch(model, a, "qdd", Q.shape[0])


def _batch_wrenches(model: RobotModel, fext: object | None, samples: int) -> Array:
    """``fext`` for the batch kernel: (1, 0, 6) none, (1, n, 6) shared, (N, n, 6) per sample."""
    if fext is None:
        return _NO_W3B
    a = np.ascontiguousarray(fext, dtype=np.float64)
    if a.ndim != 3:
        return body_wrenches(model, a)[None]
    nb = model.nbodies
    if a.shape != (samples, nb, 6):
        raise StateError(f"fext has shape {a.shape}, expected ({nb}, 6) for every "
                         f"sample or ({samples}, {nb}, 6), one per sample")
    for f in a:
        body_wrenches(model, f)  # names a non-finite body
    return a


def _derivative_rows(model: RobotModel, q: object, v: object, a: object, gravity: object | None,
                     fext: object | None, wrenches: bool) -> tuple[Array, Array, Array]:
    """The batch kernel on the kernel tree's rows: ``D`` (3, N, nk, nk) -- ``dtau/dq``,
    ``dtau/dqd``, ``M`` -- and, with ``wrenches``, ``W`` (N, nk, 6) and its three
    sensitivities ``dW`` (3, N, nk, 6, nk) (placeholders otherwise)."""
    Q, V, A = _batch_inputs(model, q, v, a)
    Qk, Vk, Ak = mimic_rows(model, Q, V, A)
    N, n = Qk.shape
    f = _batch_wrenches(model, fext, N)
    D = np.zeros((3, N, n, n))
    W = np.empty((N, n, 6)) if wrenches else np.zeros((1, n, 6))
    dW = np.zeros((3, N if wrenches else 1, n, 6, n))
    if not derivatives_rows(model.kernel_floats, Qk, Vk, Ak, gravity_vector(model, gravity), f,
                            fext is not None, D[0], D[1], D[2], wrenches, W, dW[0], dW[1], dW[2]):
        raise_non_finite(model, q=Q, qd=V, qdd=A)
    return D, W, dW


def rnea_derivatives_batch(model: RobotModel, q: object, v: object, a: object, *,
                           gravity: object | None = None, fext: object | None = None
                           ) -> tuple[Array, Array, Array]:
    """:func:`rnea_derivatives` over N samples: (N, n) inputs give three (N, n, n).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``v``, ``a``, ``fext`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    dtau_dq, dtau_dqd, M : ndarray of shape (N, nv, nv)
        Per sample.
    """
    out, _, _ = _derivative_rows(model, q, v, a, gravity, fext, False)
    if model.expanded:
        G = velocity_matrix(model)
        return _fold(G, out[0]), _fold(G, out[1]), _fold(G, out[2])
    return out[0], out[1], out[2]


def joint_wrench_derivatives_batch(model: RobotModel, q: object, v: object, a: object, *,
                                   gravity: object | None = None, fext: object | None = None
                                   ) -> tuple[Array, Array, Array, Array]:
    """:func:`joint_wrench_derivatives` over N samples: ``W`` (N, n, 6), three (N, n, 6, n).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``v``, ``a``, ``fext`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    W : ndarray of shape (N, n, 6)
        Joint wrenches per sample.
    dW_dq, dW_dqd, dW_dqdd : ndarray of shape (N, n, 6, n)
        Their sensitivities.
    """
    _, W, dW = _derivative_rows(model, q, v, a, gravity, fext, True)
    if model.expanded:
        G = velocity_matrix(model)
        return W, dW[0] @ G, dW[1] @ G, dW[2] @ G
    return W, dW[0], dW[1], dW[2]


def rnea_time_derivative_sensitivities(model: RobotModel, q: object, v: object, a: object,
                                       j: object, *, gravity: object | None = None,
                                       fext: object | None = None, fext_dot: object | None = None
                                       ) -> tuple[Array, Array, Array, Array, Array]:
    """``(tau_dot (n,), d tau_dot/dq, /dqd, /dqdd, /dqddd (n, n))``.

    ``tau_dot`` is :func:`~rnea_ros.core.dynamics.gfd.rnea_time_derivative`'s (jerk ``j``),
    with armature ``Ia qddd`` and viscous ``Fv qdd`` terms; ``fext`` (n, 6) are
    body-frame wrenches and ``fext_dot`` their body-frame rates. See the module
    docstring for the identities used; ``d tau_dot/d qddd`` is ``M`` (with
    armature). The four matrices are views of one (4, n, n) block.

    Arguments as in Conventions: ``model``, ``q``, ``v``, ``a``, ``j``, ``gravity``, ``fext``,
    ``fext_dot`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau_dot : ndarray of shape (nv,)
        Torque rate [N m/s].
    d_dq, d_dqd, d_dqdd, d_dqddd : ndarray of shape (nv, nv)
        Its sensitivities (views of one (4, nv, nv) block).
    """
    model.require_one_dof("rnea_time_derivative_sensitivities", mimic=True)
    q = joint_vector(model, q, "q")
    v = joint_vector(model, v, "qd")
    a = joint_vector(model, a, "qdd")
    j = joint_vector(model, j, "qddd")
    g = gravity_vector(model, gravity)
    use_fext = fext is not None or fext_dot is not None
    nb = model.nbodies
    f = body_wrenches(model, fext) if fext is not None else np.zeros((nb, 6))
    fd = body_wrenches(model, fext_dot, "fext_dot") if fext_dot is not None else np.zeros((nb, 6))
    qk, vk, ak, jk = mimic_rows(model, q, v, a, j)
    n = qk.shape[0]
    tau_dot, out = np.empty(n), np.empty((4, n, n))
    if not sensitivities_call(model.kernel_floats, qk, vk, ak, jk, g, f if use_fext else _NO_W2,
                              fd if use_fext else _NO_W2, use_fext, tau_dot, out):
        raise_non_finite(model, q=q, qd=v, qdd=a, qddd=j)
    if model.expanded:
        G = velocity_matrix(model)
        tau_dot, out = tau_dot @ G, _fold(G, out)
    return tau_dot, out[0], out[1], out[2], out[3]


def rnea_time_derivative_sensitivities_batch(model: RobotModel, q: object, v: object, a: object,
                                             j: object, *, gravity: object | None = None
                                             ) -> tuple[Array, Array, Array, Array, Array]:
    """:func:`rnea_time_derivative_sensitivities` over N samples: (N, n) inputs give
    ``tau_dot`` (N, n) and four (N, n, n).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``v``, ``a``, ``j`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    tau_dot : ndarray of shape (N, nv)
        Per sample.
    d_dq, d_dqd, d_dqdd, d_dqddd : ndarray of shape (N, nv, nv)
        Per sample.
    """
    Q, V, A = _batch_inputs(model, q, v, a)
    J = joint_batch(model, j, "qddd", Q.shape[0])
    Qk, Vk, Ak, Jk = mimic_rows(model, Q, V, A, J)
    N, n = Qk.shape
    tau_dot, out = np.empty((N, n)), np.empty((N, 4, n, n))
    if not sensitivities_rows(model.kernel_floats, Qk, Vk, Ak, Jk, gravity_vector(model, gravity),
                              tau_dot, out):
        raise_non_finite(model, q=Q, qd=V, qdd=A, qddd=J)
    if model.expanded:
        G = velocity_matrix(model)
        tau_dot, out = tau_dot @ G, _fold(G, out)
    return tau_dot, out[:, 0], out[:, 1], out[:, 2], out[:, 3]


__all__ = [
    "joint_wrench_derivatives",
    "joint_wrench_derivatives_batch",
    "rnea_derivatives",
    "rnea_derivatives_batch",
    "rnea_time_derivative_sensitivities",
    "rnea_time_derivative_sensitivities_batch",
]
