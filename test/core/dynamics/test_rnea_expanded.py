"""rnea_expanded.py: the batch of a free-flyer root over 1-DoF joints
(``rnea_free_rows``, _rnea_expanded_jit.py) against its twin ``rnea_tree_rows``.

``rnea_free_rows`` moves the root in one step instead of six 1-DoF kernel rows; it
must equal the kernel-tree batch ``rnea_tree_rows`` and the per-call ``rc.rnea``
to rounding (1e-12 relative) on random states, with drive terms and without
(``nonlinear_effects_batch``), on Solo12 and Talos and on random free-flying
trees whose root sits at a random placement. ``free_root`` sends only that layout
to it (not a mimic model, nor spherical or planar joints, nor a fixed base).
"""

from __future__ import annotations

import numpy as np
import pytest
from multidof import free_flying_tree
from oracle import relative_error

import rnea_ros.core as rc
from rnea_ros.core.dynamics._rnea_expanded_jit import rnea_free_rows, rnea_tree_rows
from rnea_ros.core.expansion import free_root
from rnea_ros.samples import load_robot

TWIN_TOL = 1e-12
SAMPLES = 60

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


def robot(name: str) -> rc.RobotModel:
    if name.startswith("tree"):
        return free_flying_tree(int(name[4:]))
    rng = np.random.default_rng(5)
    model = load_robot(name, root_joint="free-flyer")
    drive = np.r_[np.zeros(6), np.ones(model.nv - 6)]
    return model.without_friction().replace(
        armature=drive * rng.uniform(0, 0.3, model.nv),
        coulomb=drive * rng.uniform(0, 1, model.nv),
        viscous=drive * rng.uniform(0, 1, model.nv), gravity=np.array([0.3, -0.2, -9.81]))


def states(model: rc.RobotModel, count: int, seed: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Q = np.array([rc.random_configuration(model, rng) for _ in range(count)])
    return Q, rng.normal(0, 2, (count, model.nv)), rng.normal(0, 5, (count, model.nv))


NAMES = ("solo12", "talos", "tree1", "tree2", "tree3")


@pytest.mark.parametrize("name", NAMES)
def test_free_rows_equal_their_twin_tree_rows(name: str) -> None:
    """Twin: ``rnea_tree_rows`` (the six root rows), with and without drive terms."""
    model = robot(name)
    assert free_root(model)
    fp, km, g = model.kernel_floats, model.kernel_map, model.gravity
    Q, V, A = states(model, SAMPLES, seed=1)
    for drive in (True, False):
        ours, twin = np.empty_like(V), np.empty_like(V)
        assert rnea_free_rows(fp, Q, V, A, g, drive, ours)
        assert rnea_tree_rows(fp, km, Q, V, A, g, drive, twin)
        assert relative_error(ours, twin) < TWIN_TOL


@pytest.mark.parametrize("name", NAMES)
def test_rnea_batch_is_the_per_call_rnea(name: str) -> None:
    model = robot(name)
    Q, V, A = states(model, SAMPLES, seed=2)
    gravity = np.array([1.0, 2.0, -3.0])
    tau = rc.rnea_batch(model, Q, V, A, gravity=gravity)
    one = np.array([rc.rnea(model, Q[s], V[s], A[s], gravity=gravity) for s in range(SAMPLES)])
    assert relative_error(tau, one) < TWIN_TOL
    h = rc.nonlinear_effects_batch(model, Q, V)
    zero = np.zeros(model.nv)
    one = np.array([rc.rnea(model.without_friction(), Q[s], V[s], zero)
                    for s in range(SAMPLES)])
    assert relative_error(h, one) < TWIN_TOL


def test_other_layouts_take_the_kernel_tree() -> None:
    """A mimic model, spherical/planar joints or a fixed base are not the free layout."""
    from multidof import random_multidof_tree

    assert not free_root(load_robot("talos_full", root_joint="free-flyer", mimic=True))
    assert not free_root(load_robot("solo12"))
    assert not free_root(random_multidof_tree(3, bodies=7, root="free-flyer", floating=True))


def test_a_bad_quaternion_names_its_sample() -> None:
    model = robot("solo12")
    Q, V, A = states(model, 3, seed=3)
    Q[1, 3:7] *= 1.001
    with pytest.raises(rc.StateError, match=r"quaternion .*\(sample 1\)"):
        rc.rnea_batch(model, Q, V, A)
