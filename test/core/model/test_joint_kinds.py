"""One record per joint kind (``joints.JOINT_KINDS``): every table is derived from it,
every kernel branch names its kind, and an unknown kind code fails loudly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rnea_ros.core import _layout
from rnea_ros.core._expansion_jit import joint_corr, joint_pose, pair_cross, sub_count
from rnea_ros.core.errors import ModelError
from rnea_ros.core.model import configuration, joints

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
    lo, hi = kind.unit  # type: ignore[misc]
    q[1 + lo:1 + hi] /= np.linalg.norm(q[1 + lo:1 + hi])
    R, p, ok = joint_pose(kind.code, q, 1)
    R = np.array(R).reshape(3, 3)
    block = q[1:1 + kind.nq]
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
    assert np.any(got != 0.0)


@pytest.mark.parametrize("code", [_layout.OWN, _layout.INNER, 5, 99, -1])
def test_an_unknown_kind_code_fails_loudly(code: int) -> None:
    q, out = np.full(8, 0.5), np.zeros(8)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        sub_count(code)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        joint_pose(code, q, 0)
    with pytest.raises(ModelError, match="unknown anchor kind"):
        joint_corr(code, q, 0, out, 0)
