"""pipeline.build_pipeline: each mode's models and stages (arm7)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.laws import (
    FrictionCompensation,
    GravityCompensation,
    InverseDynamicsPD,
    Reference,
)
from rnea_ros.control.pipeline import build_pipeline
from rnea_ros.core.errors import ParameterError


def config(**changes):
    values = default_values()
    values.update(urdf_path="package://rnea_ros/urdf/arm7.urdf", **changes)
    model = load_model(values)
    return controller_config(values, model), model


@pytest.mark.parametrize("friction", [False, True])
def test_gravity_mode(friction: bool) -> None:
    cfg, model = config(mode="gravity", friction_compensation=friction)
    reference = Reference()
    full, used, stages = build_pipeline(cfg, model, None, reference)
    kinds = [type(s) for s in stages]
    assert kinds == ([GravityCompensation, FrictionCompensation] if friction
                     else [GravityCompensation])
    assert np.array_equal(full.gravity, cfg.gravity)
    assert (used is full) == friction  # friction removed unless compensated


def test_inverse_dynamics_mode_tracks_the_reference_with_scaling() -> None:
    cfg, model = config(mode="inverse_dynamics", **{"time_scaling.enable": True})
    reference = Reference()
    _, _, stages = build_pipeline(cfg, model, None, reference)
    assert stages[0] is reference and isinstance(stages[1], InverseDynamicsPD)
    assert reference.scaling is not None and not reference.snap
    cfg, _ = config(mode="inverse_dynamics", **{"time_scaling.enable": False})
    build_pipeline(cfg, model, None, reference)
    assert reference.scaling is None  # rebuilt with each configuration


def test_elastic_mode_needs_an_elastic_robot() -> None:
    cfg, model = config(mode="gravity")
    with pytest.raises(ParameterError, match="elastic"):
        build_pipeline(cfg.with_values({"mode": "elastic"}), model, None, Reference())
