"""Bookkeeping of the nodes' ``/diagnostics`` (no ROS): counts over a sliding window,
status names, and the simulator's command-timeout episodes.

A status that warns "rejecting some inputs" must clear again once the inputs are
good: a cumulative counter would keep one NaN state at WARN for ever, and a counter
reset at each report would clear at the next one and miss a burst between two reports.
:class:`SlidingWindow` gives what the counters did in the last
:data:`DIAGNOSTICS_WINDOW` seconds (the level follows that), the totals stay as
key-values.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from rnea_ros.parameter_errors import ParameterError

# [s] A status warns while its counters grew in the last DIAGNOSTICS_WINDOW seconds.
DIAGNOSTICS_WINDOW = 10.0


class SlidingWindow:
    """Increments of named counters over the last ``window`` seconds, sampled at each
    report (:meth:`update`).

    The counts returned are the totals now minus the totals at the latest report at
    least ``window`` s old (or at the start): the window is ``window`` s to within one
    report period, longer, never shorter, so a burst is reported at least
    ``window`` s. Times: any monotonic clock [s].
    """

    def __init__(self, window: float = DIAGNOSTICS_WINDOW, now: float = 0.0) -> None:
        if not window > 0.0:
            raise ParameterError(f"parameter 'diagnostics_window' must be > 0 s, got {window}")
        self.window = float(window)
        self.snapshots: deque[tuple[float, dict[str, int]]] = deque([(now, {})])

    def update(self, now: float, totals: Mapping[str, int]) -> dict[str, int]:
        """Record the ``totals`` at time ``now``; return each counter's increase over the
        window ending now (counters absent from an older snapshot counted from 0)."""
        snapshots = self.snapshots
        start = now - self.window
        while len(snapshots) >= 2 and snapshots[1][0] <= start:
            snapshots.popleft()
        base = snapshots[0][1]
        recent = {name: int(total) - base.get(name, 0) for name, total in totals.items()}
        snapshots.append((now, {name: int(total) for name, total in totals.items()}))
        return recent


def status_name(node_name: str, part: str = "") -> str:
    """Name of a node's status on ``/diagnostics``: its fully-qualified name
    (``/left/rnea_controller``), distinct for each robot of a launch, then ``: part``
    for a node's second status (``/left/rnea_controller: imu``)."""
    return f"{node_name}: {part}" if part else node_name


class TimeoutEpisodes:
    """The simulator's command timeout, as episodes: one begins when the drive has had
    no command for longer than the timeout (zero effort applied from then), ends at the
    next command. :meth:`step` and :meth:`command` say when one begins or ends."""

    def __init__(self) -> None:
        self.count = 0  # episodes begun
        self.active = False
        self.steps = 0  # steps taken with zero effort because of a timeout
        self.steps_at_start = 0

    def step(self, timed_out: bool) -> bool:
        """A simulation step; ``timed_out``: it applies zero effort for lack of a command.
        True when this step begins an episode."""
        if not timed_out:
            return False
        self.steps += 1
        if self.active:
            return False
        self.active = True
        self.count += 1
        self.steps_at_start = self.steps - 1
        return True

    def command(self) -> int:
        """A command arrived; the steps the episode it ends lasted (0: none active)."""
        if not self.active:
            return 0
        self.active = False
        return self.steps - self.steps_at_start


__all__ = ["DIAGNOSTICS_WINDOW", "SlidingWindow", "TimeoutEpisodes", "status_name"]
