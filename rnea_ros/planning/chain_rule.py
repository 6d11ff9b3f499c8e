"""Barman (2020) eq. 4.15: sensitivities of any state function to the control points and T.

For an output ``y(q, qd, qdd[, qddd])`` (p values per grid point) with state
Jacobians ``J_r = dy / d q^(r)`` (N, p, n) at grid points ``s_k``, and the
spline ``q^(r)(s_k) = T^-r B^(r)(s_k) P`` (:mod:`rnea_ros.planning.bspline`)::

    dy_k / dP_aj = sum_r J_r[k, :, j] B^(r)[k, a] / T^r                  (eq. 4.15)
    dy_k / dT    = - sum_r r J_r[k] q^(r)_k / T                          (knots scale with T)

The first line is eq. 4.15 (Barman writes it for tau and F with r = 0..2;
the torque rate adds r = 3); the second is the knot-vector part of Barman's
design variables ``x = [P, s]`` with ``s = T * (fixed knots)`` (eq. 4.14).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def chain_rule(jacobians: Sequence[Array], bases: Sequence[Array], states: Sequence[Array],
               T: float) -> tuple[Array, Array]:
    """``(dy/dP (N, p, m * n), dy/dT (N, p))`` from ``J_r`` (N, p, n), ``B^(r)`` (N, m),
    ``q^(r)`` (N, n) for r = 0, 1, ...; ``P`` flattened row-major (control point, joint)."""
    N, p, n = jacobians[0].shape
    m = bases[0].shape[1]
    dP = np.zeros((N, p, m, n))
    dT = np.zeros((N, p))
    for r, (J, B, x) in enumerate(zip(jacobians, bases, states, strict=True)):
        dP += np.einsum("kij,ka->kiaj", J, B) / T**r
        if r:
            dT -= r * np.einsum("kij,kj->ki", J, x) / T
    return dP.reshape(N, p, m * n), dT
