"""Errors of ``rnea-bag`` (:mod:`rnea_ros.tools.bag`; they derive from
:class:`rnea_ros.core.errors.RneaError`, so ``except RneaError`` catches them)."""

from __future__ import annotations

from rnea_ros.core.errors import RneaError


class BagError(RneaError):
    """A bag, topic or robot that a tool cannot analyse (one clear message)."""


class BagDecodeError(BagError, ValueError):
    """Raw bytes of a message or chunk that do not decode (CDR layout, chunk
    compression or checksum): the message says what was malformed."""


class FilterWindowError(BagError, ValueError):
    """A Savitzky-Golay window that cannot fit its polynomial (``polyorder`` not below
    ``window_length``, a window longer than the data): a ``ValueError`` too, as
    ``scipy.signal`` raises for the same arguments."""


__all__ = ["BagDecodeError", "BagError", "FilterWindowError"]
