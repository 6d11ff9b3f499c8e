"""Shared pieces of the node fuzz suites (test/nodes/test_fuzz_*.py): a recorder of
what a node publishes, the output invariants, and a flooder run as its own process
(``python test/fuzzing.py flood ...``) so that the flood is real DDS traffic from
another process at 10-20 kHz."""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Output:
    """One published command: the node's steady time for it [s], its stamp [s]
    (nan if none), the values, and our steady time when it was published."""

    wall: float
    stamp: float
    values: np.ndarray
    seen: float


@dataclass
class Recorder:
    outputs: list[Output] = field(default_factory=list)

    def add(self, values: Any, wall: float | None = None, stamp: float = math.nan) -> None:
        seen = time.monotonic()
        self.outputs.append(Output(seen if wall is None else wall, stamp,
                                   np.array(values, dtype=float), seen))

    def since(self, index: int) -> list[Output]:
        return self.outputs[index:]


def check_outputs(outputs: Sequence[Output], limits: np.ndarray, rate: np.ndarray | float | None,
                  max_stamp_step: float = 1.0) -> int:
    """Every output finite and within ``limits``; with ``rate``, consecutive outputs
    within ``rate * dt``: ``dt`` is their stamp difference when both are stamped and
    it is in ``[0, max_stamp_step]`` (a rate limit on the robot's time; outside, a
    clock reset), else the difference of the node's steady times -- which must be
    the time of publication (within 2 s of our clock, as this loaded machine stalls
    a process for 0.5 s at times: a node cannot buy itself a larger step with a
    made-up time). Returns the number of outputs checked."""
    previous: Output | None = None
    for k, out in enumerate(outputs):
        assert np.all(np.isfinite(out.values)), f"output {k} not finite: {out.values}"
        assert np.all(np.abs(out.values) <= limits + 1e-9), \
            f"output {k} beyond the effort limits: {out.values} vs {limits}"
        assert abs(out.wall - out.seen) <= 2.0, \
            f"output {k}: node time {out.wall} is not now ({out.seen})"
        if rate is not None and previous is not None:
            d_stamp = out.stamp - previous.stamp
            if 0.0 <= d_stamp <= max_stamp_step:
                dt = d_stamp
            else:
                dt = out.wall - previous.wall
            step = np.abs(out.values - previous.values)
            assert np.all(step <= rate * dt + 1e-9), \
                f"output {k}: step {step.max():.4g} over rate * dt = {np.min(rate * dt):.4g} " \
                f"(dt {dt * 1e3:.3f} ms, stamps {d_stamp * 1e3:.3f} ms apart)"
        previous = out
    return len(outputs)


def start_flood(kind: str, topic: str, rate: float, seconds: float,
                names: Sequence[str] = (), bad_every: int = 10,
                position: Sequence[float] = (), reliable: bool = False
                ) -> subprocess.Popen[str]:
    """Start the flooder process; ``wait_flood`` returns what it sent. ``reliable``
    for subscribers that are (a best-effort publisher does not reach them)."""
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, "fuzzing.py"), "flood", "--kind", kind,
         "--topic", topic, "--rate", str(rate), "--seconds", str(seconds),
         "--names", ",".join(names), "--bad-every", str(bad_every),
         "--position", ",".join(map(str, position)), *(["--reliable"] if reliable else [])],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ))


def wait_flood(process: subprocess.Popen[str], spin: Callable[[], None],
               timeout: float) -> tuple[int, int, float]:
    """Spin until the flooder ends; (good sent, bad sent, achieved rate [Hz])."""
    end = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < end:
        spin()
    if process.poll() is None:
        process.kill()
        raise AssertionError("flooder did not finish")
    out = process.stdout.read() if process.stdout else ""
    good, bad, rate = out.split()[-3:]
    return int(good), int(bad), float(rate)


def _bad_state(msg: Any, k: int, names: list[str]) -> None:
    """Turn a good JointState into the (k % 6)-th kind of bad one."""
    kind = k % 6
    if kind == 0:
        msg.position[k % len(names)] = math.nan
    elif kind == 1:
        msg.velocity[k % len(names)] = math.inf
    elif kind == 2:
        msg.position = msg.position[:-1]
        msg.effort = msg.effort[:-1]
    elif kind == 3:
        msg.name = [*names, names[0]]
        msg.position = [*msg.position, 0.0]
        msg.velocity = [*msg.velocity, 0.0]
        msg.effort = [*msg.effort, 0.0]
    elif kind == 4:
        msg.position[0] = 1e308
        msg.effort[1] = math.nan
    else:
        msg.header.stamp.sec -= 100  # a single stale message


def imu_message(t: float, roll: float, frame_id: str = "imu") -> Any:
    """A good ``sensor_msgs/Imu`` of a base at rest rolled by ``roll`` [rad], stamped ``t``."""
    from sensor_msgs.msg import Imu
    msg = Imu()
    msg.header.stamp.sec = math.floor(t)
    msg.header.stamp.nanosec = min(round((t - math.floor(t)) * 1e9), 999_999_999)
    msg.header.frame_id = frame_id
    msg.orientation.x, msg.orientation.w = math.sin(roll / 2), math.cos(roll / 2)
    msg.linear_acceleration.y = 9.81 * math.sin(roll)  # specific force, sensor frame
    msg.linear_acceleration.z = 9.81 * math.cos(roll)
    return msg


def _bad_imu(msg: Any, k: int) -> None:
    """Turn a good Imu into the (k % 5)-th kind of bad one."""
    kind = k % 5
    if kind == 0:
        msg.angular_velocity.y = math.nan
    elif kind == 1:
        msg.orientation.w = 2.0  # not a unit quaternion
    elif kind == 2:
        msg.linear_acceleration.z = math.inf
    elif kind == 3:
        msg.header.frame_id = "elsewhere"
    else:
        msg.header.stamp.sec -= 100  # a single stale message


def flood_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["joint_state", "array", "imu"])
    parser.add_argument("--topic")
    parser.add_argument("--rate", type=float)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--names", default="")
    parser.add_argument("--bad-every", type=int, default=10)
    parser.add_argument("--position", default="")
    parser.add_argument("--reliable", action="store_true")
    args = parser.parse_args(argv)
    import rclpy
    from rclpy.qos import QoSProfile, QoSReliabilityPolicy
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import Float64MultiArray
    rclpy.init()
    node = rclpy.create_node("rnea_fuzz_flooder")
    qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE if args.reliable
                     else QoSReliabilityPolicy.BEST_EFFORT)
    names = [n for n in args.names.split(",") if n]
    position = [float(x) for x in args.position.split(",") if x]
    kinds = {"joint_state": JointState, "array": Float64MultiArray, "imu": Imu}
    pub = node.create_publisher(kinds[args.kind], args.topic, qos)
    deadline = time.monotonic() + 10
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    good = bad = 0
    period = 1.0 / args.rate
    start = time.perf_counter()
    count = int(args.seconds * args.rate)
    for k in range(count):
        while time.perf_counter() < start + k * period:
            pass  # busy-wait: sleep cannot pace 20 kHz
        is_bad = args.bad_every > 0 and k % args.bad_every == args.bad_every - 1
        if args.kind == "joint_state":
            msg = JointState()
            now = time.time()
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(now), int((now % 1) * 1e9)
            msg.name = names
            msg.position = [p + 0.05 * math.sin(now) for p in position]
            msg.velocity = [0.0] * len(names)
            msg.effort = [5.0 * math.sin(now + i) for i in range(len(names))]
            if is_bad:
                _bad_state(msg, k // args.bad_every, names)
        elif args.kind == "imu":  # a base tilted by 5 deg about x, at rest (frame 'imu')
            msg = imu_message(time.time(), 0.0873)
            if is_bad:
                _bad_imu(msg, k // args.bad_every)
        else:
            values = [5.0 * math.sin(k * 1e-3 + i) for i in range(len(names))]
            if is_bad:
                values = [math.nan] * len(names) if k % 2 else values[:-1]
            msg = Float64MultiArray(data=values)
        pub.publish(msg)
        good += not is_bad
        bad += is_bad
    elapsed = time.perf_counter() - start
    node.destroy_node()
    rclpy.shutdown()
    print(good, bad, count / elapsed)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "flood":
        raise SystemExit(flood_main(sys.argv[2:]))
