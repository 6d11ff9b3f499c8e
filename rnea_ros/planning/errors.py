"""Planning errors, in the one hierarchy of :mod:`rnea_ros.core.errors`.

``PlanningError`` (an :class:`~rnea_ros.core.errors.RneaError`) is raised for
a problem that cannot be solved: ``InfeasibleError`` when the input itself is
(waypoint outside the joint limits, static torque above the limit...),
``SolverError`` when the solver stops without a feasible solution. Messages
name the joint, the waypoint and the constraint.
"""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class PlanningError(RneaError, ValueError):
    """A trajectory could not be planned."""


class InfeasibleError(PlanningError):
    """The waypoints and limits admit no trajectory (found before solving)."""


class SolverError(PlanningError):
    """The NLP solver stopped without a solution satisfying every constraint."""
