"""Errors of :mod:`rnea_ros.planning` (all derive from
:class:`rnea_ros.core.errors.RneaError`, so ``except RneaError`` catches them)."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class PlanningError(RneaError, ValueError):
    """A trajectory could not be planned."""


class InfeasibleError(PlanningError):
    """The waypoints and limits admit no trajectory (found before solving)."""


class SolverError(PlanningError):
    """The NLP solver stopped without a solution satisfying every constraint."""


class PlanningInternalError(PlanningError, RuntimeError):
    """An invariant of the NLP's construction failed (a bug, not the user's input):
    the message names the structure that broke."""


__all__ = ["InfeasibleError", "PlanningError", "PlanningInternalError", "SolverError"]
