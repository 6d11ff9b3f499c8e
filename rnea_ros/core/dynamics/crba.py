"""Joint-space mass matrix ``M(q)`` by the composite-rigid-body algorithm (CRBA).

Featherstone, Rigid Body Dynamics Algorithms, Table 6.2, in body coordinates.
Khalil 2010 section 3.3.1 obtains the same matrix column by column from the
inverse model (``qdd = u_i, qd = 0, g = 0``); CRBA gets it in one backward
sweep by accumulating each subtree into a composite body. The armature
(reflected rotor inertia) is added on the diagonal, as the ``Ia_j qdd_j`` term
of Khalil eq. 31. ``M`` is symmetric positive definite, shape (nv, nv).

Models with multi-DoF or mimic joints: CRBA on the kernel tree
(:mod:`rnea_ros.core.expansion`) gives ``M_k`` in kernel velocities, and
``M = G^T M_k G`` (``v_k = G v``; the kinetic energy is the same in both). A
multi-DoF joint needs no correction here: its sub-joint velocities are ``v``
and its intermediate bodies are massless and coincident, so the sub-joint rows
are ``S_k^T`` of the same composite force.

Kernels: :mod:`~rnea_ros.core.dynamics._crba_jit` (``crba_pass``; entries ``crba_call``,
``crba_rows``, ``crba_tree_rows``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.dynamics._crba_jit import (
    crba_call,
    crba_rows,
    crba_tree_rows,
)
from rnea_ros.core.inputs import joint_batch, joint_vector, raise_non_finite
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


_crba_fast = FastCall(crba_call)


def mass_matrix(model: RobotModel, q: object) -> Array:
    """Joint-space inertia matrix ``M(q)`` (nv, nv), armature included; ``q`` (nq,).

    Arguments as in Conventions: ``model``, ``q`` ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    M : ndarray of shape (nv, nv)
        Symmetric positive definite [kg m^2, kg].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> M = rc.mass_matrix(model, np.full(model.nq, 0.3))
    >>> M.shape == (model.nv, model.nv), bool(np.allclose(M, M.T))
    (True, True)
    """
    q = joint_vector(model, q, "q")
    if model.expanded:
        M1: Array = mass_matrix_batch(model, q[None])[0]
        return M1
    M = np.empty((model.nv, model.nv))
    if not _crba_fast.call(model.kernel_floats, q, M):
        raise_non_finite(model, q=q)
    return M


def mass_matrix_batch(model: RobotModel, q: object) -> Array:
    """:func:`mass_matrix` over N samples: ``q`` (N, nq) gives (N, nv, nv).

    Arguments as in Conventions: ``model`` ([rigid robots](core.md#rigid-robots)); ``q``
    ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    M : ndarray of shape (N, nv, nv)
        A mass matrix per sample.
    """
    Q = joint_batch(model, q, "q")
    M = np.empty((Q.shape[0], model.nv, model.nv))
    if model.expanded:
        if not crba_tree_rows(model.kernel_floats, model.kernel_map, Q, M):
            raise_non_finite(model, q=Q)
        return M
    if not crba_rows(model.kernel_floats, Q, M):
        raise_non_finite(model, q=Q)
    return M
