"""Fuzz suite for the simulator node (issue 16, section 3), over DDS on loopback:
bad effort commands of every kind, huge finite efforts, a 20 kHz flood from
another process, illegal runtime parameters. Every joint state it publishes is
checked finite; bad commands are rejected and counted (and reported on
/diagnostics), efforts beyond the URDF limits clamped; after silence the
effort returns to zero (command_timeout); the node recovers on good data."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from fuzzing import check_flood_rate, start_flood, wait_flood
from std_msgs.msg import Float64MultiArray

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop, overrides
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = 0.5 * (MODEL.lower_limit + MODEL.upper_limit)


class Fuzz:
    def __init__(self) -> None:
        # Real time (its own 1 kHz timer), so that silence means something.
        self.loop = ClosedLoop(None, {"urdf_path": URDF, "initial_positions": Q0.tolist(),
                                      "lockstep": False, "publish_clock": False,
                                      "wait_for_command": False, "command_timeout": 0.2})
        self.sim = self.loop.simulator
        self.pub = self.loop.probe.create_publisher(Float64MultiArray,
                                                    "/effort_controller/commands", 100)
        self.diagnostics: list[dict[str, str]] = []

        def on_diagnostics(msg: DiagnosticArray) -> None:
            for s in msg.status:
                if "rnea_simulator" in s.name:
                    self.diagnostics.append({v.key: v.value for v in s.values})
        self.loop.probe.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics,
                                            10)
        assert self.loop.spin_until(lambda: self.pub.get_subscription_count() > 0, 10.0)

    def send(self, values, expect_rejected: bool) -> None:
        rejected = self.sim.rejected
        wall = self.sim.last_command_wall
        self.pub.publish(Float64MultiArray(data=[float(x) for x in values]))
        if expect_rejected:
            assert self.loop.spin_until(lambda: self.sim.rejected > rejected, 5.0)
        else:
            assert self.loop.spin_until(lambda: self.sim.last_command_wall > wall, 5.0)

    def check_states(self) -> int:
        r = self.loop.probe.recording
        assert r.q and np.all(np.isfinite(np.array(r.q))) and np.all(np.isfinite(np.array(r.qd)))
        return len(r.q)


@pytest.fixture(scope="module")
def fuzz():
    f = Fuzz()
    yield f
    f.check_states()
    f.loop.close()


def gravity_hold(f: Fuzz, count: int = 20) -> None:
    from rnea_ros.core.dynamics.rnea import gravity_torques
    for _ in range(count):
        f.send(gravity_torques(MODEL, f.sim.sim.q), expect_rejected=False)


BAD = {
    "nan": [0.0, math.nan, 0, 0, 0, 0, 0],
    "+inf": [math.inf, 0, 0, 0, 0, 0, 0],
    "-inf": [0, 0, 0, 0, 0, 0, -math.inf],
    "empty": [],
    "short": [0.0] * 6,
    "long": [0.0] * 8,
    "10,000 values": [0.0] * 10_000,
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_commands_are_rejected_and_counted(fuzz: Fuzz, case: str) -> None:
    gravity_hold(fuzz, 5)
    tau = fuzz.sim.tau.copy()
    rejected = fuzz.sim.rejected
    for _ in range(3):
        fuzz.send(BAD[case], expect_rejected=True)
    assert fuzz.sim.rejected == rejected + 3
    assert np.array_equal(fuzz.sim.tau, tau)  # the last good command still applies
    gravity_hold(fuzz, 5)
    assert fuzz.loop.spin_until(
        lambda: fuzz.diagnostics and fuzz.diagnostics[-1]["rejected commands"] ==
        str(fuzz.sim.rejected), 3.0)
    fuzz.check_states()


def test_huge_finite_efforts_are_clamped_to_the_urdf_limits(fuzz: Fuzz) -> None:
    clamped = fuzz.sim.clamped
    fuzz.send([1e308, -1e308, 1e308, -1e308, 1e308, -1e308, 1e308], expect_rejected=False)
    signs = np.array([1, -1, 1, -1, 1, -1, 1.0])
    assert np.array_equal(fuzz.sim.tau, signs * MODEL.effort_limit)
    assert fuzz.sim.clamped == clamped + 7
    fuzz.loop.spin_until(lambda: False, 0.05)
    fuzz.check_states()
    fuzz.sim.sim.reset(Q0)  # back to a sane pose for the next cases
    gravity_hold(fuzz, 20)


def test_flood_then_silence_then_normal_data(fuzz: Fuzz) -> None:
    rejected = fuzz.sim.rejected
    flooder = start_flood("array", "/effort_controller/commands", 20_000.0, 3.0,
                          list(MODEL.joint_names), reliable=True)
    good, bad, rate = wait_flood(flooder, lambda: fuzz.loop.executor.spin_once(
        timeout_sec=0.001), 40.0)
    print(f"simulator flood: {good} + {bad} bad commands at {rate:.0f} Hz; "
          f"{fuzz.sim.rejected - rejected} rejected")
    check_flood_rate(rate)
    assert fuzz.sim.rejected > rejected
    fuzz.check_states()
    # Silence: after command_timeout the simulator applies zero effort.
    assert fuzz.loop.spin_until(lambda: not fuzz.sim.tau.any(), 2.0)
    fuzz.sim.sim.reset(Q0)
    gravity_hold(fuzz, 50)
    assert fuzz.sim.tau.any()
    fuzz.check_states()


ILLEGAL = [
    {"payload.link": "nowhere", "payload.mass": 1.0},
    {"payload.link": "flange", "payload.mass": math.nan},
    {"payload.link": "flange", "payload.mass": -2.0},
    {"payload.link": "flange", "payload.mass": 1.0, "payload.com": [0.0, 0.0]},
    {"payload.link": "flange", "payload.mass": 1.0, "payload.inertia": [1.0] * 5},
    {"rate": 0.0}, {"integrator": "magic"}, {"urdf_path": "/tmp/x.urdf"},
]


def test_illegal_runtime_parameters_are_refused(fuzz: Fuzz) -> None:
    sim = fuzz.sim.sim
    for values in ILLEGAL:
        result = fuzz.sim.set_parameters_atomically(overrides(values))
        assert not result.successful, values
        assert fuzz.sim.sim is sim, values
        gravity_hold(fuzz, 2)
    start = time.monotonic()
    gravity_hold(fuzz, 20)
    assert time.monotonic() - start < 10.0
    fuzz.check_states()
