"""Errors of :mod:`rnea_ros.nodes` that are not a parameter's (those are
:class:`rnea_ros.parameter_errors.ParameterError`). All derive from
:class:`rnea_ros.core.errors.RneaError`, as mink's per-subpackage exceptions from its
base."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class NodeError(RneaError):
    """Base class of the node layer's own errors."""


class LockstepError(NodeError, RuntimeError):
    """A lockstep run (:class:`rnea_ros.nodes.harness.ClosedLoop`) could not take a step:
    a node it needs is not in the loop, or a node did not take a message within its
    wall-clock timeout. The message names the node and what it did not take."""


__all__ = ["LockstepError", "NodeError"]
