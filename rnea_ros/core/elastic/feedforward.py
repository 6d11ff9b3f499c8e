"""Exact feedforward for mixed rigid/elastic robots along a smooth link trajectory.

Given ``q_d(t)`` and its derivatives up to the snap, the motor trajectory and
torques that make the links follow it exactly (for the elastic joints, the
flatness-based inversion of Spong's model, here with the full hua-2024 model):

1. link-side torques ``tau_l`` and their derivatives ``tau_l_dot``,
   ``tau_l_ddot`` of the unified rigid bodies (:mod:`rnea_ros.core.dynamics.gfd`, needs
   jerk and snap);
2. for each elastic joint (eq. 28 with ``D = 0``): ``theta_d = q_d + tau_l / K``,
   ``thetad_d = qd_d + tau_l_dot / K``, ``thetadd_d = qdd_d + tau_l_ddot / K``;
3. motor torques of every joint by Algorithm 1
   (:func:`~rnea_ros.core.elastic.rnea.elastic_rnea`) at ``(q_d, theta_d)``.

Exact (:attr:`Feedforward.exact`) when no motor rides on a link moved by an
elastic joint and no elastic joint has damping: then an elastic joint's link
side feels only the unified bodies of step 1. Otherwise the spin reactions of
those motors and the damper's ``D (thetad - qd)`` are left out of ``theta_d``
(Spong's reduced model), an error of order ``eta I_mz thetadd / K`` and
``D tau_l_dot / K^2`` in ``theta_d``; the torques of step 3 still use the
full model.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.gfd import rnea_second_time_derivative
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


class MotorReference(NamedTuple):
    """Feedforward at one instant: motor positions/velocities/accelerations (n_e,)
    and the motor torques ``tau`` (n,) of every joint."""

    theta: Array
    thetad: Array
    thetadd: Array
    tau: Array


def _moves_with(links: RobotModel, joint: int, body: int) -> bool:
    """Whether ``body`` is in the subtree moved by ``joint``."""
    while body >= 0:
        if body == joint:
            return True
        body = int(links.parent[body])
    return False


def inexact_reasons(model: ElasticModel) -> list[str]:
    """Why the feedforward of ``model`` is not exact (empty: it is)."""
    links = model.links
    reasons = []
    for e in model.elastic_joints:
        if model.damping[e] > 0.0:
            reasons.append(f"elastic joint '{links.joint_names[e]}' has damping")
        for m, body in enumerate(model.motor_body):
            if _moves_with(links, int(e), int(body)) and model.motor_inertia[m, 2] > 0.0:
                reasons.append(f"motor of '{links.joint_names[model.motor_joint[m]]}' rides on "
                               f"'{links.body_names[body]}', moved by elastic joint "
                               f"'{links.joint_names[e]}'")
    return reasons


class Feedforward:
    """Exact feedforward of :mod:`this module <rnea_ros.core.elastic.feedforward>` for ``model``."""

    def __init__(self, model: ElasticModel) -> None:
        self.model = model
        self.reasons = inexact_reasons(model)
        self.exact = not self.reasons

    def __call__(self, q: Array, qd: Array, qdd: Array, qddd: Array, qdddd: Array, *,
                 gravity: object | None = None) -> MotorReference:
        """Feedforward at the link state ``(q, qd, qdd)`` with jerk ``qddd``, snap ``qdddd``."""
        m = self.model
        e = m.elastic_joints
        theta, thetad, thetadd = (np.asarray(x, dtype=np.float64)[e].copy()
                                  for x in (q, qd, qdd))
        if m.n_elastic:
            tau_l, tau_l_dot, tau_l_ddot = rnea_second_time_derivative(
                m.unified, q, qd, qdd, qddd, qdddd, gravity=gravity)
            K = m.stiffness[e]
            theta += tau_l[e] / K
            thetad += tau_l_dot[e] / K
            thetadd += tau_l_ddot[e] / K
        tau = elastic_rnea(m, q, theta, qd, thetad, qdd, thetadd, gravity=gravity).tau
        return MotorReference(theta, thetad, thetadd, tau)


__all__ = ["Feedforward", "MotorReference", "inexact_reasons"]
