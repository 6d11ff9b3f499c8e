"""Controller node vs a bare rclpy relay under a 1 kHz /joint_states stream, over DDS.

Two processes started as ``ros2 run`` would: our controller node (arm7,
gravity mode, ``publish_effort_state`` on) and a **relay** -- the least a Python
node can do: subscribe ``sensor_msgs/JointState``, publish a fixed
``std_msgs/Float64MultiArray`` and echo the state's stamp in a ``JointState``
(as the node's ``~/efforts``), same executor
(:func:`rnea_ros.nodes.common.make_executor`), same QoS, nothing else. They run
side by side on their own topics; this process drives them **alternately**
(node, relay, node, relay... in short rounds, 4 s by default: the load of a
shared machine changes by the minute) with the same 1 kHz stream stamped with
the send time, so both see the same machine load. Reported per target, pooled
over the rounds:

* end-to-end latency, publisher stamp -> command received here, p50 / p99, over
  the **answered** states: each command is matched to the state it answers by
  the stamped reply published right after it (:class:`Target`), so a state the
  node sheds under load (``nodes/shedding.py``, ``NewestOnly``: the newest
  queued state wins) or DDS loses costs nothing but an "unanswered" count;
* the unanswered fraction (shed or lost), for node and relay alike;
* for our node, the receipt-to-publish time inside it (its diagnostics);
* the ratio node / relay at p50 and p99: the node's own overhead, with DDS,
  the Python runtime and the machine's load divided out; and the median over
  the rounds of the ratio of each node round's p50 to that of the relay round
  that follows it (the load of a shared machine drifts less within a pair).

``--compare NAME:=VALUE`` runs a second controller node (namespace
``/rnea_bench_compare``) with those parameters in the same alternation (node,
compare, relay, ...) and reports the ratio of its receipt-to-publish p50 to the
plain node's (issue 38: the contact monitor's cost, target <= 1.1).

Targets (issue 16): end-to-end p99 <= 1 ms; node / relay <= 1.15 at p50 and p99.

    python bench/bench_node.py --rounds 15 --duration 4     # (make bench)
    python bench/bench_node.py --param contact.enable:=true  # with contact monitoring
    python bench/bench_node.py --compare contact.enable:=true  # both, alternated
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
RELAY_STATES = "/rnea_bench_relay/joint_states"
RELAY_COMMANDS, RELAY_ECHO = "/rnea_bench_relay/commands", "/rnea_bench_relay/echo"
COMPARE_NS = "/rnea_bench_compare"  # the second controller node of --compare


class Relay(Node):
    """Subscribe joint states, publish a fixed command, then echo the state's stamp
    (a ``JointState``, as the node's ``~/efforts``): the floor for a Python node.

    ``delay`` [s] > 0: busy-wait that long before publishing (a calibration: what
    publishing later costs end to end, with no other work done)."""

    def __init__(self, delay: float = 0.0, **kwargs: Any) -> None:
        from rnea_ros.nodes.controller import STATE_QOS
        super().__init__("rnea_bench_relay", **kwargs)
        self.pub = self.create_publisher(Float64MultiArray, RELAY_COMMANDS, 10)
        self.echo_pub = self.create_publisher(JointState, RELAY_ECHO, 10)
        self.msg = Float64MultiArray(data=[0.0] * 7)
        self.echo = JointState(name=JOINTS)
        self.delay = delay
        self.create_subscription(JointState, RELAY_STATES,
                                 self.on_state_delayed if delay > 0 else self.on_state,
                                 STATE_QOS)

    def on_state(self, msg: JointState) -> None:
        self.pub.publish(self.msg)
        self.echo.header.stamp = msg.header.stamp
        self.echo.effort = self.msg.data.tolist()
        self.echo_pub.publish(self.echo)

    def on_state_delayed(self, msg: JointState) -> None:
        end = time.perf_counter() + self.delay
        while time.perf_counter() < end:
            pass
        self.on_state(msg)


class Target:
    """One process under test, seen from the driver.

    Each state sent carries its send time as header stamp; the target answers it
    with a command and then a ``JointState`` stamped with the answered state's
    stamp (the node's ``~/efforts``, ``publish_effort_state``; the relay's echo).
    Commands carry no stamp, so the k-th command of a round is matched to the k-th
    stamped reply (both published back to back by one callback, in that order):
    the latency of an answered state is its command's arrival minus its stamp,
    exact whatever was shed. When a round's counts of commands and stamped replies
    differ (a message lost in DDS, not a shed state), the round's latencies are
    the stamped replies' arrivals instead (later by one publication) and the
    round is counted as ``fallback``."""

    def __init__(self, driver: Node, name: str, states: str, commands: str, echo: str,
                 status: str | None = None) -> None:
        self.name, self.status = name, status
        self.pub = driver.create_publisher(JointState, states, 10)
        self.sent: set[tuple[int, int]] = set()  # stamps of this round's states
        self.commands: list[float] = []  # arrivals in the round [s]
        self.replies: list[tuple[float, float]] = []  # (stamp, arrival) [s]
        self.latencies: list[float] = []  # of answered states, all rounds [s]
        self.round_p50: list[float] = []
        self.callback: list[tuple[float, float]] = []  # node diagnostics, p50 / p99 [us]
        self.received = 0
        self.count = 0  # states sent
        self.answered = 0
        self.fallback = 0  # rounds matched on the stamped replies' arrivals
        self.active = False
        self.lock = threading.Lock()
        driver.create_subscription(Float64MultiArray, commands, self.on_command, 100)
        driver.create_subscription(JointState, echo, self.on_reply, 100)

    def on_command(self, msg: Float64MultiArray) -> None:
        now = time.time()
        with self.lock:
            if self.active:
                self.commands.append(now)
            self.received += 1

    def on_reply(self, msg: JointState) -> None:
        now = time.time()
        key = (msg.header.stamp.sec, msg.header.stamp.nanosec)
        with self.lock:
            if self.active and key in self.sent:
                self.replies.append((key[0] + 1e-9 * key[1], now))

    def send(self) -> None:
        msg = JointState()
        now = time.time()
        msg.header.stamp.sec = int(now)
        msg.header.stamp.nanosec = int((now - int(now)) * 1e9)
        msg.name = JOINTS
        msg.position = Q
        msg.velocity = [0.0] * 7
        with self.lock:
            if self.active:
                self.sent.add((msg.header.stamp.sec, msg.header.stamp.nanosec))
        self.pub.publish(msg)

    def close_round(self) -> None:
        """Match the round's replies (see the class) and pool them."""
        with self.lock:
            self.active = False
            replies, commands, count = self.replies, self.commands, len(self.sent)
        stamps = np.array([r[0] for r in replies])
        if len(commands) == len(replies):
            arrivals = np.array(commands)
        else:
            arrivals = np.array([r[1] for r in replies])
            self.fallback += 1
        latency = arrivals - stamps
        self.latencies += latency.tolist()
        self.count += count
        self.answered += len(replies)
        self.round_p50.append(float(np.median(latency)) if latency.size else np.nan)

    def open_round(self) -> None:
        with self.lock:
            self.sent, self.commands, self.replies = set(), [], []
            self.active = True


def serve_relay(delay: float) -> int:
    from rnea_ros.nodes.common import run
    return run("rnea_bench_relay", lambda: Relay(delay), None)


def stream(target: Target, seconds: float, rate: float) -> None:
    """``seconds`` of states at ``rate``, paced on absolute times (sleeping), then
    0.2 s for the last replies."""
    target.open_round()
    period = 1.0 / rate
    start = time.perf_counter()
    for k in range(int(seconds * rate)):
        delay = start + k * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        target.send()
    time.sleep(0.2)
    target.close_round()


def wait_for(target: Target, process: subprocess.Popen[bytes], alive: Sequence[Target],
             timeout: float = 300.0) -> bool:
    """Until ``target`` answers (its process may compile for minutes), the targets
    already up (``alive``) fed a state every 50 ms: their watchdogs stay quiet."""
    deadline = time.monotonic() + timeout
    while target.pub.get_subscription_count() == 0 or target.received == 0:
        if time.monotonic() > deadline or process.poll() is not None:
            return False
        for other in (target, *alive):
            other.send()
        time.sleep(0.05)
    return True


def warm(target: Target) -> None:
    """500 states at 1 kHz, outside any round."""
    for _ in range(500):
        target.send()
        time.sleep(1e-3)
    time.sleep(0.1)


def controller(params: Sequence[str], namespace: str | None) -> subprocess.Popen[bytes]:
    """The controller node (arm7, gravity mode, ``~/efforts`` on) with ``params``."""
    remap = ("-r", f"__ns:={namespace}") if namespace else ()
    return subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args", *remap,
         "-p", "urdf_path:=package://rnea_ros/urdf/arm7.urdf", "-p", "watchdog_timeout:=10.0",
         "-p", "diagnostics_period:=1.0", "-p", "publish_effort_state:=true",
         "--log-level", "warn", *(a for p in params for a in ("-p", p))])


def summary(target: Target) -> tuple[float, float, float, float, float]:
    """p50, p99 end to end [us], unanswered fraction, receipt to publish p50, p99 [us]
    (the median over the diagnostics reports, each round's first one left out: its
    window began before the round)."""
    lat = np.array(target.latencies) * 1e6
    p50, p99 = np.percentile(lat, [50, 99]) if lat.size else (np.nan, np.nan)
    unanswered = 1.0 - target.answered / target.count if target.count else np.nan
    cb = np.array(target.callback).reshape(-1, 2)
    keep = np.ones(len(cb), dtype=bool)
    marks = np.flatnonzero(np.isnan(cb[:, 0]))
    keep[marks] = False
    keep[marks[marks + 1 < len(cb)] + 1] = False
    cb = cb[keep]
    cb50, cb99 = np.median(cb, axis=0) if len(cb) else (np.nan, np.nan)
    return float(p50), float(p99), float(unanswered), float(cb50), float(cb99)


def report(args: argparse.Namespace, targets: dict[str, Target]) -> int:
    """Print the table and the ratio lines; 0 if the targets are met."""
    results = {name: summary(t) for name, t in targets.items()}
    print(f"{args.rounds} x {args.duration:g} s of joint states at {args.rate:g} Hz to each "
          "target, alternately, arm7 gravity mode, DDS on localhost; latency over the "
          "answered states (matched by stamp), shed or lost states counted as unanswered")
    print(f"  {'':<34}{'p50 [us]':>10}{'p99 [us]':>10}{'unanswered':>12}{'fallback':>10}")
    labels = {"relay": "bare rclpy relay", "node": "controller node",
              "compare": "compare node"}
    if args.compare:
        print(f"  (compare: the controller node with {' '.join(args.compare)})")
    for name, target in targets.items():
        p50, p99, unanswered, _, _ = results[name]
        print(f"  {labels[name] + ' end-to-end':<34}{p50:10.0f}{p99:10.0f}"
              f"{unanswered:12.2%}{target.fallback:10d}")
    if args.relay_delay:
        print(f"  (the relay busy-waits {args.relay_delay:g} us before publishing)")
    for name in ("node", "compare"):
        if name in targets:
            cb50, cb99 = results[name][3:]
            print(f"  {name + ' receipt to publish':<34}{cb50:10.1f}{cb99:10.1f}"
                  "  (median of its reports)")
    relay = np.array(targets["relay"].round_p50)
    for name in [n for n in ("node", "compare") if n in targets]:
        pairs = np.array(targets[name].round_p50) / relay
        pairs = pairs[np.isfinite(pairs)]
        if pairs.size:
            q1, med, q3 = np.percentile(pairs, [25, 50, 75])
            print(f"  {name + ' / relay p50, paired rounds':<34}{med:10.2f}  (quartiles "
                  f"{q1:.2f}-{q3:.2f}, {pairs.size} pairs)")
    if "compare" in targets:
        ratio = results["compare"][3] / results["node"][3]
        print(f"  {'compare / node receipt-to-publish':<34}{ratio:10.2f}  (p50; issue 38: <= 1.1)")
    rows = []
    for name in [n for n in ("node", "compare") if n in targets]:
        rows += [(f"{name} / relay p50", results[name][0] / results["relay"][0], 1.15),
                 (f"{name} / relay p99", results[name][1] / results["relay"][1], 1.15),
                 (f"{name} end-to-end p99 [ms]", results[name][1] / 1e3, 1.0)]
    failures = 0
    for label, value, limit in rows:
        verdict = "ok" if value <= limit else "MISSED"
        failures += verdict == "MISSED"
        print(f"  {label:<34}{value:10.2f}  target <= {limit:g} {verdict}")
    return 0 if failures == 0 else 1


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
    parser.add_argument("--compare", action="append", default=[], metavar="NAME:=VALUE",
                        help="also run a second controller node with these parameters on "
                        "top of --param (repeatable), in the same alternation, e.g. "
                        "contact.enable:=true")
    parser.add_argument("--serve-relay", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_relay:
        return serve_relay(args.relay_delay * 1e-6)
    processes = {"node": controller(args.param, None)}
    if args.compare:
        processes["compare"] = controller([*args.param, *args.compare], COMPARE_NS)
    processes["relay"] = subprocess.Popen([sys.executable, __file__, "--serve-relay",
                                           "--relay-delay", str(args.relay_delay)])
    rclpy.init()
    driver = Node("rnea_bench_driver")
    targets = {"node": Target(driver, "node", "/joint_states", "/effort_controller/commands",
                              "/rnea_controller/efforts", "/rnea_controller")}
    if args.compare:
        targets["compare"] = Target(
            driver, "compare", f"{COMPARE_NS}/joint_states",
            f"{COMPARE_NS}/effort_controller/commands", f"{COMPARE_NS}/rnea_controller/efforts",
            f"{COMPARE_NS}/rnea_controller")
    targets["relay"] = Target(driver, "relay", RELAY_STATES, RELAY_COMMANDS, RELAY_ECHO)
    recording: list[Target] = []

    def on_diagnostics(msg: DiagnosticArray) -> None:
        for status in msg.status:
            # (the computation's status: "/rnea_controller"; not "...: imu", "...: contact")
            for target in recording:
                if status.name == target.status:
                    values = {v.key: v.value for v in status.values}
                    target.callback.append((float(values["receipt to publish p50 [us]"]),
                                            float(values["receipt to publish p99 [us]"])))
    driver.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        for k, (name, target) in enumerate(targets.items()):
            if not wait_for(target, processes[name], list(targets.values())[:k]):
                print(f"{name} did not come up")
                return 1
        for target in targets.values():
            warm(target)
        for _ in range(args.rounds):
            for target in targets.values():
                target.callback.append((np.nan, np.nan))  # (a round's first report: dropped)
                recording[:] = [target] if target.status else []
                stream(target, args.duration, args.rate)
                recording.clear()
        return report(args, targets)
    finally:
        executor.shutdown()
        driver.destroy_node()
        rclpy.try_shutdown()
        for process in processes.values():
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
