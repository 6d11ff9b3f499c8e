"""Recursive O(n) dynamics of mixed rigid/elastic robots: Khalil 2010 section 6.2 and 6.3.

One articulated-body recursion (Khalil eq. 32-52, Featherstone's ABA) over the
*augmented* tree: the links, plus one rotor body per motor, a child of the link
carrying it. Each degree of freedom is either **force-known** (articulated, its
acceleration is an output) or **acceleration-known** (passed through with its
full inertia, its torque is an output: Khalil eq. 75-76, ``K_j = J*_j``):

* section 6.2, direct dynamics (:func:`forward_dynamics_recursive`): every DOF is
  force-known; an elastic joint's torque is its spring, ``K (theta - q) + D
  (theta_dot - q_dot)`` (Khalil: ``Gamma_j = -K_j dq_j``), its motor's the motor
  torque minus the spring;
* section 6.3 (:func:`elastic_inverse_dynamics`): rigid joints and motors have
  known accelerations, the elastic joints' link sides are force-known; returns
  the elastic accelerations (eq. 80) and the rigid/motor torques (eq. 82).

Rotor ``m`` on carrier ``c`` has the angular-only spatial inertia
``I_r = [I_mz z z^T, 0; 0, 0]`` (its spin part; the rest of the motor belongs to
the carrier's unified body, from which ``I_r`` is taken out) and moves relative
to the carrier with ``s_r psi_dot``, ``s_r = eta [z; p x z]`` (``p`` its centre),
``psi = theta_k`` or ``q_j`` (hua-2024 eq. 6, 9). A rigid joint's rotor shares
the joint's coordinate: when that joint is force-known the rotor must sit on the
joint's parent link and both are articulated together (one DOF moving two
bodies); a rotor elsewhere would close a kinematic loop, for which
:func:`rnea_ros.core.elastic.fd.forward_dynamics` (hua-2024 Algorithm 2) is the
method. Spatial vectors are ``[angular; linear]`` in body coordinates.

Kernels: :mod:`~rnea_ros.core.elastic._hybrid_jit` (``hybrid_pass``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.elastic._hybrid_jit import hybrid_pass
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.elastic.rnea import check_finite, elastic_vectors
from rnea_ros.core.errors import ModelError
from rnea_ros.core.inputs import body_wrenches, gravity_vector

Array = NDArray[np.float64]


class HybridResult(NamedTuple):
    """Result of :func:`elastic_inverse_dynamics`: link accelerations ``qdd`` (n,)
    (the elastic joints' computed, the rigid ones' as given), motor torques
    ``tau`` (n,) of every joint (rigid: joint torque; elastic: motor torque)."""

    qdd: Array
    tau: Array


def check_recursive(model: ElasticModel) -> None:
    """The rigid joints' rotors must ride on their joint's parent link (else a loop)."""
    for m, j in enumerate(model.motor_joint):
        if not model.elastic[j] and model.motor_body[m] != model.links.parent[j]:
            links = model.links
            par = links.parent[j]
            here = "the base" if model.motor_body[m] < 0 else \
                f"body '{links.body_names[model.motor_body[m]]}'"
            want = "the base" if par < 0 else f"body '{links.body_names[par]}'"
            raise ModelError(
                f"motor of rigid joint '{links.joint_names[j]}' is on {here}, not on its "
                f"parent {want}: the gear couples bodies across a loop, which the recursive "
                "algorithm cannot articulate; use elastic_fd.forward_dynamics (Algorithm 2)")


def forward_dynamics_recursive(model: ElasticModel, q: object, theta: object, qd: object,
                               thetad: object, tau: object, *, gravity: object | None = None,
                               fext: object | None = None) -> tuple[Array, Array]:
    """``(qdd (n,), thetadd (n_e,))`` under motor torques ``tau`` (n,) (Khalil section 6.2).

    Each rigid joint's rotor must ride on the joint's parent link, else
    :class:`~rnea_ros.core.errors.ModelError` (the gear would couple bodies across a
    loop): :func:`~rnea_ros.core.elastic.fd.forward_dynamics` takes that robot.

    Arguments as in Conventions: ``model``, ``q``, ``theta``, ``qd``, ``thetad``, ``tau``
    ([elastic robots](core.md#elastic-robots)); ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd, thetadd : ndarray of shape (n,), (n_e,)
        Joint and motor (link side) accelerations [rad/s^2, m/s^2], those of
        :func:`~rnea_ros.core.elastic.fd.forward_dynamics` in O(n).
    """
    check_recursive(model)
    links = model.links
    args = elastic_vectors(model, q=q, qd=qd, tau=tau, theta=theta, thetad=thetad)
    e = model.elastic_joints
    tau_in = args["tau"].copy()
    tau_m = tau_in[e].copy()
    qdd, thetadd = np.zeros(model.n), np.zeros(model.n_elastic)
    use_fext = fext is not None
    f = body_wrenches(links, fext) if use_fext else np.zeros((0, 6))
    if not hybrid_pass(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
                       args["q"], args["theta"], args["qd"], args["thetad"],
                       np.zeros(model.n), np.zeros(model.n_elastic), tau_in, tau_m,
                       gravity_vector(links, gravity), f, use_fext, qdd, thetadd):
        check_finite(model, **args)
    return qdd, thetadd


def elastic_inverse_dynamics(model: ElasticModel, q: object, theta: object, qd: object,
                             thetad: object, qdd: object, thetadd: object, *,
                             gravity: object | None = None, fext: object | None = None
                             ) -> HybridResult:
    """Khalil section 6.3: from the rigid joints' and motors' accelerations, the elastic
    joints' accelerations and all motor torques, recursively.

    ``qdd`` (n,): the entries of the elastic joints are ignored (they are
    outputs); ``thetadd`` (n_e,) the motor accelerations.

    Arguments as in Conventions: ``model``, ``q``, ``theta``, ``qd``, ``thetad``, ``thetadd``
    ([elastic robots](core.md#elastic-robots)); ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    qdd : array_like of shape (n,)
        Joint accelerations [rad/s^2, m/s^2]; the elastic joints' entries are ignored
        (outputs).

    Returns
    -------
    HybridResult
        The elastic joints' accelerations and every motor torque [N m, N].
    """
    links = model.links
    args = elastic_vectors(model, q=q, qd=qd, qdd=qdd, theta=theta, thetad=thetad,
                           thetadd=thetadd)
    known_q = (~model.elastic).astype(np.float64)
    qdd_out = args["qdd"].copy()
    qdd_out[model.elastic_joints] = 0.0
    tau, tau_m = np.zeros(model.n), np.zeros(model.n_elastic)
    use_fext = fext is not None
    f = body_wrenches(links, fext) if use_fext else np.zeros((0, 6))
    if not hybrid_pass(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
                       args["q"], args["theta"], args["qd"], args["thetad"], known_q,
                       np.ones(model.n_elastic), tau, tau_m, gravity_vector(links, gravity),
                       f, use_fext, qdd_out, args["thetadd"].copy()):
        check_finite(model, **args)
    tau[model.elastic_joints] = tau_m
    return HybridResult(qdd_out, tau)


__all__ = ["HybridResult", "elastic_inverse_dynamics", "forward_dynamics_recursive",
           "hybrid_pass"]
