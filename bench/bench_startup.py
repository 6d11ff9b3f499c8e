"""Start-up time of the nodes, numba cache cold and warm: from process start to ready.

Each node is started as ``ros2 run`` would start it (its own process, the robot's
``config/<robot>_{controller,simulator}.yaml``), with ``NUMBA_CACHE_DIR`` at a new
empty directory -- **cold**, a fresh install: every kernel it needs compiles -- then
again at the same directory -- **warm**, every later start. Ready means:

* ``simulator``: its first ``joint_states``;
* ``gravity`` / ``inverse_dynamics``: the controller in that mode (``gravity`` is the
  robot file's own mode, ``elastic`` for elastic robots), its first command; the joint
  states come from a simulator started before it (warm, its own cache directory);
* ``launch``: simulator and controller started together, as ``sim.launch.py`` starts
  them (one new cache directory for both, the controller on the simulator's clock):
  the first command (and the first joint state).

A user's own robot: ``--urdf PATH`` with its two parameter files
(``--controller-config``, ``--simulator-config``; ``gravity`` runs mode ``elastic`` when
the controller file names an ``elastic_file``). ``--precompile [ROBOT ...]`` measures the
start after an install that ran ``rnea-precompile`` (for those shipped robots; none named:
all): it fills a cache once, and each measured start begins from a copy of it ("cold" is
then the first start after that install, "warm" the next).

Nothing is written next to the package (its own ``__pycache__`` is not used while
``NUMBA_CACHE_DIR`` is set), so this runs against an installed package too::

    python bench/bench_startup.py                      # every shipped robot, every case
    python bench/bench_startup.py --robot arm7 --case launch --repeat 2
    python bench/bench_startup.py --urdf my_arm.urdf --controller-config my_controller.yaml \
        --simulator-config my_simulator.yaml --case gravity --precompile arm7
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", "58")

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.samples import ELASTIC_ROBOTS, robot_files, shipped_robots

CASES = ("simulator", "gravity", "inverse_dynamics", "launch")
NAMESPACE = "/rnea_startup_bench"


class Watch(Node):
    """Steady time of the first joint state and the first command since :meth:`arm`."""

    def __init__(self) -> None:
        super().__init__("rnea_startup_watch")
        self.lock = threading.Lock()
        self.first: dict[str, float] = {}
        self.create_subscription(JointState, f"{NAMESPACE}/joint_states",
                                 lambda _: self.seen("state"), qos_profile_sensor_data)
        self.create_subscription(Float64MultiArray, f"{NAMESPACE}/effort_controller/commands",
                                 lambda _: self.seen("command"), 10)

    def seen(self, what: str) -> None:
        with self.lock:
            self.first.setdefault(what, time.monotonic())

    def arm(self) -> None:
        with self.lock:
            self.first.clear()

    def wait(self, what: str, deadline: float, process: subprocess.Popen[bytes]) -> bool:
        while time.monotonic() < deadline:
            with self.lock:
                if what in self.first:
                    return True
            if process.poll() is not None:
                return False
            time.sleep(0.01)
        return False


@dataclass(frozen=True)
class Robot:
    """What a start needs: a label, the URDF, the two parameter files, whether the
    controller's own mode is ``elastic``."""

    name: str
    urdf: Path
    controller: Path
    simulator: Path
    elastic: bool

    @classmethod
    def shipped(cls, name: str) -> Robot:
        files = robot_files(name)
        return cls(name, files.urdf, files.controller, files.simulator,
                   name in ELASTIC_ROBOTS)

    @classmethod
    def user(cls, urdf: Path, controller: Path, simulator: Path) -> Robot:
        """A robot not shipped: elastic when its controller file names an ``elastic_file``."""
        import yaml
        params = next(iter(yaml.safe_load(controller.read_text()).values()))
        elastic = bool(params.get("ros__parameters", {}).get("elastic_file", ""))
        return cls(urdf.stem, urdf.resolve(), controller.resolve(), simulator.resolve(),
                   elastic)


def node_command(robot: Robot, node: str, mode: str = "", sim_time: bool = False) -> list[str]:
    """The node's command line, as ``ros2 run rnea_ros <node>`` with the robot's file."""
    params = robot.controller if node == "controller" else robot.simulator
    command = [sys.executable, "-m", f"rnea_ros.nodes.{node}", "--ros-args",
               "-r", f"__ns:={NAMESPACE}", "--params-file", str(params),
               "-p", f"urdf_path:={robot.urdf}", "--log-level", "warn"]
    if mode:
        command += ["-p", f"mode:={mode}"]
    if node == "simulator":
        command += ["-p", "rate:=250.0"]  # enough to be seen; less CPU next to the compile
    if sim_time:
        command += ["-p", "use_sim_time:=true"]
    return command


def fill_cache(cache: Path, robots: Sequence[str]) -> float:
    """``rnea-precompile --robot ROBOTS`` (all shipped robots when empty) into ``cache``,
    as an install does; returns the seconds it took."""
    started = time.monotonic()
    command = [sys.executable, "-m", "rnea_ros.nodes.precompile"]
    if robots:
        command += ["--robot", *robots]
    subprocess.run(command, env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)), check=True,
                   stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def start(command: list[str], cache: Path | None) -> subprocess.Popen[bytes]:
    """``command`` with numba's cache in ``cache``; ``None``: the package's own (no
    ``NUMBA_CACHE_DIR``, as a colcon install runs)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def stop(*processes: subprocess.Popen[bytes]) -> None:
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def measure(watch: Watch, robot: Robot, case: str, cache: Path, sim_cache: Path,
            timeout: float) -> tuple[float, float]:
    """Seconds from process start to ready (and, for ``launch``, to the first state);
    NaN when the node did not get there within ``timeout``."""
    mode = ("elastic" if robot.elastic else "gravity") if case == "gravity" else \
        case if case == "inverse_dynamics" else ""
    nan = float("nan")
    if case == "simulator":
        watch.arm()
        t0 = time.monotonic()
        sim = start(node_command(robot, "simulator"), cache)
        ok = watch.wait("state", t0 + timeout, sim)
        stop(sim)
        return (watch.first["state"] - t0 if ok else nan), nan
    if case == "launch":
        watch.arm()
        t0 = time.monotonic()
        sim = start(node_command(robot, "simulator"), cache)
        ctl = start(node_command(robot, "controller", sim_time=True), cache)
        ok = watch.wait("command", t0 + timeout, ctl)
        stop(ctl, sim)
        state = watch.first.get("state", t0 + nan) - t0
        return (watch.first["command"] - t0 if ok else nan), state
    sim = start(node_command(robot, "simulator"), sim_cache)
    watch.arm()
    if not watch.wait("state", time.monotonic() + timeout, sim):
        stop(sim)
        raise RuntimeError(f"{robot.name}: the simulator did not publish: "
                           f"{sim.stderr.read().decode() if sim.stderr else ''}")
    watch.arm()
    t0 = time.monotonic()
    ctl = start(node_command(robot, "controller", mode, sim_time=True), cache)
    ok = watch.wait("command", t0 + timeout, ctl)
    stop(ctl, sim)
    return (watch.first["command"] - t0 if ok else nan), nan


def table(args: argparse.Namespace, robots: Sequence[Robot], watch: Watch) -> None:
    """Measure every robot and case ``args`` name; print a row each."""
    with tempfile.TemporaryDirectory(prefix="rnea-startup-") as tmp:
        installed = args.installed_cache or Path(tmp) / "installed"
        if args.precompile is not None and args.installed_cache is None:
            took = fill_cache(installed, args.precompile)
            print(f"rnea-precompile {' '.join(args.precompile) or '(all shipped robots)'}: "
                  f"{took:.1f} s (load {os.getloadavg()[0]:.1f})")
        filled = args.precompile is not None or args.installed_cache is not None
        first = "after precompile" if filled else "numba cache cold"
        print(f"process start -> ready [s], {first} / warm (load {os.getloadavg()[0]:.1f},"
              f" {os.cpu_count()} cores)")
        print(f"  {'robot':<14}{'case':<18}{'first':>8}{'warm':>8}"
              "   (launch: first state first/warm)")
        sim_cache = Path(tmp) / "simulator"
        if filled:
            shutil.copytree(installed, sim_cache)
        for robot in robots:
            for case in args.case:
                for r in range(args.repeat):
                    cache = Path(tmp) / f"{robot.name}-{case}-{r}"
                    if filled:
                        shutil.copytree(installed, cache)
                    cold, cold_state = measure(watch, robot, case, cache, sim_cache,
                                               args.timeout)
                    warm, warm_state = measure(watch, robot, case, cache, sim_cache,
                                               args.timeout)
                    extra = f"   ({cold_state:.1f} / {warm_state:.1f})" if case == "launch" \
                        else ""
                    print(f"  {robot.name:<14}{case:<18}{cold:8.1f}{warm:8.1f}{extra}"
                          f"   load {os.getloadavg()[0]:.1f}", flush=True)


@contextmanager
def spinning(node: Node, period: float) -> Iterator[None]:
    """``node`` spun by a single-threaded executor in a background thread (``spin_once``
    waits ``period`` [s] at most) while the block runs; then, also when the block raises
    (a node that never got ready), the spinner stopped, the executor shut down, ``node``
    destroyed and rclpy shut down."""
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    done = threading.Event()

    def spin() -> None:
        while not done.is_set():
            executor.spin_once(timeout_sec=period)
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        yield
    finally:
        done.set()
        spinner.join()
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", nargs="*", default=None,
                        help="shipped robots (default: all, or none with --urdf)")
    parser.add_argument("--urdf", type=Path, help="a robot of your own (with its two files)")
    parser.add_argument("--controller-config", type=Path, help="its controller parameters")
    parser.add_argument("--simulator-config", type=Path, help="its simulator parameters")
    parser.add_argument("--precompile", nargs="*", metavar="ROBOT", default=None,
                        help="start from a cache rnea-precompile filled for these shipped "
                             "robots (none named: all), as after an install")
    parser.add_argument("--installed-cache", type=Path, metavar="DIR",
                        help="start from a copy of this cache instead (one rnea-precompile "
                             "filled with NUMBA_CACHE_DIR=DIR from this same checkout)")
    parser.add_argument("--case", nargs="*", choices=CASES, default=list(CASES))
    parser.add_argument("--repeat", type=int, default=1, help="cold/warm pairs per case")
    parser.add_argument("--timeout", type=float, default=120.0, help="[s] per start")
    args = parser.parse_args(argv)
    robots = [Robot.shipped(name) for name in
              (args.robot if args.robot is not None else
               [] if args.urdf else shipped_robots())]
    if args.urdf:
        if not (args.controller_config and args.simulator_config):
            parser.error("--urdf needs --controller-config and --simulator-config")
        robots.append(Robot.user(args.urdf, args.controller_config, args.simulator_config))
    rclpy.init()
    watch = Watch()
    with spinning(watch, 0.1):
        table(args, robots, watch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
