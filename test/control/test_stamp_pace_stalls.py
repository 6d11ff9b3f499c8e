"""Issue 35: a healthy joint-state stream delivered late by stalls is never ``slow_stamps``
(``rnea_ros.control.freshness``, "Late deliveries"), for any ``watchdog_timeout``.

A helper saw one ``slow_stamps`` rejection in ``test/nodes/test_fuzz_imu.py`` under
``make test-stress`` (load 5-7). That test runs the controller with a
``watchdog_timeout`` of 0.5 s, and the deficit counted a gap in the messages up to
``watchdog_timeout``: one state stamped when sent and delivered 0.21 s late (either
process descheduled) added ``0.5 * 0.21 > 0.1`` and was rejected (on old main: here
every schedule below with ``timeout`` >= 0.5 and a stall > 0.2 s). A gap now counts at
most ``min(watchdog_timeout, tol / (2 rho))``. Every schedule is an explicit list of
(stamp, receipt) pairs: nothing depends on the machine.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.freshness import StampPace

RATIO, TOL = 0.5, 0.1  # the table's stamp_pace defaults
START = 100.0  # [s] the sender's stamp at steady time 0
DT = 1e-3  # [s] the sender's period
LATENCY = 2e-4  # [s] a delivery's usual delay
TIMEOUTS = [0.1, 0.5, 1.0, 10.0]  # watchdog_timeout: the default, the IMU fuzz test's, ...
STALLS = [0.15, 0.21, 0.25, 0.3, 0.6]  # [s]


def steady(t0: float, t1: float) -> list[tuple[float, float]]:
    """States sent every DT in [t0, t1), stamped when sent, delivered LATENCY later."""
    return [(START + k * DT, k * DT + LATENCY) for k in range(round(t0 / DT), round(t1 / DT))]


def rejected(timeout: float, pairs: list[tuple[float, float]]) -> list[int]:
    """The indices of the (stamp, receipt) pairs StampPace rejects."""
    pace = StampPace(RATIO, TOL, timeout)
    return [i for i, (stamp, receipt) in enumerate(pairs) if pace.slow(stamp, receipt)]


@pytest.mark.parametrize("timeout", TIMEOUTS)
@pytest.mark.parametrize("stall", STALLS)
@pytest.mark.parametrize("after", ["sender resumes", "queue drained in order"])
def test_one_state_delivered_late_is_accepted(timeout: float, stall: float,
                                              after: str) -> None:
    """A state stamped at t = 1 s is delivered ``stall`` late. Then either the sender
    resumes (it was the one descheduled: its next state is stamped after the stall) or
    the receiver drains the states sent meanwhile in order, 20 us apart. Old main, with
    a timeout of 0.5 s or more: the late state rejected for any stall above 0.2 s."""
    pairs = steady(0.0, 1.0)
    pairs.append((START + 1.0, 1.0 + stall))
    if after == "sender resumes":
        pairs += [(START + 1.0 + stall + k * DT, 1.0 + stall + k * DT + LATENCY)
                  for k in range(1, 500)]
    else:
        backlog = round(stall / DT)
        pairs += [(START + 1.0 + k * DT, 1.0 + stall + k * 2e-5) for k in range(1, backlog)]
        pairs += steady(1.0 + stall + 0.01, 2.0 + stall)
    assert rejected(timeout, pairs) == []


@pytest.mark.parametrize("timeout", TIMEOUTS)
@pytest.mark.parametrize(("first", "second"), [(0.15, 0.15), (0.3, 0.3), (0.15, 0.3),
                                               (0.3, 2.0)])
def test_two_stalls_close_together_are_accepted(timeout: float, first: float,
                                                second: float) -> None:
    """A receiver with an in-order queue (no shedding) is descheduled twice: after the
    stall ``first`` it takes one queued state, stalls ``second`` again, then drains the
    rest, 20 us apart. The two late states each came after a gap, their stamps 1 ms
    on: 2 x tol / 2 at most. Old main, timeout 0.5 s or more: both rejected."""
    pairs = steady(0.0, 1.0)
    t = 1.0 + first
    pairs.append((START + 1.0, t))
    t += second
    pairs.append((START + 1.0 + DT, t))
    backlog = round((first + second) / DT)
    pairs += [(START + 1.0 + k * DT, t + k * 2e-5) for k in range(2, backlog)]
    pairs += steady(t + 0.01, t + 1.0)
    assert rejected(timeout, pairs) == []


@pytest.mark.parametrize("timeout", TIMEOUTS)
@pytest.mark.parametrize("pace", [1e-3, 0.01, 0.05, 0.3])
def test_slow_streams_are_still_rejected_within_the_bound(timeout: float,
                                                          pace: float) -> None:
    """The other side: a 1 kHz stream whose stamps turn to ``pace`` of the clock at
    t = 1 s is rejected within tol / (rho - pace) (+ one state), whatever the timeout,
    and not before tol / rho."""
    pairs = steady(0.0, 1.0) + [(START + 1.0 + pace * (t - 1.0), t + LATENCY)
                                for t in np.arange(1.0, 5.0, DT)]
    first = pairs[rejected(timeout, pairs)[0]][1] - 1.0 - LATENCY
    assert TOL / RATIO - DT <= first <= TOL / (RATIO - pace) + DT, first


@pytest.mark.parametrize("timeout", [0.5, 1.0, 10.0])
def test_a_sparse_frozen_stream_is_rejected_at_its_third_message(timeout: float) -> None:
    """A sender every 0.15 s (sparser than C = tol / (2 rho) = 0.1 s, within the
    timeout) whose stamps froze but for 1 us: rejected at its third state after."""
    pairs = steady(0.0, 1.0) + [(START + 1.0 + k * 1e-6, 1.0 + 0.15 * k) for k in range(1, 10)]
    assert rejected(timeout, pairs)[0] == 1000 + 2


def test_three_stalled_deliveries_in_a_row_are_rejected() -> None:
    """The documented limit: three states 1 ms apart, each delivered after a stall of
    0.3 s, are what a sender frozen while it sends every 0.3 s looks like."""
    pairs = steady(0.0, 1.0) + [(START + 1.0 + k * DT, 1.0 + 0.3 * (k + 1)) for k in range(3)]
    assert rejected(0.5, pairs) == [1002]


def test_the_controller_with_the_imu_fuzz_settings_keeps_a_late_state() -> None:
    """The controller as ``test_fuzz_imu`` runs it (arm7, ``watchdog_timeout`` 0.5 s):
    one state of a 1 kHz stream delivered 0.25 s late is accepted and commanded."""
    values = {**default_values(), "urdf_path": "package://rnea_ros/urdf/arm7.urdf",
              "watchdog_timeout": 0.5}
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    names, zeros = model.joint_names, [0.0] * model.nv
    q = [0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8]
    reasons = []
    for k in range(600):  # state 500 is sent at 0.5 s and received at 0.75 s; the
        # sender was the one descheduled, so the next are stamped and received after it
        stamp, now = START + k * DT, k * DT
        if k >= 500:
            now += 0.25
            stamp += 0.25 if k > 500 else 0.0
        reasons.append(ctl.joint_state(names, q, zeros, stamp, now=now).reason)
    assert ctl.rejected["slow_stamps"] == 0 and set(reasons) == {None}, \
        [(k, r) for k, r in enumerate(reasons) if r is not None][:3]
    assert math.isclose(ctl.stamp_pace.cap, 0.1)
