"""Errors of :mod:`rnea_ros.control` that are not a parameter's (those are
:class:`rnea_ros.parameter_errors.ParameterError`, shared with the simulation and the
nodes) nor a joint state's (:class:`rnea_ros.core.errors.StateError`). All derive from
:class:`rnea_ros.core.errors.RneaError`, as mink's per-subpackage exceptions from its
base."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class ControlError(RneaError):
    """Base class of the control layer's own errors."""


class IntakeStatusError(ControlError, ValueError):
    """A status code of the compiled joint-state intake
    (:mod:`rnea_ros.control.joint_state`) where a rejection was expected: the message
    names the code and lists the rejection statuses."""


__all__ = ["ControlError", "IntakeStatusError"]
