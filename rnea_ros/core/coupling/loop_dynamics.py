"""Dynamics of closed-loop mechanisms in the active joints (Khalil 2010 §4).

Inverse dynamics (eq. 55-57): the tree's RNEA at a consistent state
``(q, qd, qdd)`` -- passive rates from eq. 4 and its derivative -- projected
on the active joints,

    tau_a = G^T tau_tree(q, qd, qdd) = tau_tree_a + (dqd_p/dqd_a)^T tau_tree_p,

``G = dq_tr/dq_a`` (eq. 56). ``tau_tree`` includes gravity and, as in Khalil,
the armature and friction of every tree joint (eq. 31), the passive joints'
included (a passive joint's bearing friction loads the motors through
``G^T``). The same solve gives the constraint wrenches at the cut joints:
``tau_tree = [tau_a; 0] + K^T lam`` (the Lagrange multipliers).

Direct dynamics (eq. 58): ``tau_a = A_c qdd_a + H_c + G^T F(qd)`` with
``A_c = G^T M G`` (symmetric positive definite; ``M`` the tree's mass matrix,
armature included) and ``H_c = G^T (M Gdot qd_a + h(q, qd))`` (Coriolis,
centrifugal, gravity; ``F`` the friction torques), so
``qdd_a = A_c^{-1} (tau_a - H_c - G^T F)``.

Inputs: ``q`` (n,) a tree configuration closing every loop (from
:func:`~rnea_ros.core.coupling.loop_kinematics.solve_loops` or measured),
``qd_active``, ``qdd_active``, ``tau_active`` (N,) in ``model.active`` order.
Units: N m (revolute), N (prismatic). Batch forms take ``(S, n)`` and
``(S, N)`` arrays of S samples.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.coupling import _loop_dynamics_jit as kd
from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.coupling.cut_kinds import ROWS
from rnea_ros.core.coupling.loop_kinematics import (
    active_vector,
    check_closed,
    check_rank,
    loop_constraint_jacobian,
    loop_jacobian,
    tree_vector,
)
from rnea_ros.core.coupling.loops import CLOSURE_TOLERANCE, ClosedLoopModel
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.kinematics import body_poses
from rnea_ros.core.dynamics.rnea import friction_torques
from rnea_ros.core.errors import StateError, options
from rnea_ros.core.inputs import gravity_vector

Array = NDArray[np.float64]

_id_fast = FastCall(kd.inverse_dynamics_call)
_rnea_fast = FastCall(kd.loop_rnea_call)
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty


def _raise_id(model: ClosedLoopModel, q: Array, qda: Array, qdda: Array, code: float) -> None:
    """Explain a failed inverse-dynamics kernel call (shapes, finiteness, closure, rank)."""
    q = tree_vector(model, q, "q")
    active_vector(model, qda, "qd_active")
    active_vector(model, qdda, "qdd_active")
    check_closed(model, q)
    if code < kj.SINGULAR_RATIO:
        check_rank(model, q, loop_constraint_jacobian(model, q), code)
    raise StateError(f"'{model.name}': closed-loop inverse dynamics is not finite for finite "
                     "inputs (overflow?)")


def _inverse_dynamics(model: ClosedLoopModel, q: object, qd_active: object,
                      qdd_active: object, gravity: object | None
                      ) -> tuple[Array, Array, Array, Array, Array]:
    q, qda, qdda = _asc(q, _f64), _asc(qd_active, _f64), _asc(qdd_active, _f64)
    g = model.tree.gravity if gravity is None else gravity_vector(model.tree, gravity)
    tau = _empty(model.n_active)
    qd = _empty(model.n)
    qdd = _empty(model.n)
    lam = _empty(model.n_constraints)
    if not q.ndim == qda.ndim == qdda.ndim == 1:
        _raise_id(model, q, qda, qdda, np.nan)
    code = _id_fast.call(model.tree.kernel_floats, model.loop_floats, model.permutation, q, qda,
                         qdda, g, CLOSURE_TOLERANCE, tau, qd, qdd, lam)
    if not code >= kj.SINGULAR_RATIO:
        _raise_id(model, q, qda, qdda, code)
    return tau, qd, qdd, lam, q


def loop_rnea(model: ClosedLoopModel, q: object, qd_active: object, qdd_active: object, *,
              gravity: object | None = None) -> Array:
    """Active-joint torques ``tau_a`` (N,) = G^T tau_tree (Khalil eq. 55/57).

    The passive joints' velocities and accelerations follow from eq. 4 and its
    derivative. Gravity, armature and friction of all tree joints included.

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``, ``qdd_active``
    ([closed loops](core.md#closed-loops)); ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau_a : ndarray of shape (N,)
        Active joint torques [N m, N].
    """
    # The 1 kHz path, kept lean (see rc.rnea): the kernel checks lengths and closure.
    q, qda, qdda = _asc(q, _f64), _asc(qd_active, _f64), _asc(qdd_active, _f64)
    if not q.ndim == qda.ndim == qdda.ndim == 1:
        _raise_id(model, q, qda, qdda, np.nan)
    fp, lp, perm, g = model.kernel_arrays
    if gravity is not None:
        g = gravity_vector(model.tree, gravity)
    tau = _empty(model.n_active)
    code = _rnea_fast.call(fp, lp, perm, model.passive_blocks, q, qda, qdda, g,
                           CLOSURE_TOLERANCE, tau)
    if not code >= kj.SINGULAR_RATIO:
        _raise_id(model, q, qda, qdda, code)
    return tau


def loop_rnea_with_wrenches(model: ClosedLoopModel, q: object, qd_active: object,
                            qdd_active: object, *, gravity: object | None = None
                            ) -> tuple[Array, Array]:
    """``(tau_a (N,), wrenches (B, 6))``: :func:`loop_rnea` and the cut-joint wrenches.

    ``wrenches[l]`` is the wrench ``[force; moment]`` [N, N m] that ``link2``
    exerts on ``link1`` through loop ``l``'s cut joint, expressed in frame 1
    (``frame1`` of the loop, on ``link1``) at its origin -- Pinocchio's
    convention for a constraint's force (the local frame of the first
    placement); ``link1`` exerts the opposite wrench on ``link2``. Components
    along the cut joint's free motion are zero; when the constraints are
    redundant (a planar loop closed by a revolute cut) the out-of-plane
    components are those of the minimum-norm multipliers, zero.

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``, ``qdd_active``
    ([closed loops](core.md#closed-loops)); ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau_a : ndarray of shape (N,)
        :func:`loop_rnea`'s active joint torques [N m, N].
    wrenches : ndarray of shape (B, 6)
        Cut-joint wrenches ``[force; moment]`` [N, N m] in each loop's frame 1.
    """
    tau, _, _, lam, qv = _inverse_dynamics(model, q, qd_active, qdd_active, gravity)
    return tau, cut_wrenches(model, qv, lam)


def cut_wrenches(model: ClosedLoopModel, q: Array, lam: Array) -> Array:
    """Multipliers ``lam`` (m,) -- blocked rows of the wrench on link 2 in frame 2 -- as
    wrenches ``[f; n]`` on link 1 in frame 1 at its origin, (B, 6)."""
    R, p = body_poses(model.tree, q)
    out = np.zeros((len(model.loops), 6))
    for l in range(len(model.loops)):
        W2 = np.zeros(6)
        rows = ROWS[int(model.loop_floats[l, kj.L_TYPE])]
        W2[list(rows)] = lam[model.constraint_rows[l]:model.constraint_rows[l + 1]]
        (R1, p1), (R2, p2) = (_frame_pose(model, R, p, l, side) for side in (0, 1))
        Rrel, prel = R1.T @ R2, R1.T @ (p2 - p1)
        f1 = -Rrel @ W2[:3]
        out[l, :3] = f1
        out[l, 3:] = -Rrel @ W2[3:] + np.cross(prel, f1)
    return out


def _frame_pose(model: ClosedLoopModel, R: Array, p: Array, l: int, side: int
                ) -> tuple[Array, Array]:
    b, Rf, pf = model.cut_frame(l, side + 1)
    if b < 0:
        return Rf, pf
    return R[b] @ Rf, p[b] + R[b] @ pf


def loop_gravity(model: ClosedLoopModel, q: object, *, gravity: object | None = None) -> Array:
    """Active-joint torques (N,) holding the mechanism still at ``q``: ``G^T g_tree(q)``.

    Arguments as in Conventions: ``model``, ``q`` ([closed loops](core.md#closed-loops));
    ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    ndarray of shape (N,)
        Active-joint torques [N m, N].
    """
    zero = np.zeros(model.n_active)
    return loop_rnea(model, q, zero, zero, gravity=gravity)


def loop_mass_matrix(model: ClosedLoopModel, q: object) -> Array:
    """``A_c = G^T M G`` (N, N) at a closed ``q`` (eq. 58; armature included).

    Arguments as in Conventions: ``model``, ``q`` ([closed loops](core.md#closed-loops)).

    Returns
    -------
    A_c : ndarray of shape (N, N)
        ``G^T M G`` [kg m^2, kg].
    """
    q = tree_vector(model, q, "q")
    G = loop_jacobian(model, q)
    return np.asarray(G.T @ mass_matrix(model.tree, q) @ G, dtype=np.float64)


def loop_nonlinear_effects(model: ClosedLoopModel, q: object, qd_active: object, *,
                           gravity: object | None = None) -> Array:
    """``H_c`` (N,) of eq. 58: ``G^T (M Gdot qd_a + h)``, Coriolis, centrifugal and
    gravity torques in the active joints (friction excluded, as in ``rc.nonlinear_effects``).

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``
    ([closed loops](core.md#closed-loops)); ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    H_c : ndarray of shape (N,)
        Bias torques in the active joints [N m, N].
    """
    tau, qd, _, _, qv = _inverse_dynamics(model, q, qd_active, np.zeros(model.n_active), gravity)
    G = loop_jacobian(model, qv)
    return np.asarray(tau - G.T @ friction_torques(model.tree, qd), dtype=np.float64)


def loop_forward_dynamics(model: ClosedLoopModel, q: object, qd_active: object,
                          tau_active: object, *, gravity: object | None = None) -> Array:
    """Active accelerations ``qdd_a`` (N,) from active torques (eq. 58):
    ``A_c^{-1} (tau_a - H_c - G^T F(qd))``, in one compiled call; the tree's are
    :func:`~rnea_ros.core.coupling.loop_kinematics.loop_accelerations`.

    Arguments as in Conventions: ``model``, ``q``, ``qd_active``, ``tau_active``
    ([closed loops](core.md#closed-loops)); ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd_a : ndarray of shape (N,)
        Active joint accelerations [rad/s^2, m/s^2].
    """
    q, qda, tau = (_asc(x, _f64) for x in (q, qd_active, tau_active))
    if not q.ndim == qda.ndim == tau.ndim == 1:
        tree_vector(model, q, "q")
        active_vector(model, qda, "qd_active")
        active_vector(model, tau, "tau_active")
    out: Array = loop_forward_dynamics_batch(model, q[None], qda[None], tau[None],
                                             gravity=gravity, _single=True)[0]
    return out


# ------------------------------------------------------------------ batch
def _batch(model: ClosedLoopModel, x: object, name: str, width: int, samples: int | None
           ) -> Array:
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != width or (samples is not None and a.shape[0] != samples):
        want = f"({samples if samples is not None else 'S'}, {width})"
        what = ("tree joints " + options(model.tree.joint_names) if width == model.n
                else "active joints " + options(model.active_names))
        raise StateError(f"{name} has shape {a.shape}, expected {want} for '{model.name}' "
                         f"({what})")
    return a


def _batch_inputs(model: ClosedLoopModel, q: object, qd_active: object, rates: object,
                  name: str, gravity: object | None) -> tuple[Array, Array, Array, Array]:
    """The batch kernels' checked inputs: ``Q`` (S, n), ``QD`` and ``rates`` (S, N) --
    ``rates`` named ``name`` in errors -- and the gravity (3,) [m/s^2] they use."""
    Q = _batch(model, q, "q", model.n, None)
    QD = _batch(model, qd_active, "qd_active", model.n_active, Q.shape[0])
    X = _batch(model, rates, name, model.n_active, Q.shape[0])
    g = model.kernel_arrays[3] if gravity is None else gravity_vector(model.tree, gravity)
    return Q, QD, X, g


def loop_rnea_batch(model: ClosedLoopModel, q: object, qd_active: object, qdd_active: object,
                    *, gravity: object | None = None) -> Array:
    """:func:`loop_rnea` over S samples: ``q`` (S, n), ``qd_active``, ``qdd_active``
    (S, N) -> ``tau_a`` (S, N), in one compiled loop.

    Arguments as in Conventions: ``model`` ([closed loops](core.md#closed-loops)); ``q``,
    ``qd_active``, ``qdd_active`` ([closed-loop batches](core.md#closed-loop-batches)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    tau_a : ndarray of shape (S, N)
        Active joint torques per sample.
    """
    Q, QD, QDD, g = _batch_inputs(model, q, qd_active, qdd_active, "qdd_active", gravity)
    fp, lp, perm, _ = model.kernel_arrays
    tau = np.empty_like(QD)
    k, code = kd.loop_rnea_rows(fp, lp, perm, model.passive_blocks, Q, QD, QDD, g,
                                CLOSURE_TOLERANCE, tau)
    if k >= 0:
        try:
            _raise_id(model, Q[k], QD[k], QDD[k], code)
        except StateError as exc:
            raise type(exc)(f"sample {k}: {exc}") from None
    return tau


def loop_forward_dynamics_batch(model: ClosedLoopModel, q: object, qd_active: object,
                                tau_active: object, *, gravity: object | None = None,
                                _single: bool = False) -> Array:
    """:func:`loop_forward_dynamics` over S samples -> ``qdd_a`` (S, N), in one compiled loop.

    Arguments as in Conventions: ``model`` ([closed loops](core.md#closed-loops)); ``q``,
    ``qd_active``, ``tau_active`` ([closed-loop batches](core.md#closed-loop-batches)); ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd_a : ndarray of shape (S, N)
        Active accelerations per sample.
    """
    Q, QD, TAU, g = _batch_inputs(model, q, qd_active, tau_active, "tau_active", gravity)
    fp, lp, perm, _ = model.kernel_arrays
    out = np.empty_like(TAU)
    k, code = kd.forward_dynamics_rows(fp, lp, perm, Q, QD, TAU, g, CLOSURE_TOLERANCE, out)
    if k >= 0:
        try:
            active_vector(model, TAU[k], "tau_active")
            _raise_id(model, Q[k], QD[k], np.zeros(model.n_active), code)
        except StateError as exc:
            if _single:
                raise
            raise type(exc)(f"sample {k}: {exc}") from None
    return out


__all__ = [
    "loop_forward_dynamics",
    "loop_forward_dynamics_batch",
    "loop_gravity",
    "loop_mass_matrix",
    "loop_nonlinear_effects",
    "loop_rnea",
    "loop_rnea_batch",
    "loop_rnea_with_wrenches",
]
