"""The control pipeline a configuration describes: the models it computes with
and its stages (:mod:`rnea_ros.control.laws`, :mod:`rnea_ros.control.elastic`), per
mode -- what :meth:`TorqueController.build_stages
<rnea_ros.control.controller.TorqueController.build_stages>` installs.

The modes a serial or elastic robot runs and their stages, in order, are data:
:data:`rnea_ros.control.modes.FAMILIES` (``serial``, ``elastic``); here they are built
(the reference time-scaled when ``time_scaling``). A mode the family does not list is
refused, never run as another.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from rnea_ros.control.config import ControllerConfig
from rnea_ros.control.elastic import ElasticStage
from rnea_ros.control.laws import (
    FrictionCompensation,
    GravityCompensation,
    InverseDynamicsPD,
    Reference,
    Stage,
)
from rnea_ros.control.modes import family_mode, family_of
from rnea_ros.control.rate_limit import TimeScaling
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.model.payload import with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError


class Pipeline(NamedTuple):
    """``full_model``: the rigid model with the configuration's gravity, payload and
    friction (the watchdog's ``hold`` and the oracle use it); ``model``: the same,
    friction removed unless it is compensated; ``stages``: in order."""

    full_model: RobotModel
    model: RobotModel
    stages: list[Stage]


def loaded(model: RobotModel, config: ControllerConfig) -> RobotModel:
    """``model`` under ``config``'s gravity [m/s^2], payload and Coulomb band
    ``friction.coulomb_band`` [rad/s or m/s] (the friction law
    ``Fs clip(qd / b, -1, 1)`` every compensating stage and kernel then computes)."""
    model = model.replace(gravity=config.gravity,
                          coulomb_band=float(config.friction.coulomb_band))
    return model if config.payload is None else with_payload(model, config.payload)


def build_pipeline(config: ControllerConfig, base_model: RobotModel,
                   elastic: ElasticModel | None, reference: Reference) -> Pipeline:
    """The models and stages of ``config.mode`` for a robot whose rigid model is
    ``base_model`` (an elastic robot's: its unified bodies, links with their motors;
    ``elastic`` its elastic model, the links carrying gravity and payload).
    ``reference`` (the controller's, kept across configurations) is the first stage
    of the modes that track one; its time scaling is (re)built here."""
    if elastic is not None:
        elastic = dataclasses.replace(elastic, links=loaded(elastic.links, config))
    full_model = loaded(base_model, config) if elastic is None else elastic.unified
    model = full_model if config.friction_compensation else full_model.without_friction()
    family_mode(family_of(elastic is not None, False, ""), config.mode)  # known, or refused
    reference.snap = config.mode == "elastic"
    stages: list[Stage]
    if config.mode == "elastic" and elastic is not None:
        if not config.friction_compensation:
            elastic = dataclasses.replace(elastic, links=elastic.links.without_friction())
        stages = [reference, ElasticStage(elastic, config.elastic.law, config.kp, config.kd,
                                          config.elastic_gains)]
    elif config.mode == "gravity":
        stages = [GravityCompensation()]
        if config.friction_compensation:
            stages.append(FrictionCompensation())
    elif config.mode == "inverse_dynamics":
        stages = [reference, InverseDynamicsPD(config.kp, config.kd)]
    else:  # a mode listed in control/modes.py without its stages here
        raise ParameterError(f"parameter 'mode': no stages built for '{config.mode}'")
    reference.scaling = None
    if config.mode == "inverse_dynamics" and config.time_scaling.enable:
        reference.scaling = time_scaling(model, config)
    return Pipeline(full_model, model, stages)


def time_scaling(model: RobotModel, config: ControllerConfig) -> TimeScaling:
    """The predictive time scaling of the reference inside the commanded joints'
    effort [N m or N] and effort-rate [N m/s or N/s] limits (unlimited joints: 1e12)."""
    tau_max = np.full(model.nv, np.inf)
    rate_max = np.full(model.nv, np.inf)
    tau_max[config.command_index] = config.effort_limits
    rate_max[config.command_index] = config.effort_rate_limits
    return TimeScaling(
        model, np.where(np.isfinite(tau_max), tau_max, 1e12),
        np.where(np.isfinite(rate_max), rate_max, 1e12),
        min_speed=config.time_scaling.min_speed,
        max_acceleration=config.time_scaling.max_acceleration,
        horizon=config.time_scaling.horizon, margin=config.time_scaling.margin)
