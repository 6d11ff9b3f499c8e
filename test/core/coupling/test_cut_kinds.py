"""One record per cut-joint type (``cut_kinds.CUT_KINDS``): every table is derived from
it, each type reaches its own kernel branch (checked against an independent numpy
computation from the record), and an unknown type code fails loudly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.coupling import cut_kinds, loops
from rnea_ros.core.coupling._loop_kinematics_jit import relative_acceleration
from rnea_ros.core.errors import LoopError

KINDS = list(cut_kinds.CUT_KINDS.values())
RNG = np.random.default_rng(36)


def test_every_table_is_derived_from_the_records() -> None:
    assert loops.LOOP_TYPES is cut_kinds.LOOP_TYPES
    assert loops.LOOP_TYPES == {"spherical": 3, "revolute": 5, "prismatic": 5, "weld": 6}
    codes = [k.code for k in KINDS]
    assert len(set(codes)) == len(codes)
    assert cut_kinds.ROWS == {k.code: k.rows for k in KINDS}
    for k in KINDS:
        if k.planar is not None:
            assert cut_kinds.CUT_KINDS[k.planar].public is False
            assert cut_kinds.cut_code(k.name, True) == cut_kinds.CUT_KINDS[k.planar].code
        assert cut_kinds.cut_code(k.name, False) == k.code


def test_a_record_whose_rows_overlap_its_free_components_is_refused() -> None:
    with pytest.raises(LoopError, match="'bad'"):
        cut_kinds.CutKind("bad", 9, (0, 1, 2), (2,), "none", "never")
    with pytest.raises(LoopError, match="one of none, axis, angle"):
        cut_kinds.CutKind("bad", 9, (0, 1, 2), (3,), "sideways", "never")


def _rotation() -> np.ndarray:
    return Rotation.from_rotvec(RNG.normal(size=3)).as_matrix()


def _one_loop(code: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A one-loop ``loop_floats`` between bodies 0 and 1 with random frames, and a
    random ``F`` row (``R_rel``, ``p_rel``, ``R2``, ``p2``)."""
    lp = np.zeros((1, kj.L_COLS + 2))
    lp[0, kj.L_BODY1], lp[0, kj.L_BODY2] = 0, 1
    lp[0, kj.L_TYPE], lp[0, kj.L_ROW], lp[0, kj.L_NROWS] = code, 0, rows
    for R, P in ((kj.L_R1, kj.L_P1), (kj.L_R2, kj.L_P2)):
        lp[0, R:R + 9] = _rotation().ravel()
        lp[0, P:P + 3] = RNG.normal(size=3)
    F = np.zeros((1, 24))
    F[0, 0:9], F[0, 9:12] = _rotation().ravel(), RNG.normal(size=3)
    F[0, 12:21], F[0, 21:24] = _rotation().ravel(), RNG.normal(size=3)
    return lp, F


def _frame(lp: np.ndarray, work: np.ndarray, side: int, col: int) -> tuple[np.ndarray, ...]:
    """Body motion at work columns ``col`` moved to the loop's frame ``side``."""
    R = lp[0, (kj.L_R1, kj.L_R2)[side]:][:9].reshape(3, 3)
    p = lp[0, (kj.L_P1, kj.L_P2)[side]:][:3]
    w, v = work[side, col:col + 3], work[side, col + 3:col + 6]
    return R.T @ w, R.T @ (v + np.cross(w, p))


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_each_cut_kind_reaches_its_own_branch(kind: cut_kinds.CutKind) -> None:
    """``component``, ``residual``, ``reversed_loop`` and ``relative_acceleration`` of
    each type against the record: its rows, rotation measure, reversal rule and free
    components (``A2 - X A1 - V2 x V_rel`` with ``V_rel`` kept to ``free``)."""
    m = kind.constraints
    assert [kj.component(kind.code, r) for r in range(m)] == list(kind.rows)
    lp, F = _one_loop(kind.code, m)
    Rr, pr = F[0, 0:9].reshape(3, 3), F[0, 9:12]
    # residual (eq. 3)
    e = np.zeros(m)
    kj.residual(lp, F, e)
    skew = 0.5 * np.array([Rr[2, 1] - Rr[1, 2], Rr[0, 2] - Rr[2, 0], Rr[1, 0] - Rr[0, 1]])
    rot = {"axis": np.array([Rr[2, 1], -Rr[2, 0], 0.0]), "angle": skew,
           "none": np.full(3, np.nan)}[kind.rotation]
    six = np.concatenate([Rr.T @ pr, rot])
    assert np.allclose(e, six[list(kind.rows)], atol=1e-14)
    # reversed_loop: an upside-down closure (z flipped) and a quarter-plus turn about z
    flip = Rotation.from_rotvec([np.pi, 0, 0]).as_matrix()
    turn = Rotation.from_rotvec([0, 0, 2.0]).as_matrix()
    for R, axis_rule, turn_rule in ((flip, True, True), (turn, False, True),
                                    (np.eye(3), False, False)):
        G = F.copy()
        G[0, 0:9] = R.ravel()
        expected = {"axis": axis_rule, "turn": turn_rule, "never": False}[kind.reversed]
        assert (kj.reversed_loop(lp, G) == 0) == expected
    # relative_acceleration: K qdd + Kdot qd
    work = RNG.normal(size=(2, 30))
    a0 = tuple(RNG.normal(size=3))
    r = np.zeros(m)
    relative_acceleration(lp, F, work, a0, r)
    (w1, v1), (w2, v2) = _frame(lp, work, 0, kj.W_W), _frame(lp, work, 1, kj.W_W)
    (dw1, a1), (dw2, a2) = _frame(lp, work, 0, kj.W_DW), _frame(lp, work, 1, kj.W_DW)
    v_rel = np.concatenate([v2 - Rr.T @ (v1 + np.cross(w1, pr)), w2 - Rr.T @ w1])
    kept = np.zeros(6)
    kept[list(kind.free)] = v_rel[list(kind.free)]
    vr, wr = kept[:3], kept[3:]
    g = np.concatenate([a2 - Rr.T @ (a1 + np.cross(dw1, pr)) - np.cross(w2, vr)
                        - np.cross(v2, wr), dw2 - Rr.T @ dw1 - np.cross(w2, wr)])
    assert np.allclose(r, g[list(kind.rows)], atol=1e-12)


@pytest.mark.parametrize("code", [max(k.code for k in KINDS) + 1, 99, -1])
def test_an_unknown_cut_code_fails_loudly(code: int) -> None:
    lp, F = _one_loop(code, 3)
    with pytest.raises(LoopError, match="unknown cut type code"):
        kj.component(code, 0)
    with pytest.raises(LoopError, match="unknown cut type code"):
        kj.residual(lp, F, np.zeros(3))
    with pytest.raises(LoopError, match="unknown cut type code"):
        kj.reversed_loop(lp, F)
    with pytest.raises(LoopError, match="unknown cut type code"):
        relative_acceleration(lp, F, np.zeros((2, 30)), (0.0, 0.0, 0.0), np.zeros(3))
