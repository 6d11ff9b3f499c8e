"""coriolis.py: the Coriolis matrix and the O(n) product ``C(q, qd) x``.

Against Pinocchio on every sample URDF and 14 example-robot-data robots (50 random
states each, relative error <= 1e-9, dynamics_cases.agreement_case); on random trees,
``dM/dt - 2C`` is skew and ``C qd = h - g``.
"""

from __future__ import annotations

import numpy as np
import pytest
from dynamics_cases import SAMPLES, TOL, Case, FreeFlyerCase, close, tree_states
from oracle import relative_error
from trees import random_tree

from rnea_ros.core.dynamics.coriolis import coriolis_matrix, coriolis_product
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.rnea import gravity_torques, nonlinear_effects

SEEDS = range(12)


def test_coriolis_matrix(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    for q, qd in list(zip(pin_case.q, pin_case.qd, strict=True))[:50]:
        assert relative_error(coriolis_matrix(m, q, qd), o.coriolis(q, qd)) <= TOL


def test_coriolis_product(pin_case: Case) -> None:
    """``C(q, qd) x`` in O(n) against Pinocchio's C times x (x unrelated to qd)."""
    m, o = pin_case.model, pin_case.oracle
    rng = np.random.default_rng(5)
    for q, qd in list(zip(pin_case.q, pin_case.qd, strict=True))[:50]:
        x = rng.normal(0.0, 2.0, m.nv)
        assert relative_error(coriolis_product(m, q, qd, x), o.coriolis(q, qd) @ x) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_derivative_minus_twice_coriolis_is_skew(seed: int) -> None:
    model = random_tree(seed)
    eps = 1e-6
    for q, qd, _ in tree_states(model, seed, 5):
        C = coriolis_matrix(model, q, qd)
        M_dot = (mass_matrix(model, q + eps * qd) - mass_matrix(model, q - eps * qd)) / (2 * eps)
        N = M_dot - 2 * C
        assert np.abs(N + N.T).max() <= 1e-6 * max(np.abs(M_dot).max(), 1.0)
        assert close(C @ qd, nonlinear_effects(model, q, qd) - gravity_torques(model, q))


# ----------------------------------- free-flyer robots against Pinocchio (1000 states)
def test_coriolis_matrix_and_product(ff_case: FreeFlyerCase) -> None:
    m, o = ff_case.model, ff_case.oracle
    rng = np.random.default_rng(12)
    for k in range(0, SAMPLES, 100):
        C = coriolis_matrix(m, ff_case.q[k], ff_case.v[k])
        theirs = o.coriolis(ff_case.q[k], ff_case.v[k])
        assert relative_error(C, theirs) < TOL
        x = rng.normal(size=m.nv)
        assert relative_error(coriolis_product(m, ff_case.q[k], ff_case.v[k], x), theirs @ x) < TOL


def test_coriolis_skew_symmetry_along_the_lie_group_motion(ff_case: FreeFlyerCase) -> None:
    """dM/dt - 2C is skew, dM/dt by central differences along q(t) = q (+) t v
    (Pinocchio's integrate: the base moves with the constant body twist v)."""
    m, o = ff_case.model, ff_case.oracle
    eps = 1e-6
    ours = np.concatenate([np.arange(i, i + n) for i, n in zip(o.idx_q, o.nq_j, strict=True)])
    for k in range(0, SAMPLES, 250):
        q, v = ff_case.q[k], ff_case.v[k]
        forward = o.pin.integrate(o.pm, o.config(q), o.tangent(eps * v))
        backward = o.pin.integrate(o.pm, o.config(q), o.tangent(-eps * v))
        Mdot = (mass_matrix(m, forward[ours]) - mass_matrix(m, backward[ours])) / (2 * eps)
        N = Mdot - 2.0 * coriolis_matrix(m, q, v)
        assert np.abs(N + N.T).max() <= 1e-6 * np.abs(Mdot).max()
