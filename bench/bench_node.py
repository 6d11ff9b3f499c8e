"""Controller node under a 1 kHz /joint_states stream (7-DoF arm), over DDS.

Starts the controller node in its own process (as ``ros2 run`` would), drives
it from this process with a 1 kHz ``sensor_msgs/JointState`` stream stamped
with the send time, and reports:

* receipt-to-publish time inside the node (its diagnostics), p50 / p99;
* end-to-end latency, publisher stamp -> effort command received here, p50 /
  p99: commands carry no stamp, so they are matched to states in order (exact
  when nothing is dropped); ``--exact`` matches the node's ``~/efforts``
  JointState instead (it carries the state's stamp, but publishing it costs
  the node a second message per state);
* dropped messages (states sent without a reply).

Targets (ROS 2 control nodes issue): receipt-to-publish p99 <= 100 us,
end-to-end p99 <= 1 ms, zero dropped. DDS stays on localhost.

    python bench/bench_node.py --duration 60     # or: make bench-node
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

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

JOINTS = [f"joint{i}" for i in range(1, 8)]
Q = [0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3]


class Driver(Node):
    def __init__(self, exact: bool) -> None:
        super().__init__("rnea_bench_driver")
        self.pub = self.create_publisher(JointState, "/joint_states", 10)
        self.sent: deque[float] = deque()
        self.exact = exact
        self.latencies: list[float] = []
        self.received = 0
        self.commands = 0
        self.diagnostics: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                 self.on_command, 100)
        self.create_subscription(JointState, "/rnea_controller/efforts", self.on_efforts, 100)
        self.create_subscription(DiagnosticArray, "/diagnostics", self.on_diagnostics, 10)

    def on_command(self, msg: Float64MultiArray) -> None:
        now = time.time()
        with self.lock:
            self.commands += 1
            if not self.exact:
                if self.sent:
                    self.latencies.append(now - self.sent.popleft())
                self.received += 1

    def on_efforts(self, msg: JointState) -> None:
        now = time.time()
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        with self.lock:
            self.latencies.append(now - stamp)
            self.received += 1

    def on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.startswith("rnea_controller"):
                self.diagnostics.append({v.key: v.value for v in status.values})

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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="stream length [s]")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint-state rate [Hz]")
    parser.add_argument("--exact", action="store_true",
                        help="match replies by stamp through the node's ~/efforts")
    args = parser.parse_args(argv)
    node = subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args",
         "-p", "urdf_path:=package://rnea_ros/urdf/arm7.urdf", "-p", "watchdog_timeout:=0.5",
         "-p", "diagnostics_period:=1.0", "-p",
         f"publish_effort_state:={'true' if args.exact else 'false'}", "--log-level", "warn"])
    rclpy.init()
    driver = Driver(args.exact)
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        deadline = time.monotonic() + 30
        while driver.pub.get_subscription_count() == 0 or driver.received == 0:
            if time.monotonic() > deadline or node.poll() is not None:
                print("controller node did not come up")
                return 1
            driver.send()
            time.sleep(0.05)
        for _ in range(500):  # keep the node fed (no watchdog) while it warms up
            driver.send()
            time.sleep(1e-3)
        time.sleep(0.05)
        with driver.lock:
            driver.sent.clear()
            driver.latencies.clear()
            driver.received = 0
            driver.commands = 0
        driver.diagnostics.clear()
        period = 1.0 / args.rate
        count = int(args.duration * args.rate)
        start = time.perf_counter()
        for k in range(count):  # paced on absolute times (no drift), sleeping, not spinning
            delay = start + k * period - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            driver.send()
        time.sleep(0.5)
        elapsed = time.perf_counter() - start
        with driver.lock:
            latencies = np.array(driver.latencies) * 1e6
            dropped = count - driver.received
            dropped_commands = count - driver.commands
        callback = [(float(d["receipt to publish p50 [us]"]),
                     float(d["receipt to publish p99 [us]"])) for d in driver.diagnostics[1:]]
        cb50 = float(np.median([c[0] for c in callback])) if callback else float("nan")
        cb99 = max((c[1] for c in callback), default=float("nan"))
        e50, e99 = np.percentile(latencies, [50, 99]) if latencies.size else (np.nan, np.nan)
        print(f"{count} joint states at {count / (elapsed - 0.5):.0f} Hz for {args.duration:g} s "
              "to the controller node (arm7, gravity mode), over DDS on localhost")
        rows = [("receipt to publish p50 [us]", cb50, None),
                ("receipt to publish p99 [us] (worst 5 s window)", cb99, 100.0),
                ("end-to-end p50 [us]", e50, None), ("end-to-end p99 [us]", e99, 1000.0),
                ("dropped messages (no reply)", float(dropped), 0.0),
                ("dropped effort commands", float(dropped_commands), 0.0)]
        failures = 0
        for label, value, target in rows:
            verdict = "" if target is None else ("ok" if value <= target else "MISSED")
            failures += verdict == "MISSED"
            limit = "" if target is None else f"target <= {target:g}"
            print(f"  {label:<48}{value:10.1f}  {limit} {verdict}")
        return 0 if failures == 0 else 1
    finally:
        executor.shutdown()
        driver.destroy_node()
        rclpy.try_shutdown()
        node.terminate()
        node.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
