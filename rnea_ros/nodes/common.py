"""Helpers shared by the nodes: parameter declaration from a spec table, stamps,
and a one-line fatal exit on bad start-up parameters."""

from __future__ import annotations

import gc
import inspect
import signal
import threading
from array import array
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np
import rclpy
from numpy.typing import NDArray
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock, ClockType  # type: ignore[attr-defined]  # re-exported
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.signals import SignalHandlerOptions
from rclpy.timer import Timer
from std_msgs.msg import Float64MultiArray

from rnea_ros.control.config import ParameterSpec
from rnea_ros.core.errors import RneaError


def declare(node: Node, specs: Mapping[str, ParameterSpec]) -> dict[str, Any]:
    """Declare every parameter of ``specs`` (description, read-only flag) and
    return their current values (launch/YAML overrides applied)."""
    for name, spec in specs.items():
        node.declare_parameter(name, spec.default, ParameterDescriptor(
            description=spec.description, read_only=spec.read_only))
    return {name: node.get_parameter(name).value for name in specs}


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


def make_executor() -> Executor:
    """The events executor where rclpy has it (far less overhead per message at 1 kHz),
    else the single-threaded one."""
    try:
        from rclpy.experimental import EventsExecutor  # type: ignore[attr-defined]
        return EventsExecutor()
    except ImportError:
        return SingleThreadedExecutor()


def run(name: str, make_node: Callable[[], Node], args: list[str] | None) -> int:
    """Init rclpy, build the node, freeze the start-up heap out of the garbage
    collector's way, spin; a bad configuration logs one line and returns 1.

    SIGINT/SIGTERM only set a flag that ends the spin loop between callbacks,
    so a signal never interrupts a callback half-way (no exception, no partial
    command).
    """
    stop = threading.Event()
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        try:
            node = make_node()
        except (RneaError, ParameterException, ValueError, TypeError) as exc:
            rclpy.logging.get_logger(name).fatal(f"cannot start: {exc}")
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
        executor.shutdown()
        node.destroy_node()
        return 0
    finally:
        rclpy.try_shutdown()
