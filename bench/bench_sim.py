"""The simulator's speed: real-time factor of both engines at 1 kHz, and the simulator
node's state-publication jitter.

1. Real-time factor (simulated seconds per wall second) of
   :class:`~rnea_ros.simulation.Simulator`/:class:`~rnea_ros.simulation.LoopSimulator`
   (Pinocchio) and :class:`~rnea_ros.simulation.mujoco_backend.MujocoSimulator` (MuJoCo,
   contacts on, ``world: table``) for arm7 and the five-bar at 1 kHz, semi-implicit
   Euler, the gravity torques of the start pose held (the plant alone: no controller).
   Target (issue 26): MuJoCo >= 5x real time with contacts on a 2-core machine.
2. The simulator node (a ``python -m rnea_ros.nodes.simulator`` process, real time,
   1 kHz, arm7 with gravity off so zero effort holds it) on each engine: the intervals
   between the ``joint_states`` this process receives, p50 / p99 / max, and the rate.

    python bench/bench_sim.py            # (make bench)
    python bench/bench_sim.py --seconds 5 --node-seconds 5
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", "59")

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO

import numpy as np

import rnea_ros.core as rc
from rnea_ros.core.coupling.loop_dynamics import loop_gravity
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import load_loop_robot, sample_urdf
from rnea_ros.simulation import LoopSimulator, Simulator
from rnea_ros.simulation.mujoco_backend import MujocoSimulator

ARM7_Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
DT = 1e-3


def plant(robot: str, engine: str) -> tuple[object, np.ndarray]:
    """The simulator (reset at its start pose) and the torques it holds."""
    urdf = sample_urdf(robot)
    if robot == "five_bar":
        loops = load_loop_robot(robot)
        q0 = rc.solve_loops(loops, np.array([0.1, -0.1]))
        tau = np.zeros(loops.n)
        tau[loops.active_index] = loop_gravity(loops, q0)
        sim: object = (LoopSimulator(urdf, loops, dt=DT) if engine == "pinocchio" else
                       MujocoSimulator(urdf, loops.tree, loops=loops, dt=DT, world="table"))
    else:
        model = load_urdf(urdf)
        q0, tau = ARM7_Q0, rc.gravity_torques(model, ARM7_Q0)
        sim = (Simulator(urdf, model, dt=DT) if engine == "pinocchio" else
               MujocoSimulator(urdf, model, dt=DT, world="table"))
    sim.reset(q0)  # type: ignore[attr-defined]
    return sim, tau


def real_time_factor(robot: str, engine: str, seconds: float) -> float:
    """Simulated seconds per wall second over ``seconds`` of simulated time."""
    sim, tau = plant(robot, engine)
    step = sim.step  # type: ignore[attr-defined]
    for _ in range(200):  # warm up
        step(tau)
    n = round(seconds / DT)
    start = time.perf_counter()
    for _ in range(n):
        step(tau)
    return n * DT / (time.perf_counter() - start)


def simulator_parameters(engine: str) -> dict[str, object]:
    """The simulator node's parameters in :func:`node_jitter`: arm7, gravity off, zero
    effort held from the start (each within ``rnea_ros/params/simulator.yaml``, which
    test/test_bench_sim_params.py checks: a refused value stops the node at start-up)."""
    return {"urdf_path": "package://rnea_ros/urdf/arm7.urdf", "engine": engine,
            "wait_for_command": False, "gravity": [0.0, 0.0, 0.0],
            "command_timeout": 10.0,  # the table's safety bound [s]; zero effort either way
            "initial_positions": ARM7_Q0.tolist()}


class NodeExitedError(RuntimeError):
    """The simulator node ended before or while it was measured (a refused parameter,
    a crash): its exit status and the last lines of its stderr."""


def check_alive(process: subprocess.Popen[bytes], log: IO[bytes], started: float) -> None:
    """Raise :class:`NodeExitedError` if ``process`` (started at ``started``, monotonic s,
    stderr in ``log``) has ended, with its exit status and last stderr lines."""
    status = process.poll()
    if status is None:
        return
    raise NodeExitedError("\n    ".join([
        f"the simulator node exited with status {status} after "
        f"{time.monotonic() - started:.1f} s; its last stderr lines:", *stderr_tail(log, 5)]))


def stderr_tail(log: IO[bytes], lines: int) -> list[str]:
    """The last ``lines`` lines of a node's stderr ``log`` (read from its start: the node
    is gone, its writes no longer share the offset)."""
    log.seek(0)
    return log.read().decode(errors="replace").strip().splitlines()[-lines:]


def node_jitter(engine: str, seconds: float, log: IO[bytes],
                start_timeout: float = 60.0) -> tuple[np.ndarray, int]:
    """Intervals [s] between the ``joint_states`` of a real-time simulator node received
    here over ``seconds``, and how many arrived; the node's stderr goes to ``log``. A
    node that ends raises :class:`NodeExitedError` as soon as it has (polled at every spin
    of at most 50 ms), not after ``start_timeout`` s of waiting for its first 500
    states."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    namespace = f"bench_sim_{engine}"
    args = [sys.executable, "-m", "rnea_ros.nodes.simulator", "--ros-args",
            "-r", f"__ns:=/{namespace}"]
    for name, value in simulator_parameters(engine).items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        args += ["-p", f"{name}:={text}"]
    started = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log)
    context = Context()
    rclpy.init(context=context)
    arrivals: list[float] = []
    try:
        node = Node("bench_sim_probe", context=context, namespace=namespace)
        node.create_subscription(JointState, "joint_states",
                                 lambda _: arrivals.append(time.perf_counter()), 1000)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        end = time.monotonic() + start_timeout
        while len(arrivals) < 500 and time.monotonic() < end:  # started and discovered
            executor.spin_once(timeout_sec=0.05)
            check_alive(process, log, started)
        arrivals.clear()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.01)
            check_alive(process, log, started)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        process.terminate()
        process.wait(10)
    return np.diff(np.array(arrivals)), len(arrivals)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="simulated s per RTF run")
    parser.add_argument("--node-seconds", type=float, default=4.0,
                        help="wall s of the node's joint_states measured per engine")
    args = parser.parse_args(argv)
    print(f"real-time factor at {1 / DT:g} Hz (semi-implicit Euler; MuJoCo: contacts on, "
          "world 'table'), simulated s / wall s:")
    for robot in ("arm7", "five_bar"):
        line = [f"  {robot:9s}"]
        for engine in ("pinocchio", "mujoco"):
            rtf = max(real_time_factor(robot, engine, args.seconds) for _ in range(2))
            line.append(f"{engine} {rtf:6.1f}x")
        print("  ".join(line))
    print(f"simulator node, arm7 at 1 kHz real time: intervals between joint_states "
          f"received over {args.node_seconds:g} s:")
    failed = 0
    for engine in ("pinocchio", "mujoco"):
        with tempfile.TemporaryFile() as log:
            try:
                intervals, count = node_jitter(engine, args.node_seconds, log)
            except NodeExitedError as exc:
                print(f"  {engine:9s} {exc}")
                failed += 1
                continue
            tail = stderr_tail(log, 3)
        if intervals.size == 0:
            print(f"  {engine:9s} no joint_states received; the node's last stderr lines:",
                  *tail, sep="\n    ")
            failed += 1
            continue
        ms = 1e3 * intervals
        print(f"  {engine:9s} {count / args.node_seconds:7.1f} msg/s, interval p50 "
              f"{np.percentile(ms, 50):.3f} ms, p99 {np.percentile(ms, 99):.3f} ms, max "
              f"{ms.max():.2f} ms, |interval - 1 ms| p99 "
              f"{np.percentile(np.abs(ms - 1.0), 99):.3f} ms")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
