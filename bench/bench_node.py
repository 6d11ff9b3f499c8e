"""Controller node vs a bare rclpy relay under a 1 kHz /joint_states stream, over DDS.

Two processes started as ``ros2 run`` would: our controller node (arm7,
gravity mode) and a **relay** -- the least a Python node can do: subscribe
``sensor_msgs/JointState``, publish a fixed ``std_msgs/Float64MultiArray``,
same executor (:func:`rnea_ros.nodes.common.make_executor`), same QoS, nothing
else. They run side by side on their own topics; this process drives them
**alternately** (node, relay, node, relay... in short rounds, 4 s by default:
the load of a shared machine changes by the minute) with the same 1 kHz
stream stamped with the send time, so both see the same machine load. Reported per
target, pooled over the rounds:

* end-to-end latency, publisher stamp -> command received here, p50 / p99
  (commands carry no stamp: matched to states in order, exact when nothing is
  dropped -- drops are counted and reported);
* for our node, the receipt-to-publish time inside it (its diagnostics);
* the ratio node / relay at p50 and p99: the node's own overhead, with DDS,
  the Python runtime and the machine's load divided out; and the median over
  the rounds of the ratio of each node round's p50 to that of the relay round
  that follows it (the load of a shared machine drifts less within a pair).

Targets (issue 16): end-to-end p99 <= 1 ms; node / relay <= 1.15 at p50 and p99.

    python bench/bench_node.py --rounds 15 --duration 4     # (make bench)
    python bench/bench_node.py --param contact.enable:=true  # with contact monitoring
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", "58")

import argparse
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

JOINTS = [f"joint{i}" for i in range(1, 8)]
Q = [0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3]
RELAY_STATES, RELAY_COMMANDS = "/rnea_bench_relay/joint_states", "/rnea_bench_relay/commands"


class Relay(Node):
    """Subscribe joint states, publish a fixed command: the floor for a Python node.

    ``delay`` [s] > 0: busy-wait that long before publishing (a calibration: what
    publishing later costs end to end, with no other work done)."""

    def __init__(self, delay: float = 0.0, **kwargs: Any) -> None:
        from rnea_ros.nodes.controller import STATE_QOS
        super().__init__("rnea_bench_relay", **kwargs)
        self.pub = self.create_publisher(Float64MultiArray, RELAY_COMMANDS, 10)
        self.msg = Float64MultiArray(data=[0.0] * 7)
        self.delay = delay
        self.create_subscription(JointState, RELAY_STATES,
                                 self.on_state_delayed if delay > 0 else self.on_state,
                                 STATE_QOS)

    def on_state(self, msg: JointState) -> None:
        self.pub.publish(self.msg)

    def on_state_delayed(self, msg: JointState) -> None:
        end = time.perf_counter() + self.delay
        while time.perf_counter() < end:
            pass
        self.pub.publish(self.msg)


class Target:
    """One process under test, seen from the driver."""

    def __init__(self, driver: Node, name: str, states: str, commands: str) -> None:
        self.name = name
        self.pub = driver.create_publisher(JointState, states, 10)
        self.sent: deque[float] = deque()
        self.latencies: list[float] = []  # of clean rounds
        self.round_p50: list[float] = []  # per round, nan when it had a drop
        self.round: list[float] = []
        self.received = 0
        self.count = 0  # states sent in clean rounds
        self.rounds = 0
        self.dirty = 0  # rounds with drops: ordered matching is off, discarded
        self.active = False
        self.lock = threading.Lock()
        driver.create_subscription(Float64MultiArray, commands, self.on_command, 100)

    def on_command(self, msg: Float64MultiArray) -> None:
        now = time.time()
        with self.lock:
            if self.sent:
                sent = self.sent.popleft()
                if self.active:
                    self.round.append(now - sent)
            self.received += 1

    def send(self) -> None:
        msg = JointState()
        now = time.time()
        msg.header.stamp.sec = int(now)
        msg.header.stamp.nanosec = int((now - int(now)) * 1e9)
        msg.name = JOINTS
        msg.position = Q
        msg.velocity = [0.0] * 7
        with self.lock:
            self.sent.append(now)
        self.pub.publish(msg)


def serve_relay(delay: float) -> int:
    from rnea_ros.nodes.common import run
    return run("rnea_bench_relay", lambda: Relay(delay), None)


def stream(target: Target, seconds: float, rate: float) -> None:
    """``seconds`` of states at ``rate``, paced on absolute times (sleeping)."""
    with target.lock:
        target.sent.clear()
        target.round = []
        target.active = True
    period = 1.0 / rate
    count = int(seconds * rate)
    start = time.perf_counter()
    for k in range(count):
        delay = start + k * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        target.send()
    time.sleep(0.2)
    with target.lock:
        target.active = False
        target.rounds += 1
        if len(target.round) == count:  # no drop: replies matched in order are exact
            target.latencies += target.round
            target.count += count
            target.round_p50.append(float(np.median(target.round)))
        else:
            target.dirty += 1
            target.round_p50.append(np.nan)


def wait_for(target: Target, process: subprocess.Popen[bytes], timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while target.pub.get_subscription_count() == 0 or target.received == 0:
        if time.monotonic() > deadline or process.poll() is not None:
            return False
        target.send()
        time.sleep(0.05)
    for _ in range(500):  # warm-up (the node's watchdog stays quiet)
        target.send()
        time.sleep(1e-3)
    time.sleep(0.1)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="alternations node/relay")
    parser.add_argument("--duration", type=float, default=4.0, help="seconds per target "
                        "and round")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint-state rate [Hz]")
    parser.add_argument("--relay-delay", type=float, default=0.0, help="calibration: the "
                        "relay busy-waits this long [us] before publishing")
    parser.add_argument("--param", action="append", default=[], metavar="NAME:=VALUE",
                        help="a controller parameter on top (repeatable), e.g. "
                        "contact.enable:=true to measure the contact monitor's cost")
    parser.add_argument("--serve-relay", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_relay:
        return serve_relay(args.relay_delay * 1e-6)
    processes = {
        "node": subprocess.Popen(
            [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args",
             "-p", "urdf_path:=package://rnea_ros/urdf/arm7.urdf", "-p", "watchdog_timeout:=10.0",
             "-p", "diagnostics_period:=1.0", "--log-level", "warn",
             *(a for p in args.param for a in ("-p", p))]),
        "relay": subprocess.Popen([sys.executable, __file__, "--serve-relay",
                                   "--relay-delay", str(args.relay_delay)]),
    }
    rclpy.init()
    driver = Node("rnea_bench_driver")
    targets = {"node": Target(driver, "node", "/joint_states", "/effort_controller/commands"),
               "relay": Target(driver, "relay", RELAY_STATES, RELAY_COMMANDS)}
    diagnostics: list[dict[str, str]] = []
    recording = threading.Event()

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            # (the computation's status: "/rnea_controller"; not "...: imu", "...: contact")
            if status.name.lstrip("/") == "rnea_controller" and recording.is_set():
                diagnostics.append({v.key: v.value for v in status.values})
    driver.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        for name, target in targets.items():
            if not wait_for(target, processes[name]):
                print(f"{name} did not come up")
                return 1
        for _ in range(args.rounds):
            for name, target in targets.items():
                if name == "node":
                    recording.set()
                stream(target, args.duration, args.rate)
                recording.clear()
        results = {}
        for name, target in targets.items():
            lat = np.array(target.latencies) * 1e6
            p50, p99 = np.percentile(lat, [50, 99]) if lat.size else (np.nan, np.nan)
            results[name] = (float(p50), float(p99), target.dirty)
        callback = [(float(d["receipt to publish p50 [us]"]),
                     float(d["receipt to publish p99 [us]"])) for d in diagnostics[1:]]
        cb50 = float(np.median([c[0] for c in callback])) if callback else float("nan")
        cb99 = float(np.median([c[1] for c in callback])) if callback else float("nan")
        print(f"{args.rounds} x {args.duration:g} s of joint states at {args.rate:g} Hz to each "
              "target, alternately, arm7 gravity mode, DDS on localhost; rounds with a "
              "dropped message are discarded (replies are matched in order)")
        print(f"  {'':<34}{'p50 [us]':>10}{'p99 [us]':>10}{'rounds with drops':>19}")
        for name in ("relay", "node"):
            p50, p99, dropped = results[name]
            label = "controller node" if name == "node" else "bare rclpy relay"
            print(f"  {label + ' end-to-end':<34}{p50:10.0f}{p99:10.0f}"
                  f"{f'{dropped} of {args.rounds}':>19}")
        if args.relay_delay:
            print(f"  (the relay busy-waits {args.relay_delay:g} us before publishing)")
        print(f"  {'node receipt to publish (median)':<34}{cb50:10.0f}{cb99:10.0f}")
        pairs = np.array(targets["node"].round_p50) / np.array(targets["relay"].round_p50)
        pairs = pairs[np.isfinite(pairs)]
        if pairs.size:
            q1, med, q3 = np.percentile(pairs, [25, 50, 75])
            print(f"  {'node / relay p50, paired rounds':<34}{med:10.2f}  (quartiles "
                  f"{q1:.2f}-{q3:.2f}, {pairs.size} pairs)")
        r50 = results["node"][0] / results["relay"][0]
        r99 = results["node"][1] / results["relay"][1]
        rows = [("node / relay p50", r50, 1.15), ("node / relay p99", r99, 1.15),
                ("node end-to-end p99 [ms]", results["node"][1] / 1e3, 1.0)]
        failures = 0
        for label, value, limit in rows:
            verdict = "ok" if value <= limit else "MISSED"
            failures += verdict == "MISSED"
            print(f"  {label:<34}{value:10.2f}  target <= {limit:g} {verdict}")
        return 0 if failures == 0 else 1
    finally:
        executor.shutdown()
        driver.destroy_node()
        rclpy.try_shutdown()
        for process in processes.values():
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
