"""The batch kernels (rnea_ros.core.dynamics._rnea_jit) against the per-call RNEA,
whose code path is separate (its own joint-motion and gravity code, libm's sin and cos):
random trees with general axes and with +-x/y/z axes (the batch kernels' one-coordinate
branch), armature and friction; composite-moment gravity equals RNEA at rest."""

from __future__ import annotations

import numpy as np
import pytest
from trees import random_tree

from rnea_ros.core import errors
from rnea_ros.core._compile import STACK_ROWS
from rnea_ros.core._layout import F_KIND, PRISMATIC, REVOLUTE, REVOLUTE_X
from rnea_ros.core.dynamics._rnea_jit import gravity_pass
from rnea_ros.core.dynamics.rnea import (
    gravity_batch,
    gravity_torques,
    nonlinear_effects,
    nonlinear_effects_batch,
    rnea,
    rnea_batch,
)
from rnea_ros.core.model.robot_model import RobotModel

SEEDS = range(10)
TOL = 1e-12  # relative to the largest torque: rounding only


def signed_coordinate_axes(model: RobotModel, seed: int) -> RobotModel:
    """The same tree with every joint axis replaced by a random +-e_x, +-e_y or +-e_z."""
    rng = np.random.default_rng(seed)
    axis = np.zeros((model.nv, 3))
    axis[np.arange(model.nv), rng.integers(0, 3, model.nv)] = rng.choice([-1.0, 1.0], model.nv)
    return model.replace(axis=axis)


def models(seed: int) -> list[RobotModel]:
    tree = random_tree(seed)
    return [tree, signed_coordinate_axes(tree, seed)]


def samples(model: RobotModel, seed: int, count: int = 50) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(200 + seed)
    q = rng.uniform(-4.0, 4.0, (count, model.nv))
    q[0] = 0.0
    q[1] = np.pi / 2 * rng.integers(-5, 6, model.nv)  # quadrant edges of sincos
    return q, rng.normal(0.0, 2.0, (count, model.nv)), rng.normal(0.0, 5.0, (count, model.nv))


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1.0))


def test_the_trees_exercise_every_joint_kind() -> None:
    kinds = set()
    for seed in SEEDS:
        for model in models(seed):
            kinds.update(int(k) for k in model.kernel_floats[:, F_KIND])
    assert {PRISMATIC, REVOLUTE, REVOLUTE_X, REVOLUTE_X + 1, REVOLUTE_X + 2} <= kinds


@pytest.mark.parametrize("seed", SEEDS)
def test_rnea_batch_equals_per_call_rnea(seed: int) -> None:
    for model in models(seed):
        q, qd, qdd = samples(model, seed)
        per_call = np.array([rnea(model, *s) for s in zip(q, qd, qdd, strict=True)])
        assert relative(rnea_batch(model, q, qd, qdd), per_call) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_nonlinear_effects_batch_equals_per_call(seed: int) -> None:
    for model in models(seed):
        q, qd, _ = samples(model, seed)
        per_call = np.array([nonlinear_effects(model, a, b) for a, b in zip(q, qd, strict=True)])
        assert relative(nonlinear_effects_batch(model, q, qd), per_call) <= TOL


@pytest.mark.parametrize("seed", SEEDS)
def test_composite_gravity_equals_rnea_at_rest(seed: int) -> None:
    for model in models(seed):
        q, _, _ = samples(model, seed)
        model = model.replace(gravity=np.array([1.5, -2.0, -9.81]))
        zero = np.zeros(model.nv)  # at rest: no friction (sign(0) = 0), no armature term
        at_rest = np.array([rnea(model, x, zero, zero) for x in q])
        assert relative(gravity_batch(model, q), at_rest) <= TOL
        assert relative(np.array([gravity_torques(model, x) for x in q]), at_rest) <= TOL
        g = np.array([0.0, 3.0, 0.0])
        assert relative(gravity_batch(model, q, gravity=g),
                        np.array([rnea(model, x, zero, zero, gravity=g) for x in q])) <= TOL


def test_large_angles_take_the_libm_path_and_agree() -> None:
    model = signed_coordinate_axes(random_tree(3), 3)
    q = np.full((2, model.nv), 2.5e5)
    q[1] = -1e7
    zero = np.zeros(model.nv)
    at_rest = np.array([rnea(model, x, zero, zero) for x in q])
    assert relative(gravity_batch(model, q), at_rest) <= 1e-9  # q's own rounding: 1e-11 rad
    assert relative(rnea_batch(model, q, q * 0, q * 0), at_rest) <= 1e-9


def test_non_finite_sample_in_gravity_batch_is_named() -> None:
    model = random_tree(1)
    q = np.zeros((5, model.nv))
    q[3, 0] = np.inf
    with pytest.raises(errors.StateError, match=r"q of joint '.+' is inf \(sample 3\)"):
        gravity_batch(model, q)
    with pytest.raises(errors.StateError, match=r"is nan"):
        gravity_torques(model, np.full(model.nv, np.nan))


def tree_with_joints(n: int) -> RobotModel:
    """A random tree of exactly ``n`` joints (fixed joints merge bodies away)."""
    bodies = n
    while (model := random_tree(11, bodies=bodies)).nv < n:
        bodies += 1
    assert model.nv == n
    return model


@pytest.mark.parametrize("n", [STACK_ROWS, STACK_ROWS + 1, 70])
def test_per_call_scratch_on_the_stack_and_on_the_heap(n: int) -> None:
    """Up to STACK_ROWS bodies the per-call kernels work on the stack, beyond on the heap."""
    model = tree_with_joints(n)
    q, qd, qdd = samples(model, 11, count=5)
    zero = np.zeros(model.nv)
    for x, xd, xdd in zip(q, qd, qdd, strict=True):
        assert relative(rnea(model, x, xd, xdd), rnea_batch(model, x[None], xd[None],
                                                           xdd[None])[0]) <= TOL
        assert relative(gravity_torques(model, x), rnea(model, x, zero, zero)) <= TOL


def test_gravity_pass_kernel_is_the_per_call_gravity() -> None:
    model = random_tree(4)
    q = samples(model, 4, count=3)[0]
    tau, work = np.empty(model.nv), np.empty((model.nv, 30))
    for x in q:
        assert gravity_pass(model.kernel_floats, x, model.gravity, tau, work)
        assert np.array_equal(tau, gravity_torques(model, x))
