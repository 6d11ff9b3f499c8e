"""crba.py: the joint-space mass matrix, per call and batched, against Pinocchio's CRBA
on every sample URDF and 14 example-robot-data robots, 1000 random states each,
relative error <= 1e-9 (dynamics_cases.agreement_case). ``tau = M qdd + h`` is in
test_rnea.py."""

from __future__ import annotations

import numpy as np
from dynamics_cases import TOL, Case, FreeFlyerCase
from oracle import relative_error

from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch


def test_mass_matrix(pin_case: Case) -> None:
    m, o = pin_case.model, pin_case.oracle
    ours = np.array([mass_matrix(m, q) for q in pin_case.q])
    ref = np.array([o.mass_matrix(q) for q in pin_case.q])
    assert relative_error(ours, ref) <= TOL
    assert relative_error(mass_matrix_batch(m, pin_case.q), ref) <= TOL


# ----------------------------------- free-flyer robots against Pinocchio (1000 states)
def test_mass_matrix_free_flyer(ff_case: FreeFlyerCase) -> None:
    m, o = ff_case.model, ff_case.oracle
    M = mass_matrix_batch(m, ff_case.q)
    theirs = np.array([o.mass_matrix(q) for q in ff_case.q])  # symmetrised, then G^T M G
    assert relative_error(M, theirs) < TOL
    assert relative_error(mass_matrix(m, ff_case.q[0]), M[0]) < TOL
