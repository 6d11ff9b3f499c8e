"""Exception hierarchy of the dynamics core.

Every error raised on bad input derives from :class:`RneaError`, so callers can
catch one type; the subclasses say what was wrong. Messages name the offending
joint, link or parameter and, where there is a finite set of valid options,
list them.

The packages above the core keep their own errors, each deriving from
:class:`RneaError` (as mink's per-subpackage exceptions): ``PlanningError``,
``InfeasibleError``, ``SolverError`` in :mod:`rnea_ros.planning.errors`;
``IdentificationError`` in :mod:`rnea_ros.identification.errors`; ``BagError``
in :mod:`rnea_ros.tools.bag.errors`; ``ParameterError`` (a node's parameter, a launch
argument, a command-line option: not a model error) in
:mod:`rnea_ros.parameter_errors`. Their old names here still resolve (a
lazy re-export, :func:`__getattr__`, loaded only on access: importing the core
loads no layer above it).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable


class RneaError(Exception):
    """Base class of all errors raised by :mod:`rnea_ros`."""


class JitDisabledError(RneaError, ImportError):
    """numba's JIT is switched off (``NUMBA_DISABLE_JIT``): the kernels build their work
    arrays with numba intrinsics, which exist only compiled, so the core cannot run.
    ``variable`` is the environment variable to unset."""

    def __init__(self, variable: str = "NUMBA_DISABLE_JIT") -> None:
        self.variable = variable
        super().__init__(
            f"{variable} is set: rnea_ros's kernels run only compiled (they build their "
            f"work arrays with numba intrinsics); unset {variable} to use the package")


class ModelError(RneaError, ValueError):
    """A robot model, or the description it was built from, is invalid."""


class URDFError(ModelError):
    """A URDF document is malformed or uses an unsupported feature."""


class DHError(ModelError):
    """A standard or modified Denavit-Hartenberg table is invalid."""


class InertiaError(ModelError):
    """A body has non-physical inertial parameters."""


class InertiaWarning(UserWarning):
    """A body has non-physical inertial parameters and ``inertia_check="warn"`` accepted them."""


class ParallelRobotError(ModelError):
    """A parallel robot's description does not fit the platform + legs model (Khalil 2010
    §5), or a platform pose is out of reach of a leg (the message names the leg)."""


class ModelParameterError(ModelError):
    """A side file of the model (drives, elastic joints) or a programmatic joint
    parameter (a payload) is invalid. A node's or a command line's parameter is
    :class:`rnea_ros.parameter_errors.ParameterError`, not a model error."""


class LoopError(ModelError):
    """A closed-loop description (loop file, cut joint, active joints) is invalid."""


class JointNameError(RneaError, KeyError):
    """A joint name is unknown or missing from a name-keyed joint state."""

    def __str__(self) -> str:  # KeyError quotes its message; we don't want that.
        return str(self.args[0]) if self.args else ""


class StateError(RneaError, ValueError):
    """A joint-space input (q, qd, qdd, tau, wrenches...) has a wrong shape or is not finite."""


class LoopClosureError(StateError):
    """The closed loops cannot be closed at the given active joint positions, or the
    configuration is singular (the passive joints are not determined by the active ones)."""


class LoopBudgetError(LoopClosureError):
    """Closing the loops took more than the work (Newton iterations) or wall time
    allowed for one solve: the state is rejected rather than solved late."""


# Errors that moved to their packages: old name -> module that defines it now.
MOVED = {
    "BagError": "rnea_ros.tools.bag.errors",
    "IdentificationError": "rnea_ros.identification.errors",
    "PlanningError": "rnea_ros.planning.errors",
    "InfeasibleError": "rnea_ros.planning.errors",
    "SolverError": "rnea_ros.planning.errors",
    "ParameterError": "rnea_ros.parameter_errors",
}


def __getattr__(name: str) -> type[RneaError]:
    """``rnea_ros.core.errors.PlanningError`` & co.: the class from its package
    (PEP 562), so code written against the old location keeps working."""
    module = MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls: type[RneaError] = getattr(importlib.import_module(module), name)
    return cls


def options(names: Iterable[str], limit: int = 12) -> str:
    """Format a list of valid options for an error message."""
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    if len(names) > limit:
        shown += f", ... ({len(names)} in all)"
    return shown
