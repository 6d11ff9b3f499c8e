"""The two closed-loop formulations agree on the same robot (issue 13 §2).

The Gough-Stewart and the Delta, each from one URDF spanning tree and one loop
file, run through

* the platform + legs formulation (Khalil 2010 §5, eq. 66): Cartesian platform
  state in, each leg in closed form, ``rc.platform_inverse_dynamics``;
* the general closed-loop formulation (Khalil §4, eq. 55-58): the tree's RNEA at
  a closed tree state projected on the active joints, ``rc.loop_rnea`` on
  ``rc.load_loops(tree, loop file)``.

They share the tree model and the loop file, not the closed-loop algebra: §4
gets ``G`` from the loop constraint Jacobians (a QR of ``K_p``), §5 from the
legs' 3x3 Jacobians and ``J_p``. The tree state comes from
``rc.platform_tree_state`` at random reachable platform states; §4 is given only
``q`` and the active rates and accelerations, and must find the passive ones
itself. Measured: 1e-14 relative at worst.
"""

from __future__ import annotations

import numpy as np
import pytest
from parallel_oracle import load_sample, random_states, sample_path

import rnea_ros.core as rc
from rnea_ros.core.coupling.loop_file import loop_file_path

NAMES = ("gough_stewart", "delta")
COUNT = 60
TOL = 1e-9  # relative, per sample


def worst(ours: np.ndarray, reference: np.ndarray) -> float:
    """Worst over the samples (rows) of ``max |ours - reference| / max |reference|``."""
    scale = np.maximum(np.abs(reference).max(axis=1), 1e-12)
    return float((np.abs(ours - reference).max(axis=1) / scale).max())


@pytest.fixture(scope="module", params=NAMES)
def case(request):
    robot = load_sample(request.param)
    model = rc.load_loops(robot.tree, loop_file_path(sample_path(request.param)))
    X, XD, XDD = random_states(robot, COUNT, seed=11)
    states = [rc.platform_tree_state(robot, *s) for s in zip(X, XD, XDD, strict=True)]
    Q, QD, QDD = (np.array([s[k] for s in states]) for k in range(3))
    return robot, model, (X, XD, XDD), (Q, QD, QDD)


def test_same_mechanism_from_the_same_files(case) -> None:
    robot, model, _, _ = case
    assert model.tree is robot.tree
    assert model.active_names == robot.active
    assert model.mobility == robot.nv
    assert model.loops == robot.loops  # one reader: the same rc.Loop values
    spec = rc.read_loop_file(loop_file_path(sample_path(robot.name)))  # read once, used twice
    assert rc.load_loops(robot.tree, spec).loops == type(robot).from_model(robot.tree, spec).loops


def test_closed_loop_kinematics_finds_the_same_passive_rates(case) -> None:
    """From ``q`` and the active rates alone, §4's ``G`` (eq. 56) and ``Gdot qd_a``
    give every tree joint's rate and acceleration that §5's legs give."""
    _, model, _, (Q, QD, QDD) = case
    a = model.active_index
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        assert np.abs(rc.loop_residual(model, q)).max() < 1e-12
        assert np.abs(rc.loop_velocities(model, q, qd[a]) - qd).max() < 1e-12 * max(
            1.0, np.abs(qd).max())
        assert worst(rc.loop_accelerations(model, q, qd[a], qdd[a])[None], qdd[None]) < TOL


def test_solve_loops_reaches_the_tree_state_of_the_inverse_geometry(case) -> None:
    """Newton on eq. 3 from the file's reference, given the active joints of the
    legs' closed-form inverse geometry, lands on the same tree configuration."""
    robot, model, (X, _, _), (Q, _, _) = case
    for x, q in zip(X[:12], Q[:12], strict=True):
        qa = rc.platform_inverse_geometry(robot, x)
        assert np.abs(rc.solve_loops(model, qa) - q).max() < 1e-10


def test_inverse_dynamics_eq_66_equals_eq_55(case) -> None:
    robot, model, (X, XD, XDD), (Q, QD, QDD) = case
    a = model.active_index
    tau_platform = rc.platform_inverse_dynamics_batch(robot, X, XD, XDD)
    tau_loops = np.array([rc.loop_rnea(model, q, qd[a], qdd[a])
                          for q, qd, qdd in zip(Q, QD, QDD, strict=True)])
    assert worst(tau_loops, tau_platform) < TOL
    assert worst(rc.loop_rnea_batch(model, Q, QD[:, a], QDD[:, a]), tau_platform) < TOL
    g = np.array([0.4, -0.3, -9.6])  # another gravity, both ways
    assert worst(rc.loop_rnea(model, Q[0], QD[0, a], QDD[0, a], gravity=g)[None],
                 rc.platform_inverse_dynamics(robot, X[0], XD[0], XDD[0], gravity=g)[None]
                 ) < TOL


def test_forward_dynamics_both_ways(case) -> None:
    """Random active forces about the gravity-holding ones: the platform acceleration
    of §5's direct model, carried to the tree by ``platform_tree_state``, gives the
    active accelerations of eq. 58."""
    robot, model, (X, XD, _), (Q, QD, _) = case
    a = model.active_index
    rng = np.random.default_rng(13)
    hold = rc.platform_inverse_dynamics_batch(robot, X, np.zeros_like(XD), np.zeros_like(XD))
    tau = hold * (1.0 + rng.normal(0.0, 0.3, hold.shape)) + rng.normal(0.0, 2.0, hold.shape)
    xdd = rc.platform_forward_dynamics_batch(robot, X, XD, tau)
    qdd_platform = np.array([rc.platform_tree_state(robot, x, xd, xdd_)[2][a]
                             for x, xd, xdd_ in zip(X, XD, xdd, strict=True)])
    qdd_loops = np.array([rc.loop_forward_dynamics(model, q, qd[a], t)
                          for q, qd, t in zip(Q, QD, tau, strict=True)])
    assert worst(qdd_loops, qdd_platform) < TOL
    assert worst(rc.loop_forward_dynamics_batch(model, Q, QD[:, a], tau), qdd_platform) < TOL
