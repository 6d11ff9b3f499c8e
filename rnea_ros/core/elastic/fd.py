"""Forward dynamics of mixed rigid/elastic robots by hua-2024 Algorithm 2 (eq. 30-36).

The equations of motion in the joint/motor coordinates ``x = [q; theta]``
(``n + n_e``), De Luca & Farina's form (eq. 30-31)::

    A(q) [qdd; thetadd] + zeta(q, qd, theta, thetad) = [tau_q; tau_me]

    A = [[M, S], [S^T, B]]      tau_q_i = K_k (theta_k - q_i) + D_k (...)  elastic joint
                                        = tau_i                          rigid joint
                                tau_me  = motor torques of the elastic joints

are assembled with :func:`~rnea_ros.core.elastic._rnea_jit.elastic_pass` (Algorithm 1):
``zeta`` with zero accelerations (eq. 32-33), column ``j`` of ``A`` with zero
velocities, gravity and wrenches and ``xdd = e_j`` (eq. 34-35), taking an
elastic joint's row from its link-side torque ``S^T f_b`` and its motor row from
the motor torque less the spring. Then ``xdd = A^-1 ([tau_q; tau_me] - zeta)``
(eq. 36). O(n^2) evaluations; :mod:`~rnea_ros.core.elastic.hybrid` is the O(n)
recursive form, and both agree. Friction of the link joints is part of ``zeta``.

Kernels: :mod:`~rnea_ros.core.elastic._fd_jit` (``assemble``, ``applied_rows``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.elastic._fd_jit import assemble
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.elastic.rnea import check_finite, elastic_vectors
from rnea_ros.core.inputs import body_wrenches, gravity_vector

Array = NDArray[np.float64]


class Dynamics(NamedTuple):
    """``A`` (n+n_e, n+n_e) and ``zeta`` (n+n_e,) of eq. 31, in ``[q; theta]`` order."""

    A: Array
    zeta: Array


def dynamics(model: ElasticModel, q: object, theta: object, qd: object, thetad: object, *,
             gravity: object | None = None, fext: object | None = None) -> Dynamics:
    """``A(q)`` and ``zeta(q, qd, theta, thetad)`` of eq. 31 by n + n_e + 1 Algorithm-1 calls.

    Arguments as in Conventions: ``model``, ``q``, ``theta``, ``qd``, ``thetad``
    ([elastic robots](core.md#elastic-robots)); ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    Dynamics
        ``A(q)`` and ``zeta(q, qd, theta, thetad)`` of hua-2024 eq. 31.
    """
    links = model.links
    args = elastic_vectors(model, q=q, qd=qd, theta=theta, thetad=thetad)
    size = model.n + model.n_elastic
    A, zeta = np.empty((size, size)), np.empty(size)
    use_fext = fext is not None
    f = body_wrenches(links, fext) if use_fext else np.zeros((0, 6))
    if not assemble(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
                    args["q"], args["theta"], args["qd"], args["thetad"],
                    gravity_vector(links, gravity), f, use_fext, A, zeta):
        check_finite(model, **args)
    return Dynamics(0.5 * (A + A.T), zeta)


def applied_forces(model: ElasticModel, q: Array, theta: Array, qd: Array, thetad: Array,
                   tau: Array) -> Array:
    """``[tau_q; tau_me]`` (n + n_e,) of eq. 30 from the motor torques ``tau`` (n,)."""
    e = model.elastic_joints
    rhs = np.concatenate([tau, tau[e]])
    rhs[e] = model.spring_torque(q, theta, qd, thetad)
    return rhs


def forward_dynamics(model: ElasticModel, q: object, theta: object, qd: object,
                     thetad: object, tau: object, *, gravity: object | None = None,
                     fext: object | None = None) -> tuple[Array, Array]:
    """``(qdd (n,), thetadd (n_e,))`` under motor torques ``tau`` (n,), Algorithm 2 (eq. 36).

    Arguments as in Conventions: ``model``, ``q``, ``theta``, ``qd``, ``thetad``, ``tau``
    ([elastic robots](core.md#elastic-robots)); ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd : ndarray of shape (n,)
        Joint accelerations [rad/s^2, m/s^2].
    thetadd : ndarray of shape (n_e,)
        Motor accelerations, link side.
    """
    tau, q, qd, theta, thetad = elastic_vectors(model, tau=tau, q=q, qd=qd, theta=theta,
                                                thetad=thetad).values()
    A, zeta = dynamics(model, q, theta, qd, thetad, gravity=gravity, fext=fext)
    xdd = np.linalg.solve(A, applied_forces(model, q, theta, qd, thetad, tau) - zeta)
    return np.asarray(xdd[:model.n], dtype=np.float64), np.asarray(xdd[model.n:], dtype=np.float64)


__all__ = ["Dynamics", "applied_forces", "dynamics", "forward_dynamics"]
