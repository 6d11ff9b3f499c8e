"""The closed-loop description: loop files, Python and modified-DH builders, and the
typed errors for bad input (Khalil 2010 §2.2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
from rnea_ros.core.model.mdh import MDHLink
from rnea_ros.samples import LOOP_ROBOTS, load_loop_robot, robot_urdf, shipped_robots

ROOT = Path(__file__).resolve().parents[3]
FOUR_BAR = ROOT / "urdf" / "four_bar.urdf"


def four_bar_file() -> dict:
    return yaml.safe_load((ROOT / "urdf" / "four_bar.loops.yaml").read_text())


@pytest.fixture(scope="module")
def tree() -> rc.RobotModel:
    return rc.load_urdf(FOUR_BAR)


@pytest.mark.parametrize("name", LOOP_ROBOTS)
def test_sample_robots_load_close_and_have_the_stated_mobility(name: str) -> None:
    model = load_loop_robot(name)
    assert model.mobility == model.n_active == {"four_bar": 1, "five_bar": 2, "palletizer": 2}[name]
    assert np.abs(rc.loop_residual(model, model.q_reference)).max() <= 1e-12
    assert np.abs(model.q_reference).max() <= 1e-9  # q = 0 is closed, as the files say
    tree = model.tree
    for j in model.active_index:  # realistic drive limits on every motor
        assert np.isfinite(tree.effort_limit[j]) and np.isfinite(tree.velocity_limit[j])
    # The motors can hold the mechanism anywhere within their limits, with margin.
    g = rc.loop_gravity(model, model.q_reference)
    assert np.all(np.abs(g) < 0.5 * tree.effort_limit[model.active_index])


def test_closed_loop_robots_are_shipped_with_their_loop_files() -> None:
    """The nodes run them (robot:= configurations, test/launch, test/nodes)."""
    assert set(LOOP_ROBOTS) <= set(shipped_robots())
    for name in LOOP_ROBOTS:
        assert robot_urdf(name).with_name(f"{name}.loops.yaml").is_file()


def test_python_description_equals_the_file(tree: rc.RobotModel) -> None:
    from_file = rc.load_loops(tree, ROOT / "urdf" / "four_bar.loops.yaml")
    loop = rc.Loop("coupler_rocker", "revolute", "coupler", "rocker", xyz1=(0.35, 0, 0),
                   xyz2=(0.3, 0, 0))
    in_code = rc.build_loops(tree, (loop,), ("crank_joint",))
    assert in_code.loops == from_file.loops
    np.testing.assert_array_equal(in_code.loop_floats, from_file.loop_floats)
    assert from_file.active_names == ("crank_joint",)
    assert from_file.passive_names == ("coupler_joint", "rocker_joint")
    assert from_file.mobility == 1
    assert from_file.n_constraints == 2  # planar: the in-plane rows of the revolute cut
    spec = rc.read_loop_file(ROOT / "urdf" / "four_bar.loops.yaml")
    assert spec.active == ("crank_joint",) and spec.loops == from_file.loops


def test_modified_dh_table_with_cut_joint_is_the_urdf_four_bar(tree: rc.RobotModel) -> None:
    """Khalil's table: 3 tree rows, cut joint k = 4 (a(4) = 2, the coupler) and its frame
    R_{k+B} = R_5 (sigma = 2, a(5) = 3, the rocker). The URDF's link frames are the MDH
    frames and its base is turned so that the plane is vertical: gravity (0, -g, 0)."""
    theta = (1.0471975511965976, -0.41848242355105714, 1.7957749733962085)
    inertial = {}
    for j, link in enumerate(("crank", "coupler", "rocker")):
        body = tree.body_names.index(link)
        inertial[j] = dict(mass=float(tree.mass[body]), com=tree.com[body],
                           inertia=tree.inertia[body].ravel())
    drive = [dict(coulomb=float(tree.coulomb[j]), viscous=float(tree.viscous[j]))
             for j in range(3)]
    rows = [
        MDHLink(theta=theta[0], name="crank_joint", link_name="crank", **inertial[0], **drive[0]),
        MDHLink(theta=theta[1], d=0.1, antecedent=1, name="coupler_joint", link_name="coupler",
                **inertial[1], **drive[1]),
        MDHLink(theta=theta[2], d=0.4, antecedent=0, name="rocker_joint", link_name="rocker",
                **inertial[2], **drive[2]),
        MDHLink(sigma=0, d=0.35, antecedent=2, name="pin_c"),  # cut joint k = 4 on link 2
        MDHLink(sigma=2, d=0.3, antecedent=3),  # R_5 on link 3, aligned with R_4
    ]
    mdh = rc.from_mdh_loops(rows, loops=1, active=[1], base="base", gravity=(0.0, -9.81, 0.0))
    urdf = rc.load_loops(tree, ROOT / "urdf" / "four_bar.loops.yaml")
    assert mdh.loops[0].name == "pin_c" and mdh.loops[0].type == "revolute"
    assert mdh.active_names == ("crank_joint",)
    rng = np.random.default_rng(3)
    for _ in range(20):
        qa = rng.uniform(-np.pi, np.pi, 1)
        q = rc.solve_loops(urdf, qa)
        qd, qdd = rng.normal(size=1), rng.normal(size=1)
        np.testing.assert_allclose(rc.solve_loops(mdh, qa), q, atol=1e-12)
        np.testing.assert_allclose(rc.loop_rnea(mdh, q, qd, qdd), rc.loop_rnea(urdf, q, qd, qdd),
                                   rtol=1e-12, atol=1e-13)


def test_reference_configuration_in_the_file() -> None:
    """A tree whose q = 0 is open (the rocker's zero turned by 0.3 rad) loads with the
    file's reference configuration, refined by Newton to machine precision."""
    text = FOUR_BAR.read_text().replace('rpy="0 0 1.7957749733962085"',
                                        f'rpy="0 0 {1.7957749733962085 + 0.3!r}"')
    turned = rc.load_urdf(text)
    data = four_bar_file()
    with pytest.raises(rc.LoopError, match="does not close at q = 0"):
        rc.load_loops(turned, data)
    data["reference"] = {"rocker_joint": -0.3 + 1e-8}
    model = rc.load_loops(turned, data)
    np.testing.assert_allclose(model.q_reference, [0.0, 0.0, -0.3], atol=1e-13)
    assert np.abs(rc.loop_residual(model, model.q_reference)).max() <= 1e-14


# ---------------------------------------------------------------------- errors
def _error(tree: rc.RobotModel, data: dict, kind: type[Exception] = rc.LoopError) -> str:
    with pytest.raises(kind) as error:
        rc.load_loops(tree, data)
    return str(error.value)


def test_unknown_link_names_the_loop_and_lists_the_links(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["loops"][0]["link2"] = "rockr"
    message = _error(tree, data)
    assert "loop 'coupler_rocker'" in message and "'rockr'" in message
    assert "'rocker'" in message and "'crank'" in message  # the valid links


def test_unknown_type_lists_the_types(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["loops"][0]["type"] = "hinge"
    message = _error(tree, data)
    assert "'hinge'" in message and "'revolute'" in message and "'spherical'" in message


def test_unknown_active_joint_lists_the_joints(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["active"] = ["crank"]
    message = _error(tree, data)
    assert "active joint 'crank'" in message and "'crank_joint'" in message


def test_more_active_joints_than_the_mobility(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["active"] = ["crank_joint", "rocker_joint"]
    message = _error(tree, data)
    assert "2 active joints" in message and "mobility is 1" in message
    assert "'crank_joint'" in message and "'rocker_joint'" in message


def test_too_few_active_joints_names_the_undetermined_passive_joints() -> None:
    model = load_loop_robot("five_bar")
    with pytest.raises(rc.LoopError, match="do not determine the passive joints") as error:
        rc.build_loops(model.tree, model.loops, ("left_motor",))
    assert "mobility of 2" in str(error.value)


def test_a_loop_that_does_not_close_at_q_zero(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["loops"][0]["frame2"]["xyz"] = [0.31, 0, 0]
    message = _error(tree, data)
    assert "loop 'coupler_rocker'" in message and "does not close at q = 0" in message
    assert "reference" in message
    data["reference"] = {"crank_joint": 0.3}
    assert "at the given reference configuration" in _error(tree, data)


def test_bad_file_forms(tree: rc.RobotModel, tmp_path: Path) -> None:
    data = four_bar_file()
    data["loops"][0]["frame1"]["xyz"] = [0.35, 0]
    assert "xyz1 must be 3 finite numbers" in _error(tree, data)
    data = four_bar_file()
    data["loops"][0]["frame_1"] = data["loops"][0].pop("frame1")
    message = _error(tree, data)
    assert "unknown keys 'frame_1'" in message and "'frame1'" in message
    data = four_bar_file()
    del data["active"]
    assert "no 'active' key" in _error(tree, data)
    data = four_bar_file()
    data["loops"].append(dict(data["loops"][0]))
    assert "loop 'coupler_rocker' is defined twice" in _error(tree, data)
    with pytest.raises(rc.LoopError, match="cannot read loop file"):
        rc.load_loops(tree, tmp_path / "missing.loops.yaml")
    bad = tmp_path / "bad.loops.yaml"
    bad.write_text("active: [a\n")
    with pytest.raises(rc.LoopError, match="is not valid YAML"):
        rc.load_loops(tree, bad)
    good = tmp_path / "x.loops.yaml"
    data = four_bar_file()
    data["loops"][0]["link1"] = "nowhere"
    good.write_text(yaml.safe_dump(data))
    with pytest.raises(rc.LoopError, match=f"loop file '{good}'"):
        rc.load_loops(tree, good)


def test_a_cut_joint_within_one_body_closes_nothing(tree: rc.RobotModel) -> None:
    data = four_bar_file()
    data["loops"][0]["link2"] = "coupler"
    assert "both rigidly part of body 'coupler'" in _error(tree, data)


def test_bad_modified_dh_cut_rows() -> None:
    rows = [MDHLink(mass=1.0, inertia=(0.1, 0.1, 0.1)), MDHLink(d=0.1, mass=1.0,
                                                              inertia=(0.1, 0.1, 0.1)),
            MDHLink(sigma=2, antecedent=1), MDHLink(sigma=2, antecedent=2)]
    with pytest.raises(rc.LoopError, match=r"sigma = 2 must be 0 \(revolute\) or 1"):
        rc.from_mdh_loops(rows, loops=1, active=[1])
    rows[2] = MDHLink(sigma=0, antecedent=1)
    rows[3] = MDHLink(sigma=0, antecedent=2)
    with pytest.raises(rc.LoopError, match="sigma = 0 must be 2"):
        rc.from_mdh_loops(rows, loops=1, active=[1])
    rows[3] = MDHLink(sigma=2, antecedent=2, mass=0.5)
    with pytest.raises(rc.LoopError, match=r"has mass 0\.5"):
        rc.from_mdh_loops(rows, loops=1, active=[1])
    with pytest.raises(rc.LoopError, match="needs n >= 1 tree rows"):
        rc.from_mdh_loops(rows[:2], loops=1, active=[1])


def test_loop_errors_are_model_errors() -> None:
    assert issubclass(rc.LoopError, rc.ModelError)
    assert issubclass(rc.LoopClosureError, rc.StateError)


def test_planar_revolute_cuts_keep_their_in_plane_rows() -> None:
    """A revolute cut in a planar loop blocks 5 motions, 3 of which the loop cannot make:
    K keeps the 2 in-plane rows (same mobility); a spatial loop keeps all 5."""
    from loop_cases import random_mechanism

    assert load_loop_robot("palletizer").n_constraints == 3 * 2
    assert load_loop_robot("five_bar").n_constraints == 2
    spatial = random_mechanism(0, "revolute").model
    assert spatial.n_constraints == 5 and spatial.mobility == 1


def test_kernel_scratch_layout_fits() -> None:
    """Every array the per-call kernels carve from their scratch is whole, in bounds and
    disjoint from the others (the scratch has no bounds check)."""
    from rnea_ros.core.coupling import _loop_jit as kj

    for n, m, p, loops in ((3, 2, 2, 1), (8, 6, 6, 3), (7, 6, 6, 1), (40, 30, 25, 5)):
        rows = kj.workspace_rows(n, m, p, loops)
        buf = np.zeros((rows, kj.WS_COLS))
        arrays = [*kj.views(buf, n, m, p, loops), *kj.state_views(buf, n, m, p, loops),
                  kj.block_views(buf, n, m, p, loops)]
        sizes = [30 * n, 12 * n, 6 * n, 24 * loops, m * n, m * p, m, p, p, p, n, n, n, n, m, m]
        assert [a.size for a in arrays] == sizes
        for k, a in enumerate(arrays):
            a.ravel()[:] = k + 1
        counts = np.bincount(buf.ravel().astype(int), minlength=len(arrays) + 1)
        assert list(counts[1:]) == sizes  # nothing overwritten, nothing outside


def test_passive_blocks_take_the_palletizer_loop_by_loop() -> None:
    """``K_p`` of the palletizer (6 x 6) is block lower triangular in ``passive_blocks``'
    order, one 2 x 2 block per parallelogram, the zeros above the blocks exact; a single
    planar loop is one block; loops that share their passive joints so that none moves
    exactly two new ones, or loops of more than 2 rows, have none (``K_p``'s QR)."""
    from loop_cases import random_closed_states, random_mechanism

    from rnea_ros.core.coupling.loops import passive_blocks

    model = load_loop_robot("palletizer")
    m, p = model.n_constraints, model.passive_index.size
    blk = model.passive_blocks
    ro, co = blk[1:m + 1], blk[m + 1:]
    assert blk[0] == 3 and m == p == 6
    assert sorted(ro) == list(range(m)) and sorted(co) == list(range(p))
    Q, _, _ = random_closed_states(model, 5, seed=1, spread=0.3)
    for q in Q:
        Kp = rc.loop_constraint_jacobian(model, q)[:, model.passive_index][ro][:, co]
        for r in range(0, m, 2):
            assert np.all(Kp[r:r + 2, r + 2:] == 0.0)
            assert abs(np.linalg.det(Kp[r:r + 2, r:r + 2])) > 1e-6
    assert list(load_loop_robot("four_bar").passive_blocks) == [1, 0, 1, 0, 1]
    support = np.array([[1.0, 1.0, 1.0, 0.0], [0.0, -1.0, 1.0, 1.0]])
    assert passive_blocks(support, [0, 2, 4], np.arange(4)) == [0, *range(4), *range(4)]
    spatial = random_mechanism(0, "revolute").model  # 5 rows
    assert spatial.passive_blocks[0] == 0


def test_block_solves_equal_the_dense_solves() -> None:
    """``factor_pairs``, ``pairs_solve``, ``pairs_transpose_solve`` (the row kernel's
    ``K_p`` solves) give ``K_p^-1 b`` and ``K_p^-T y``, and the rank measure of
    ``qr_factor`` on ``K_p``'s diagonal blocks; a singular block is a singular ``K_p``,
    and the measure says so."""
    from loop_cases import random_closed_states

    from rnea_ros.core.coupling import _loop_jit as kj

    rng = np.random.default_rng(3)
    model = load_loop_robot("palletizer")
    perm, na, blk = model.permutation, model.n_active, model.passive_blocks
    m, p = model.n_constraints, model.passive_index.size
    ro, co = blk[1:m + 1], blk[m + 1:]
    A, u, x, z = np.empty((m, p)), np.empty(m), np.empty(p), np.empty(m)
    rdiag, tau = np.empty(2), np.empty(2)
    Q, _, _ = random_closed_states(model, 5, seed=2, spread=0.3)
    for q in Q:
        K = rc.loop_constraint_jacobian(model, q)
        Kp = K[:, model.passive_index]
        measures = []
        for r in range(0, m, 2):
            block = Kp[ro[r:r + 2]][:, co[r:r + 2]].copy()
            measures.append(kj.qr_factor(block, 2, 2, rdiag, tau))
        assert kj.factor_pairs(K, perm, na, blk, A) == pytest.approx(min(measures), rel=1e-12)
        b, y = rng.normal(size=m), rng.normal(size=p)
        kj.pairs_solve(blk, A, b, u, x)
        np.testing.assert_allclose(x, np.linalg.solve(Kp, b), rtol=1e-10, atol=1e-12)
        kj.pairs_transpose_solve(blk, A, y, u, z)
        np.testing.assert_allclose(z, np.linalg.solve(Kp.T, y), rtol=1e-10, atol=1e-12)
    j0, j1 = model.passive_index[co[0]], model.passive_index[co[1]]  # the first block's
    K[ro[:2], j1] = 2.0 * K[ro[:2], j0]  # columns made parallel on the block's rows
    assert kj.factor_pairs(K, perm, na, blk, A) < kj.SINGULAR_RATIO
    assert np.linalg.matrix_rank(K[:, model.passive_index]) < p


@pytest.mark.parametrize("rows, cols", [(3, 3), (6, 4), (9, 2)])
def test_householder_solves_equal_numpy(rows: int, cols: int) -> None:
    """``qr_solve`` and ``qr_transpose_solve`` (both applying ``qr_factor``'s reflectors
    through the one ``reflect``) against NumPy: the least-squares solution
    ``A^+ b`` and the minimum-norm ``A^{+T} y``; ``Q^T`` then ``Q`` is the identity."""
    from rnea_ros.core.coupling import _loop_qr_jit as qr

    rng = np.random.default_rng(rows * 10 + cols)
    for _ in range(5):
        A0 = rng.normal(size=(rows, cols))
        A, rdiag, tau = A0.copy(), np.empty(cols), np.empty(cols)
        assert qr.qr_factor(A, rows, cols, rdiag, tau) > 0.0
        b, y, x, z = rng.normal(size=rows), rng.normal(size=cols), np.empty(cols), np.empty(rows)
        qb = b.copy()
        qr.qr_solve(A, rows, cols, rdiag, tau, qb, x)
        np.testing.assert_allclose(x, np.linalg.lstsq(A0, b, rcond=None)[0], rtol=1e-10,
                                   atol=1e-12)
        qr.qr_transpose_solve(A, rows, cols, rdiag, tau, y, z)
        np.testing.assert_allclose(z, np.linalg.pinv(A0).T @ y, rtol=1e-10, atol=1e-12)
        for k in range(cols - 1, -1, -1):  # Q (Q^T b) = b
            qr.reflect(A, rows, k, tau[k], qb)
        np.testing.assert_allclose(qb, b, rtol=1e-12, atol=1e-12)
    unchanged = b.copy()
    qr.reflect(A, rows, 0, 0.0, unchanged)  # a zero column's reflector: the identity
    assert np.array_equal(unchanged, b)


def test_bad_reference_vectors(tree: rc.RobotModel) -> None:
    loops = rc.load_loops(tree, ROOT / "urdf" / "four_bar.loops.yaml").loops
    with pytest.raises(rc.LoopError, match=r"reference has shape \(2,\), expected \(3,\)"):
        rc.build_loops(tree, loops, ("crank_joint",), np.zeros(2))
    with pytest.raises(rc.LoopError, match="reference must map joint names"):
        rc.build_loops(tree, loops, ("crank_joint",), ["a", "b", "c"])
    with pytest.raises(rc.LoopError, match="reference: 'crank' is not a joint"):
        rc.build_loops(tree, loops, ("crank_joint",), {"crank": 0.0})
    reference = {"crank_joint": 0.0}
    model = rc.build_loops(tree, loops, ("crank_joint",), reference)
    reference["crank_joint"] = 1.0  # the model keeps its own copy
    assert model.reference == {"crank_joint": 0.0}


def test_a_closed_loop_model_is_plain_data(tree: rc.RobotModel) -> None:
    """Constructing a ClosedLoopModel runs no kinematics (no Newton, no SVD, issue 24):
    it holds what it is given; its builders check closure and mobility."""
    built = rc.load_loops(tree, ROOT / "urdf" / "four_bar.loops.yaml")
    assert built.mobility == 1 and built.planar == (0,)
    open_loop = dataclasses.replace(built.loops[0], xyz2=(0.31, 0.0, 0.0))
    model = rc.ClosedLoopModel(tree, (open_loop,), ("crank_joint",))  # does not close at 0
    assert model.mobility is None and model.planar == () and model.n_constraints == 5
    np.testing.assert_array_equal(model.q_reference, np.zeros(3))
    with pytest.raises(rc.LoopError, match="does not close at q = 0"):
        rc.build_loops(tree, (open_loop,), ("crank_joint",))
    again = rc.ClosedLoopModel(tree, built.loops, built.active, built.reference,
                               built.q_reference, built.mobility, built.planar)
    np.testing.assert_array_equal(again.loop_floats, built.loop_floats)
    np.testing.assert_array_equal(again.q_reference, built.q_reference)
    with pytest.raises(rc.LoopError, match="planar loop 1 is not the index of a revolute cut"):
        rc.ClosedLoopModel(tree, built.loops, built.active, planar=(1,))
