"""Soak: the controller node under a 1 kHz /joint_states stream for 10 minutes.

Starts the controller node (arm7, gravity mode) as its own process, feeds it
1 kHz joint states stamped with the send time (one in 100 bad: NaN, a joint
named twice, a stale stamp, a short array -- so that the rejection paths run
too) and samples the node's resident memory and CPU time from /proc every
10 s. Reports the RSS growth from the end of the first minute (warm-up:
caches, allocator pools) to the end, against a target of < 5 MB, the CPU used
(percent of one core) and the commands received.

    python bench/soak_node.py --minutes 10
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", "59")

import argparse
import math
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

JOINTS = [f"joint{i}" for i in range(1, 8)]
Q = [0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3]
TICK = os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return math.nan


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def state(k: int) -> JointState:
    msg = JointState()
    now = time.time()
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(now), int((now % 1) * 1e9)
    msg.name = JOINTS
    msg.position = [q + 0.1 * math.sin(2e-3 * k) for q in Q]
    msg.velocity = [0.0] * 7
    if k % 100 == 99:  # one in 100 bad, four kinds in turn
        kind = (k // 100) % 4
        if kind == 0:
            msg.position[3] = math.nan
        elif kind == 1:
            msg.name = [*JOINTS, "joint1"]
            msg.position = [*msg.position, 0.0]
            msg.velocity = [0.0] * 8
        elif kind == 2:
            msg.header.stamp.sec -= 10
        else:
            msg.position = msg.position[:5]
    return msg


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    args = parser.parse_args(argv)
    node = subprocess.Popen(
        [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args",
         "-p", "urdf_path:=package://rnea_ros/urdf/arm7.urdf", "-p", "watchdog_timeout:=0.5",
         "--log-level", "error"])
    rclpy.init()
    driver = Node("rnea_soak_driver")
    pub = driver.create_publisher(JointState, "/joint_states", 10)
    commands = [0]
    driver.create_subscription(Float64MultiArray, "/effort_controller/commands",
                               lambda _: commands.__setitem__(0, commands[0] + 1), 100)
    executor = SingleThreadedExecutor()
    executor.add_node(driver)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while commands[0] == 0:
            if time.monotonic() > deadline or node.poll() is not None:
                print("controller node did not come up")
                return 1
            pub.publish(state(0))
            time.sleep(0.05)
        period = 1.0 / args.rate
        count = int(args.minutes * 60 * args.rate)
        samples: list[tuple[float, float, float]] = []  # (elapsed, rss, cpu)
        start = time.perf_counter()
        next_sample = start
        sent_at_warm = commands_at_warm = 0
        for k in range(count):
            now = time.perf_counter()
            if now >= next_sample:
                samples.append((now - start, rss_mb(node.pid), cpu_seconds(node.pid)))
                next_sample += 10.0
                if len(samples) == 7:  # 60 s: end of the warm-up
                    sent_at_warm, commands_at_warm = k, commands[0]
            delay = start + k * period - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pub.publish(state(k))
        time.sleep(0.5)
        samples.append((time.perf_counter() - start, rss_mb(node.pid), cpu_seconds(node.pid)))
        alive = node.poll() is None
    finally:
        executor.shutdown()
        driver.destroy_node()
        rclpy.try_shutdown()
        node.terminate()
        node.wait(10)
    warm = samples[min(6, len(samples) - 2)]
    end = samples[-1]
    growth = end[1] - warm[1]
    cpu = 100.0 * (end[2] - warm[2]) / (end[0] - warm[0])
    bad = (count - sent_at_warm) // 100
    print(f"{args.minutes:g} min of joint states at {args.rate:g} Hz to the controller node "
          "(arm7, gravity mode, 1 in 100 bad), DDS on localhost")
    print("  RSS [MB] every minute: " + " ".join(f"{s[1]:.1f}" for s in samples[::6]))
    print(f"  RSS after the first minute {warm[1]:.1f} MB, at the end {end[1]:.1f} MB: "
          f"growth {growth:+.2f} MB (target < 5) {'ok' if growth < 5 else 'MISSED'}")
    print(f"  node CPU after warm-up: {cpu:.1f} % of one core")
    print(f"  commands received after warm-up: {commands[0] - commands_at_warm} for "
          f"{count - sent_at_warm} states ({bad} of them bad); node alive: {alive}")
    return 0 if growth < 5 and alive else 1


if __name__ == "__main__":
    raise SystemExit(main())
