"""Generalized momentum ``p = M(q) qd`` and the observer's bias ``beta = g(q) - C(q, qd)^T qd``
in O(n), without forming ``M`` or ``C``.

The momentum observer (De Luca & Mattone 2003; Haddadin, De Luca & Albu-Schaeffer,
T-RO 2017) integrates ``dp/dt = tau - beta(q, qd) + tau_ext``: it needs
``p`` and ``beta`` at every sample. ``C`` must be a Christoffel-consistent
factorisation (``dM/dt = C + C^T``, the one of :mod:`~.coriolis`, Echeandia &
Wensing 2021; Pinocchio's ``computeCoriolisMatrix``): then ``C^T qd = dM/dt qd - C qd``
is the same vector for every such ``C`` (``dM/dt qd`` and ``C qd`` are unique), and
it equals ``dT/dq``, the kinetic energy's partial derivative.

**Derivation** (spatial vectors in any common frame; Featherstone's notation). Joint
``i`` has motion subspace ``S_i`` fixed in its body, so ``dS_i/dt = v_i x S_i``
(``v_i`` the body's velocity; for a multi-DoF joint the velocity of the joint's
body, after the whole joint). The subtree of ``i`` has spatial momentum
``h_i = sum_{j in subtree(i)} I_j v_j`` and, by Newton-Euler on each body,
``dh_i/dt = sum_j f_j`` (the net wrenches). Then

    p_i = S_i^T h_i + Ia_i qd_i                                         (1)
    dp_i/dt = (v_i x S_i)^T h_i + S_i^T sum_j f_j + Ia_i qdd_i
            = (v_i x S_i)^T h_i + tau_i - g_i                           (2)

(RNEA: ``tau_i = S_i^T sum_j (f_j + gravity) + Ia_i qdd_i``). With
``dp/dt = M qdd + dM/dt qd`` and ``tau = M qdd + C qd + g``, (2) gives

    (C^T qd)_i = (dM/dt qd - C qd)_i = (v_i x S_i)^T h_i                 (3)
    beta_i = g_i - (v_i x S_i)^T h_i,   g_i = S_i^T sum_j I_j a_j^g     (4)

with ``a^g`` the bodies' accelerations at rest under gravity (``a_0 = -g``, Khalil
2010 after eq. 24; RNEA with ``qd = qdd = 0``). One forward pass (poses, ``v_i``,
``a^g_i``), one backward pass accumulating ``h_i`` and ``f^g_i = sum I_j a^g_j`` in
body coordinates (the pairings in (1), (3), (4) are frame invariant): O(n), the cost
of one RNEA. Armature is rotor kinetic energy ``1/2 Ia qd^2``: it enters ``p`` and
not ``beta`` (no ``q`` dependence). Friction is in neither (the observer subtracts
the model's, :mod:`rnea_ros.control.contact`).

Multi-DoF joints run on the kernel tree (:mod:`rnea_ros.core.expansion`): each
sub-row's ``S`` is a body-fixed column, so ``dS = v_body x S`` with the body's
velocity (the last sub-row's; sub-rows are coincident frames with massless
intermediates, so their ``h`` is the body's); this is Pinocchio's convention for
``computeCoriolisMatrix`` on free-flyer, planar and spherical joints. Mimic
followers: ``T(q, v) = T_k(G q + o, G v)``, so ``p = G^T p_k``,
``beta = G^T beta_k``.

Closed-loop mechanisms (:class:`~rnea_ros.core.coupling.loops.ClosedLoopModel`)
and elastic models are refused with a :class:`~rnea_ros.core.errors.ModelError`:
their momentum lives in the reduced coordinates (``p = G^T M G qd_a``) whose
``C`` this module does not build.

Shapes: ``q`` (nq,), ``qd`` (nv,) -> (nv,) each; batch ``(N, nq)``, ``(N, nv)`` ->
``(N, nv)``. Units: N m s / N m (revolute), N s / N (prismatic); a free-flyer's
six entries are the body's momentum / wrench ``[linear; angular]``, body frame.

Kernels: :mod:`~rnea_ros.core.dynamics._momentum_bias_jit` (``momentum_call``,
``momentum_rows``, ``momentum_tree_rows``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.dynamics._momentum_bias_jit import (
    momentum_call,
    momentum_rows,
    momentum_tree_rows,
)
from rnea_ros.core.errors import ModelError
from rnea_ros.core.inputs import (
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

_momentum_fast = FastCall(momentum_call)


def require_tree(model: object, what: str) -> RobotModel:
    """``model`` if it is a :class:`RobotModel` (a kinematic tree), else a
    :class:`ModelError` saying why ``what`` does not apply to it."""
    if isinstance(model, RobotModel):
        return model
    kind = type(model).__name__
    if kind == "ClosedLoopModel":
        reason = ("a closed-loop mechanism's momentum is p = G^T M G qd_a in its active "
                  "coordinates, whose Christoffel-consistent C is not built here; "
                  "pass its spanning tree (model.tree) only if the loops carry no load")
    elif kind == "ElasticModel":
        reason = ("an elastic model's momentum includes the motor coordinates; "
                  "use its link model (model.links) for a link-side observer")
    else:
        reason = "expected a RobotModel (rc.load_urdf, rc.from_dh, rc.from_mdh)"
    raise ModelError(f"{what}: not available for a {kind}: {reason}")


def momentum_and_bias(model: RobotModel, q: object, qd: object, *,
                      gravity: object | None = None) -> tuple[Array, Array]:
    """``(p, beta)``: ``p = M(q) qd`` (nv,) (armature included) and
    ``beta = g(q) - C(q, qd)^T qd`` (nv,), eq. (1) and (4) of the module docstring.

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    p : ndarray of shape (nv,)
        ``M(q) qd`` [N m s].
    beta : ndarray of shape (nv,)
        ``g(q) - C(q, qd)^T qd`` [N m].
    """
    model = require_tree(model, "momentum_and_bias")
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    g = gravity_vector(model, gravity)
    if model.expanded:
        P, B = _tree(model, q[None, :], qd[None, :], g)
        return P[0], B[0]
    p, beta = np.empty(model.nv), np.empty(model.nv)
    if not _momentum_fast.call(model.kernel_floats, q, qd, g, p, beta):
        raise_non_finite(model, q=q, qd=qd)
    return p, beta


def momentum_bias(model: RobotModel, q: object, qd: object, *,
                  gravity: object | None = None) -> Array:
    """``beta = g(q) - C(q, qd)^T qd`` (nv,) with ``C`` Christoffel-consistent
    (``dM/dt = C + C^T``), in O(n): eq. (4) of the module docstring.

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    beta : ndarray of shape (nv,)
        ``g(q) - C(q, qd)^T qd`` [N m, N].
    """
    return momentum_and_bias(model, q, qd, gravity=gravity)[1]


def momentum_and_bias_batch(model: RobotModel, q: object, qd: object, *,
                            gravity: object | None = None) -> tuple[Array, Array]:
    """:func:`momentum_and_bias` over N samples in one compiled call: ``q`` (N, nq),
    ``qd`` (N, nv) give ``(P, B)``, each (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    P : ndarray of shape (N, nv)
        ``M qd`` per sample.
    B : ndarray of shape (N, nv)
        ``beta`` per sample.
    """
    model = require_tree(model, "momentum_and_bias_batch")
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    g = gravity_vector(model, gravity)
    if model.expanded:
        return _tree(model, Q, QD, g)
    P, B = np.empty_like(QD), np.empty_like(QD)
    if not momentum_rows(model.kernel_floats, Q, QD, g, P, B):
        raise_non_finite(model, q=Q, qd=QD)
    return P, B


def _tree(model: RobotModel, Q: Array, QD: Array, g: Array) -> tuple[Array, Array]:
    """The batch on the kernel tree (multi-DoF and mimic joints)."""
    P, B = np.empty((Q.shape[0], model.nv)), np.empty((Q.shape[0], model.nv))
    if not momentum_tree_rows(model.kernel_floats, model.kernel_map, np.ascontiguousarray(Q),
                              np.ascontiguousarray(QD), g, P, B):
        raise_non_finite(model, q=Q, qd=QD)
    return P, B


__all__ = ["momentum_and_bias", "momentum_and_bias_batch", "momentum_bias", "require_tree"]
