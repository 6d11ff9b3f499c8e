"""Closed-loop dynamics (Khalil 2010 §4, eq. 55-58) against Pinocchio's constrained
forward dynamics, against a second cut of the same mechanism, and against identities.

Exactness: the active torques of ``rc.loop_rnea``, fed to ``pin.constraintDynamics``
(passive torques zero, friction subtracted since Pinocchio has none), give back the
accelerations of ``rc.loop_accelerations`` and the cut wrenches of
``rc.loop_rnea_with_wrenches`` to 1e-9 relative. MuJoCo's equality constraints are
soft (5.7e-4 at best on a four-bar, as measured for issue 13) and are not used.
"""

from __future__ import annotations

import numpy as np
import pytest
from loop_cases import LoopOracle, random_closed_states, random_mechanism
from oracle import relative_error

import rnea_ros.core as rc
from rnea_ros.samples import LOOP_ROBOTS, load_loop_robot, robot_urdf

TOL = 1e-9
SAMPLES = 300


def with_armature(model: rc.ClosedLoopModel, seed: int) -> rc.ClosedLoopModel:
    """The same mechanism with random rotor inertia on every tree joint, passive ones too."""
    rng = np.random.default_rng(seed)
    scale = float(np.max(np.linalg.eigvalsh(model.tree.inertia).max()))
    tree = model.tree.replace(armature=rng.uniform(0.0, 2.0 * scale, model.n))
    return rc.build_loops(tree, model.loops, model.active, model.reference)


def check_against_pinocchio(urdf: str, model: rc.ClosedLoopModel, Q: np.ndarray,
                            QD: np.ndarray, QDD: np.ndarray) -> tuple[float, float]:
    """Worst relative errors of the tree accelerations and the cut wrenches."""
    oracle = LoopOracle(urdf, model)
    ours_a, ref_a, ours_w, ref_w = [], [], [], []
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        tau, wrenches = rc.loop_rnea_with_wrenches(model, q, qd, qdd)
        acc, ref = oracle.accelerations(q, rc.loop_velocities(model, q, qd), tau)
        ours_a.append(rc.loop_accelerations(model, q, qd, qdd))
        ref_a.append(acc)
        ours_w.append(wrenches)
        ref_w.append(ref)
    return relative_error(np.array(ours_a), np.array(ref_a)), \
        relative_error(np.array(ours_w), np.array(ref_w))


@pytest.mark.parametrize("armature", [False, True], ids=["urdf", "armature"])
@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_sample_robots_against_pinocchio_constraint_dynamics(name: str, armature: bool) -> None:
    model = load_loop_robot(name)
    if armature:
        model = with_armature(model, 11)
    Q, QD, QDD = random_closed_states(model, SAMPLES, seed=5)
    acc, wrench = check_against_pinocchio(str(robot_urdf(name)), model, Q, QD, QDD)
    assert acc <= TOL and wrench <= TOL, (acc, wrench)


@pytest.mark.parametrize("cut", ["weld", "revolute", "spherical"])
@pytest.mark.parametrize("seed", [0, 1])
def test_spatial_mechanisms_against_pinocchio(cut: str, seed: int) -> None:
    """Random spatial single loops of mobility 1 (no redundant constraint)."""
    mechanism = random_mechanism(seed, cut)
    Q, QD, QDD = random_closed_states(mechanism.model, 60, seed=seed, spread=0.15)
    acc, wrench = check_against_pinocchio(mechanism.urdf, mechanism.model, Q, QD, QDD)
    assert acc <= TOL and wrench <= TOL, (acc, wrench)


# -------------------------------------------------- two cuts of one mechanism
SLIDER_LINKS = """
  <link name="base"/>
  <link name="crank"><inertial><origin xyz="0.04 0 0"/><mass value="0.5"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="6e-4" iyz="0" izz="6e-4"/></inertial></link>
  <link name="rod"><inertial><origin xyz="0.15 0 0"/><mass value="0.8"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="6e-3" iyz="0" izz="6e-3"/></inertial></link>
  <link name="slider"><inertial><origin xyz="0 0 0"/><mass value="1.5"/>
    <inertia ixx="2e-3" ixy="0" ixz="0" iyy="3e-3" iyz="0" izz="4e-3"/></inertial></link>
  <joint name="crank_joint" type="continuous"><parent link="base"/><child link="crank"/>
    <origin rpy="0 0 {t2!r}"/><axis xyz="0 0 1"/><limit effort="20" velocity="10"/></joint>
  <joint name="rod_joint" type="continuous"><parent link="crank"/><child link="rod"/>
    <origin xyz="0.1 0 0" rpy="0 0 {rod!r}"/><axis xyz="0 0 1"/>
    <limit effort="20" velocity="10"/></joint>
"""


def slider_crank() -> tuple[rc.ClosedLoopModel, rc.ClosedLoopModel, str]:
    """An offset-free slider-crank (crank 0.1 m, rod 0.3 m, slider on the base x axis, in the
    vertical base x-y plane) cut two ways: (A) at the prismatic slide, the slider a child of
    the rod; (B) at the rod-slider pin, the slider on a prismatic tree joint. Same bodies."""
    t2 = np.deg2rad(60.0)
    b = 0.1 * np.array([np.cos(t2), np.sin(t2)])
    xc = b[0] + np.sqrt(0.3**2 - b[1] ** 2)
    phi = float(np.arctan2(-b[1], xc - b[0]))
    links = SLIDER_LINKS.format(t2=float(t2), rod=phi - float(t2))
    half_pi = np.pi / 2
    text_a = (f'<robot name="slider_a">{links}<joint name="pin" type="continuous"><parent '
              f'link="rod"/><child link="slider"/><origin xyz="0.3 0 0" rpy="0 0 {-phi!r}"/>'
              '<axis xyz="0 0 1"/><limit effort="20" velocity="10"/></joint></robot>')
    text_b = (f'<robot name="slider_b">{links}<joint name="slide" type="prismatic"><parent '
              f'link="base"/><child link="slider"/><origin xyz="{float(xc)!r} 0 0"/>'
              '<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="200" velocity="10"/>'
              '</joint></robot>')
    g = (0.0, -9.81, 0.0)
    cut_a = rc.Loop("slide", "prismatic", "slider", "base", rpy1=(0.0, half_pi, 0.0),
                    rpy2=(0.0, half_pi, 0.0))
    cut_b = rc.Loop("pin", "revolute", "rod", "slider", xyz1=(0.3, 0.0, 0.0))
    model_a = rc.build_loops(rc.load_urdf(text_a, gravity=g), (cut_a,), ("crank_joint",))
    model_b = rc.build_loops(rc.load_urdf(text_b, gravity=g), (cut_b,), ("crank_joint",))
    return model_a, model_b, text_b


def test_prismatic_cut_equals_the_revolute_cut_of_the_same_slider_crank() -> None:
    model_a, model_b, text_b = slider_crank()
    assert model_a.mobility == model_b.mobility == 1
    rng = np.random.default_rng(2)
    qa_prev, qb_prev = model_a.q_reference, model_b.q_reference
    for crank in np.linspace(-np.pi, np.pi, 37):
        qa = rc.solve_loops(model_a, [crank], qa_prev)
        qb = rc.solve_loops(model_b, [crank], qb_prev)
        qa_prev, qb_prev = qa, qb
        qd, qdd = rng.normal(0, 2, 1), rng.normal(0, 5, 1)
        tau_a = rc.loop_rnea(model_a, qa, qd, qdd)
        tau_b = rc.loop_rnea(model_b, qb, qd, qdd)
        assert tau_a == pytest.approx(tau_b, rel=1e-11, abs=1e-12)
        # The slider's travel: rod-slider pin angle (A) vs slide coordinate (B).
        _, pa = rc.link_pose(model_a.tree, qa, "slider")
        _, pb = rc.link_pose(model_b.tree, qb, "slider")
        np.testing.assert_allclose(pa, pb, atol=1e-12)
    Q, QD, QDD = random_closed_states(model_b, 100, seed=3)
    acc, wrench = check_against_pinocchio(text_b, model_b, Q, QD, QDD)
    assert acc <= TOL and wrench <= TOL, (acc, wrench)


# ---------------------------------------------------------------- identities
CASES = [*LOOP_ROBOTS, "prismatic", "weld"]


@pytest.fixture(scope="module", params=CASES)
def mechanism(request: pytest.FixtureRequest) -> rc.ClosedLoopModel:
    if request.param in LOOP_ROBOTS:
        return with_armature(load_loop_robot(request.param), 4)
    return random_mechanism(7, request.param).model


def test_forward_dynamics_inverts_inverse_dynamics(mechanism: rc.ClosedLoopModel) -> None:
    Q, QD, QDD = random_closed_states(mechanism, 50, seed=6, spread=0.3)
    TAU = rc.loop_rnea_batch(mechanism, Q, QD, QDD)
    back = rc.loop_forward_dynamics_batch(mechanism, Q, QD, TAU)
    assert relative_error(back, QDD) <= 1e-10
    q, qd, tau = Q[0], QD[0], TAU[0]
    np.testing.assert_allclose(rc.loop_forward_dynamics(mechanism, q, qd, tau), QDD[0],
                               rtol=1e-10, atol=1e-10)


def test_batch_equals_single_calls(mechanism: rc.ClosedLoopModel) -> None:
    Q, QD, QDD = random_closed_states(mechanism, 20, seed=7, spread=0.3)
    batch = rc.loop_rnea_batch(mechanism, Q, QD, QDD)
    single = np.array([rc.loop_rnea(mechanism, *x) for x in zip(Q, QD, QDD, strict=True)])
    np.testing.assert_array_equal(batch, single)


def test_row_kernel_equals_inverse_dynamics(mechanism: rc.ClosedLoopModel) -> None:
    """The twins: ``loop_rnea`` / ``loop_rnea_batch`` run the throughput row kernel
    ``_loop_dynamics_jit.loop_rnea_row`` (the tree's FMA row passes), and
    ``loop_rnea_with_wrenches`` the readable ``inverse_dynamics``: equal to rounding."""
    Q, QD, QDD = random_closed_states(mechanism, 30, seed=8, spread=0.3)
    for gravity in (None, [0.3, -2.0, -9.0]):
        batch = rc.loop_rnea_batch(mechanism, Q, QD, QDD, gravity=gravity)
        for k, (q, qd, qdd) in enumerate(zip(Q, QD, QDD, strict=True)):
            ref, _ = rc.loop_rnea_with_wrenches(mechanism, q, qd, qdd, gravity=gravity)
            scale = max(1.0, float(np.abs(ref).max()))
            assert np.abs(batch[k] - ref).max() <= 1e-12 * scale, (k, batch[k], ref)
            one = rc.loop_rnea(mechanism, q, qd, qdd, gravity=gravity)
            assert np.abs(one - ref).max() <= 1e-12 * scale, (k, one, ref)


def test_identity_frames_skip_their_rotation_to_the_same_torques() -> None:
    """``L_IDENTITY`` marks the cut frames whose rotation on their body is exactly the
    identity (all six of the palletizer's; a random mechanism's frame 2 is turned): the
    kernels skip that rotation, and give the torques of the full rotation (flags
    cleared) to rounding."""
    from rnea_ros.core.coupling import _loop_dynamics_jit as kd
    from rnea_ros.core.coupling import _loop_jit as kj
    from rnea_ros.core.coupling.loops import CLOSURE_TOLERANCE

    flags = slice(kj.L_IDENTITY, kj.L_IDENTITY + 2)
    assert list(random_mechanism(7, "weld").model.loop_floats[0, flags]) == [1.0, 0.0]
    model = load_loop_robot("palletizer")
    assert np.all(model.loop_floats[:, flags] == 1.0)
    Q, QD, QDD = random_closed_states(model, 20, seed=4, spread=0.3)
    fp, lp, perm, g = model.kernel_arrays
    cleared = lp.copy()
    cleared[:, flags] = 0.0
    taus = []
    for loops in (lp, cleared):
        tau = np.empty_like(QD)
        k, _ = kd.loop_rnea_rows(fp, loops, perm, model.passive_blocks, Q, QD, QDD, g,
                                 CLOSURE_TOLERANCE, tau)
        assert k == -1
        taus.append(tau)
    np.testing.assert_allclose(taus[0], taus[1], rtol=1e-12, atol=1e-12)


def test_mass_matrix_is_symmetric_positive_definite(mechanism: rc.ClosedLoopModel) -> None:
    Q, QD, QDD = random_closed_states(mechanism, 30, seed=8, spread=0.3)
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        Ac = rc.loop_mass_matrix(mechanism, q)
        np.testing.assert_allclose(Ac, Ac.T, rtol=0, atol=1e-12 * np.abs(Ac).max())
        assert np.linalg.eigvalsh(Ac).min() > 0.0
        # eq. 58: tau_a = A_c qdd_a + H_c + G^T F(qd)
        qd_tree = rc.loop_velocities(mechanism, q, qd)
        G = rc.loop_jacobian(mechanism, q)
        friction = G.T @ rc.friction_torques(mechanism.tree, qd_tree)
        tau = rc.loop_rnea(mechanism, q, qd, qdd)
        model_tau = Ac @ qdd + rc.loop_nonlinear_effects(mechanism, q, qd) + friction
        np.testing.assert_allclose(model_tau, tau, rtol=1e-11, atol=1e-11 * np.abs(tau).max())


def test_virtual_power_and_khalil_eq_57(mechanism: rc.ClosedLoopModel) -> None:
    """tau_a . qd_a = tau_tree . qd_tr, and tau_a = tau_tree_a + (dqd_p/dqd_a)^T tau_tree_p
    with the tree's own RNEA at the consistent state (an independent path)."""
    Q, QD, QDD = random_closed_states(mechanism, 30, seed=9, spread=0.3)
    a, p = mechanism.active_index, mechanism.passive_index
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        qd_tree = rc.loop_velocities(mechanism, q, qd)
        qdd_tree = rc.loop_accelerations(mechanism, q, qd, qdd)
        tau_tree = rc.rnea(mechanism.tree, q, qd_tree, qdd_tree)
        tau = rc.loop_rnea(mechanism, q, qd, qdd)
        scale = np.abs(tau_tree).max() * (np.abs(qd_tree).max() + 1.0)
        assert tau @ qd == pytest.approx(tau_tree @ qd_tree, abs=1e-11 * scale)
        G = rc.loop_jacobian(mechanism, q)
        eq57 = tau_tree[a] + G[p].T @ tau_tree[p]
        np.testing.assert_allclose(tau, eq57, atol=1e-11 * np.abs(tau_tree).max())


def test_cut_wrenches_applied_to_the_tree_leave_only_the_motor_torques(
        mechanism: rc.ClosedLoopModel) -> None:
    """The tree's RNEA with each cut wrench applied to link 1 (and its opposite to link 2)
    as external wrenches gives [tau_a; 0]: the wrenches are the loops' Lagrange multipliers."""
    Q, QD, QDD = random_closed_states(mechanism, 20, seed=10, spread=0.3)
    tree = mechanism.tree
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        tau, wrenches = rc.loop_rnea_with_wrenches(mechanism, q, qd, qdd)
        R, p = rc.body_poses(tree, q)
        fext = np.zeros((tree.nv, 6))
        for loop, w in zip(mechanism.loops, wrenches, strict=True):
            R1, p1 = rc.link_pose(tree, q, loop.link1)
            Rf, pf = loop.placement(1)
            Rw, pw = R1 @ Rf, p1 + R1 @ pf  # frame 1 in the world
            f, n = Rw @ w[:3], Rw @ w[3:]
            for link, sign in ((loop.link1, 1.0), (loop.link2, -1.0)):
                b = tree.link_frame(link).body
                if b >= 0:
                    fext[b, :3] += sign * R[b].T @ f
                    fext[b, 3:] += sign * R[b].T @ (n + np.cross(pw - p[b], f))
        qd_tree = rc.loop_velocities(mechanism, q, qd)
        qdd_tree = rc.loop_accelerations(mechanism, q, qd, qdd)
        motors = np.zeros(tree.nv)
        motors[mechanism.active_index] = tau
        np.testing.assert_allclose(rc.rnea(tree, q, qd_tree, qdd_tree, fext=fext), motors,
                                   atol=1e-10 * (np.abs(fext).max() + np.abs(tau).max()))


def test_gravity_is_inverse_dynamics_at_rest(mechanism: rc.ClosedLoopModel) -> None:
    Q, _, _ = random_closed_states(mechanism, 10, seed=11, spread=0.3)
    zero = np.zeros(mechanism.n_active)
    for q in Q:
        np.testing.assert_array_equal(rc.loop_gravity(mechanism, q),
                                      rc.loop_rnea(mechanism, q, zero, zero))
        g = np.array([1.0, -2.0, -9.0])
        G = rc.loop_jacobian(mechanism, q)
        np.testing.assert_allclose(rc.loop_gravity(mechanism, q, gravity=g),
                                   G.T @ rc.gravity_torques(mechanism.tree, q, gravity=g),
                                   atol=1e-12 * 10 * np.abs(G).max() ** 2 + 1e-12)


# -------------------------------------------------------------------- errors
def test_dynamics_input_errors() -> None:
    model = load_loop_robot("five_bar")
    q = rc.solve_loops(model, [0.1, -0.2])
    with pytest.raises(rc.StateError, match=r"qd_active has shape \(3,\)"):
        rc.loop_rnea(model, q, [0.0, 0.0, 0.0], [0.0, 0.0])
    with pytest.raises(rc.StateError, match="qdd_active of active joint 'left_motor'"):
        rc.loop_rnea(model, q, [0.0, 0.0], [np.nan, 0.0])
    with pytest.raises(rc.StateError, match=r"q has shape \(2,\)"):
        rc.loop_rnea(model, q[:2], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(rc.StateError, match="tau_active"):
        rc.loop_forward_dynamics(model, q, [0.0, 0.0], [1.0])
    Q = np.array([q, q + np.array([0.0, 1e-3, 0.0, 0.0])])
    with pytest.raises(rc.StateError, match="sample 1: q does not close loop 'tool_pin'"):
        rc.loop_rnea_batch(model, Q, np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(rc.StateError, match=r"expected \(2, 2\)"):
        rc.loop_rnea_batch(model, Q, np.zeros((3, 2)), np.zeros((2, 2)))


def test_singular_configuration_in_the_dynamics_names_the_loop() -> None:
    """The stretched five-bar (distal links aligned): q closes, but G does not exist."""
    model = load_loop_robot("five_bar")
    tree = model.tree
    t1, t2 = 2.260904310996017, 0.8806883425937764  # motor angles at q = 0 (URDF)
    q = np.array([np.pi - t1, 0.0, -t2, 0.0])  # proximal links horizontal, pointing out
    base = tree.link_frame("base").rotation  # the mechanism's plane is the base x-y plane
    for elbow, link, heading in ((1, "distal_left", 0.0), (3, "distal_right", np.pi)):
        R = base.T @ rc.link_pose(tree, q, link)[0]
        q[elbow] = np.angle(np.exp(1j * (heading - np.arctan2(R[1, 0], R[0, 0]))))
    assert np.abs(rc.loop_residual(model, q)).max() <= 1e-12
    with pytest.raises(rc.LoopClosureError, match="singular configuration") as error:
        rc.loop_rnea(model, q, [0.0, 0.0], [0.0, 0.0])
    assert "'left_elbow'" in str(error.value) and "tool_pin" in str(error.value)
