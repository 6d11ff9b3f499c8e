"""Fill numba's cache before the first launch: ``rnea-precompile [--robot NAME ...] [--urdf ...]``.

On a fresh install numba's on-disk cache is empty and the first start of each node
compiles every kernel it needs: seconds to a minute, with no joint state and no command
meanwhile. This builds the nodes of the shipped robots (``robot:=`` choices, all by
default) as ``sim.launch.py`` starts them -- the simulator, and the controller in every
mode its robot supports (``gravity``, ``inverse_dynamics``, ``elastic`` for elastic
robots), for fixed-base tree robots also on a moving base measured by an IMU (the
simulator rocking, ``rocking:=true imu:=true``) -- and the rate limiter, in this
process, with DDS discovery off and nothing spun: their warm-up compiles the kernels
(every kernel a callback can reach: rejections, the first limited command, a runtime
mode switch; ``test/nodes/test_no_compile_in_callbacks.py``), which numba writes to its
cache (:func:`~rnea_ros.nodes.common.kernel_cache` says where). Their later starts
load them::

    rnea-precompile                        # every shipped robot (~2 min CPU, once)
    rnea-precompile --robot arm7 five_bar
    rnea-precompile --tools                # also rnea-plan's and rnea-identify's (~20 s)
    rnea-precompile --urdf my.urdf --controller-config my_controller.yaml \
        --simulator-config my_simulator.yaml   # your own robot only
    ros2 run rnea_ros precompile           # the same, from a colcon install

The kernels are generic over the model (its arrays are arguments, of the same types for
every robot), so what the shipped robots compile serves any robot of the same kind: your
own URDF of a fixed-base arm (or with mimic joints, closed loops, a parallel robot,
elastic joints) starts from the cache without a compile (docs/performance.md,
"Start-up"). ``--urdf`` is for a robot of a kind none of them has.

Run it as the user who runs the nodes, after each install or upgrade (the cache is
keyed by the sources' contents: an unchanged module keeps its kernels). A second run
finds everything cached and takes seconds. Ctrl-C (or SIGTERM) stops it at numba's next
compiler pass, like a node's start-up (:class:`~rnea_ros.nodes.common.StartupSignals`):
exit code 128 + the signal, the kernels compiled so far kept.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import rclpy
import yaml
from rclpy.context import Context
from rclpy.impl.logging_severity import LoggingSeverity
from rclpy.signals import SignalHandlerOptions

from rnea_ros.control.config import CONTROLLER_PARAMETERS
from rnea_ros.control.modes import FAMILIES, family_of
from rnea_ros.core.coupling.loop_file import loop_file_path
from rnea_ros.core.errors import ModelError, RneaError
from rnea_ros.nodes.common import StartupInterrupted, StartupSignals, kernel_cache
from rnea_ros.nodes.controller import NODE_NAME as CONTROLLER
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.rate_limiter import NODE_NAME as RATE_LIMITER
from rnea_ros.nodes.rate_limiter import RateLimiterNode
from rnea_ros.nodes.simulator import NODE_NAME as SIMULATOR
from rnea_ros.nodes.simulator import SimulatorNode
from rnea_ros.parameters import ParameterSet, parameter_set
from rnea_ros.samples import (
    ELASTIC_ROBOTS,
    RobotFiles,
    robot_files,
    share_directory,
    shipped_robots,
)

# sim.launch.py's rocking:=true imu:=true (the simulator's base rocks and heaves, its IMU
# on the root link; the controller compensates with it).
MOVING_BASE = {"base_motion.roll_amplitude": "0.0873", "base_motion.pitch_amplitude": "0.0524",
               "base_motion.heave_amplitude": "0.02", "imu.enable": "true"}


@dataclass(frozen=True)
class Variant:
    """One node as a launch starts it: ``node`` (``controller`` or ``simulator``) with the
    robot's parameter file and ``parameters`` on top."""

    node: str
    parameters: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        values = dict(self.parameters)
        if self.node == "simulator":
            return "simulator" + (" (moving base)" if "imu.enable" in values else "")
        return f"controller {values.get('mode', '')}" + \
            (" + IMU" if "imu.topic" in values else "") + \
            (" + contacts" if "contact.enable" in values else "") + \
            (f" ({values['elastic.law']} law)" if "elastic.law" in values else "")


def user_robot(urdf: Path, controller: Path, simulator: Path) -> RobotFiles:
    """A robot of the user's own (not in ``urdf/``): its URDF and its two parameter files;
    closed loops from the controller file's ``loops_file`` or ``<urdf stem>.loops.yaml``
    beside the URDF. :class:`RneaError` (one line) for a missing file or a controller
    parameter out of its table's range."""
    for path in (urdf, controller, simulator):
        if not path.is_file():
            raise ModelError(f"rnea-precompile: no file {path}")
    loops_file = controller_parameters(controller).loops_file
    beside = loop_file_path(urdf)
    loops = None if loops_file == "none" else Path(loops_file) if loops_file else \
        beside if beside.is_file() else None
    return RobotFiles(name=urdf.stem, urdf=urdf.resolve(), controller=controller.resolve(),
                      simulator=simulator.resolve(), ros2_controllers=None, gazebo=None,
                      loops=loops)


def _dotted(tree: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """A parameter file's nested namespaces as dotted names, as ROS 2 reads them
    (``loops: {parallel: delta}`` and ``loops.parallel: delta`` alike)."""
    out: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_dotted(value, f"{name}."))
        else:
            out[name] = value
    return out


def controller_parameters(path: Path) -> ParameterSet:
    """The ``ros__parameters`` of a controller parameter file (its first node key) through
    the controller's table: typed, absent ones at their defaults, checked
    (:class:`ParameterError` naming the parameter and its valid values, as the node
    would refuse it)."""
    data = yaml.safe_load(path.read_text()) or {}
    first: object = next(iter(data.values()), {}) if isinstance(data, dict) else {}
    params = first.get("ros__parameters", {}) if isinstance(first, dict) else {}
    return parameter_set(CONTROLLER_PARAMETERS,
                         _dotted(params) if isinstance(params, Mapping) else {})


def is_elastic(files: RobotFiles) -> bool:
    """Whether the robot has elastic joints: a shipped elastic robot, or a controller file
    naming an ``elastic_file``."""
    return files.name in ELASTIC_ROBOTS or \
        bool(controller_parameters(files.controller).elastic_file)


def family(files: RobotFiles) -> str:
    """The controller family (a key of ``FAMILIES``) the robot's controller file selects:
    ``elastic_file``, the closed loops and ``loops.parallel``."""
    parallel = controller_parameters(files.controller).loops.parallel
    return family_of(is_elastic(files), files.loops is not None, parallel)


def variants(files: RobotFiles) -> list[Variant]:
    """The nodes a robot's launches may start (see the module docstring)."""
    elastic = is_elastic(files)
    spec = FAMILIES[family(files)]
    modes = tuple(spec.modes)
    found = [Variant("simulator")]
    found += [Variant("controller", (("mode", mode),)) for mode in modes]
    if not spec.no_contact:
        # contact.enable: the contact monitor's kernels (the same in every mode)
        found.append(Variant("controller", (("mode", modes[0]), ("contact.enable", "true"))))
    if elastic:  # the other elastic law (the demo's)
        found.append(Variant("controller", (("mode", "elastic"), ("elastic.law", "hua"))))
    if files.loops is None and not elastic:  # the nodes refuse an IMU with these
        found.append(Variant("simulator", tuple(MOVING_BASE.items())))
        found += [Variant("controller", (("mode", mode), ("imu.topic", "imu")))
                  for mode in modes]  # (a serial robot's)
    return found


@contextmanager
def quiet_context() -> Iterator[Context]:
    """An rclpy context of its own, DDS discovery off (nothing here talks to anyone), the
    nodes' start lines below WARN."""
    saved = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE")
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "OFF"
    context = Context()
    try:
        # (signals: interruptible()'s handlers, not rclpy's)
        rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    finally:  # read by rclpy.init only: this process's other contexts keep theirs
        if saved is None:
            del os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"]
        else:
            os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = saved
    levels = {name: rclpy.logging.get_logger(name).get_effective_level()
              for name in (CONTROLLER, SIMULATOR, RATE_LIMITER)}
    for name in levels:
        rclpy.logging.set_logger_level(name, LoggingSeverity.WARN)
    try:
        yield context
    finally:
        for name, level in levels.items():
            rclpy.logging.set_logger_level(name, level)
        rclpy.try_shutdown(context=context)


def build(variant: Variant, files: RobotFiles, context: Context) -> None:
    """Construct (and destroy) the node of ``variant``: its warm-up compiles its kernels."""
    params = files.controller if variant.node == "controller" else files.simulator
    args = ["--ros-args", "--params-file", str(params), "-p", f"urdf_path:={files.urdf}"]
    for name, value in variant.parameters:
        args += ["-p", f"{name}:={value}"]
    kind = ControllerNode if variant.node == "controller" else SimulatorNode
    if kind is ControllerNode:  # configured whatever the file's autostart: it compiles
        args += ["-p", "autostart:=active"]
    node = kind(context=context, cli_args=args)
    node.destroy_node()


def build_rate_limiter(context: Context) -> None:
    """Construct (and destroy) a rate-limiter node: its limiter's warm-up compiles the
    slew kernels (robot-independent: any joints, any rates)."""
    node = RateLimiterNode(context=context, cli_args=[
        "--ros-args", "-p", "joints:=[joint1]", "-p", "effort_rate_limits:=[1000.0]",
        "-p", "autostart:=active"])
    node.destroy_node()


def precompile(robots: Sequence[str | RobotFiles]) -> list[str]:
    """Build every variant of every robot in ``robots`` (shipped robots by name, others by
    their files: :func:`user_robot`); returns the failures (one line each), printing a
    line per robot."""
    failures = []
    with quiet_context() as context:
        try:
            build_rate_limiter(context)
        except (RneaError, ValueError, TypeError, RuntimeError) as exc:
            failures.append(f"rate limiter: {exc}")
        for name_or_files in robots:
            files = robot_files(name_or_files) if isinstance(name_or_files, str) \
                else name_or_files
            robot = files.name
            started = time.monotonic()
            built = []
            for variant in variants(files):
                try:
                    with warnings.catch_warnings():  # (e.g. a robot's non-physical
                        warnings.simplefilter("ignore")  # inertias: its nodes say so)
                        build(variant, files, context)
                    built.append(variant.label)
                except (RneaError, ValueError, TypeError, RuntimeError) as exc:
                    failures.append(f"{robot}: {variant.label}: {exc}")
            print(f"  {robot:<14}{time.monotonic() - started:6.1f} s  {', '.join(built)}",
                  flush=True)
    return failures


def precompile_tools() -> float:
    """Compile the batch kernels of ``rnea-plan`` (the minimum-time planner: RNEA,
    sensitivities, tau-dot and its sensitivities, joint wrenches over samples) and of
    ``rnea-identify`` (the regressor), on a small robot: their types do not depend on
    it. Returns the seconds it took."""
    import numpy as np

    import rnea_ros.core as rc
    from rnea_ros.samples import load_robot

    started = time.monotonic()
    model = load_robot("two_link_rr")
    X = np.zeros((2, model.nv))
    rc.rnea_batch(model, X, X, X)
    rc.rnea_derivatives_batch(model, X, X, X)
    rc.rnea_time_derivative_batch(model, X, X, X, X)
    rc.rnea_time_derivative_sensitivities_batch(model, X, X, X, X)
    rc.joint_wrench_derivatives_batch(model, X, X, X)
    rc.joint_torque_regressor_batch(model, X, X, X, drives=False)
    return time.monotonic() - started


@contextmanager
def interruptible() -> Iterator[StartupSignals]:
    """SIGINT/SIGTERM noted while the block runs and acted on at numba's next compiler
    pass (:class:`StartupInterrupted`), not raised inside llvmlite's ctypes callbacks,
    which would drop them; the handlers before are restored after. Off the main thread
    (no signal handlers there) it only checks."""
    signals = StartupSignals()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {signum: signal.signal(signum, signals.handler)
                for signum in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}
    try:
        with signals.watching():
            yield signals
    finally:
        for signum, handler in previous.items():
            if handler is not None:  # (None: not set from Python)
                signal.signal(signum, handler)


def no_robots_line() -> str:
    """The one line of a run that found nothing to compile: what it looked for
    (``<share>/urdf/*.urdf``), where (the share directory and how it was found) and what
    to do."""
    share = share_directory()
    prefixes = os.environ.get("AMENT_PREFIX_PATH", "")
    return (f"rnea-precompile: no shipped robots found: no {share / 'urdf'}/*.urdf (the "
            f"rnea_ros share directory; AMENT_PREFIX_PATH={prefixes or '(unset)'}); source "
            "the install's setup script, reinstall the package, or name your own robot "
            "with --urdf FILE --controller-config FILE --simulator-config FILE")


def main(argv: Sequence[str] | None = None) -> int:
    """``rnea-precompile`` (``ros2 run rnea_ros precompile``). Exit code 0 when every
    node built, 1 when one failed or there was nothing to build (one line on stderr
    saying what it looked for and where), 2 for a bad command line, 128 + the signal
    when stopped."""
    robots = shipped_robots()
    parser = argparse.ArgumentParser(
        prog="rnea-precompile",
        description="Compile the kernels of the nodes of the shipped robots (or of your "
                    "own, --urdf) into numba's cache, so that their first start is as fast "
                    "as the next ones; the shipped robots' kernels also serve your own "
                    "robots of the same kinds.")
    parser.add_argument("--robot", nargs="+", choices=robots or None, default=None,
                        metavar="NAME", help="shipped robots (default: all; none with "
                                             f"--urdf): {', '.join(robots)}")
    parser.add_argument("--urdf", type=Path,
                        help="a robot of your own, with its two parameter files")
    parser.add_argument("--controller-config", type=Path, metavar="FILE",
                        help="its controller parameters (as --params-file)")
    parser.add_argument("--simulator-config", type=Path, metavar="FILE",
                        help="its simulator parameters")
    parser.add_argument("--tools", action="store_true",
                        help="also the kernels of rnea-plan and rnea-identify")
    args = parser.parse_args(argv)
    if not robots and (args.robot or args.urdf is None):  # (a broken or foreign install)
        print(no_robots_line() + (f" (asked for: {', '.join(args.robot)})"
                                  if args.robot else ""), file=sys.stderr, flush=True)
        return 1
    chosen: list[str | RobotFiles] = list(
        args.robot if args.robot is not None else () if args.urdf else robots)
    if args.urdf is not None:
        if args.controller_config is None or args.simulator_config is None:
            parser.error("--urdf needs --controller-config and --simulator-config")
        try:
            chosen.append(user_robot(args.urdf, args.controller_config,
                                     args.simulator_config))
        except RneaError as exc:
            parser.error(str(exc))
    print(f"compiling the nodes' kernels into numba's cache: {kernel_cache()}", flush=True)
    started = time.monotonic()
    try:
        with interruptible():
            failures = precompile(chosen)
            if args.tools:
                print(f"  {'tools':<14}{precompile_tools():6.1f} s  rnea-plan, rnea-identify",
                      flush=True)
    except StartupInterrupted as exc:
        print(f"{signal.Signals(exc.signum).name}: stopped after "
              f"{time.monotonic() - started:.1f} s (the kernels compiled so far are cached)",
              flush=True)
        return 128 + exc.signum
    for line in failures:
        print(f"failed: {line}")
    print(f"done in {time.monotonic() - started:.1f} s" +
          (f", {len(failures)} failed" if failures else
           ": the nodes' next starts load their kernels from the cache"))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
