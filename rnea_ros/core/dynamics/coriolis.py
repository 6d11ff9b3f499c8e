"""Coriolis matrix ``C(q, qd)`` with ``dM/dt - 2C`` skew-symmetric.

The Christoffel-consistent factorisation ``C qd = h(q, qd) - g(q)``,
``dM/dt = C + C^T``, computed by the O(n^2) recursion of Echeandia & Wensing,
"Numerical methods to compute the Coriolis matrix and Christoffel symbols for
rigid-body systems" (JCND 2021, Alg. 1), in base-frame spatial algebra:

    v_i = v_lambda(i) + S_i qd_i,   dS_i = v_i x S_i,
    B_i = 1/2 [ (v_i x*) I_i + (I_i v_i) xbar - I_i (v_i x) ],

where ``f xbar`` is the matrix with ``(f xbar) m = m x* f``; composite
``I^C``/``B^C`` are accumulated leaf-to-root and each column is projected on
the ancestors. Armature (constant) does not enter ``C``. The matrix is an
offline / analysis quantity: plain numpy.

:func:`coriolis_product` gives ``C(q, qd) x`` without forming ``C``, in O(n)
(a compiled kernel, for control laws such as Slotine-Li's or hua-2024's
``C qd_r``): the same factorisation as an RNEA pass in body coordinates,
with ``v`` the body velocities (from ``qd``), ``w`` those from ``x`` and
``a = X a_parent + (v x S) x_i``::

    f_i = I_i a_i + B_i(v_i) w_i,   B(v) w = 1/2 [v x* I w - I (v x w) + w x* I v]
    (C x)_i = S_i^T (f_i + sum of the children's transmitted forces)

Expanding the sums over ancestors gives Echeandia & Wensing's two cases
(``j`` in the subtree of ``i``, and ``j`` an ancestor of ``i``) term by term.

Both run on the kernel tree (:mod:`rnea_ros.core.expansion`; for a model of
1-DoF joints, the model itself). A multi-DoF joint's sub-joints use the
velocity of the joint's body in ``dS = v x S`` (Pinocchio's
``computeCoriolisMatrix``: one ``dS`` per joint, with ``v`` after the whole
joint) rather than the partial velocity after each sub-joint; in the O(n)
product that changes ``a`` on the joint's body by ``d = sum_{j>k} (S_j v_j) x
(S_k x_k)``, which lies in the joint's motion subspace, so it is one more RNEA
pass, ``M_k delta`` with ``delta = S^T d``. Mimic followers: ``C = G^T C_k G``
(``v_k = G v``, a constant coupling).

Kernels: :mod:`~rnea_ros.core.dynamics._coriolis_jit` (``coriolis_product_pass``,
``coriolis_tree_pass``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core._algebra import joint_transform
from rnea_ros.core._layout import (
    F_AXIS,
    F_H,
    F_IO,
    F_MASS,
    PRISMATIC,
    kind,
    parent,
)
from rnea_ros.core.dynamics._coriolis_jit import (
    coriolis_product_pass,
    coriolis_tree_pass,
)
from rnea_ros.core.expansion import expand, joint_rows, velocity_matrix
from rnea_ros.core.inputs import joint_vector, raise_non_finite
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def _motion_cross(v: Array) -> Array:
    """``v x`` (6, 6) for motion vectors ``[w; v]``."""
    X = np.zeros((6, 6))
    X[:3, :3] = spatial.skew(v[:3])
    X[3:, 3:] = spatial.skew(v[:3])
    X[3:, :3] = spatial.skew(v[3:])
    return X


def _force_bar(f: Array) -> Array:
    """``f xbar`` (6, 6): ``(f xbar) m = m x* f`` for a force ``[n; f]``."""
    X = np.zeros((6, 6))
    X[:3, :3] = -spatial.skew(f[:3])
    X[:3, 3:] = -spatial.skew(f[3:])
    X[3:, :3] = -spatial.skew(f[3:])
    return X


def _to_base(R: Array, p: Array) -> Array:
    """Motion transform body -> base (6, 6) for a body at ``(R, p)`` in the base."""
    X = np.zeros((6, 6))
    X[:3, :3] = R
    X[3:, 3:] = R
    X[3:, :3] = spatial.skew(p) @ R
    return X


def _spatial_inertia(fp: Array, i: int) -> Array:
    """Spatial inertia (6, 6) of kernel row ``i``'s body at its origin, in its frame."""
    m, h = float(fp[i, F_MASS]), fp[i, F_H:F_H + 3]
    xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
    I6 = np.zeros((6, 6))
    I6[:3, :3] = ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))
    I6[:3, 3:] = spatial.skew(h)
    I6[3:, :3] = -spatial.skew(h)
    I6[3:, 3:] = m * np.eye(3)
    return I6


def coriolis_matrix(model: RobotModel, q: object, qd: object) -> Array:
    """``C(q, qd)`` (nv, nv) such that ``C qd + g = h`` and ``dM/dt - 2C`` is skew;
    ``q`` (nq,), ``qd`` (nv,).

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    C : ndarray of shape (nv, nv)
        Christoffel-consistent Coriolis matrix [N m s/rad].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> q, qd = np.full(model.nq, 0.3), np.linspace(-1.0, 1.0, model.nv)
    >>> C = rc.coriolis_matrix(model, q, qd)
    >>> h = rc.nonlinear_effects(model, q, qd)
    >>> bool(np.allclose(C @ qd + rc.gravity_torques(model, q), h))
    True
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    fp, qk, vk = expand(model, q, qd)
    n = fp.shape[0]
    vel_row = np.arange(n)  # whose velocity enters dS: a multi-DoF joint's body's
    for first, count in joint_rows(model):
        vel_row[first:first + count] = first + count - 1
    S = np.empty((n, 6))
    dS = np.empty((n, 6))
    v = np.empty((n, 6))
    IC = np.empty((n, 6, 6))
    BC = np.empty((n, 6, 6))
    pose_R, pose_p = np.empty((n, 3, 3)), np.empty((n, 3))
    for i in range(n):
        Rl, pl = joint_transform(fp, i, float(qk[i]))
        par = parent(fp, i)
        R_l, p_l = np.array(Rl).reshape(3, 3), np.array(pl)
        if par < 0:
            pose_R[i], pose_p[i] = R_l, p_l
        else:
            pose_R[i], pose_p[i] = pose_R[par] @ R_l, pose_p[par] + pose_R[par] @ p_l
        v_par = np.zeros(6) if par < 0 else v[par]
        X = _to_base(pose_R[i], pose_p[i])
        S_local = np.zeros(6)
        if kind(fp, i) == PRISMATIC:
            S_local[3:] = fp[i, F_AXIS:F_AXIS + 3]
        else:
            S_local[:3] = fp[i, F_AXIS:F_AXIS + 3]
        S[i] = X @ S_local
        v[i] = v_par + S[i] * vk[i]
        Xinv = np.linalg.inv(X)
        I_i = Xinv.T @ _spatial_inertia(fp, i) @ Xinv
        Iv = I_i @ v[i]
        IC[i] = I_i
        BC[i] = 0.5 * (-_motion_cross(v[i]).T @ I_i + _force_bar(Iv) - I_i @ _motion_cross(v[i]))
    for i in range(n):
        dS[i] = _motion_cross(v[vel_row[i]]) @ S[i]
    C = np.zeros((n, n))
    for j in range(n - 1, -1, -1):
        F1 = IC[j] @ dS[j] + BC[j] @ S[j]
        F2 = IC[j] @ S[j]
        F3 = BC[j].T @ S[j]
        C[j, j] = S[j] @ F1
        i = j
        while parent(fp, i) >= 0:
            i = parent(fp, i)
            C[i, j] = S[i] @ F1
            C[j, i] = dS[i] @ F2 + S[i] @ F3
        par = parent(fp, j)
        if par >= 0:
            IC[par] += IC[j]
            BC[par] += BC[j]
    if model.expanded:
        G = velocity_matrix(model)
        C = G.T @ C @ G
    if not np.all(np.isfinite(C)):
        raise_non_finite(model, q=q, qd=qd)
    return np.asarray(C, dtype=np.float64)


def coriolis_product(model: RobotModel, q: object, qd: object, x: object) -> Array:
    """``C(q, qd) x`` (nv,), the Christoffel-consistent ``C`` of :func:`coriolis_matrix`,
    in O(n) without forming it; ``C(q, qd) qd`` is the velocity part of RNEA.

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    x : array_like of shape (nv,)
        The vector multiplied by ``C(q, qd)`` [rad/s, m/s].

    Returns
    -------
    ndarray of shape (nv,)
        ``C(q, qd) x`` [N m, N].
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    x = joint_vector(model, x, "x")
    out = np.empty(model.nv)
    if model.expanded:
        if not coriolis_tree_pass(model.kernel_floats, model.kernel_map, q, qd, x, out):
            raise_non_finite(model, q=q, qd=qd, x=x)
        return out
    if not coriolis_product_pass(model.kernel_floats, q, qd, x, out):
        raise_non_finite(model, q=q, qd=qd, x=x)
    return out
