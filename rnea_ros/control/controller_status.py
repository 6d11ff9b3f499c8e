"""The controller's ``/diagnostics`` content, free of ROS: the level, message and
key-values of its status, and of its IMU's second status, from a
:class:`~rnea_ros.control.controller.TorqueController`'s counters
(``rnea_ros.nodes.controller`` publishes them). Levels: ``'ok'``, ``'warn'``,
``'error'``; the last condition that applies sets the message (the list in
:func:`controller_status` runs from the least to the most severe).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from rnea_ros.control.controller import TorqueController
from rnea_ros.control.diagnostics import SlidingWindow

RANK = {"ok": 0, "warn": 1, "error": 2}
CLOCK_RESET_SHOWN = 5.0  # [s] the status says "clock reset" this long after one


@dataclass
class Status:
    """One ``DiagnosticStatus``: level ('ok' | 'warn' | 'error'), message, key-values."""

    level: str
    message: str
    values: dict[str, str] = field(default_factory=dict)


class ControllerReport:
    """The reports' own state: the receipt-to-publish times (the node appends them),
    the last clock reset, the input rate's count at the last report and the sliding
    window of the rejection counters; :meth:`statuses` makes a report."""

    def __init__(self, window: float, now: float | None = None) -> None:
        self.last = time.monotonic() if now is None else now
        self.received_at_last = 0
        self.callback_us: deque[float] = deque(maxlen=5000)  # receipt to publish [us]
        self.last_event_wall = -np.inf  # steady time of the last clock reset
        self.window = SlidingWindow(window, now=self.last)
        self.shed = 0  # joint states shed: a newer one of their name set was queued

    def statuses(self, c: TorqueController, received: int, now: float | None = None,
                 imu_topic: str = "") -> list[Status]:
        """The controller's status, then its IMU's (if it has one) at steady time ``now``;
        ``received``: the joint states received so far."""
        now = time.monotonic() if now is None else now
        rate = (received - self.received_at_last) / max(now - self.last, 1e-9)
        self.received_at_last, self.last = received, now
        imu = c.imu
        recent = self.window.update(now, {
            "rejected": sum(c.rejected.values()), "mimic": c.mimic_mismatches,
            "duplicate": c.rejected["duplicate_stamp"], "slow": c.rejected["slow_stamps"],
            "passive": c.passive_mismatches,
            "imu": sum(imu.rejected.values()) if imu is not None else 0})
        status = controller_status(c, recent, self.window.window, rate, received,
                                   self.callback_us, now - self.last_event_wall, now)
        status.values["shed (a newer state was queued)"] = str(self.shed)
        statuses = [status]
        if imu is not None:  # the IMU's own status; its fallback also sets the computation's
            level, message = imu.status(recent_rejections=recent["imu"])
            if RANK[level] > RANK[status.level]:
                status.level, status.message = level, message
            statuses.append(Status(level, message, {
                "topic": imu_topic, **imu.values(),
                f"imu rejected (last {self.window.window:g} s)": str(recent["imu"])}))
        return statuses


def controller_status(c: TorqueController, recent: dict[str, int], window: float,
                      rate: float, received: int, callback_us: deque[float],
                      since_clock_reset: float, now: float = -np.inf) -> Status:
    """The computation's status: ``recent`` the counters' increases over the last
    ``window`` s (``'duplicate'``, ``'slow'``, optional: of ``rejected['duplicate_stamp']``,
    ``rejected['slow_stamps']``),
    ``rate`` [Hz] and ``received`` the joint states', ``callback_us``
    the receipt-to-publish times [us], ``since_clock_reset`` [s]; ``now`` the steady
    time [s] (on simulated time, the plant clock's status at it: stopped, jumped)."""
    p50, p99 = c.compute_percentiles()
    cb50, cb99 = (np.percentile(np.fromiter(callback_us, float), [50, 99])
                  if callback_us else (0.0, 0.0))
    span = f"last {window:g} s"
    level, message = "ok", "computing"
    if c.last_valid_wall is None:
        level, message = "warn", "waiting for a complete joint state"
    if recent["rejected"]:
        level, message = "warn", f"rejecting some inputs ({recent['rejected']} in the {span})"
    duplicates = recent.get("duplicate", 0)  # repeated stamps: the sender's clock stopped?
    if duplicates:
        level, message = "warn", (f"joint-state stamps not advancing ({duplicates} "
                                  f"duplicate_stamp in the {span})")
    slow = recent.get("slow", 0)  # stamps advancing slower than time: stale data
    if slow:
        level, message = "warn", (f"joint-state stamps advancing too slowly ({slow} "
                                  f"slow_stamps in the {span})")
    if recent["mimic"]:
        name, deviation = c.mimic_worst
        level, message = "warn", f"mimic follower off its coupling ({name}: {deviation:+.3g})"
    if c.oracle is not None and c.oracle_discrepancy > c.config.oracle.tolerance:
        level, message = "error", "model disagrees with Pinocchio"
    if recent["passive"]:
        level, message = "warn", "passive encoders disagree with the closed loops"
    rule, read = c.plant_clock, c.receipt_clock  # /clock (the clock rule), sim time only
    stalled = rule is not None and read is not None and rule.stalled_at(read(), now)
    clock_level, clock_message = rule.status(stalled, now) if rule else ("ok", "")
    if clock_level != "ok" and not stalled:  # jumped (a clock reset of the stamps says more)
        level, message = clock_level, clock_message
    if since_clock_reset < CLOCK_RESET_SHOWN:
        level, message = "warn", "clock reset: re-synchronised"
    if stalled:
        level, message = clock_level, clock_message
    if c.stale:
        level, message = "error", ("watchdog: joint-state stamps stopped advancing"
                                   if duplicates else
                                   "watchdog: joint-state stamps advancing too slowly"
                                   if slow else "watchdog: joint states stopped")
    values = {
        "mode": c.config.mode,
        "input rate [Hz]": f"{rate:.1f}",
        "compute p50 [us]": f"{p50:.1f}",
        "compute p99 [us]": f"{p99:.1f}",
        "receipt to publish p50 [us]": f"{cb50:.1f}",
        "receipt to publish p99 [us]": f"{cb99:.1f}",
        "received": str(received),
        "accepted": str(c.accepted),
        "ignored (no model joint)": str(c.ignored),
        "commands": str(c.commands),
        "rejected": str(sum(c.rejected.values())),
        f"rejected ({span})": str(recent["rejected"]),
        "saturated": str(c.saturated),
        "watchdog": "stale" if c.stale else "ok",
        "stale events": str(c.stale_events),
        "watchdog late (held through the grace)": str(c.watchdog_late),
        "clock resets": str(c.clock_resets),
        "last clock jump [s]": f"{c.last_clock_jump:+.6f}",
        "oracle discrepancy": f"{c.oracle_discrepancy:.3e}" if c.oracle else "disabled",
        "rate limited": str(c.slew.limited) if c.slew else "disabled",
        "bad dt": str(c.slew.bad_dt) if c.slew else "disabled",
    }
    if rule is not None:
        values.update(rule.values(stalled))
    if c.base_model.mimic_joints:
        values.update(_mimic_values(c, recent["mimic"], span))
    values.update(c.loop_values(recent["passive"], span))  # closed loops only
    scaling = c.reference.scaling
    if scaling is not None:
        values["time scaling s_dot"] = f"{scaling.speed:.3f}"
        values["time scaling constraint"] = scaling.constraint
    values.update({f"rejected: {k}": str(v) for k, v in sorted(c.rejected.items())})
    return Status(level, message, values)


def _mimic_values(c: TorqueController, recent: int, span: str) -> dict[str, str]:
    return {
        "mimic followers": ", ".join(f"{f} = {m.multiplier:g} {m.leader} + {m.offset:g}"
                                     for f, m in c.base_model.mimic_joints.items()),
        "mimic checks": str(c.mimic_checks) if c.config.mimic.check else "disabled",
        "mimic mismatches": str(c.mimic_mismatches),
        f"mimic mismatches ({span})": str(recent),
        "mimic worst deviation": (f"{c.mimic_worst[0]}: {c.mimic_worst[1]:+.6g}"
                                  if c.mimic_worst[0] else "none"),
    }


__all__ = ["ControllerReport", "Status", "controller_status"]
