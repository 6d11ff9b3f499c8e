"""Shared pieces of the node fuzz suites (test/nodes/test_fuzz_*.py): a recorder of
what a node publishes, the output invariants, and a flooder run as its own process
(``python test/fuzzing.py flood ...``) so that the flood is real DDS traffic from
another process at 10-20 kHz."""

from __future__ import annotations

import argparse
import math
import os
import struct
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


def scheduling() -> tuple[float, float]:
    """This thread's time on a CPU and time runnable but kept off the CPU by the kernel
    (run-queue wait), so far [s], from ``/proc/thread-self/schedstat``; (nan, 0) where
    the kernel does not say."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            run, wait = f.read().split()[:2]
    except (OSError, ValueError):
        return math.nan, 0.0
    return int(run) * 1e-9, int(wait) * 1e-9


@dataclass
class Sample:
    """A sample of this thread's scheduling: steady time, CPU time, run-queue wait [s]."""

    t: float
    cpu: float
    wait: float

    @classmethod
    def now(cls) -> Sample:
        return cls(time.monotonic(), *scheduling())


@dataclass
class Firing:
    """A timer's firing: when rcl scheduled it and when it was called (the timer's
    steady clock: ``time.monotonic``'s), and this thread's scheduling at its start."""

    expected: float
    actual: float
    start: Sample


class TimerFirings:
    """Records the firings of the timer of ``node`` whose callback is ``callback`` (a
    bound method; also behind ``nodes.common.TimerCallback``), within a ``with``, and
    samples this thread's scheduling at each firing and at each :meth:`sample`; the
    timer's callback is restored on exit."""

    def __init__(self, node: Any, callback: Callable[[], None]) -> None:
        self.timer = next(t for t in node.timers
                          if getattr(t.callback, "function", t.callback) == callback)
        self.firings: list[Firing] = []
        self.samples: list[Sample] = []

    def sample(self) -> None:
        self.samples.append(Sample.now())

    def __enter__(self) -> TimerFirings:
        import inspect

        from rclpy.timer import TimerInfo
        original = self.timer.callback

        def fired(info: TimerInfo) -> None:
            start = Sample.now()
            self.samples.append(start)
            self.firings.append(Firing(info.expected_call_time.nanoseconds * 1e-9,
                                       info.actual_call_time.nanoseconds * 1e-9, start))
            original()
        # rclpy passes the TimerInfo to a parameter annotated with its class.
        fired.__signature__ = inspect.Signature([inspect.Parameter(  # type: ignore[attr-defined]
            "info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=TimerInfo)])
        self.original, self.timer.callback = original, fired
        return self

    def __exit__(self, *exc: object) -> None:
        self.timer.callback = self.original

    def before(self, t: float) -> Sample | None:
        """The last sample taken at or before ``t``."""
        return next((s for s in reversed(self.samples) if s.t <= t), None)


def start_flood(kind: str, topic: str, rate: float, seconds: float,
                names: Sequence[str] = (), bad_every: int = 10,
                position: Sequence[float] = (), reliable: bool = False,
                spread: float = 0.0) -> subprocess.Popen[str]:
    """Start the flooder process; ``wait_flood`` returns what it sent. ``reliable``
    for subscribers that are (a best-effort publisher does not reach them); ``spread``
    scatters the good messages' positions around ``position`` (random states)."""
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, "fuzzing.py"), "flood", "--kind", kind,
         "--topic", topic, "--rate", str(rate), "--seconds", str(seconds),
         "--names", ",".join(names), "--bad-every", str(bad_every),
         "--position", ",".join(map(str, position)), "--spread", str(spread),
         *(["--reliable"] if reliable else [])],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ))


def wait_flood(process: subprocess.Popen[str], spin: Callable[[], None],
               timeout: float) -> tuple[int, int, float]:
    """Spin until the flooder ends; (good sent, bad sent, achieved rate [Hz] not counting
    the flooder's run-queue wait). The
    flooder is killed if it outlives ``timeout`` or ``spin`` raises (else it would
    flood the next test's nodes)."""
    end = time.monotonic() + timeout
    try:
        while process.poll() is None and time.monotonic() < end:
            spin()
    finally:
        running = process.poll() is None
        if running:
            process.kill()
            process.wait()
    if running:
        raise AssertionError(f"flooder did not finish within {timeout:g} s")
    out = process.stdout.read() if process.stdout else ""
    assert process.returncode == 0, f"flooder failed (exit {process.returncode}): {out}"
    good, bad, rate = out.split()[-3:]
    return int(good), int(bad), float(rate)


FLOOD_RATE = 10_000.0  # Hz: the least rate at which a flood tests what it claims


def check_flood_rate(rate: float) -> None:
    """A flood (of nominally 20 kHz) that did not reach :data:`FLOOD_RATE`, not counting
    the flooder's run-queue wait (:func:`flood_main`), did not test the node: a harness
    failure, said as such."""
    assert rate >= FLOOD_RATE, (
        f"harness: the flooder sent at {rate:.0f} Hz on average while it was not kept "
        f"off the CPU, under {FLOOD_RATE:.0f} Hz: the node was not flooded as required")


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


PHASES = 1024  # good flood messages serialised in advance, per period of their slow sine


def _flood_message(kind: str, t: float, phase: float, names: list[str],
                   position: list[float]) -> Any:
    """The flood's good message of ``kind``, stamped ``t`` [s] (no stamp for ``array``),
    at ``phase`` [rad] of its slow sine."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    if kind == "array":
        return Float64MultiArray(data=[5.0 * math.sin(phase + i) for i in range(len(names))])
    if kind == "imu":  # a base tilted by 5 deg about x, at rest (frame 'imu')
        msg = imu_message(t, 0.0873)
    else:
        msg = JointState()
        msg.name = names
        msg.position = [p + 0.05 * math.sin(phase) for p in position]
        msg.velocity = [0.0] * len(names)
        msg.effort = [5.0 * math.sin(phase + i) for i in range(len(names))]
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int((t % 1) * 1e9)
    return msg


def _stamper(template: bytes) -> Callable[[bytes, float], bytes]:
    """Writes a stamp into a serialised message that starts with a std_msgs/Header:
    after the 4-byte CDR encapsulation header, int32 sec and uint32 nanosec, in the
    byte order the encapsulation names (checked by a round trip in ``flood_main``)."""
    packer = struct.Struct("<iI" if template[1] & 1 else ">iI")

    def stamped(serialised: bytes, t: float) -> bytes:
        return serialised[:4] + packer.pack(int(t), int((t % 1) * 1e9)) + serialised[12:]
    return stamped


def flood_main(argv: Sequence[str]) -> int:
    """Publish ``--seconds * --rate`` messages paced at ``--rate``, one in ``--bad-every``
    bad; print the good and bad counts and the rate achieved while the flooder was not
    kept off the CPU: count / (elapsed - its run-queue wait, :func:`scheduling`). (The
    pacing catches up after a wait: the messages all go out, the flood lasts longer.)

    The good messages are serialised in advance and only their stamp is written at send
    time (their slow sine taken from a table of :data:`PHASES` phases): building a
    message in Python costs more than publishing it, and a flooder sharing a loaded
    machine must still reach its rate. The bad ones are built as they go out."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", choices=["joint_state", "array", "imu"])
    parser.add_argument("--topic")
    parser.add_argument("--rate", type=float)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--names", default="")
    parser.add_argument("--bad-every", type=int, default=10)
    parser.add_argument("--position", default="")
    parser.add_argument("--reliable", action="store_true")
    parser.add_argument("--spread", type=float, default=0.0,
                        help="good messages' positions: --position + uniform(-spread, "
                             "spread) per joint, drawn per message of the pool (seeded)")
    args = parser.parse_args(argv)
    import rclpy
    from rclpy.qos import QoSProfile, QoSReliabilityPolicy
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import Float64MultiArray
    rclpy.init()
    node = rclpy.create_node("rnea_fuzz_flooder")
    qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.RELIABLE if args.reliable
                     else QoSReliabilityPolicy.BEST_EFFORT)
    names = [n for n in args.names.split(",") if n]
    position = [float(x) for x in args.position.split(",") if x]
    kinds = {"joint_state": JointState, "array": Float64MultiArray, "imu": Imu}
    kind, msg_type = args.kind, kinds[args.kind]
    pub = node.create_publisher(msg_type, args.topic, qos)
    phases = 2.0 * math.pi * np.arange(PHASES) / PHASES
    rng = np.random.default_rng(35)
    offsets = rng.uniform(-args.spread, args.spread, (PHASES, len(position)))
    pool = [serialize_message(_flood_message(kind, 0.0, phase, names,
                                             (np.array(position) + offset).tolist()
                                             if args.spread else position))
            for phase, offset in zip(phases, offsets, strict=True)]
    stamped = _stamper(pool[0])
    if kind != "array":  # the stamp lands where the message has it
        t = time.time()
        sent = deserialize_message(stamped(pool[1], t), msg_type)
        if args.spread == 0.0 and sent != _flood_message(kind, t, phases[1], names, position):
            raise SystemExit(f"flooder: a stamp written into a serialised {kind} "
                             "does not read back")
    deadline = time.monotonic() + 10
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    good = bad = 0
    period = 1.0 / args.rate
    start = time.perf_counter()
    waited = scheduling()[1]
    count = int(args.seconds * args.rate)
    for k in range(count):
        while time.perf_counter() < start + k * period:
            pass  # busy-wait: sleep cannot pace 20 kHz
        is_bad = args.bad_every > 0 and k % args.bad_every == args.bad_every - 1
        now = time.time()
        phase = k * 1e-3 if kind == "array" else now
        if is_bad:
            msg = _flood_message(kind, now, phase, names, position)
            if kind == "joint_state":
                _bad_state(msg, k // args.bad_every, names)
            elif kind == "imu":
                _bad_imu(msg, k // args.bad_every)
            else:
                values = list(msg.data)
                msg.data = [math.nan] * len(names) if k % 2 else values[:-1]
            pub.publish(msg)
        else:
            serialised = pool[int(phase % (2.0 * math.pi) * (PHASES / (2.0 * math.pi)))
                              % PHASES]
            pub.publish(serialised if kind == "array" else stamped(serialised, now))
        good += not is_bad
        bad += is_bad
    elapsed = time.perf_counter() - start
    waited = scheduling()[1] - waited
    node.destroy_node()
    rclpy.shutdown()
    print(good, bad, count / max(elapsed - waited, 1e-9))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "flood":
        raise SystemExit(flood_main(sys.argv[2:]))
