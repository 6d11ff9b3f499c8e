"""parallel.py: platform + legs dynamics (Khalil 2010 §5) of the sample Gough-Stewart
and Delta robots.

* Against Pinocchio's constrained dynamics. Pinocchio builds the same URDF spanning
  tree with its own parser and closes the loops of the loop file with
  ``RigidConstraintModel``s (CONTACT_3D at the Gough-Stewart's cut spherical joints,
  CONTACT_6D at the Delta's welded brackets); ``pin.constraintDynamics`` then gives
  the tree's accelerations under our active forces, which must be the motion we
  asked for. Khalil's §5 gives no numerical example, so there are no paper numbers
  to reproduce.
* Against identities that share no code with it: closure of the loops, derivatives
  of the geometric models, eq. 55-56 (the closed-loop formulation of §4 on the
  spanning tree), eq. 59's power balance, energy conservation along a trajectory and
  static equilibrium.

Bad input: test_parallel_errors.py; against the closed-loop algorithms of
loop_dynamics.py: test_parallel_vs_loops.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import relative_error
from parallel_oracle import (
    PlatformOracle,
    active_indices,
    load_sample,
    random_states,
    rotation_vector,
    sample_path,
)

import rnea_ros.core as rc
from rnea_ros.core.coupling.parallel import _rotation
from rnea_ros.core.coupling.parallel_kinematics import _retract
from rnea_ros.core.coupling.parallel_model import quaternion_of

NAMES = ("gough_stewart", "delta")
COUNT = 40  # states per robot against Pinocchio


# ------------------------------------------------------------ against Pinocchio
@pytest.fixture(scope="module", params=NAMES)
def pin_case(request):
    """A sample robot, its Pinocchio oracle and 40 random platform states."""
    robot = load_sample(request.param)
    oracle = PlatformOracle(robot, sample_path(request.param))
    return robot, oracle, random_states(robot, COUNT, seed=3)


def test_inverse_dynamics_reproduces_the_motion_under_pinocchio(pin_case) -> None:
    """Our active forces, fed to pin.constraintDynamics, give back the platform's
    acceleration and every tree joint's (legs and the joints on the platform)."""
    robot, oracle, (X, XD, XDD) = pin_case
    for x, xd, xdd in zip(X, XD, XDD, strict=True):
        tau = rc.platform_inverse_dynamics(robot, x, xd, xdd)
        q, qd, qdd = rc.platform_tree_state(robot, x, xd, xdd)
        qdd_pin, platform = oracle.accelerations(q, qd, tau)
        assert relative_error(qdd, qdd_pin) < 1e-9
        assert relative_error(xdd, platform) < 1e-9


def test_forward_dynamics_agrees_with_pinocchio(pin_case) -> None:
    """Random active forces (about the gravity-holding ones): our platform acceleration
    (eq. 58 inverted) is Pinocchio's."""
    robot, oracle, (X, XD, _) = pin_case
    rng = np.random.default_rng(7)
    for x, xd in zip(X, XD, strict=True):
        hold = rc.platform_inverse_dynamics(robot, x, np.zeros(robot.nv), np.zeros(robot.nv))
        tau = hold * (1.0 + rng.normal(0.0, 0.3, robot.nv)) + rng.normal(0.0, 2.0, robot.nv)
        xdd = rc.platform_forward_dynamics(robot, x, xd, tau)
        q, qd, _ = rc.platform_tree_state(robot, x, xd)
        _, platform = oracle.accelerations(q, qd, tau)
        assert relative_error(xdd, platform) < 1e-9
        assert relative_error(rc.platform_inverse_dynamics(robot, x, xd, xdd), tau) < 1e-12


def test_batch_forms_match_the_per_call_ones(pin_case) -> None:
    robot, _, (X, XD, XDD) = pin_case
    tau = rc.platform_inverse_dynamics_batch(robot, X, XD, XDD)
    for k in range(len(X)):
        assert np.array_equal(tau[k], rc.platform_inverse_dynamics(robot, X[k], XD[k], XDD[k]))
    xdd = rc.platform_forward_dynamics_batch(robot, X, XD, tau)
    assert relative_error(xdd, XDD) < 1e-10
    g = np.array([0.3, -0.2, -9.7])
    assert np.array_equal(rc.platform_inverse_dynamics_batch(robot, X, XD, XDD, gravity=g)[5],
                          rc.platform_inverse_dynamics(robot, X[5], XD[5], XDD[5], gravity=g))


# ------------------------------------------------------------------ identities
@pytest.fixture(scope="module", params=NAMES)
def identity_case(request):
    """A sample robot and 12 random platform states."""
    robot = load_sample(request.param)
    return robot, random_states(robot, 12, seed=5)


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def test_tree_state_closes_every_loop(identity_case) -> None:
    robot, (X, _, _) = identity_case
    tree = robot.tree
    for x in X:
        q, _, _ = rc.platform_tree_state(robot, x)
        Rp, pp = rc.link_pose(tree, q, robot.platform)
        assert np.abs(pp - x[:3]).max() < 1e-12
        if robot.nx == 3:  # a Delta's platform only translates
            assert np.abs(Rp - robot.orientation).max() < 1e-12
        for cut in robot.loops:
            R1, p1 = rc.link_pose(tree, q, cut.link1)
            R2, p2 = rc.link_pose(tree, q, cut.link2)
            F1 = (R1 @ cut.frame1[0], p1 + R1 @ cut.frame1[1])
            F2 = (R2 @ cut.frame2[0], p2 + R2 @ cut.frame2[1])
            assert np.abs(F1[1] - F2[1]).max() < 1e-12, cut.name
            if cut.type == "weld":
                assert np.abs(F1[0] - F2[0]).max() < 1e-12, cut.name
        for k, leg in enumerate(robot.legs):
            lower, upper = leg.model.lower_limit, leg.model.upper_limit
            q_leg = q[[tree.joint_index(j) for j in leg.joints]]
            assert np.all(lower <= q_leg) and np.all(q_leg <= upper)
            assert q[tree.joint_index(robot.active[k])] == q_leg[leg.active]


def test_forward_geometry_inverts_inverse_geometry(identity_case) -> None:
    robot, (X, _, _) = identity_case
    for x in X:
        qa = rc.platform_inverse_geometry(robot, x)
        back = rc.platform_forward_geometry(robot, qa)
        assert np.abs(back[:3] - x[:3]).max() < 1e-10
        if robot.nx == 7:
            assert min(np.abs(back[3:] - x[3:]).max(), np.abs(back[3:] + x[3:]).max()) < 1e-10
        assert np.abs(rc.platform_inverse_geometry(robot, back) - qa).max() < 1e-12


def test_inverse_jacobian_is_the_derivative_of_inverse_geometry(identity_case) -> None:
    robot, (X, _, _) = identity_case
    h = 1e-6
    for x in X[:4]:
        Jinv = rc.platform_inverse_jacobian(robot, x)
        fd = np.column_stack([
            (rc.platform_inverse_geometry(robot, _retract(robot, x, h * e))
             - rc.platform_inverse_geometry(robot, _retract(robot, x, -h * e))) / (2 * h)
            for e in np.eye(robot.nv)])
        assert relative_error(Jinv, fd) < 1e-8


def _tree_jacobian(robot, x):
    """G = d qd_tree / d qd_a (eq. 56) from tree states at xd = J_p e_k."""
    Jp = np.linalg.inv(rc.platform_inverse_jacobian(robot, x))
    return np.column_stack([rc.platform_tree_state(robot, x, Jp[:, k])[1]
                            for k in range(robot.nv)])


def test_agrees_with_the_closed_loop_tree_projection_of_eq_55(identity_case) -> None:
    """Gamma_c = G^T Gamma_tr (eq. 55-56): our RNEA on the whole spanning tree,
    projected on the active joints, equals the platform + legs result (eq. 66)."""
    robot, (X, XD, XDD) = identity_case
    for x, xd, xdd in zip(X, XD, XDD, strict=True):
        q, qd, qdd = rc.platform_tree_state(robot, x, xd, xdd)
        G = _tree_jacobian(robot, x)
        assert np.abs(G[active_indices(robot)] - np.eye(robot.nv)).max() < 1e-12
        assert np.abs(G @ qd[active_indices(robot)] - qd).max() < 1e-12
        tau_c = G.T @ rc.rnea(robot.tree, q, qd, qdd)
        assert relative_error(rc.platform_inverse_dynamics(robot, x, xd, xdd), tau_c) < 1e-10


def _platform_wrench(robot, x, xd, xdd):
    """Khalil eq. 9 for the platform, numpy, base frame, about its origin (gravity -g)."""
    R = _rotation(robot, x)
    m, c = robot.platform_mass, R @ robot.platform_com
    I_o = R @ robot.platform_inertia @ R.T + m * (c @ c * np.eye(3) - np.outer(c, c))
    w = xd[3:] if robot.nv == 6 else np.zeros(3)
    dw = xdd[3:] if robot.nv == 6 else np.zeros(3)
    a = xdd[:3] - robot.gravity
    f = m * a + np.cross(dw, m * c) + np.cross(w, np.cross(w, m * c))
    n = I_o @ dw + np.cross(w, I_o @ w) + np.cross(m * c, a)
    return np.r_[f, n][:robot.nv]


def test_power_balance_of_eq_59(identity_case) -> None:
    """tau_a . qd_a = F_p . V_p + sum_i Gamma_i . qd_i, with F_p (eq. 9) and each
    leg's Gamma_i (rc.rnea on the leg alone) computed here."""
    robot, (X, XD, XDD) = identity_case
    for x, xd, xdd in zip(X, XD, XDD, strict=True):
        q, qd, qdd = rc.platform_tree_state(robot, x, xd, xdd)
        tau = rc.platform_inverse_dynamics(robot, x, xd, xdd)
        power = _platform_wrench(robot, x, xd, xdd) @ xd
        for leg in robot.legs:
            k = [robot.tree.joint_index(j) for j in leg.joints]
            power += rc.rnea(leg.model, q[k], qd[k], qdd[k]) @ qd[k]
        active = tau @ qd[active_indices(robot)]
        assert abs(active - power) < 1e-11 * max(1.0, np.abs(tau).max() * np.abs(xd).max())


def _trajectory(robot, home, t):
    """A smooth platform motion ``(x, xd, xdd)`` at time t (two rotations for a 6-DoF one)."""
    w = np.array([1.3, 0.7, 1.1])
    amp = np.array([0.04, 0.05, 0.03])
    p = home[:3] + amp * np.sin(w * t + 0.3)
    v = amp * w * np.cos(w * t + 0.3)
    a = -amp * w * w * np.sin(w * t + 0.3)
    if robot.nx == 3:
        return p, v, a
    u1, u2 = np.array([0.6, 0.0, 0.8]), np.array([0.0, 1.0, 0.0])
    th = np.array([0.12 * np.sin(0.9 * t), 0.1 * np.sin(1.7 * t + 1.0)])
    thd = np.array([0.12 * 0.9 * np.cos(0.9 * t), 0.1 * 1.7 * np.cos(1.7 * t + 1.0)])
    thdd = np.array([-0.12 * 0.81 * np.sin(0.9 * t), -0.1 * 2.89 * np.sin(1.7 * t + 1.0)])
    E1 = rotation_vector(th[0] * u1)
    R = E1 @ rotation_vector(th[1] * u2)
    omega = thd[0] * u1 + thd[1] * E1 @ u2
    domega = thdd[0] * u1 + thdd[1] * E1 @ u2 + thd[1] * thd[0] * np.cross(u1, E1 @ u2)
    return np.r_[p, quaternion_of(R)], np.r_[v, omega], np.r_[a, domega]


def test_active_power_is_the_rate_of_energy_along_a_trajectory(identity_case) -> None:
    """d/dt (T + V) of the whole mechanism (tree energies at the tree state) equals
    tau_a . qd_a; the tree state's rates are the time derivatives of its positions."""
    robot, _ = identity_case
    home = rc.platform_forward_geometry(robot, np.zeros(robot.nv))
    h = 1e-3
    for t in (0.0, 0.8, 2.1, 3.3):
        def state(s):
            return rc.platform_tree_state(robot, *_trajectory(robot, home, s))

        def energy(s):
            q, qd, _ = state(s)
            return rc.kinetic_energy(robot.tree, q, qd) + rc.potential_energy(robot.tree, q)

        def d_dt(f, t=t):
            return (f(t - 2 * h) - 8 * f(t - h) + 8 * f(t + h) - f(t + 2 * h)) / (12 * h)

        _, qd, qdd = state(t)
        assert relative_error(d_dt(lambda s: state(s)[0]), qd) < 1e-9
        assert relative_error(d_dt(lambda s: state(s)[1]), qdd) < 1e-9
        tau = rc.platform_inverse_dynamics(robot, *_trajectory(robot, home, t))
        power = tau @ qd[active_indices(robot)]
        assert abs(d_dt(energy) - power) < 1e-8 * np.abs(tau).max() * np.abs(qd).max()


def test_static_forces_are_the_gradient_of_the_potential_energy(identity_case) -> None:
    """At rest, tau_a = dV/dq_a, V the mechanism's potential energy at the pose the
    forward geometric model gives for q_a (central differences)."""
    robot, (X, _, _) = identity_case
    zero = np.zeros(robot.nv)
    h = 1e-6
    for x in X[:5]:
        qa = rc.platform_inverse_geometry(robot, x)

        def V(qa_, x=x):
            pose = rc.platform_forward_geometry(robot, qa_, x, tolerance=1e-14)
            return rc.potential_energy(robot.tree, rc.platform_tree_state(robot, pose)[0])

        grad = np.array([(V(qa + h * e) - V(qa - h * e)) / (2 * h) for e in np.eye(robot.nv)])
        assert relative_error(rc.platform_inverse_dynamics(robot, x, zero, zero), grad) < 1e-7
