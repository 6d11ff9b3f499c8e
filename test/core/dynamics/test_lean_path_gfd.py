"""The lean per-call path of ``rnea_time_derivative`` (core/_lean.py, as rnea's: see
test_lean_path.py): ``(tau, tau_dot)`` on C-contiguous float64 vectors goes through the
borrowed-array entry ``gfd_lean`` without converting its inputs, to the last bit of the
old path (the ``FastCall`` of ``gfd_call`` on converted inputs, which every refused input
still takes), with the same errors. Agreement with Pinocchio: test_gfd.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import numba
import numpy as np
import pytest
from lean_variants import bad_values, count_conversions, read_only, replaced_at, same_refusal
from trees import random_tree

import rnea_ros.core.dynamics.gfd as gfd_face
from rnea_ros.core._layout import F_KIND, PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z
from rnea_ros.core._lean import LeanCall
from rnea_ros.core.dynamics._gfd_jit import gfd_call
from rnea_ros.core.dynamics.gfd import rnea_time_derivative
from rnea_ros.core.errors import StateError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import load_robot

NAMES = ("ur5", "panda", "tree3", "tree4-band")
ORDERS = ("q", "qd", "qdd", "qddd")


def _model(name: str) -> RobotModel:
    """Shipped robots, and random trees of every kernel joint kind with armature, viscous
    and Coulomb friction (``-band``: Coulomb's linear zone of 0.2 rad/s, m/s)."""
    if name.startswith("tree"):
        model = random_tree(int(name[4]), 8)
        return dataclasses.replace(model, coulomb_band=0.2) if name.endswith("band") else model
    return load_robot(name)


@pytest.fixture(scope="module", params=NAMES)
def model(request: pytest.FixtureRequest) -> RobotModel:
    return _model(request.param)


def _states(model: RobotModel, count: int = 20, seed: int = 5) -> list[list[np.ndarray]]:
    """Random ``(q, qd, qdd, qddd)``; velocities small and large (inside and outside the
    Coulomb band), one state with a zero velocity."""
    rng = np.random.default_rng(seed)
    states = [[rng.uniform(-3, 3, model.nv), rng.normal(0, 0.1 if k % 2 else 3, model.nv),
               rng.normal(0, 5, model.nv), rng.normal(0, 20, model.nv)] for k in range(count)]
    states[0][1][:] = 0.0
    return states


def _old_path(model: RobotModel, q: Any, qd: Any, qdd: Any, qddd: Any,
              g: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """main's per-call code: the inputs converted, ``gfd_call`` through its ``FastCall``."""
    x = [np.ascontiguousarray(a, np.float64) for a in (q, qd, qdd, qddd)]
    tau, tau_dot = np.empty(model.nv), np.empty(model.nv)
    assert gfd_face._gfd_fast_call.call(model.kernel_floats, *x,
                                        model.gravity if g is None else g, tau, tau_dot)
    return tau, tau_dot


def _same(new: tuple[np.ndarray, ...], old: tuple[np.ndarray, ...]) -> bool:
    """Every array of ``new`` equal to ``old``'s to the last bit."""
    return all(np.array_equal(a, b) for a, b in zip(new, old, strict=True))


def test_the_cases_cover_every_kernel_joint_kind() -> None:
    kinds = {int(k) for name in NAMES for k in _model(name).kernel_floats[:, F_KIND]}
    assert kinds == {PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z}


def test_lean_path_is_bit_equal_to_the_old_path(model: RobotModel) -> None:
    g = np.array([0.3, -1.2, -9.5])
    for state in _states(model):
        new = rnea_time_derivative(model, *state)
        assert _same(new, _old_path(model, *state))
        assert np.all(np.isfinite(new))
        assert _same(rnea_time_derivative(model, *state, gravity=g),
                     _old_path(model, *state, g=g))


def test_refused_inputs_take_the_checked_path_bit_equal(model: RobotModel) -> None:
    state = _states(model, 1, seed=8)[0]
    for k in range(4):
        for kind, args, lean in replaced_at(state, k):
            assert _same(rnea_time_derivative(model, *args),
                         rnea_time_derivative(model, *lean)), (ORDERS[k], kind)


def test_lean_path_does_not_convert_its_inputs(model: RobotModel,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """On C-contiguous float64 vectors (read-only too) the face converts nothing: main made
    each of the four inputs C-contiguous with ``np.ascontiguousarray`` on every call."""
    calls = count_conversions(monkeypatch, gfd_face)
    state = _states(model, 1)[0]
    for args in (state, read_only(state)):
        tau, tau_dot = rnea_time_derivative(model, *args)
        assert np.all(np.isfinite(tau)) and np.all(np.isfinite(tau_dot))
    assert calls == []


def test_entry_keeps_one_specialisation(model: RobotModel) -> None:
    """The lean entry calls ``gfd_call`` with the types the ``FastCall`` path gives it, so
    the checked path (lists) finds the specialisation already there."""
    state = _states(model, 1)[0]
    rnea_time_derivative(model, *state)
    before = set(gfd_call.signatures)
    out = np.empty(model.nv)
    old = (model.kernel_floats, *state, model.gravity, out, out)
    assert tuple(numba.typeof(x) for x in old) in before
    rnea_time_derivative(model, *(list(x) for x in state))
    assert set(gfd_call.signatures) == before


def test_errors_unchanged_on_the_lean_path(model: RobotModel) -> None:
    """A wrong length or a non-finite value in any input, on float64 vectors: the same
    StateError, naming the input (and the joint), as the checked path (lists) gives."""
    state = _states(model, 1)[0]
    for k, name in enumerate(ORDERS):
        for bad in bad_values(state[k]):
            args = [*state[:k], bad, *state[k + 1:]]
            assert same_refusal(rnea_time_derivative, model, args).startswith(f"{name} ")
    with pytest.raises(StateError, match=r"qddd of joint '.*' is nan"):
        rnea_time_derivative(model, *state[:3], bad_values(state[3])[-1])
    with pytest.raises(StateError, match=r"q has shape \(1, "):  # 2-D: refused, then checked
        rnea_time_derivative(model, state[0][None, :], *state[1:])
    with pytest.raises(StateError, match="gravity"):
        rnea_time_derivative(model, *state, gravity=[0.0, 0.0])


def test_a_layout_mismatch_turns_the_lean_path_off(model: RobotModel,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    state = _states(model, 1)[0]
    expected = rnea_time_derivative(model, *state)
    monkeypatch.setattr(gfd_face._lean_gfd, "call", LeanCall._refuse)
    assert _same(rnea_time_derivative(model, *state), expected)
