"""The one adapter between the planner and the RNEA sensitivities, over a grid.

Barman (2020) ch. III differentiates the recursive Newton-Euler equations: the
torques ``tau`` and the internal joint forces ``F`` with respect to the state
``(q, qd, qdd)``; we need them, and the same for the torque rate
``tau_dot = dtau/dq qd + dtau/dqd qdd + M qddd``, at every point of the
planner's constraint grid. Shapes: grid arrays (N, n); Jacobians (N, n, n)
``[k, i, j] = d out_i / d x_j``; wrenches (N, n, 6) ``[force, moment]`` in each
body's frame (as :func:`rnea_ros.core.rnea_with_wrenches`), their Jacobians
(N, n, 6, n).

The analytic sensitivities are ``rnea_ros.core.rnea_derivatives_batch``,
``joint_wrench_derivatives`` and ``rnea_derivative_sensitivities``.
``ANALYTIC`` says whether they are present.

TEMPORARY FALLBACK (central differences of ``rnea_batch``,
``rnea_with_wrenches`` and ``rnea_derivative_batch``), used only while the
analytic API is missing from ``rnea_ros.core``; it is removed once it is.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

ANALYTIC = all(hasattr(rc, name) for name in
               ("rnea_derivatives_batch", "joint_wrench_derivatives",
                "rnea_derivative_sensitivities"))

_H = 1e-6  # central-difference step of the fallback


def torque(model: RobotModel, Q: Array, V: Array, A: Array) -> tuple[Array, ...]:
    """``(tau, dtau_dq, dtau_dqd, M)``: (N, n) and three (N, n, n)."""
    tau = rc.rnea_batch(model, Q, V, A)
    if ANALYTIC:
        dq, dv, M = rc.rnea_derivatives_batch(model, Q, V, A)  # type: ignore[attr-defined]
        return tau, dq, dv, M
    dq, dv, da = (_fd_batch(lambda X, k=k: rc.rnea_batch(model, *_swap((Q, V, A), k, X)),
                            (Q, V, A)[k]) for k in range(3))
    return tau, dq, dv, da


def torque_rate(model: RobotModel, Q: Array, V: Array, A: Array, J: Array) -> tuple[Array, ...]:
    """``(tau_dot, d_dq, d_dqd, d_dqdd, d_dqddd)``: (N, n) and four (N, n, n)."""
    if ANALYTIC:
        out = [rc.rnea_derivative_sensitivities(model, *x)  # type: ignore[attr-defined]
               for x in zip(Q, V, A, J, strict=True)]
        return tuple(np.array([o[i] for o in out]) for i in range(5))
    tau_dot = rc.rnea_derivative_batch(model, Q, V, A, J)[1]
    state = (Q, V, A, J)
    jac = (_fd_batch(lambda X, k=k: rc.rnea_derivative_batch(model, *_swap(state, k, X))[1],
                     state[k]) for k in range(4))
    return (tau_dot, *jac)


def wrenches(model: RobotModel, Q: Array, V: Array, A: Array) -> tuple[Array, ...]:
    """``(W, dW_dq, dW_dqd, dW_dqdd)``: (N, n, 6) and three (N, n, 6, n)."""
    if ANALYTIC:
        out = [rc.joint_wrench_derivatives(model, *x)  # type: ignore[attr-defined]
               for x in zip(Q, V, A, strict=True)]
        return tuple(np.array([o[i] for o in out]) for i in range(4))

    def batch(Qb: Array, Vb: Array, Ab: Array) -> Array:
        return np.array([rc.rnea_with_wrenches(model, *x)[1].ravel()
                         for x in zip(Qb, Vb, Ab, strict=True)])

    N, n = Q.shape
    W = batch(Q, V, A).reshape(N, n, 6)
    jac = [_fd_batch(lambda X, k=k: batch(*_swap((Q, V, A), k, X)), (Q, V, A)[k])
           .reshape(N, n, 6, n) for k in range(3)]
    return (W, *jac)


def _swap(state: tuple[Array, ...], k: int, X: Array) -> tuple[Array, ...]:
    """``state`` tiled over X's leading (2n) perturbations with entry k replaced by X."""
    reps = X.shape[0] // state[0].shape[0]
    return tuple(X if i == k else np.tile(s, (reps, 1)) for i, s in enumerate(state))


def _fd_batch(f, X: Array) -> Array:  # type: ignore[no-untyped-def]
    """Central differences of f: (N, n) -> (N, p) at every row: (N, p, n). FALLBACK ONLY."""
    N, n = X.shape
    h = _H * np.maximum(1.0, np.abs(X))
    Xs = np.concatenate([X + h[:, [j]] * np.eye(n)[j] for j in range(n)]
                        + [X - h[:, [j]] * np.eye(n)[j] for j in range(n)])
    Y = f(Xs).reshape(2, n, N, -1)
    return np.moveaxis((Y[0] - Y[1]) / (2 * h.T[:, :, None]), 0, 2)
