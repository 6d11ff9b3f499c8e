"""Helpers shared by the nodes: parameter declaration from a table
(:func:`rnea_ros.nodes.parameters.declare`, re-exported), stamps,
a one-line fatal exit on bad start-up parameters, and the start-up itself: what it
compiles said in the log, stopped by SIGINT/SIGTERM at any point, and every thread's
stack printed to stderr on SIGUSR1 (a node that hangs can be looked at)."""

from __future__ import annotations

import faulthandler
import gc
import inspect
import signal
import sys
import threading
import time
import warnings
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import numba
import numpy as np
import rclpy
from numba.core import event
from numpy.typing import NDArray
from rclpy.clock import Clock, ClockType  # type: ignore[attr-defined]  # re-exported
from rclpy.context import Context
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.signals import SignalHandlerOptions
from rclpy.timer import Timer
from std_msgs.msg import Float64MultiArray

import rnea_ros
from rnea_ros.core.errors import RneaError
from rnea_ros.core.kernels import vec3
from rnea_ros.nodes.parameters import declare as declare  # (re-exported)


def steady_clock() -> Clock:
    """A steady clock for timers that must run when simulated time stops (watchdogs)."""
    return Clock(clock_type=ClockType.STEADY_TIME)


class TimerCallback:
    """A timer callback that rclpy need not inspect.

    rclpy's executors call ``inspect.signature`` on a timer's callback at every
    firing, to find out whether it takes a ``TimerInfo``: ~7 us for a bound
    method even with warm caches (its parameters are rebuilt from the code
    object), in the thread that also serves the 1 kHz joint states. A callable
    that declares its signature (no parameters) is answered at once (~1 us).
    """

    __signature__ = inspect.Signature()
    __slots__ = ("function",)

    def __init__(self, function: Callable[[], None]) -> None:
        self.function = function

    def __call__(self) -> None:
        self.function()


def steady_timer(node: Node, period: float, callback: Callable[[], None]) -> Timer:
    """``node.create_timer`` on a steady clock (it fires when simulated time stops, as
    a watchdog must), with a :class:`TimerCallback`."""
    return node.create_timer(period, TimerCallback(callback), clock=steady_clock())


def retime(node: Node, timer: Timer, period: float, callback: Callable[[], None],
           made: list[Any] | None = None) -> Timer:
    """``timer`` firing every ``period`` s: itself when its period already is that (to
    the nanosecond, as rclpy keeps it), else destroyed and replaced by a
    :func:`steady_timer` calling ``callback`` -- in ``made`` too, in its place, when
    given (the entities a lifecycle cleanup destroys). A runtime period change takes
    effect at the new timer's first firing, at most ``period`` s later."""
    if round(period * 1e9) == timer.timer_period_ns:
        return timer
    node.destroy_timer(timer)
    fresh = steady_timer(node, period, callback)
    if made is not None:
        made[made.index(timer)] = fresh
    return fresh


class SerializedArray:
    """A ``std_msgs/Float64MultiArray`` of ``size`` values kept serialised: ``values``
    (size,) is a float64 view of its data inside the serialised bytes, written in
    place, and :meth:`payload` is what to publish.

    Publishing the serialised bytes (``Publisher.publish`` takes them) skips rclpy's
    conversion of the message to C and its serialisation, per message; at 1 kHz on
    cold caches that brought the node's command ~10 us sooner (README, node bench).
    The data are the message's last field, native-endian doubles in the CDR that
    rmw_fastrtps writes; that is checked here by a round trip through rclpy's own
    deserialiser, and where it does not hold (another encoding) ``values`` is the
    message's own array and :meth:`payload` the message.
    """

    def __init__(self, size: int) -> None:
        self.message = Float64MultiArray(data=array("d", bytes(8 * size)))
        self.serialized = bytearray(serialize_message(self.message))
        values: NDArray[np.float64] = np.frombuffer(
            self.serialized, dtype=np.float64, offset=len(self.serialized) - 8 * size)
        values[:] = np.arange(size) + 0.5
        decoded = deserialize_message(bytes(self.serialized), Float64MultiArray)
        if list(decoded.data) == values.tolist():
            self.payload: Callable[[], Any] = partial(bytes, self.serialized)
        else:
            values = np.frombuffer(self.message.data, dtype=np.float64)
            message = self.message
            self.payload = lambda: message
        values[:] = 0.0
        self.values = values


def stamp_seconds(stamp: Any) -> float:
    """``builtin_interfaces/Time`` as float seconds."""
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


def make_executor(context: Context | None = None) -> Executor:
    """The events executor where rclpy has it (far less overhead per message at 1 kHz),
    else the single-threaded one; on ``context`` (None: rclpy's default)."""
    try:
        from rclpy.experimental import EventsExecutor  # type: ignore[attr-defined]
        return EventsExecutor(context=context)
    except ImportError:
        return SingleThreadedExecutor(context=context)


def kernel_cache() -> str:
    """Where numba keeps this package's compiled kernels, as its cache locator chose
    (numba's rule): ``NUMBA_CACHE_DIR`` when set; else next to the modules
    (``rnea_ros/*/__pycache__``) when that is writable; else numba's user-wide
    cache (``~/.cache/numba``), e.g. for a read-only system install."""
    path = numba.core.config.CACHE_DIR  # type: ignore[attr-defined]
    if path:
        return f"{path} (NUMBA_CACHE_DIR)"
    cache = getattr(vec3, "_cache", None)
    where = getattr(cache, "cache_path", None)
    if not where:
        return ("nowhere: numba's cache is off (RNEA_ROS_NO_JIT_CACHE=1, or no writable "
                "directory: set NUMBA_CACHE_DIR), every start compiles")
    package = Path(rnea_ros.__file__).resolve().parent
    folder = Path(where).resolve()
    if folder.is_relative_to(package):
        return f"{package}/*/__pycache__"
    return str(folder.parent)  # the user-wide cache: a subfolder per source folder


class CompileReport(event.Listener):
    """Says in the log what a start-up compiles: numba's first compilation (a cold cache:
    the first start after an install, or after the package changed) logs one INFO line
    before it begins, naming the robot (:func:`note_robot`) and the cache; the end of the
    start-up (:meth:`finish`) logs how long compiling took. A warm start logs nothing."""

    def __init__(self, logger: Any) -> None:
        self.logger = logger
        self.robot = ""
        self.started = float("nan")  # steady time of the first compilation
        self.kernels = 0  # compilations begun at the top level (their callees not counted)
        self.depth = 0

    def on_start(self, ev: event.Event) -> None:
        if self.depth == 0:
            self.kernels += 1
            if self.kernels == 1:
                self.started = time.monotonic()
                robot = f" for {self.robot}" if self.robot else ""
                self.logger.info(f"compiling kernels{robot}, first start only (seconds to a "
                                 f"minute): numba caches them in {kernel_cache()}")
        self.depth += 1

    def on_end(self, ev: event.Event) -> None:
        self.depth -= 1

    def finish(self) -> None:
        """Log the compile time, if this start-up compiled."""
        if self.kernels:
            robot = f" for {self.robot}" if self.robot else ""
            self.logger.info(f"kernels{robot} compiled in {time.monotonic() - self.started:.1f}"
                             " s; later starts load them from the cache")


_report: CompileReport | None = None


def note_robot(name: str) -> None:
    """Name the robot in the start-up's compile report (a node calls it once its model is
    loaded, before its kernels compile)."""
    if _report is not None:
        _report.robot = name


@contextmanager
def compile_report(logger: Any) -> Iterator[CompileReport]:
    """A :class:`CompileReport` listening to numba's compilations while the block runs
    (:meth:`~CompileReport.finish` when it ends normally)."""
    global _report
    report = _report = CompileReport(logger)
    event.register("numba:compile", report)  # type: ignore[no-untyped-call]
    try:
        yield report
        report.finish()
    finally:
        event.unregister("numba:compile", report)  # type: ignore[no-untyped-call]
        _report = None


@contextmanager
def logged_warnings(logger: Any) -> Iterator[None]:
    """Python warnings raised while the block runs (e.g. ``InertiaWarning``: a URDF's
    non-physical inertias under ``inertia_check: warn``) logged as one WARN line each
    through the ROS logger, instead of printed raw on stderr (two lines each, outside
    the log). Repeats of one message are logged once."""
    with warnings.catch_warnings(record=True) as caught:  # (the filters as they are)
        try:
            yield
        finally:
            seen: set[str] = set()
            for warning in caught:
                line = f"{warning.category.__name__}: {warning.message}"
                if line not in seen:
                    seen.add(line)
                    logger.warning(line)


class StartupInterrupted(BaseException):
    """SIGINT or SIGTERM while a node starts (a ``BaseException``, like
    ``KeyboardInterrupt``: nothing on the way catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class StartupSignals(event.Listener):
    """SIGINT/SIGTERM while a process builds its nodes (numba compiling their kernels on
    a cold cache), acted on where Python runs its own code.

    Python runs a signal handler at the main thread's next bytecode, wherever that is;
    while numba compiles, often inside llvmlite's object-cache callback, a Python
    function that LLVM calls through ctypes: an exception raised there is printed
    ("Exception ignored on calling ctypes callback function"), dropped, and the start-up
    went on (and ended in a traceback). So :meth:`handler` only records the signal, and
    it is acted on -- :class:`StartupInterrupted` raised -- between numba's compiler
    passes and compilations (its ``numba:run_pass`` and ``numba:compile`` events, some
    thirty per kernel, :meth:`watching`) and when the start-up ends (:meth:`check`).
    The longest stretch without such a point is one pass's LLVM code generation, where
    Python would not run the handler either: 5.8 s at most for the five-bar controller's
    kernels on a 2-core machine at a load average of 8-14 (its cold start took 89 s)."""

    KINDS = ("numba:compile", "numba:run_pass")

    def __init__(self) -> None:
        self.signum = 0  # the first signal received, 0 for none
        self.raised = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler: note the signal, nothing else."""
        if not self.signum:
            self.signum = signum

    def check(self) -> None:
        """Raise :class:`StartupInterrupted` if a signal came (once)."""
        if self.signum and not self.raised:
            self.raised = True
            raise StartupInterrupted(self.signum)

    def on_start(self, ev: event.Event) -> None:
        self.check()

    def on_end(self, ev: event.Event) -> None:
        self.check()

    @contextmanager
    def watching(self) -> Iterator[StartupSignals]:
        """Check at numba's events while the block runs, and when it ends normally."""
        for kind in self.KINDS:
            event.register(kind, self)  # type: ignore[no-untyped-call]
        try:
            yield self
            self.check()
        finally:
            for kind in self.KINDS:
                event.unregister(kind, self)  # type: ignore[no-untyped-call]


def _remap_rules(args: list[str]) -> Iterator[str]:
    """The ``-r``/``--remap`` rules in the ``--ros-args`` sections of a command line."""
    ros = False
    words = iter(args)
    for word in words:
        if word == "--ros-args":
            ros = True
        elif word == "--":
            ros = False
        elif ros and word in ("-r", "--remap"):
            yield next(words, "")


def logger_name(name: str, args: list[str] | None) -> str:
    """The ROS logger name of node ``name`` started with ``args``: ``ns.node`` after the
    command line's ``__ns:=`` / ``__node:=`` remaps (a launch file's ``namespace`` and
    ``name``), as the node's own ``get_logger()`` will be named -- so the lines a
    start-up logs before its node exists (compiling, ``cannot start``) say which robot's
    node they come from when two run side by side. Remaps for another node
    (``other:__ns:=``) are skipped."""
    node, namespace = name, ""
    for rule in _remap_rules(list(args or ())):
        target, _, value = rule.partition(":=")
        owner, _, key = target.rpartition(":")
        if owner and owner != name:
            continue
        if key == "__ns":
            namespace = value
        elif key in ("__node", "__name"):
            node = value
    return ".".join([*(part for part in namespace.split("/") if part), node])


def dump_stacks_on(signum: int) -> None:
    """``kill -USR1 <pid>`` (``signum``) prints every thread's Python stack to stderr and
    the process goes on: a node that does not stop or answer can be looked at where it
    is (faulthandler writes from its C handler, so a main thread stuck in C code, where
    no Python handler would run, is shown too). Without it SIGUSR1 ended the process."""
    faulthandler.register(signum, all_threads=True)


def run(name: str, make_node: Callable[[], Node], args: list[str] | None) -> int:
    """Init rclpy, build the node, freeze the start-up heap out of the garbage
    collector's way, spin; a bad configuration logs one line and returns 1.

    Building the node compiles its kernels when numba's cache is cold (seconds to a
    minute, :class:`CompileReport` says so in the log). SIGINT/SIGTERM then stop it
    at the next of numba's compiler passes (:class:`StartupSignals`: the handler only
    notes the signal) and the process ends like a normal shutdown (0). Once the node
    spins they only set a flag that ends the spin loop between callbacks, so a signal
    never interrupts a callback half-way (no exception, no partial command). SIGUSR1
    prints the stacks (:func:`dump_stacks_on`).
    """
    stop = threading.Event()
    signals = StartupSignals()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        signals.handler(signum, frame)

    # First (before rclpy.init): the entry point's import-time handlers
    # (rnea_ros.commands.StartSignals) raise; these only note the signal.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    dump_stacks_on(signal.SIGUSR1)
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    logger = rclpy.logging.get_logger(logger_name(name, sys.argv if args is None else args))
    try:
        if signals.signum:  # during rclpy.init: no compiler pass to notice it
            logger.info(f"{signal.Signals(signals.signum).name} while starting: stopped")
            return 0
        try:
            with compile_report(logger), logged_warnings(logger), signals.watching():
                node = make_node()
        except StartupInterrupted as exc:
            logger.info(f"{signal.Signals(exc.signum).name} while starting: stopped")
            return 0
        except (RneaError, ParameterException, ValueError, TypeError) as exc:
            logger.fatal(f"cannot start: {exc}")
            return 1
        # The start-up heap (numpy, numba, Pinocchio, the model: ~130 000 objects) is
        # permanent: frozen, a full garbage collection skips it (80 ms -> 5 us here)
        # instead of stalling the 1 kHz callbacks.
        gc.collect()
        gc.freeze()
        executor = make_executor()
        executor.add_node(node)
        try:
            while rclpy.ok(context=node.context) and not stop.is_set():
                executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:
            pass
        finish = getattr(node, "finish", None)  # a managed node: its shutdown transition
        if finish is not None and rclpy.ok(context=node.context):
            finish()
        executor.shutdown()
        node.destroy_node()
        return 0
    finally:
        rclpy.try_shutdown()
