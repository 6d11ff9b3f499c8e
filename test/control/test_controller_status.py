"""The controller's /diagnostics content without ROS (rnea_ros.control.controller_status):
the level and message follow the controller's state (waiting, computing, rejecting
within the window and clearing after it, watchdog), the totals are key-values, and
the input rate is counted between reports."""

from __future__ import annotations

import numpy as np

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.controller_status import ControllerReport

Q = [0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3]


def make() -> TorqueController:
    values = {**default_values(), "urdf_path": "package://rnea_ros/urdf/arm7.urdf"}
    model = load_model(values)
    return TorqueController(model, controller_config(values, model))


def test_the_status_follows_the_controller_and_the_window() -> None:
    c = make()
    names = list(c.base_model.joint_names)
    report = ControllerReport(window=1.0, now=0.0)
    (status,) = report.statuses(c, received=0, now=0.5)
    assert (status.level, status.message) == ("warn", "waiting for a complete joint state")
    assert c.joint_state(names, Q, [0.0] * 7, stamp=1.0, now=0.6).command is not None
    (status,) = report.statuses(c, received=1, now=1.0)
    assert (status.level, status.message) == ("ok", "computing")
    assert status.values["commands"] == "1" and status.values["input rate [Hz]"] == "2.0"
    bad = c.joint_state(names, [np.nan, *Q[1:]], [0.0] * 7, stamp=1.001, now=1.1)
    assert bad.reason == "non_finite"
    (status,) = report.statuses(c, received=2, now=1.5)
    assert (status.level, status.message) == \
        ("warn", "rejecting some inputs (1 in the last 1 s)")
    assert status.values["rejected: non_finite"] == "1"
    assert status.values["rejected (last 1 s)"] == "1"
    assert c.joint_state(names, Q, [0.0] * 7, stamp=1.002, now=2.6).command is not None
    (status,) = report.statuses(c, received=3, now=2.7)  # the rejection left the window
    assert (status.level, status.message) == ("ok", "computing")
    assert status.values["rejected"] == "1" and status.values["rejected (last 1 s)"] == "0"
    report.last_event_wall = 2.8
    (status,) = report.statuses(c, received=3, now=3.0)
    assert (status.level, status.message) == ("warn", "clock reset: re-synchronised")
    assert c.watchdog(now=10.0) is None  # the first look at a silence holds ...
    c.watchdog(now=10.02)  # ... the next acts
    (status,) = report.statuses(c, received=3, now=10.02)
    assert (status.level, status.message) == ("error", "watchdog: joint states stopped")
    assert status.values["watchdog"] == "stale"
