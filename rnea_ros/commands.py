"""The package's commands, in one table: their names on the PATH (pip), their names for
``ros2 run rnea_ros NAME`` (colcon and pip alike), the function each runs and the extra
that installs what it needs.

``setup.py`` reads :data:`COMMANDS` (without importing the package) to declare the
console scripts and to write the ``lib/rnea_ros`` wrappers ``ros2`` runs. Each command
enters through :func:`run`, which imports its module only then: a missing optional
dependency is one line naming the extra to install, and exit 1, never a traceback.
A node command handles SIGINT/SIGTERM from its first instruction
(:class:`StartSignals`): a signal during the heavy imports (numpy, numba, rclpy, the
package) ends it with one line and exit 0, as it does later in the start-up.
This module imports nothing beyond the standard library.
"""

from __future__ import annotations

import importlib
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, NamedTuple


class Command(NamedTuple):
    """``target`` (``module:function``), ``extra`` (``pip install 'rnea_ros[extra]'``),
    ``ros_name`` (``ros2 run rnea_ros ros_name``), ``node``: a ROS node's parameter table
    (``rnea_ros/params/<node>.yaml``), empty for a tool with its own ``--help``."""

    target: str
    extra: str
    ros_name: str
    node: str = ""


COMMANDS: dict[str, Command] = {
    "rnea-controller": Command("rnea_ros.nodes.controller:main", "ros", "controller",
                               "controller"),
    "rnea-simulator": Command("rnea_ros.nodes.simulator:main", "ros,oracle", "simulator",
                              "simulator"),
    "rnea-rate-limiter": Command("rnea_ros.nodes.rate_limiter:main", "ros", "rate_limiter",
                                 "rate_limiter"),
    "rnea-demo": Command("rnea_ros.demo:main", "all", "demo"),
    "rnea-precompile": Command("rnea_ros.nodes.precompile:main", "ros", "precompile"),
    "rnea-bag": Command("rnea_ros.tools.bag.cli:main", "tools", "rnea_bag"),
    "rnea-fleet": Command("rnea_ros.tools.fleet.cli:main", "fleet", "rnea_fleet"),
    "rnea-identify": Command("rnea_ros.identification.cli:main", "identification",
                             "rnea_identify"),
    "rnea-plan": Command("rnea_ros.planning.cli:main", "planning", "rnea_plan"),
    "rnea-config": Command("rnea_ros.control.starting_config:main", "", "rnea_config"),
    "rnea-sample": Command("rnea_ros.tools.sample:main", "tools", "rnea_sample"),
}
PACKAGE = "rnea_ros"


def missing_dependency(name: str, exc: ModuleNotFoundError) -> str | None:
    """The one-line hint for ``exc`` raised while starting command ``name``, or None when
    the missing module is this package's own (a broken install: let it raise)."""
    module = (exc.name or "").split(".")[0]
    if not module or module == PACKAGE:
        return None
    extra = COMMANDS[name].extra
    install = f"pip install '{PACKAGE}[{extra}]'" if extra else f"pip install {module}"
    return (f"{name}: error: the Python module '{module}' is not installed; {install} "
            "(or, under ROS, rosdep install --from-paths <src> for package.xml's keys)")


def node_help(name: str) -> str:
    """``--help`` of a node command (before ``--ros-args``): what it is, how to give it
    parameters, where they are listed; nothing imported (rclpy may be missing)."""
    spec = COMMANDS[name]
    return (f"usage: {name} [--ros-args [-p NAME:=VALUE] [--params-file FILE] "
            f"[-r FROM:=TO] ...]\n\n"
            f"The ROS 2 node 'rnea_{spec.node}' (also: ros2 run {PACKAGE} "
            f"{spec.ros_name}). Its parameters, with types, ranges, units and defaults: "
            f"python -m {PACKAGE}.parameters {spec.node}. Needs: pip install "
            f"'{PACKAGE}[{spec.extra}]' or a ROS 2 install. Docs: docs/nodes.md.\n\n"
            "options:\n  -h, --help  show this help message and exit\n"
            "  --version   print the version and exit")


def answered(name: str, args: list[str]) -> str | None:
    """What ``name`` prints for ``--version`` (every command) or ``--help`` (a node) as
    its only argument, without importing its module; else None (the command runs)."""
    if args == ["--version"]:
        from rnea_ros import __version__

        return f"{name} {__version__}"
    if COMMANDS[name].node and args in (["--help"], ["-h"]):
        return node_help(name)
    return None


class StartInterrupted(BaseException):
    """SIGINT or SIGTERM while a node command imports its module (a ``BaseException``,
    like ``KeyboardInterrupt``: no ``except Exception`` on the way catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class StartSignals:
    """SIGINT and SIGTERM while a node command imports numpy, numba, rclpy and the
    package (one to several seconds), until its ``main`` installs the node's own
    handlers (``rnea_ros.nodes.common.run``, which take over from these).

    Without them SIGINT ended the import in a ``KeyboardInterrupt`` traceback and SIGTERM
    killed the process silently (exit -15). The first signal raises
    :class:`StartInterrupted` where the main thread runs Python (inside the import).
    Where the import converts that exception (numpy's C extension importing
    ``datetime`` turns it into an ``ImportError``, seen at 30-40 ms after the start) or
    swallows it (a ctypes callback prints "Exception ignored" and goes on, or a
    library's ``except BaseException``), the noted signal is acted on when the import
    fails or returns (:meth:`check`). Later signals are only noted: the process is
    already stopping. :func:`run` turns it into one line and exit 0, like a
    signal later in the start-up."""

    KINDS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum = 0  # the first signal received, 0 for none
        self.previous: dict[int, Any] = {}

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler: the first signal raises :class:`StartInterrupted`."""
        if not self.signum:
            self.signum = signum
            raise StartInterrupted(signum)

    def check(self) -> None:
        """Raise :class:`StartInterrupted` if a signal came (its raise swallowed)."""
        if self.signum:
            raise StartInterrupted(self.signum)

    def install(self) -> None:
        """Handle SIGINT and SIGTERM (the previous handlers kept for :meth:`restore`)."""
        for signum in self.KINDS:
            self.previous[signum] = signal.signal(signum, self.handler)

    def restore(self) -> None:
        """The previous handlers back where ours is still installed (a node's ``main``
        installs its own, which stay)."""
        for signum, previous in self.previous.items():
            if signal.getsignal(signum) == self.handler:
                signal.signal(signum, previous)


def _jit_disabled_error() -> type[BaseException] | tuple[()]:
    """``rnea_ros.core.errors.JitDisabledError`` when that module was loaded (a failed
    import of the core raised it), else no class: importing it here would import the
    core (numba), which this module leaves to the commands."""
    errors = sys.modules.get("rnea_ros.core.errors")
    return getattr(errors, "JitDisabledError", ()) if errors is not None else ()


def _start(name: str, argv: list[str] | None, signals: StartSignals | None) -> int:
    """Import command ``name``'s module and run its ``main``: its exit code, or 1 with
    one line when an optional dependency is missing or numba's JIT is switched off.
    ``signals`` (a node's) is checked between the two."""
    module_name, function = COMMANDS[name].target.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        if signals is not None and signals.signum:  # the signal's exception, converted
            raise StartInterrupted(signals.signum) from None
        hint = missing_dependency(name, exc) if isinstance(exc, ModuleNotFoundError) else None
        if isinstance(exc, _jit_disabled_error()):  # the environment, not a bug: one line
            hint = f"{name}: error: {exc}"
        if hint is None:
            raise
        print(hint, file=sys.stderr)
        return 1
    main: Callable[..., Any] = getattr(module, function)
    if signals is not None:
        signals.check()
    code = main() if argv is None else main(argv)
    return int(code or 0)


def run(name: str, argv: list[str] | None = None) -> int:
    """Run command ``name``: its ``main(argv)``'s exit code, or 1 with one line when an
    optional dependency is missing. ``--version`` alone (and a node's ``--help``) is
    answered here, so it works without the command's extra. A node command handles
    SIGINT/SIGTERM from here on (:class:`StartSignals`): stopped while it imports, it
    prints one line and returns 0."""
    signals = StartSignals() if COMMANDS[name].node else None
    if signals is not None:
        signals.install()
    stopping = False
    try:
        text = answered(name, sys.argv[1:] if argv is None else list(argv))
        if text is not None:
            print(text)
            return 0
        return _start(name, argv, signals)
    except StartInterrupted as exc:
        stopping = True  # (the handlers stay: a second Ctrl-C changes nothing)
        print(f"{name}: {signal.Signals(exc.signum).name} while starting: stopped",
              file=sys.stderr)
        return 0
    finally:
        if signals is not None and not stopping:
            signals.restore()


def controller() -> int:
    return run("rnea-controller")


def simulator() -> int:
    return run("rnea-simulator")


def rate_limiter() -> int:
    return run("rnea-rate-limiter")


def demo() -> int:
    return run("rnea-demo")


def precompile() -> int:
    return run("rnea-precompile")


def rnea_bag() -> int:
    return run("rnea-bag")


def rnea_fleet() -> int:
    return run("rnea-fleet")


def rnea_identify() -> int:
    return run("rnea-identify")


def rnea_plan() -> int:
    return run("rnea-plan")


def rnea_config() -> int:
    return run("rnea-config")


def rnea_sample() -> int:
    return run("rnea-sample")
