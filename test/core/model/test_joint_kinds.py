"""One record per joint kind (``joints.JOINT_KINDS``): every table is derived from it,
every kernel branch names its kind, and an unknown kind code fails loudly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rnea_ros.core import _layout
from rnea_ros.core._expansion_jit import joint_corr, joint_pose, pair_cross, sub_count
from rnea_ros.core.errors import ModelError
from rnea_ros.core.model import configuration, joints, lie_groups

MULTI = [k for k in joints.JOINT_KINDS.values() if k.multi_dof]
RNG = np.random.default_rng(36)


def test_every_table_is_derived_from_the_records() -> None:
    kinds = joints.JOINT_KINDS
    assert set(joints.JOINT_TYPES) == set(kinds)
    assert joints.JOINT_NQ == {n: k.nq for n, k in kinds.items()}
    assert joints.JOINT_NV == {n: k.nv for n, k in kinds.items()}
    assert configuration.JOINT_SIZES == {n: (k.nq, k.nv) for n, k in kinds.items()}
    assert set(joints.MULTI_DOF) == set(joints.SUB_JOINTS) == set(joints.ANCHOR_KINDS)
    assert set(joints.UNIT_PARTS) <= set(joints.MULTI_DOF)
    codes = [k.code for k in MULTI]
    assert len(set(codes)) == len(codes)  # one code per kind
    assert not set(codes) & {_layout.OWN, _layout.INNER}
    for k in MULTI:
        assert len(k.subs) == k.nv == joints.SUB_COUNT[k.code]


def test_a_record_whose_sub_joints_disagree_with_nv_is_refused() -> None:
    with pytest.raises(ModelError, match="'bad'"):
        joints.JointKind("bad", 2, 2, ((False, 0),), None, 9)


@pytest.mark.parametrize("kind", MULTI, ids=lambda k: k.name)
def test_each_kind_reaches_its_own_branch(kind: joints.JointKind) -> None:
    """``sub_count``, ``joint_pose`` and ``joint_corr`` of each kind against the
    record and an independent computation (``pair_cross`` on the sub-joint rows)."""
    assert sub_count(kind.code) == kind.nv
    q = RNG.normal(size=kind.nq + 2)
    block = q[1:1 + kind.nq]
    if kind.unit is None:  # a vector-space kind: q are the sub-joints' coordinates
        R, p, ok = joint_pose(kind.code, q, 1)
        assert ok
        R_exp, p_exp = np.eye(3), np.zeros(3)
        for (prismatic, ax), x in zip(kind.subs, block, strict=True):
            if prismatic:
                p_exp = p_exp + R_exp[:, ax] * x
            else:
                R_exp = R_exp @ Rotation.from_rotvec(np.eye(3)[ax] * x).as_matrix()
        assert np.allclose(np.array(R).reshape(3, 3), R_exp) and np.allclose(p, p_exp)
    else:
        lo, hi = kind.unit
        block[lo:hi] /= np.linalg.norm(block[lo:hi])
        R, p, ok = joint_pose(kind.code, q, 1)
        R = np.array(R).reshape(3, 3)
        unit = block[lo:hi]
        if kind.name == "planar":
            c, s = unit
            assert np.allclose(R, [[c, -s, 0], [s, c, 0], [0, 0, 1]])
            assert np.allclose(p, [block[0], block[1], 0.0])
        else:
            assert np.allclose(R, Rotation.from_quat(unit).as_matrix())
            assert np.allclose(p, block[:3] if lo == 3 else np.zeros(3))
        assert ok
        block[lo] += 1e-3  # off the unit sphere: flagged
        assert not joint_pose(kind.code, q, 1)[2]
    # joint_corr = pair_cross(v, v) on the chain of sub-joints (identity placements)
    n = kind.nv
    eye = np.eye(3)
    axis = np.array([eye[ax] for _, ax in kind.subs])
    kinds = np.array([_layout.joint_kind(pr, eye[ax]) for pr, ax in kind.subs], dtype=np.int64)
    fp = _layout.pack_model(np.arange(-1, n - 1), kinds, np.tile(eye, (n, 1, 1)),
                            np.zeros((n, 3)), axis, np.zeros(n), np.zeros((n, 3)),
                            np.zeros((n, 3, 3)), np.zeros(n), np.zeros(n), np.zeros(n))
    v = RNG.normal(size=n)
    expected, got = np.zeros(n), np.zeros(n)
    pair_cross(fp, 0, n, v, v, expected)
    joint_corr(kind.code, v, 0, got, 0)
    assert np.allclose(got, expected, atol=1e-12)
    if kind.unit is not None:  # rotations that do not commute: corr is not zero
        assert np.any(got != 0.0)


@pytest.mark.parametrize("code", [_layout.OWN, _layout.INNER, max(k.code for k in MULTI) + 1,
                                  99, -1])
def test_an_unknown_kind_code_fails_loudly(code: int) -> None:
    q, out = np.full(8, 0.5), np.zeros(8)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        sub_count(code)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        joint_pose(code, q, 0)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        joint_corr(code, q, 0, out, 0)


# ------------------------------------------- configuration: the record's group
_UNIVERSAL = joints.JointKind("universal", 2, 2, ((False, 0), (False, 1)))
_CYLINDRICAL = joints.JointKind("cylindrical", 2, 2, ((True, 2), (False, 2)))
_BALL = joints.JointKind("ball", 4, 3, ((False, 0), (False, 1), (False, 2)), (0, 4), 9, "SO3")


@pytest.mark.parametrize("kind", list(joints.JOINT_KINDS.values()), ids=lambda k: k.name)
def test_each_kind_takes_the_operations_of_its_group(kind: joints.JointKind) -> None:
    """Every kind names a group with operations, and they act on the record's layout:
    the neutral configuration's unit part has norm 1, ``integrate`` then
    ``difference`` returns the velocity, a random draw satisfies the unit part."""
    assert kind.group in joints.LIE_GROUPS
    assert configuration._group(kind.name) is lie_groups.GROUPS[kind.group]
    q0 = configuration.neutral_joint(kind.name)
    assert q0.shape == (kind.nq,)
    v = 0.3 * RNG.normal(size=kind.nv)
    q1 = configuration.integrate_joint(kind.name, q0, v)
    assert np.allclose(configuration.difference_joint(kind.name, q0, q1), v, atol=1e-12)
    for q in (q0, q1, configuration.random_joint(kind.name, RNG)):
        unit = configuration.unit_part(kind.name, q)
        assert (unit is None) == (kind.unit is None)
        if unit is not None:
            assert abs(np.linalg.norm(unit) - 1.0) < 1e-12
    if kind.group == "vector":
        assert np.array_equal(q1, q0 + v)
    else:
        assert kind.unit_name and not np.allclose(q1[:kind.nv], q0[:kind.nv] + v)


def test_a_new_vector_kind_needs_no_configuration_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 2-DoF joint in a vector space (universal, cylindrical) is one record: the
    configuration operations follow its group, the random ranges its sub-joints."""
    monkeypatch.setitem(joints.JOINT_KINDS, "universal", _UNIVERSAL)
    monkeypatch.setitem(joints.JOINT_KINDS, "cylindrical", _CYLINDRICAL)
    a, b = np.array([0.2, -0.4]), np.array([1.0, 0.5])
    for name in ("universal", "cylindrical"):
        assert np.array_equal(configuration.neutral_joint(name), np.zeros(2))
        assert np.array_equal(configuration.integrate_joint(name, a, b), a + b)
        assert np.array_equal(configuration.difference_joint(name, a, b), b - a)
        assert configuration.unit_part(name, a) is None
    draws = np.array([configuration.random_joint("cylindrical", RNG) for _ in range(400)])
    lo, hi = configuration.DEFAULT_PRISMATIC_RANGE
    assert lo <= draws[:, 0].min() and draws[:, 0].max() <= hi  # a displacement [m]
    assert np.abs(draws[:, 1]).max() > 2.0  # an angle: [-pi, pi]
    assert np.abs(np.array([configuration.random_joint("universal", RNG)
                            for _ in range(400)])).min(axis=0).max() < 0.1


def test_a_new_kind_of_a_rotation_group_takes_its_operations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A second SO(3) kind integrates as the spherical joint does: the group, not the
    name, picks the branch (main fell through by name)."""
    monkeypatch.setitem(joints.JOINT_KINDS, "ball", _BALL)
    q = configuration.random_joint("ball", RNG)
    assert abs(np.linalg.norm(q) - 1.0) < 1e-12
    w = np.array([0.3, -0.1, 0.7])
    assert np.array_equal(configuration.integrate_joint("ball", q, w),
                          configuration.integrate_joint("spherical", q, w))
    assert np.array_equal(configuration.neutral_joint("ball"), [0.0, 0.0, 0.0, 1.0])
    assert np.array_equal(configuration.unit_part("ball", q), q)


def test_an_unknown_kind_or_group_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelError, match="'universal' is not one of 'free-flyer'"):
        configuration.integrate_joint("universal", [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ModelError, match="'SE4' is not one of vector, SO3, SE2, SE3"):
        joints.JointKind("screw", 2, 2, group="SE4")
    with pytest.raises(ModelError, match=r"'bent'.*'vector' joint has nq = nv"):
        joints.JointKind("bent", 2, 2, unit=(0, 2))
    with pytest.raises(ModelError, match=r"'bare'.*any other group a unit part"):
        joints.JointKind("bare", 4, 3, _BALL.subs, None, 9, "SO3")
    monkeypatch.delitem(lie_groups.GROUPS, "SE2")
    with pytest.raises(ModelError, match="'planar': group 'SE2' has no configuration"):
        configuration.neutral_joint("planar")
