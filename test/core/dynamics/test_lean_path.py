"""The lean per-call path (core/_lean.py, issue 40): RNEA, gravity and ABA on C-contiguous
float64 vectors go through the borrowed-array entries without converting their inputs;
anything else is refused by the unboxer and takes the checked path, bit-equal, with the
same errors. Agreement with Pinocchio: test_rnea.py, test_aba.py (their states take the
lean path)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pytest
from dynamics_cases import free_flyer_case
from lean_variants import as_lean, count_conversions, read_only, refused_variants, same_refusal

import rnea_ros.core as rc
import rnea_ros.core.dynamics.aba as aba_face
import rnea_ros.core.dynamics.rnea as rnea_face
from rnea_ros.core import _lean
from rnea_ros.core._lean import F64_1D, LeanCall
from rnea_ros.core.dynamics._aba_jit import aba_call, aba_tree_call
from rnea_ros.core.dynamics._lean_jit import gravity_lean
from rnea_ros.core.dynamics._rnea_expanded_jit import tree_gravity_call, tree_rnea_call
from rnea_ros.core.dynamics._rnea_jit import gravity_call, rnea_call
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import load_robot

Face = Callable[[RobotModel, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
FACES: dict[str, Face] = {
    "rnea": lambda m, q, v, a: rc.rnea(m, q, v, a),
    "gravity": lambda m, q, v, a: rc.gravity_torques(m, q),
    "aba": lambda m, q, v, a: rc.aba(m, q, v, a),
}


@pytest.fixture(scope="module", params=["ur5", "solo12"])
def state(request: pytest.FixtureRequest) -> tuple[RobotModel, np.ndarray, np.ndarray,
                                                   np.ndarray]:
    """UR5 (fixed base, the 1-DoF entries) or Solo12 on a free-flyer (kernel-tree entries),
    one random state."""
    if request.param == "ur5":
        model = load_robot("ur5")
        rng = np.random.default_rng(4)
        q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
        return model, q, v, a
    case = free_flyer_case("solo12")
    return case.model, case.q[7], case.v[7], case.a[7]


@pytest.mark.parametrize("face", list(FACES))
def test_refused_inputs_take_the_checked_path_bit_equal(state: Any, face: str) -> None:
    model, q, v, a = state
    fn = FACES[face]

    for kind, x in refused_variants(q).items():
        assert np.array_equal(fn(model, x, v, a), fn(model, as_lean(x), v, a)), kind
    for kind, x in refused_variants(v).items():
        if face != "gravity":
            assert np.array_equal(fn(model, q, x, a), fn(model, q, as_lean(x), a)), kind


@pytest.mark.parametrize("face", list(FACES))
def test_lean_path_does_not_convert_its_inputs(state: Any, face: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """On C-contiguous float64 vectors the face converts nothing (main made each input
    C-contiguous with ``np.ascontiguousarray`` on every call: ~0.07 us each)."""
    model, q, v, a = state
    calls = count_conversions(monkeypatch, rnea_face, aba_face)
    for args in ((q, v, a), read_only((q, v, a))):
        out = FACES[face](model, *args)
        assert np.all(np.isfinite(out))
    assert calls == []


def test_entries_keep_one_specialisation(state: Any) -> None:
    """The lean entries call the existing entries with the types the old ``FastCall`` path
    gave them (the model's arrays read-only), so no kernel compiles a second
    specialisation, and the checked path (lists) finds the one already compiled."""
    model, q, v, a = state
    out, none = np.empty(model.nv), np.zeros((0, 6))
    kf, km, kl, g = model.kernel_floats, model.kernel_map, model.kernel_last_row, model.gravity
    if model.expanded:
        old = {tree_rnea_call: (kf, km, q, v, a, g, out), tree_gravity_call: (kf, km, q, g, out),
               aba_tree_call: (kf, km, kl, q, v, a, g, none, False, out)}
    else:
        old = {rnea_call: (kf, q, v, a, g, out), gravity_call: (kf, q, g, out),
               aba_call: (kf, q, v, a, g, none, False, out)}
    for fn in FACES.values():
        fn(model, q, v, a)
    before = {entry: set(entry.signatures) for entry in old}
    for fn in FACES.values():
        fn(model, list(q), list(v), list(a))
    for entry, args in old.items():
        assert tuple(numba.typeof(x) for x in args) in before[entry], entry
        assert set(entry.signatures) == before[entry], entry


@pytest.mark.parametrize("bad", [np.zeros(3, np.float32), [0.0, 0.0, 0.0], np.zeros((3, 1)),
                                 np.zeros(6)[::2], np.zeros(3, ">f8"), 3.0, None])
def test_unboxer_refuses_with_type_error(bad: Any) -> None:
    """The borrowed type accepts only a C-contiguous, aligned, native float64 ndarray of its
    dimensions; anything else raises TypeError before the kernel runs (the output stays)."""
    model = load_robot("ur5")
    lean = LeanCall(gravity_lean, rnea_face._lean_gravity.argtypes)
    tau = np.full(model.nv, 7.0)
    q = np.zeros(model.nv)
    assert lean.call(model.kernel_floats, q, model.gravity, tau)
    with pytest.raises(TypeError, match="C-contiguous float64"):
        lean.call(model.kernel_floats, q, bad, tau)
    with pytest.raises(TypeError):
        lean.call(model.kernel_floats, q, model.gravity, np.zeros(model.nv, np.int64))
    assert F64_1D.ndim == 1


@pytest.mark.parametrize("face", list(FACES))
def test_errors_unchanged_on_the_lean_path(state: Any, face: str) -> None:
    """Wrong lengths and non-finite values on float64 vectors: the same StateError, naming
    the input (and the joint), as the checked path gives."""
    model, q, v, a = state
    fn = FACES[face]
    for bad_q in (np.zeros(model.nq + 1), np.r_[q[:-1], np.nan]):
        assert "q" in same_refusal(fn, model, [bad_q, v, a])


def test_numpy_layout_is_checked_and_a_mismatch_turns_the_lean_path_off(
        state: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The unboxer reads NumPy's array and dtype objects at fixed offsets; the import
    checks them on live objects. This NumPy matches; were it not to, every lean call is
    refused and the faces give the same results by their checked path."""
    assert _lean.LAYOUT_OK
    model, q, v, a = state
    expected = {name: fn(model, q, v, a) for name, fn in FACES.items()}
    for face in (rnea_face, aba_face):
        for name in dir(face):
            if name.startswith("_lean_"):
                monkeypatch.setattr(getattr(face, name), "call", LeanCall._refuse)
    for name, fn in FACES.items():
        assert np.array_equal(fn(model, q, v, a), expected[name]), name
