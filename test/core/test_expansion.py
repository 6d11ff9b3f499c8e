"""The kernel-tree helpers: the closed-form corr(v) of each multi-DoF joint type is
the general sum of motion cross products, and the packed coordinate map."""

from __future__ import annotations

import numpy as np
import pytest
from multidof import random_configurations, random_multidof_tree

from rnea_ros.core import _expansion_jit as ex
from rnea_ros.core import _layout as lay
from rnea_ros.core import expansion


@pytest.mark.parametrize("root", ["free-flyer", "planar", "spherical"])
def test_closed_form_corr_is_the_sum_of_cross_products(root: str) -> None:
    model = random_multidof_tree(1, bodies=4, root=root)
    fp, km = model.kernel_floats, model.kernel_map
    rng = np.random.default_rng(0)
    rows = expansion.joint_rows(model)
    assert rows[0][0] == 0 and rows[0][1] == model.joint_nv[0]
    for _ in range(20):
        v = rng.normal(size=model.nv)
        vk = np.empty(fp.shape[0])
        ex.expand_motion(km, v, vk)
        general, closed = np.zeros(fp.shape[0]), np.zeros(fp.shape[0])
        for first, count in rows:
            ex.pair_cross(fp, first, count, vk, vk, general)
            ex.joint_corr(int(km[first, lay.K_KIND]), v, int(km[first, lay.K_IV]), closed, first)
        assert np.allclose(closed, general, rtol=0, atol=1e-14)
        assert np.any(closed != 0.0)


def test_expand_state_and_gather_invert_the_map() -> None:
    """v_k = G v, a_k = G a - corr(v) and tau = G^T tau_k for a tree with every kind."""
    model = random_multidof_tree(2, bodies=7, root="free-flyer")
    fp, km = model.kernel_floats, model.kernel_map
    nk = fp.shape[0]
    rng = np.random.default_rng(1)
    q = random_configurations(model, 1, seed=2)[0]
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    fpx, qk, vk, ak = fp.copy(), np.empty(nk), np.empty(nk), np.empty(nk)
    assert ex.expand_state(fp, km, q, v, a, fpx, qk, vk, ak)
    G = expansion.velocity_matrix(model)
    corr = np.zeros(nk)
    for first, count in expansion.joint_rows(model):
        ex.pair_cross(fp, first, count, vk, vk, corr)
    assert np.allclose(vk, G @ v) and np.allclose(ak, G @ a - corr, atol=1e-14)
    tk = rng.normal(size=nk)
    tau = np.empty(model.nv)
    ex.gather(fp, km, tk, v, a, False, tau)
    assert np.allclose(tau, G.T @ tk)
    bad = q.copy()
    bad[3:7] *= 1.01
    assert not ex.expand_state(fp, km, bad, v, a, fpx, qk, vk, ak)
