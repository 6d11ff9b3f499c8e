"""The one adapter between the planner and the RNEA sensitivities, over a grid.

Barman (2020) ch. III differentiates the recursive Newton-Euler equations: the
torques ``tau`` and the internal joint forces ``F`` with respect to the state
``(q, qd, qdd)``; we need them, and the same for the torque rate
``tau_dot = dtau/dq qd + dtau/dqd qdd + M qddd``, at every point of the
planner's constraint grid. Shapes: grid arrays (N, n); Jacobians (N, n, n)
``[k, i, j] = d out_i / d x_j``; wrenches (N, n, 6) ``[force, moment]`` in each
body's frame (as :func:`rnea_ros.core.rnea_with_wrenches`), their Jacobians
(N, n, 6, n). All analytic (:mod:`rnea_ros.core.dynamics.derivatives`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def torque(model: RobotModel, Q: Array, V: Array, A: Array) -> tuple[Array, Array, Array, Array]:
    """``(tau, dtau_dq, dtau_dqd, M)``: (N, n) and three (N, n, n)."""
    dq, dv, M = rc.rnea_derivatives_batch(model, Q, V, A)
    return rc.rnea_batch(model, Q, V, A), dq, dv, M


def torque_rate(model: RobotModel, Q: Array, V: Array, A: Array,
                J: Array) -> tuple[Array, Array, Array, Array, Array]:
    """``(tau_dot, d_dq, d_dqd, d_dqdd, d_dqddd)``: (N, n) and four (N, n, n)."""
    return rc.rnea_time_derivative_sensitivities_batch(model, Q, V, A, J)


def wrenches(model: RobotModel, Q: Array, V: Array, A: Array) -> tuple[Array, Array, Array, Array]:
    """``(W, dW_dq, dW_dqd, dW_dqdd)``: (N, n, 6) and three (N, n, 6, n), row ``j`` the
    wrench through joint ``j`` (on the body it moves, ``model.joint_body[j]``: with mimic
    joints the followers' bodies, which have no limit of their own, are left out)."""
    W, dq, dv, da = rc.joint_wrench_derivatives_batch(model, Q, V, A)
    if model.nbodies == model.nv:
        return W, dq, dv, da
    body = model.joint_body
    return W[:, body], dq[:, body], dv[:, body], da[:, body]
