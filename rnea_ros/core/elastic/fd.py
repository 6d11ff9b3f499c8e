"""Forward dynamics of mixed rigid/elastic robots by hua-2024 Algorithm 2 (eq. 30-36).

The equations of motion in the joint/motor coordinates ``x = [q; theta]``
(``n + n_e``), De Luca & Farina's form (eq. 30-31)::

    A(q) [qdd; thetadd] + zeta(q, qd, theta, thetad) = [tau_q; tau_me]

    A = [[M, S], [S^T, B]]      tau_q_i = K_k (theta_k - q_i) + D_k (...)  elastic joint
                                        = tau_i                          rigid joint
                                tau_me  = motor torques of the elastic joints

are assembled with :func:`~rnea_ros.core.elastic.rnea.elastic_pass` (Algorithm 1):
``zeta`` with zero accelerations (eq. 32-33), column ``j`` of ``A`` with zero
velocities, gravity and wrenches and ``xdd = e_j`` (eq. 34-35), taking an
elastic joint's row from its link-side torque ``S^T f_b`` and its motor row from
the motor torque less the spring. Then ``xdd = A^-1 ([tau_q; tau_me] - zeta)``
(eq. 36). O(n^2) evaluations; :mod:`~rnea_ros.core.elastic.hybrid` is the O(n)
recursive form, and both agree. Friction of the link joints is part of ``zeta``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit
from rnea_ros.core._layout import RW_COLS
from rnea_ros.core.elastic.model import E_D, E_INDEX, E_K, ElasticModel
from rnea_ros.core.elastic.rnea import check_finite, elastic_pass, motor_vector
from rnea_ros.core.inputs import body_wrenches, gravity_vector, joint_vector

Array = NDArray[np.float64]


class Dynamics(NamedTuple):
    """``A`` (n+n_e, n+n_e) and ``zeta`` (n+n_e,) of eq. 31, in ``[q; theta]`` order."""

    A: Array
    zeta: Array


@jit
def _rows(ep: Array, q: Array, theta: Array, qd: Array, thetad: Array, tau: Array,
          tau_link: Array, springs: bool, out: Array) -> None:
    """Eq. 32-35: the rows of ``[q; theta]`` from one Algorithm-1 evaluation."""
    n = q.shape[0]
    for i in range(n):
        k = int(ep[i, E_INDEX])
        if k < 0:
            out[i] = tau[i]
        else:
            out[i] = tau_link[i]
            spring = ep[i, E_K] * (theta[k] - q[i]) + ep[i, E_D] * (thetad[k] - qd[i])
            out[n + k] = tau[i] - (0.0 if springs else spring)


@jit
def _assemble(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
              thetad: Array, g: Array, fext: Array, use_fext: bool, A: Array,
              zeta: Array) -> bool:
    n, ne = q.shape[0], theta.shape[0]
    work = np.empty((n, RW_COLS))
    tau, tau_link = np.empty(n), np.empty(n)
    zn, ze = np.zeros(n), np.zeros(ne)
    ok = elastic_pass(fp, ep, mp, q, theta, qd, thetad, zn, ze, g, fext, use_fext,
                      tau, tau_link, work)
    _rows(ep, q, theta, qd, thetad, tau, tau_link, True, zeta)
    g0 = np.zeros(3)
    col = np.empty(n + ne)
    for j in range(n + ne):
        qdd, thetadd = np.zeros(n), np.zeros(ne)
        if j < n:
            qdd[j] = 1.0
        else:
            thetadd[j - n] = 1.0
        ok = elastic_pass(fp, ep, mp, q, theta, zn, ze, qdd, thetadd, g0, fext, False,
                          tau, tau_link, work) and ok
        _rows(ep, q, theta, zn, ze, tau, tau_link, False, col)
        A[:, j] = col
    return ok


def dynamics(model: ElasticModel, q: object, theta: object, qd: object, thetad: object, *,
             gravity: object | None = None, fext: object | None = None) -> Dynamics:
    """``A(q)`` and ``zeta(q, qd, theta, thetad)`` of eq. 31 by n + n_e + 1 Algorithm-1 calls."""
    links = model.links
    args = {"q": joint_vector(links, q, "q"), "qd": joint_vector(links, qd, "qd"),
            "theta": motor_vector(model, theta, "theta"),
            "thetad": motor_vector(model, thetad, "thetad")}
    size = model.n + model.n_elastic
    A, zeta = np.empty((size, size)), np.empty(size)
    use_fext = fext is not None
    f = body_wrenches(links, fext) if use_fext else np.zeros((0, 6))
    if not _assemble(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
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

    ``tau[i]``: the joint torque of a rigid joint, the motor torque (link side,
    eq. 29) of an elastic one.
    """
    tau = joint_vector(model.links, tau, "tau")
    q = joint_vector(model.links, q, "q")
    qd = joint_vector(model.links, qd, "qd")
    theta = motor_vector(model, theta, "theta")
    thetad = motor_vector(model, thetad, "thetad")
    A, zeta = dynamics(model, q, theta, qd, thetad, gravity=gravity, fext=fext)
    xdd = np.linalg.solve(A, applied_forces(model, q, theta, qd, thetad, tau) - zeta)
    return np.asarray(xdd[:model.n], dtype=np.float64), np.asarray(xdd[model.n:], dtype=np.float64)


__all__ = ["Dynamics", "applied_forces", "dynamics", "forward_dynamics"]
