"""Platform + legs dynamics (Khalil 2010 §5) against Pinocchio's constrained dynamics.

Pinocchio builds the same URDF spanning tree with its own parser and closes the
loops of the loop file with ``RigidConstraintModel``s (CONTACT_3D at the
Gough-Stewart's cut spherical joints, CONTACT_6D at the Delta's welded
brackets); ``pin.constraintDynamics`` then gives the tree's accelerations under
our active forces, which must be the motion we asked for. Khalil's §5 gives no
numerical example, so there are no paper numbers to reproduce.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import relative_error
from parallel_oracle import PlatformOracle, load_sample, random_states, sample_path

import rnea_ros.core as rc

NAMES = ("gough_stewart", "delta")
COUNT = 40


@pytest.fixture(scope="module", params=NAMES)
def case(request):
    robot = load_sample(request.param)
    oracle = PlatformOracle(robot, sample_path(request.param))
    return robot, oracle, random_states(robot, COUNT, seed=3)


def test_inverse_dynamics_reproduces_the_motion_under_pinocchio(case) -> None:
    """Our active forces, fed to pin.constraintDynamics, give back the platform's
    acceleration and every tree joint's (legs and the joints on the platform)."""
    robot, oracle, (X, XD, XDD) = case
    for x, xd, xdd in zip(X, XD, XDD, strict=True):
        tau = rc.platform_inverse_dynamics(robot, x, xd, xdd)
        q, qd, qdd = rc.platform_tree_state(robot, x, xd, xdd)
        qdd_pin, platform = oracle.accelerations(q, qd, tau)
        assert relative_error(qdd, qdd_pin) < 1e-9
        assert relative_error(xdd, platform) < 1e-9


def test_forward_dynamics_agrees_with_pinocchio(case) -> None:
    """Random active forces (about the gravity-holding ones): our platform acceleration
    (eq. 58 inverted) is Pinocchio's."""
    robot, oracle, (X, XD, _) = case
    rng = np.random.default_rng(7)
    for x, xd in zip(X, XD, strict=True):
        hold = rc.platform_inverse_dynamics(robot, x, np.zeros(robot.nv), np.zeros(robot.nv))
        tau = hold * (1.0 + rng.normal(0.0, 0.3, robot.nv)) + rng.normal(0.0, 2.0, robot.nv)
        xdd = rc.platform_forward_dynamics(robot, x, xd, tau)
        q, qd, _ = rc.platform_tree_state(robot, x, xd)
        _, platform = oracle.accelerations(q, qd, tau)
        assert relative_error(xdd, platform) < 1e-9
        assert relative_error(rc.platform_inverse_dynamics(robot, x, xd, xdd), tau) < 1e-12


def test_batch_forms_match_the_per_call_ones(case) -> None:
    robot, _, (X, XD, XDD) = case
    tau = rc.platform_inverse_dynamics_batch(robot, X, XD, XDD)
    for k in range(len(X)):
        assert np.array_equal(tau[k], rc.platform_inverse_dynamics(robot, X[k], XD[k], XDD[k]))
    xdd = rc.platform_forward_dynamics_batch(robot, X, XD, tau)
    assert relative_error(xdd, XDD) < 1e-10
    g = np.array([0.3, -0.2, -9.7])
    assert np.array_equal(rc.platform_inverse_dynamics_batch(robot, X, XD, XDD, gravity=g)[5],
                          rc.platform_inverse_dynamics(robot, X[5], XD[5], XDD[5], gravity=g))
