"""Forward dynamics through the mass matrix: ``qdd = M(q)^-1 (tau - b(q, qd))``.

Khalil 2010 section 3.3.1: ``A`` from the inverse model (here CRBA) and the
bias ``b = rnea(q, qd, 0)`` (Coriolis, centrifugal, gravity, external wrenches
and friction), then a Cholesky solve. O(n^3) but exact and simple; it is the
cross-check of the recursive :func:`rnea_ros.core.dynamics.aba.aba`, the better
choice for small robots evaluated in batch, and the forward dynamics of models
with mimic joints (which the recursive ABA cannot articulate). Shapes: ``q``
(nq,), ``qd, tau`` and the result (nv,).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.rnea import rnea, rnea_batch
from rnea_ros.core.inputs import joint_batch, joint_vector
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def forward_dynamics(model: RobotModel, q: object, qd: object, tau: object, *,
                     gravity: object | None = None, fext: object | None = None) -> Array:
    """Joint accelerations ``qdd`` (nv,) from ``M(q) qdd = tau - rnea(q, qd, 0)``.

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``tau``, ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd : ndarray of shape (nv,)
        Joint accelerations [rad/s^2, m/s^2]: :func:`~rnea_ros.core.dynamics.aba.aba`'s,
        through ``M``.
    """
    tau = joint_vector(model, tau, "tau")
    bias = rnea(model, q, qd, np.zeros(model.nv), gravity=gravity, fext=fext)
    M = mass_matrix(model, q)
    L = np.linalg.cholesky(M)
    return np.asarray(np.linalg.solve(L.T, np.linalg.solve(L, tau - bias)), dtype=np.float64)


def forward_dynamics_batch(model: RobotModel, q: object, qd: object, tau: object, *,
                           gravity: object | None = None) -> Array:
    """:func:`forward_dynamics` over N samples: ``q`` (N, nq), ``qd, tau`` (N, nv) give
    (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``tau`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    qdd : ndarray of shape (N, nv)
        Joint accelerations [rad/s^2, m/s^2], a row per sample (one batched solve).
    """
    Q = joint_batch(model, q, "q")
    TAU = joint_batch(model, tau, "tau", Q.shape[0])
    bias = rnea_batch(model, Q, qd, np.zeros_like(TAU), gravity=gravity)
    M = mass_matrix_batch(model, Q)
    return np.asarray(np.linalg.solve(M, (TAU - bias)[..., None])[..., 0], dtype=np.float64)
