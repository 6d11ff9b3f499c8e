"""Shedding stale queued messages: a subscription's callback handles the newest state,
not a backlog.

A node's executor takes one message per callback. When messages come faster than the
callback handles them (a flood: 30 000 joint states/s, or a burst after the process was
kept off the CPU), every one of them would still be handled in turn, oldest first, and
the timers queued behind them (the watchdog) would wait: issue 35 measured 1.3-2.1 s
without a command from a Gough-Stewart controller flooded with unreachable states, each
costing a pose solve, while its watchdog was 0.2 s. A state that a newer one has
replaced is worth nothing to a controller, so :class:`NewestOnly` takes, inside the
callback, whatever else is queued on the subscription (``take_message`` on its handle,
as the executor does; a few microseconds when nothing is there) and hands on only the
newest message of each *kind* -- messages naming the same joints, in the same order: a
state split over several publishers (arm and gripper, links and motors) is merged by
name, so the newest of each part is kept. The others are *shed* and counted. Work per
callback is then one state per kind (at most :data:`KINDS`), whatever the input rate,
and the events the executor queued for the shed messages find nothing to take.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from rclpy.subscription import Subscription

KINDS = 8  # kinds of message kept per callback (more: the oldest kind is shed too)
DRAIN = 4096  # messages taken per callback at most (a flood cannot keep it there)


class NewestOnly:
    """The newest queued message of each kind on ``subscription`` (see the module
    docstring); ``kind(msg)`` is its kind (e.g. its joint names as a tuple).
    :attr:`taken` counts every message taken (handled or shed), :attr:`shed` the shed
    ones."""

    def __init__(self, subscription: Subscription[Any],
                 kind: Callable[[Any], Hashable]) -> None:
        self.subscription = subscription
        self.kind = kind
        self.taken = 0
        self.shed = 0

    def newest(self, msg: Any) -> list[Any]:
        """The messages to handle, oldest first: ``msg`` (the one the executor took)
        if nothing else is queued, else the newest of each kind among ``msg`` and the
        queued ones."""
        self.taken += 1
        handle = self.subscription.handle
        taken = handle.take_message(self.subscription.msg_type, self.subscription.raw)
        if taken is None:  # the usual case: no backlog
            return [msg]
        kept: dict[Hashable, Any] = {self.kind(msg): msg}
        drained = 1
        while taken is not None:
            self.taken += 1
            newer = taken[0]
            key = self.kind(newer)
            if key in kept:  # replaced by a newer one of its kind
                del kept[key]
                self.shed += 1
            elif len(kept) >= KINDS:  # a new kind with KINDS kept: the oldest kind goes
                del kept[next(iter(kept))]
                self.shed += 1
            kept[key] = newer
            drained += 1
            if drained >= DRAIN:
                break
            taken = handle.take_message(self.subscription.msg_type, self.subscription.raw)
        return list(kept.values())


def joint_names(msg: Any) -> Hashable:
    """A joint state's kind: its joint names, in order."""
    return tuple(msg.name)


__all__ = ["DRAIN", "KINDS", "NewestOnly", "joint_names"]
