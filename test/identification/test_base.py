"""Base parameters: W_base x_base = W theta for any theta, rank, Khalil's regrouping."""

from __future__ import annotations

import numpy as np
import pytest
from trees import random_tree

from rnea_ros.identification import parameters
from rnea_ros.identification.base import base_parameters, random_samples
from rnea_ros.samples import load_robot

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@pytest.mark.parametrize("name", ["arm7", "stanford_arm", "two_link_pr", "tree3", "tree5"])
def test_base_regressor_reproduces_every_parameter_set(name: str) -> None:
    model = random_tree(int(name[-1])) if name.startswith("tree") else load_robot(name)
    base = base_parameters(model)
    q, qd, qdd = random_samples(model, 60, seed=11)  # other samples than the base's own
    W = parameters.regressor(model, q, qd, qdd)
    rng = np.random.default_rng(2)
    for _ in range(3):
        theta = rng.normal(size=W.shape[-1])
        tau = W @ theta
        assert np.abs(base.columns(W) @ base.of(theta) - tau).max() <= 1e-9 * np.abs(tau).max()
    # Minimal: the base columns have full rank, the rank of the whole regressor.
    flat = W.reshape(-1, W.shape[-1])
    assert base.rank == np.linalg.matrix_rank(flat) == np.linalg.matrix_rank(base.columns(flat))
    assert len(base.relations()) == base.rank


def test_planar_two_link_regrouping_is_khalils() -> None:
    """Two revolute z joints, link length l: Khalil & Dombre's base parameters
    ZZR1 = ZZ1 + l^2 m2 + Ia1, MX2, MY2, ZZ2, Ia2 (+ friction); m1, MX1... have no effect."""
    model = load_robot("two_link_rr")
    base = base_parameters(model)
    l2 = float(model.placement_translation[1] @ model.placement_translation[1])
    b1, l1 = model.body_names
    j1, j2 = model.joint_names
    assert base.relations(6)[:4] == [f"Izz@{b1} + {l2:.6g}·m@{l1} + Ia@{j1}", f"mx@{l1}",
                                     f"my@{l1}", f"Izz@{l1}"]
    assert base.rank == 11  # 4 inertial + Ia2 + (Fv, Fc, off) x 2
    assert f"m@{b1}" in base.without_effect() and f"Ixx@{l1}" in base.without_effect()
    assert f"Ia@{j2}" in base.relations()
