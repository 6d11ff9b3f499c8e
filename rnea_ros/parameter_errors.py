"""Errors of the parameters above the core: a node's parameters (the tables
``rnea_ros/params/*.yaml``, :mod:`rnea_ros.parameters`), their cross-parameter rules
(:mod:`rnea_ros.control.config_rules`), launch arguments and command-line options.
Not model errors (the robot's description is fine; a setting is not): they derive
from :class:`rnea_ros.core.errors.RneaError` (``except RneaError`` catches them) and
``ValueError``, as mink's per-subpackage exceptions derive from its base. The core's
own side files (a drive or elastic-joint file, a payload) raise
:class:`rnea_ros.core.errors.ModelParameterError`, a model error.

The old name ``rnea_ros.core.errors.ParameterError`` (and ``rc.ParameterError``)
still resolves here, loaded on access."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class ParameterError(RneaError, ValueError):
    """A parameter's value is invalid: out of its table's range or safety bounds, not
    one of its choices, against a rule between parameters or with the robot (a joint
    or link it does not have). The message names the parameter and, where there is a
    finite set, lists the valid values."""


class ParameterTableError(ParameterError):
    """A parameter table (``rnea_ros/params/<node>.yaml``) is malformed: an unknown
    key, type or validator, a default out of its own range. The message names the file
    and the parameter."""


__all__ = ["ParameterError", "ParameterTableError"]
