"""Fuzz suite for the rate-limiter node (issue 16, section 3), over DDS on loopback:
both input types, bad arrays and joint states of every kind, stamps, a 20 kHz
flood from another process. Every output is checked: finite, within the effort
limits, within the rate limit on the time the node limited on -- receipt times
or stamps (see :func:`fuzzing.check_outputs`)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import rclpy
from fuzzing import Recorder, check_flood_rate, check_outputs, start_flood, wait_flood
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RateLimiterNode

JOINTS = ["a", "b", "c"]
RATE = np.array([100.0, 50.0, 200.0])
LIMIT = 8.0


class Fuzz:
    def __init__(self, input_type: str) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = RateLimiterNode(context=self.context, parameter_overrides=overrides(
            {"joints": JOINTS, "input_type": input_type, "effort_rate_limits": RATE.tolist(),
             "effort_limits": [LIMIT], "diagnostics_period": 0.2}))
        self.recorder = Recorder()
        # Each output and the receipt time (the node's steady clock) of its input.
        self.receipts: list[tuple[np.ndarray, float, float]] = []
        publish = self.node.output.publish

        def record(msg: Float64MultiArray) -> None:  # and the time it was limited on
            t = self.node.slew.last_time
            if input_type == "array":  # receipt times, steady clock
                self.recorder.add(msg.data, wall=t)
            else:  # stamps (shifted onto the new clock after a reset)
                self.recorder.add(msg.data, stamp=t)
            self.receipts.append((np.array(msg.data), self.node.slew.last_received,
                                  time.monotonic()))
            publish(msg)
        self.node.output.publish = record
        self.probe = Node("rnea_fuzz_probe", context=self.context)
        self.input_type = input_type
        self.topic = "/rnea_rate_limiter/" + ("input" if input_type == "array" else
                                               "input_state")
        self.pub = self.probe.create_publisher(
            Float64MultiArray if input_type == "array" else JointState, self.topic, 100)
        self.outputs: list[np.ndarray] = []
        self.probe.create_subscription(Float64MultiArray, "/rnea_rate_limiter/output",
                                       lambda m: self.outputs.append(np.array(m.data)), 100)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.spin_until(lambda: self.pub.get_subscription_count() > 0, 10.0)

    def spin_until(self, done, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.005)
        return done()

    def handled(self) -> int:
        return len(self.recorder.outputs) + sum(self.node.rejected.values())

    def send(self, msgs, pace: float = 1e-3) -> None:
        for msg in msgs:
            before = self.handled()
            self.pub.publish(msg)
            assert self.spin_until(lambda b=before: self.handled() > b, 5.0), "not handled"
            end = time.monotonic() + pace
            while time.monotonic() < end:
                self.executor.spin_once(timeout_sec=0)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.try_shutdown(context=self.context)


def array_msg(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(x) for x in values])


def state_msg(effort, t: float | None = None, names=("c", "a", "b")) -> JointState:
    t = time.time() if t is None else t
    msg = JointState()
    msg.header.stamp.sec = math.floor(t)
    msg.header.stamp.nanosec = min(round((t - math.floor(t)) * 1e9), 999_999_999)
    msg.name = list(names)
    values = {"a": effort[0], "b": effort[1], "c": effort[2]}
    msg.effort = [float(values.get(n, 0.0)) for n in names]
    return msg


def wave(k: int) -> list[float]:
    return [6.0 * math.sin(0.01 * k + i) for i in range(3)]


@pytest.fixture(scope="module", params=["array", "joint_state"])
def fuzz(request):
    f = Fuzz(request.param)
    yield f
    check_outputs(f.recorder.outputs, np.full(3, LIMIT), RATE, max_stamp_step=math.inf)
    check_receipts(f.receipts)
    for out in f.outputs:  # what crossed DDS
        assert np.all(np.isfinite(out)) and np.all(np.abs(out) <= LIMIT)
    f.close()


def check_receipts(receipts: list[tuple[np.ndarray, float, float]]) -> None:
    """Whatever the stamps, consecutive outputs within ``RATE`` times the time between
    their inputs' receipts on the node's clock, which is now (issue 22 §2)."""
    for k in range(1, len(receipts)):
        (previous, r0, _), (values, r1, seen) = receipts[k - 1], receipts[k]
        assert abs(seen - r1) <= 2.0, f"output {k}: receipt time {r1} is not now ({seen})"
        step = np.abs(values - previous)
        assert np.all(step <= RATE * (r1 - r0) + 1e-9), \
            f"output {k}: step {step} over the rate in {(r1 - r0) * 1e3:.3f} ms of receipts"


def good(f: Fuzz, count: int = 20) -> None:
    f.send(array_msg(wave(k)) if f.input_type == "array" else state_msg(wave(k))
           for k in range(count))


ARRAY_CASES = {
    "nan": ([0.0, math.nan, 0.0], "non_finite"),
    "+inf": ([math.inf, 0.0, 0.0], "non_finite"),
    "-inf": ([0.0, 0.0, -math.inf], "non_finite"),
    "empty": ([], "length_mismatch"),
    "short": ([1.0, 2.0], "length_mismatch"),
    "10,000 values": (np.zeros(10_000), "length_mismatch"),
    "1e308": ([1e308, -1e308, 1e308], None),  # clipped to the limits, then rate limited
}

BIG = ["a", "b", "c", *[f"x{k}" for k in range(9_997)]]
STATE_CASES = {
    "nan effort": (lambda: state_msg([math.nan, 0.0, 0.0]), "non_finite"),
    "inf effort": (lambda: state_msg([0.0, math.inf, 0.0]), "non_finite"),
    "1e308 effort": (lambda: state_msg([1e308, 0.0, -1e308]), None),
    "empty": (lambda: state_msg([0, 0, 0], names=()), "missing_joints"),
    "short effort": (lambda: JointState(name=["a", "b", "c"], effort=[1.0]), "length_mismatch"),
    "duplicate names": (lambda: state_msg([1.0, 2.0, 3.0], names=("a", "b", "c", "a")),
                        "duplicate_names"),
    "unknown names only": (lambda: state_msg([0, 0, 0], names=("x", "y")), "missing_joints"),
    "10,000 names": (lambda: state_msg([1.0, 1.0, 1.0], names=BIG), None),
    "1 MB name": (lambda: state_msg([1.0, 1.0, 1.0], names=("a", "b", "c", "y" * 1_000_000)),
                  None),
    "backwards stamp": (lambda: state_msg([5.0, 5.0, 5.0], time.time() - 1.0), "held"),
    "future stamp": (lambda: state_msg([5.0, 5.0, 5.0], time.time() + 3600.0), "held"),
    "zero stamp": (lambda: state_msg([5.0, 5.0, 5.0], 0.0), "held"),
    "stamps 0.9 s ahead": (lambda: state_msg([-8.0, 8.0, -8.0], ahead()), None),
}
_AHEAD = [0.0]


def ahead() -> float:
    """Stamps 0.9 s apart (inside the 1 s threshold) sent 1 ms apart (issue 22 §2)."""
    _AHEAD[0] = max(_AHEAD[0] + 0.9, time.time() + 0.9)
    return _AHEAD[0]


def test_bad_inputs_are_rejected_counted_and_the_node_recovers(fuzz: Fuzz) -> None:
    cases = ARRAY_CASES if fuzz.input_type == "array" else STATE_CASES
    for case, (build, reason) in cases.items():
        good(fuzz)
        before, outputs = dict(fuzz.node.rejected), len(fuzz.recorder.outputs)
        bad_dt = fuzz.node.slew.bad_dt
        fuzz.send([array_msg(build) if fuzz.input_type == "array" else build()
                   for _ in range(3)])
        counted = {k: v - before.get(k, 0) for k, v in fuzz.node.rejected.items()
                   if v != before.get(k, 0)}
        produced = len(fuzz.recorder.outputs) - outputs
        if reason is None:
            assert counted == {} and produced == 3, case
        elif reason == "held":  # published, the previous command held
            assert counted == {} and produced == 3 and fuzz.node.slew.bad_dt == bad_dt + 3, \
                case
            held = fuzz.recorder.outputs[-4].values
            assert all(np.array_equal(o.values, held) for o in fuzz.recorder.outputs[-3:])
        else:
            assert counted == {reason: 3} and produced == 0, (case, counted)
        good(fuzz)
    check_outputs(fuzz.recorder.outputs, np.full(3, LIMIT), RATE, max_stamp_step=math.inf)


def test_flood_then_silence_then_normal_data(fuzz: Fuzz) -> None:
    rejected = sum(fuzz.node.rejected.values())
    outputs = len(fuzz.recorder.outputs)
    flooder = start_flood("array" if fuzz.input_type == "array" else "joint_state",
                          fuzz.topic, 20_000.0, 3.0, JOINTS, position=[0.0, 0.0, 0.0],
                          reliable=True)
    good_sent, bad, rate = wait_flood(flooder, lambda: fuzz.executor.spin_once(
        timeout_sec=0.001), 40.0)
    print(f"{fuzz.input_type} flood: {good_sent} + {bad} bad at {rate:.0f} Hz; "
          f"{len(fuzz.recorder.outputs) - outputs} outputs, "
          f"{sum(fuzz.node.rejected.values()) - rejected} rejected")
    check_flood_rate(rate)
    assert len(fuzz.recorder.outputs) > outputs
    fuzz.spin_until(lambda: False, 1.0)  # silence
    good(fuzz, 50)
    check_outputs(fuzz.recorder.outputs, np.full(3, LIMIT), RATE, max_stamp_step=math.inf)
