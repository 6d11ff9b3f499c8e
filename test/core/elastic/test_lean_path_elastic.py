"""The lean per-call path of ``elastic_rnea`` (core/_lean.py, as rnea's: see
test/core/dynamics/test_lean_path.py): the motor torques of a mixed rigid/elastic robot
on C-contiguous float64 vectors go through the borrowed-array entry ``elastic_lean``
without converting the six inputs, to the last bit of the old path (the ``FastCall`` of
``elastic_call`` on converted inputs, which every refused input and every call with
``fext`` still takes), with the same errors. Agreement with Pinocchio: test_elastic_rnea.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import numba
import numpy as np
import pytest
from elastic_cases import paper_model, random_state
from elastic_oracle import random_drives
from lean_variants import bad_values, count_conversions, read_only, replaced_at, same_refusal
from trees import random_tree

import rnea_ros.core.elastic.rnea as elastic_face
from rnea_ros.core._layout import F_KIND, PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z
from rnea_ros.core._lean import LeanCall
from rnea_ros.core.elastic._rnea_jit import elastic_call
from rnea_ros.core.elastic.model import ElasticModel, elastic_model
from rnea_ros.core.elastic.rnea import ElasticTorques, elastic_rnea
from rnea_ros.core.errors import StateError
from rnea_ros.samples import load_robot

NAMES = ("hua", "two_link_pr", "tree3", "tree4", "ur5-rigid")
INPUTS = ("q", "theta", "qd", "thetad", "qdd", "thetadd")


def _model(name: str) -> ElasticModel:
    """The paper's arm; random trees of every kernel joint kind with joint friction and a
    Coulomb band, motors on any preceding body, about half the joints elastic; the
    prismatic-revolute arm all elastic; UR5 with no elastic joint (empty motor vectors)."""
    if name == "hua":
        return paper_model()
    rng = np.random.default_rng(11)
    if name.startswith("tree"):
        links = random_tree(int(name[4]), 8)
        links = dataclasses.replace(links, armature=np.zeros(links.nv), coulomb_band=0.2)
        return elastic_model(links, random_drives(links, rng, on_parent=False))
    links = load_robot(name.removesuffix("-rigid")).without_friction()
    share = 0.0 if name.endswith("-rigid") else 1.0
    return elastic_model(links, random_drives(links, rng, elastic=share))


@pytest.fixture(scope="module", params=NAMES)
def model(request: pytest.FixtureRequest) -> ElasticModel:
    return _model(request.param)


def _states(model: ElasticModel, count: int = 20, seed: int = 5) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [list(random_state(model, rng)) for _ in range(count)]


def _old_path(model: ElasticModel, *state: Any, g: np.ndarray | None = None,
              wrenches: bool = False) -> ElasticTorques:
    """main's per-call code without ``fext``: the inputs converted, ``elastic_call``
    through its ``FastCall``."""
    x = [np.ascontiguousarray(a, np.float64) for a in state]
    tau, tau_link = np.empty(model.n), np.empty(model.n)
    out = np.empty((model.n if wrenches else 0, 6))
    assert elastic_face._fast.call(
        model.unified.kernel_floats, model.joint_floats, model.motor_floats, *x,
        model.links.gravity if g is None else g, np.zeros((0, 6)), False, tau, tau_link, out)
    return ElasticTorques(tau, tau_link, out)


def _same(new: ElasticTorques, old: ElasticTorques) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(new, old, strict=True))


def test_the_cases_cover_every_kernel_joint_kind_rigid_and_elastic() -> None:
    models = [_model(name) for name in NAMES]
    kinds = {int(k) for m in models for k in m.unified.kernel_floats[:, F_KIND]}
    assert kinds == {PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z}
    shares = {"none" if m.n_elastic == 0 else "all" if m.n_elastic == m.n else "some"
              for m in models}
    assert shares == {"none", "some", "all"}


def test_lean_path_is_bit_equal_to_the_old_path(model: ElasticModel) -> None:
    g = np.array([0.3, -1.2, -9.5])
    for state in _states(model):
        new = elastic_rnea(model, *state)
        assert _same(new, _old_path(model, *state))
        assert np.all(np.isfinite(new.tau)) and new.wrenches.shape == (0, 6)
        assert _same(elastic_rnea(model, *state, gravity=g, wrenches=True),
                     _old_path(model, *state, g=g, wrenches=True))


def test_with_fext_the_checked_path_is_unchanged(model: ElasticModel) -> None:
    """``fext`` takes the checked path; zero wrenches give the lean path's bits."""
    state = _states(model, 1)[0]
    zero = np.zeros((model.n, 6))
    assert _same(elastic_rnea(model, *state, fext=zero, wrenches=True),
                 elastic_rnea(model, *state, wrenches=True))


def test_refused_inputs_take_the_checked_path_bit_equal(model: ElasticModel) -> None:
    state = _states(model, 1, seed=8)[0]
    for k, name in enumerate(INPUTS):
        if state[k].size == 0:
            continue
        for kind, args, lean in replaced_at(state, k):
            assert _same(elastic_rnea(model, *args), elastic_rnea(model, *lean)), (name, kind)


def test_lean_path_does_not_convert_its_inputs(model: ElasticModel,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """On C-contiguous float64 vectors (read-only too) the face converts nothing: main made
    each of the six inputs C-contiguous with ``np.ascontiguousarray`` on every call."""
    calls = count_conversions(monkeypatch, elastic_face)
    state = _states(model, 1)[0]
    for args in (state, read_only(state)):
        assert np.all(np.isfinite(elastic_rnea(model, *args).tau))
    assert calls == []


def test_entry_keeps_one_specialisation(model: ElasticModel) -> None:
    """The lean entry calls ``elastic_call`` with the types the ``FastCall`` path gives it,
    so the checked path (lists) finds the specialisation the lean entry compiled."""
    state = _states(model, 1)[0]
    elastic_rnea(model, *(list(x) for x in state))  # the FastCall path: its types
    out = np.empty(model.n)
    old = (model.unified.kernel_floats, model.joint_floats, model.motor_floats, *state,
           model.links.gravity, np.zeros((0, 6)), False, out, out, np.empty((0, 6)))
    assert tuple(numba.typeof(x) for x in old) in set(elastic_call.signatures)
    before = set(elastic_call.signatures)
    elastic_rnea(model, *state)
    elastic_rnea(model, *(list(x) for x in state), wrenches=True)
    assert set(elastic_call.signatures) == before


def test_errors_unchanged_on_the_lean_path(model: ElasticModel) -> None:
    """A wrong length or a non-finite value in any input, on float64 vectors: the same
    StateError, naming the input and the joint or motor, as the checked path gives."""
    state = _states(model, 1)[0]
    for k, name in enumerate(INPUTS):
        for bad in bad_values(state[k]):
            args = [*state[:k], bad, *state[k + 1:]]
            assert same_refusal(elastic_rnea, model, args).startswith(f"{name} ")
    with pytest.raises(StateError, match=r"q has shape \(1, "):  # 2-D: refused, then checked
        elastic_rnea(model, state[0][None, :], *state[1:])
    with pytest.raises(StateError, match="gravity"):
        elastic_rnea(model, *state, gravity=[0.0, 0.0])


def test_a_layout_mismatch_turns_the_lean_path_off(model: ElasticModel,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    state = _states(model, 1)[0]
    expected = elastic_rnea(model, *state, wrenches=True)
    monkeypatch.setattr(elastic_face._lean, "call", LeanCall._refuse)
    assert _same(elastic_rnea(model, *state, wrenches=True), expected)
