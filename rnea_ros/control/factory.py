"""The controller built from its parameter values, free of ROS (the node binds it):
:func:`build_controller` loads the model (and the elastic or closed-loop side files),
validates the configuration and makes a :class:`~rnea_ros.control.controller.
TorqueController` or :class:`~rnea_ros.control.closed_loop.ClosedLoopController` with
its live cross-check (``oracle.enable``): the Pinocchio reference on the same URDF
(:func:`pinocchio_oracle_factory`, :func:`pinocchio_loop_oracle_factory`), compared
every ``oracle.every_n`` commands. Pinocchio is imported only when the oracle is
enabled."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rnea_ros.control.closed_loop import ClosedLoopController, LoopOracleFactory, LoopStep
from rnea_ros.control.config import (
    ControllerConfig,
    controller_config,
    load_elastic,
    load_loop_model,
    load_model,
    urdf_source,
)
from rnea_ros.control.controller import Oracle, TorqueController
from rnea_ros.control.laws import Step
from rnea_ros.control.parallel import ParallelController
from rnea_ros.core.coupling.loop_kinematics import loop_velocities
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.rnea import friction_torques
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError

ORACLE_MODES = ("gravity", "inverse_dynamics")  # the references Pinocchio gives below


def _check_oracle_mode(mode: str) -> None:
    """The oracles below check gravity (g(q)) or inverse dynamics at the reference; any
    other mode is refused, never checked as one of them."""
    if mode not in ORACLE_MODES:
        raise ParameterError(f"parameter 'oracle.enable': no Pinocchio reference for mode "
                             f"'{mode}'; the oracle checks 'gravity' or 'inverse_dynamics'")


def pinocchio_oracle_factory(urdf: Any) -> Any:
    """Oracle factory for :class:`TorqueController`: Pinocchio on the same URDF."""
    from rnea_ros.oracle import PinocchioOracle

    def factory(model: RobotModel, config: ControllerConfig) -> Oracle:
        _check_oracle_mode(config.mode)
        oracle = PinocchioOracle(urdf, model)
        if config.payload is not None:
            oracle.add_payload(config.payload)

        def reference(step: Step) -> np.ndarray:
            motion = step.base_motion
            if config.mode == "gravity":
                if motion is not None:  # Pinocchio's free-flyer root following the base
                    zero = np.zeros_like(step.q)
                    return oracle.moving_base_rnea(motion, step.q, zero, zero)
                return oracle.gravity(step.q)
            assert step.q_ref is not None and step.qd_ref is not None
            assert step.qdd_ref is not None
            torque = oracle.rnea(step.q_ref, step.qd_ref, step.qdd_ref) if motion is None else \
                oracle.moving_base_rnea(motion, step.q_ref, step.qd_ref, step.qdd_ref)
            return torque + friction_torques(model, step.qd_ref)
        return reference
    return factory


def pinocchio_loop_oracle_factory(urdf: Any) -> LoopOracleFactory:
    """Oracle factory for :class:`ClosedLoopController`: the active torques that give the
    reference's active accelerations in Pinocchio's constrained dynamics
    (:meth:`rnea_ros.loop_oracle.LoopOracle.active_torques`)."""
    from rnea_ros.loop_oracle import LoopOracle

    def factory(model: ClosedLoopModel, config: ControllerConfig) -> Oracle:
        _check_oracle_mode(config.mode)
        oracle = LoopOracle(urdf, model)
        if config.payload is not None:
            oracle.tree.add_payload(config.payload)

        def reference(step: Step) -> np.ndarray:
            assert isinstance(step, LoopStep)
            if config.mode == "gravity":
                assert step.q_tree is not None
                q, qd, qdd_a = step.q_tree, np.zeros(model.n), np.zeros(model.n_active)
            else:
                assert step.q_ref_tree is not None and step.qd_ref is not None
                assert step.qdd_ref is not None
                q, qdd_a = step.q_ref_tree, step.qdd_ref
                qd = loop_velocities(model, q, step.qd_ref)
            return oracle.active_torques(q, qd, qdd_a)
        return reference
    return factory


def build_controller(values: Mapping[str, Any],
                     on_model: Callable[[RobotModel], None] | None = None
                     ) -> tuple[TorqueController, RobotModel]:
    """The controller of parameter ``values`` (every key of
    :data:`~rnea_ros.control.config.CONTROLLER_PARAMETERS`) and the URDF's model: a
    TorqueController on that model (with ``elastic_file``'s when given) or a
    ClosedLoopController (``loops_file``; a ParallelController with ``loops.parallel``).
    ``on_model`` is called with the model once it is loaded, before the controller's
    kernels compile.
    :class:`~rnea_ros.core.errors.ParameterError` (or the loaders' errors) naming what
    is wrong."""
    model = load_model(values)
    if on_model is not None:
        on_model(model)
    elastic = load_elastic(values, model)
    loops = load_loop_model(values, model)
    config = controller_config(values, model, elastic, loops)
    urdf = urdf_source(values)
    if loops is not None:  # loops.parallel: the platform + legs controller (Khalil §5)
        loop_class = ParallelController if config.loops.parallel else ClosedLoopController
        return loop_class(loops, config, pinocchio_loop_oracle_factory(urdf)), model
    return TorqueController(model, config, pinocchio_oracle_factory(urdf),
                            elastic=elastic), model


__all__ = ["build_controller", "pinocchio_loop_oracle_factory", "pinocchio_oracle_factory"]
