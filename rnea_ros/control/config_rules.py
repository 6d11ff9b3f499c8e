"""The controller's cross-parameter rules: what the table (``rnea_ros/params/
controller.yaml``: one parameter's range, choices and safety bounds) cannot say because
it involves several parameters or the robot's side files. One named function per rule,
listed in :data:`CONTROLLER_RULES` and run in that order by
:func:`rnea_ros.control.config.controller_config` after the table's check; each raises
:class:`~rnea_ros.core.errors.ParameterError` naming the parameters. Free of ROS.

Rules of the robot's model (a gain per joint, a joint or link name, an IMU link) stay
where the model is read (:mod:`rnea_ros.control.config`, :mod:`~rnea_ros.control.
imu_config`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rnea_ros.control.modes import FAMILIES, family_mode, family_of
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.parameter_errors import ParameterError

Rule = Callable[[Mapping[str, Any], "ElasticModel | None", "ClosedLoopModel | None"], None]


def parallel_needs_loops(values: Mapping[str, Any], elastic: ElasticModel | None,
                         loops: ClosedLoopModel | None) -> None:
    """``loops.parallel`` names a family of closed-loop robots: it needs a loop file."""
    parallel = values["loops.parallel"]
    if parallel and loops is None:
        raise ParameterError(f"parameter 'loops.parallel' is '{parallel}' but the robot has "
                             "no loop file (parameter 'loops_file')")


def parallel_has_no_friction(values: Mapping[str, Any], elastic: ElasticModel | None,
                             loops: ClosedLoopModel | None) -> None:
    """The platform + legs model has no joint friction to compensate."""
    parallel = values["loops.parallel"]
    if parallel and values["friction_compensation"]:
        raise ParameterError(f"parameter 'friction_compensation' is not supported with "
                             f"'loops.parallel' ('{parallel}': the platform + legs model has no "
                             "joint friction); set loops.parallel to '' for the general "
                             "closed-loop controller")


def mode_of_family(values: Mapping[str, Any], elastic: ElasticModel | None,
                   loops: ClosedLoopModel | None) -> None:
    """``mode`` is one the robot's family runs (:data:`rnea_ros.control.modes.FAMILIES`:
    the elastic mode needs elastic joints, a closed-loop robot is rigid)."""
    family_mode(family_of(elastic is not None, loops is not None,
                          str(values["loops.parallel"])), str(values["mode"]))


def loops_have_no_time_scaling(values: Mapping[str, Any], elastic: ElasticModel | None,
                               loops: ClosedLoopModel | None) -> None:
    """A closed-loop robot has no time scaling."""
    if loops is not None and values["time_scaling.enable"]:
        raise ParameterError("parameter 'time_scaling.enable' is not supported for "
                             "closed-loop robots (loops_file)")


def elastic_has_no_scaling_nor_oracle(values: Mapping[str, Any],
                                      elastic: ElasticModel | None,
                                      loops: ClosedLoopModel | None) -> None:
    """Mode ``elastic`` has no time scaling nor oracle."""
    if values["mode"] == "elastic" and (values["time_scaling.enable"]
                                        or values["oracle.enable"]):
        raise ParameterError("mode 'elastic' supports neither 'time_scaling.enable' nor "
                             "'oracle.enable' (Pinocchio has no geared rotors)")


def contact_in_family(values: Mapping[str, Any], elastic: ElasticModel | None,
                      loops: ClosedLoopModel | None) -> None:
    """``contact.enable`` only on a family that runs contact monitoring
    (:attr:`rnea_ros.control.modes.Family.no_contact`)."""
    if not values.get("contact.enable", False):
        return
    family = FAMILIES[family_of(elastic is not None, loops is not None,
                                str(values["loops.parallel"]))]
    if family.no_contact:
        raise ParameterError(f"parameter 'contact.enable' is not supported on a {family.label} "
                             f"robot ({family.selected_by}): {family.no_contact}")


CONTROLLER_RULES: tuple[Rule, ...] = (parallel_needs_loops, parallel_has_no_friction,
                                      mode_of_family, loops_have_no_time_scaling,
                                      elastic_has_no_scaling_nor_oracle, contact_in_family)

__all__ = ["CONTROLLER_RULES", "Rule", "contact_in_family", "elastic_has_no_scaling_nor_oracle",
           "loops_have_no_time_scaling", "mode_of_family", "parallel_has_no_friction",
           "parallel_needs_loops"]
