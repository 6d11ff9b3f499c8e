"""Physically consistent standard parameters from identified base parameters.

A convex problem (Wensing, Kim, Slotine 2017, "Linear matrix inequalities for
physically consistent inertial parameter identification", the pseudo-inertia LMI; Sousa &
Cortesao 2014 for the regularised form): find the standard parameters
``theta`` (14 n,) minimising

    ``||R (K theta - x)||^2 + lam * sum_k ((theta_k - prior_k) / s_k)^2``

where ``x`` are the weighted least-squares base parameters and ``R`` the
triangular factor of the weighted observation matrix
(:mod:`~rnea_ros.identification.estimation`): the first term is the increase
of the weighted residual, in units of the noise variance (moving a base
parameter by one standard deviation costs 1), so the solver's tolerance is
uniform over well and poorly excited directions. The prior is the URDF (and
drive-file) model, ``s_k`` a per-parameter scale and ``lam = 1e-3`` small:
the data fix what they determine, the prior the rest (the non-identifiable
directions, and what the data did not excite), subject to, per body ``j``,

    ``J_j(theta) - J_j^fixed >= eps I_4``, the 4x4 pseudo-inertia
    ``J = [[tr(I_o)/2 1 - I_o, h], [h^T, m]]``

(``J >= 0`` is density realisability: positive mass, positive semi-definite
inertia about the COM satisfying the triangle inequalities). ``J^fixed`` is
the part of the body that comes from links welded to it by fixed joints,
kept from the URDF, so each link written back is itself consistent. Drive
parameters: ``Ia, Fv, Fc >= 0``. Solved by cvxpy (Clarabel, else SCS).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification import parameters
from rnea_ros.identification.errors import IdentificationError

Array = NDArray[np.float64]


def pseudo_inertia(m: Any, h: Any, Io: Any) -> Any:
    """``J`` (4, 4) from mass, first moment (3,) and inertia about the origin (3, 3)."""
    Sigma = 0.5 * np.trace(Io) * np.eye(3) - Io
    return np.block([[Sigma, h.reshape(3, 1)], [h.reshape(1, 3), np.array([[m]])]])


def parameter_scales(model: RobotModel, prior: Array) -> Array:
    """A scale per standard parameter (the prior term's units): mass ``M``,
    first moment ``M L``, inertia ``M L^2`` with the body's mass (at least
    1% of the robot's) and ``L = 0.1 m``; drive terms: the prior's value, at
    least ``0.1`` for ``Ia`` and ``1`` for ``Fv, Fc, off`` (SI units)."""
    n = model.nv
    mass = np.maximum(prior[0:10 * n:10], 0.01 * max(float(prior[0:10 * n:10].sum()), 1e-3))
    scales = np.empty_like(prior)
    for j in range(n):
        M = float(mass[j])
        scales[10 * j:10 * j + 10] = [M, *([0.1 * M] * 3), *([0.01 * M] * 6)]
    drive = np.abs(prior[10 * n:]).reshape(n, 4)
    # Drive terms are often unknown (0) in a URDF: generous scales, so the prior does
    # not hold back what the data determine (Ia [kg m^2], Fv [N m s], Fc, off [N m]).
    scales[10 * n:] = np.maximum(drive, [0.1, 1.0, 1.0, 1.0]).ravel()
    return scales


def fixed_parts(model: RobotModel, fixed: dict[int, tuple[float, Array, Array]]) -> list[Array]:
    """Pseudo-inertias ``J^fixed`` per body from ``{body: (m, h, I_o)}`` (zero when absent)."""
    out = []
    for j in range(model.nv):
        if j in fixed:
            m, h, Io = fixed[j]
            out.append(pseudo_inertia(m, h, Io))
        else:
            out.append(np.zeros((4, 4)))
    return out


def consistent_parameters(model: RobotModel, K: Array, R: Array, x: Array, prior: Array, *,
                          fixed: dict[int, tuple[float, Array, Array]] | None = None,
                          weight: float = 1e-3, eps: float = 1e-6) -> Array:
    """Standard parameters ``theta`` (14 n,) solving the problem of the module docstring.

    ``weight`` is ``lam``; ``eps`` the margin of each pseudo-inertia relative
    to its prior's trace.
    """
    cp: Any = importlib.import_module("cvxpy")  # untyped at runtime use: keep mypy out

    n = model.nv
    p = parameters.count(model)
    theta = cp.Variable(p)
    scales = parameter_scales(model, prior)
    objective = (cp.sum_squares(R @ (K @ theta - x))
                 + weight * cp.sum_squares(cp.multiply(1.0 / scales, theta - prior)))
    constraints = []
    J_fixed = fixed_parts(model, fixed or {})
    for j in range(n):
        t = theta[10 * j:10 * j + 10]
        Io = cp.bmat([[t[4], t[5], t[7]], [t[5], t[6], t[8]], [t[7], t[8], t[9]]])
        Sigma = 0.5 * (t[4] + t[6] + t[9]) * np.eye(3) - Io
        h = cp.reshape(t[1:4], (3, 1), order="F")
        J = cp.bmat([[Sigma, h], [h.T, cp.reshape(t[0], (1, 1), order="F")]])
        m0, h0, I0 = parameters.body_parameters(prior, j)
        size = max(float(np.trace(pseudo_inertia(m0, h0, I0))), 1e-6)
        constraints.append(J - J_fixed[j] >> eps * size * np.eye(4))
    drive = theta[10 * n:]
    for k in range(3):  # Ia, Fv, Fc >= 0 (offsets are free)
        constraints.append(drive[k::4] >= 0.0)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    for solver in ("CLARABEL", "SCS"):
        if solver not in cp.installed_solvers():
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                problem.solve(solver=solver)
        except cp.error.SolverError:
            continue
        if problem.status in ("optimal", "optimal_inaccurate") and theta.value is not None:
            return np.asarray(theta.value, dtype=np.float64)
    raise IdentificationError(
        f"the physical-consistency problem could not be solved (status {problem.status}); "
        "the least-squares base parameters are in the report")
