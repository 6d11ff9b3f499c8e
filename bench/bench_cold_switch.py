"""Cold start and the first mode switch (issue 39 §2): the controller started as
``ros2 run`` starts it, on an empty numba cache (a ``colcon build`` with
``RNEA_ROS_BUILD_PRECOMPILE=0`` compiles nothing ahead), against a simulator already
running; ``--package-cache``: on the package's own cache instead (no ``NUMBA_CACHE_DIR``:
the first start after a ``colcon build`` that precompiled, with ``PYTHONPATH`` and
``AMENT_PREFIX_PATH`` of the install).

Measured, per robot: the time from the controller's process start to its first command;
the longest gap between commands from then until the end (the other modes compiling in
the background meanwhile); then a switch to ``inverse_dynamics`` requested every 0.5 s
(refused while the kernels compile, with the reason) until accepted, and the longest
command gap in the 2 s after it. ::

    python bench/bench_cold_switch.py --robot arm7 delta
    . install/setup.sh && python bench/bench_cold_switch.py --package-cache --robot delta
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", "58")

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rclpy
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_startup import NAMESPACE, Robot, Watch, node_command, spinning, start, stop


class Commands(Watch):
    """Every command's steady arrival time."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def seen(self, what: str) -> None:
        super().seen(what)
        if what == "command":
            with self.lock:
                self.times.append(time.monotonic())


def max_gap(times: list[float], start: float, end: float) -> float:
    t = np.array([x for x in times if start <= x <= end])
    return float(np.diff(t).max()) if t.size > 1 else float("nan")


def switch(watch: Commands, mode: str, timeout: float) -> tuple[float, int, str]:
    """Ask for ``mode`` every 0.5 s until accepted: (steady time accepted, refusals, last
    reason)."""
    client = watch.create_client(SetParameters, f"{NAMESPACE}/rnea_controller/set_parameters")
    client.wait_for_service(timeout_sec=30.0)
    request = SetParameters.Request(parameters=[Parameter(name="mode", value=ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value=mode))])
    refused, reason = 0, ""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        future = client.call_async(request)
        while not future.done() and time.monotonic() < end:
            time.sleep(0.01)
        result = future.result().results[0] if future.done() else None
        if result is not None and result.successful:
            return time.monotonic(), refused, reason
        if result is not None:
            refused, reason = refused + 1, result.reason
        time.sleep(0.5)
    return float("nan"), refused, reason


def measure(watch: Commands, robot: Robot, tmp: Path | None, timeout: float) -> str:
    """One robot; numba's caches empty under ``tmp``, or the package's own (``None``)."""
    sim = start(node_command(robot, "simulator"), tmp and tmp / f"{robot.name}-sim")
    watch.arm()
    if not watch.wait("state", time.monotonic() + timeout, sim):
        stop(sim)
        return f"{robot.name}: simulator did not start"
    watch.times.clear()
    watch.arm()
    t0 = time.monotonic()
    ctl = start(node_command(robot, "controller", sim_time=True),
                tmp and tmp / f"{robot.name}-ctl")
    try:
        if not watch.wait("command", t0 + timeout, ctl):
            return f"{robot.name}: no command within {timeout:g} s"
        first = watch.first["command"] - t0
        accepted, refused, reason = switch(watch, "inverse_dynamics", timeout)
        time.sleep(2.0)
        end = time.monotonic()
        before = max_gap(watch.times, t0 + first, accepted)
        after = max_gap(watch.times, accepted - 0.5, accepted + 2.0)
        return (f"{robot.name:<14} first command {first:6.1f} s; switch accepted "
                f"{accepted - t0:6.1f} s after start ({refused} refusals); longest gap "
                f"before it {1e3 * before:7.1f} ms, around it {1e3 * after:7.1f} ms; "
                f"{len(watch.times) / (end - t0 - first):.0f} commands/s; load "
                f"{os.getloadavg()[0]:.1f}" + (f"\n    refusal: {reason}" if reason else ""))
    finally:
        stop(ctl, sim)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", nargs="+", default=["arm7"])
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--package-cache", action="store_true",
                        help="numba's cache of the installed package, not an empty one")
    args = parser.parse_args()
    rclpy.init()
    watch = Commands()
    with spinning(watch, 0.05), tempfile.TemporaryDirectory(prefix="rnea-cold-") as tmp:
        for name in args.robot:
            cache = None if args.package_cache else Path(tmp)
            print(measure(watch, Robot.shipped(name), cache, args.timeout), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
