"""The Coulomb law's velocity band in the core (``RobotModel.coulomb_band``, packed as
the kernel column ``F_BAND``): every kernel that adds friction computes
``Fs clip(qd / b, -1, 1) + Fv qd`` (b = 0: Khalil's ``Fs sign(qd)``, eq. 31) -- the
identity ``rnea(model) - rnea(model without friction) = friction_torques(model, qd)``
on the fixed-base, batch and expanded (multi-DoF) paths, ABA inverting RNEA with the
band, and a bad band refused by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from multidof import random_multidof_tree

import rnea_ros.core as rc
from rnea_ros.core.errors import ModelError
from rnea_ros.samples import sample_urdf

BAND = 0.05  # [rad/s]


def arm7(band: float) -> rc.RobotModel:
    model = rc.load_urdf(sample_urdf("arm7"))
    return model.replace(coulomb=np.full(model.nv, 2.0), viscous=np.full(model.nv, 0.3),
                         coulomb_band=band)


def states(model: rc.RobotModel, count: int = 20) -> tuple[np.ndarray, ...]:
    """Velocities inside, at the edge of, and beyond the band, and exactly zero."""
    rng = np.random.default_rng(5)
    q = np.array([rc.random_configuration(model, rng) for _ in range(count)])
    qd = rng.choice([-2.0, -1.0, -0.3, 0.0, 0.3, 1.0, 2.0], (count, model.nv)) * BAND
    qdd = rng.standard_normal((count, model.nv))
    return q, qd, qdd


def test_the_law_and_band_zero() -> None:
    x = np.array([-1.0, -BAND, -0.2 * BAND, 0.0, 0.2 * BAND, BAND, 1.0])
    assert np.allclose(rc.coulomb_signs(x, BAND), [-1.0, -1.0, -0.2, 0.0, 0.2, 1.0, 1.0],
                       atol=1e-15, rtol=1e-15)
    assert np.array_equal(rc.coulomb_signs(x, 0.0), np.sign(x))


@pytest.mark.parametrize("band", [0.0, BAND])
def test_rnea_paths_add_the_banded_friction(band: float) -> None:
    model = arm7(band)
    bare = model.without_friction()
    q, qd, qdd = states(model)
    batch = rc.rnea_batch(model, q, qd, qdd)
    for k in range(len(q)):
        tau = rc.rnea(model, q[k], qd[k], qdd[k])
        want = rc.friction_torques(model, qd[k])
        expected = 2.0 * (np.sign(qd[k]) if band == 0.0 else np.clip(qd[k] / band, -1, 1)) \
            + 0.3 * qd[k]
        assert np.allclose(want, expected, atol=1e-12)
        assert np.allclose(tau - rc.rnea(bare, q[k], qd[k], qdd[k]), want, atol=1e-9)
        assert np.allclose(batch[k], tau, atol=1e-9)
        assert np.allclose(rc.aba(model, q[k], qd[k], tau), qdd[k], atol=1e-7)


def test_expanded_tree_adds_the_banded_friction() -> None:
    model = random_multidof_tree(3)
    model = model.replace(coulomb=np.full(model.nv, 1.5), coulomb_band=BAND)
    assert model.expanded
    bare = model.without_friction()
    q, qd, qdd = states(model, 5)
    for k in range(len(q)):
        diff = rc.rnea(model, q[k], qd[k], qdd[k]) - rc.rnea(bare, q[k], qd[k], qdd[k])
        assert np.allclose(diff, rc.friction_torques(model, qd[k]), atol=1e-9)


@pytest.mark.parametrize("band", [-0.01, float("nan"), float("inf")])
def test_a_bad_band_is_refused_by_name(band: float) -> None:
    with pytest.raises(ModelError, match="coulomb_band"):
        arm7(band)


def test_the_urdf_path_keeps_the_exact_sign() -> None:
    """A model loaded from a URDF has no band: Khalil's numbers, as before."""
    assert rc.load_urdf(str(Path(sample_urdf("arm7")))).coulomb_band == 0.0
