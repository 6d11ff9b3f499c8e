"""Errors of :mod:`rnea_ros.identification` (all derive from
:class:`rnea_ros.core.errors.RneaError`, so ``except RneaError`` catches them)."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class IdentificationError(RneaError):
    """Identification cannot give what was asked: unidentifiable parameters, unusable data,
    or an optimisation that failed (one clear message naming what and why)."""


class IdentificationLoopError(IdentificationError, RuntimeError):
    """The closed identification loop (simulator + controller + recorder,
    ``rnea_ros.nodes.identification_loop``) did not produce the data it needs: a
    node did not take a state or a trajectory, the lockstep loop stalled, or a step
    of ``rnea-identify`` failed (the message names which)."""


__all__ = ["IdentificationError", "IdentificationLoopError"]
