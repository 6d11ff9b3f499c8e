"""Issue 35 §3: no numba kernel is compiled (or first loaded) inside a node's callback.

Each node is built in a fresh process (``python test_no_compile_in_callbacks.py probe``,
so nothing compiled by other tests hides a miss), as ``rnea-precompile`` builds it; then
its callbacks are called directly with every kind of input: good states, each kind of
bad one, a clock jump, states the closed-loop and parallel solvers cannot solve or that
are beyond the limits, IMU samples good and bad, trajectories good and bad, a limited
command (the slew kernel), the watchdog's stale command and the resumption, runtime mode
switches, ``/diagnostics``, the lifecycle's deactivation (its final command), an input
while inactive and the re-activation; the rate limiter's first, limited, held and
rejected inputs and its deactivation and re-activation. Any numba dispatch that adds a
compiled signature after the warm-up -- a compilation (``numba:compile`` event) or a
load from numba's cache, which costs 0.2 s too -- fails the test, naming the kernel
and the input. The disk cache's state does not matter: a fresh process starts with no
signature loaded either way (on an empty cache the same misses compile instead of load;
the test then takes minutes, not seconds).
"""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve()
ROOT = HERE.parents[2]
CONTROLLERS = ("arm7", "five_bar", "delta", "gough_stewart", "mixed_3dof")


def _dispatchers() -> list[Any]:
    from numba.core.dispatcher import Dispatcher
    return [o for o in gc.get_objects() if isinstance(o, Dispatcher)]


def _signatures() -> dict[str, int]:
    return {f"{d.py_func.__module__}.{d.py_func.__qualname__}": len(d.overloads)
            for d in _dispatchers()}


class Watch:
    """New signatures (compiled or loaded) since :meth:`arm`, by input."""

    def __init__(self) -> None:
        self.base: dict[str, int] = {}
        self.misses: list[str] = []
        self.inputs = 0

    def arm(self) -> None:
        self.base = _signatures()

    @contextmanager
    def input(self, what: str) -> Iterator[None]:
        self.inputs += 1
        yield
        now = _signatures()
        new = sorted(k for k, v in now.items() if v > self.base.get(k, 0))
        if new:
            self.misses.append(f"{what}: {', '.join(new)}")
        self.base = now


def _state(names: list[str], position: list[float], t: float, velocity: bool = True) -> Any:
    from sensor_msgs.msg import JointState
    msg = JointState()
    msg.header.stamp.sec = math.floor(t)
    msg.header.stamp.nanosec = min(round((t - math.floor(t)) * 1e9), 999_999_999)
    msg.name = list(names)
    msg.position = [float(x) for x in position]
    msg.velocity = [0.0] * len(names) if velocity else []
    return msg


def _trajectory(names: list[str], q0: list[float], step: float) -> bytes:
    from builtin_interfaces.msg import Duration
    from rclpy.serialization import serialize_message
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    msg = JointTrajectory()
    msg.joint_names = list(names)
    for k in range(3):
        point = JointTrajectoryPoint()
        point.positions = [q + step * k for q in q0]
        point.time_from_start = Duration(sec=k, nanosec=0)
        msg.points.append(point)
    return bytes(serialize_message(msg))


def _controller_inputs(node: Any, watch: Watch, robot: str) -> None:
    """Every kind of input a controller node's callbacks take."""
    import numpy as np
    from rclpy.parameter import Parameter

    from rnea_ros.control.closed_loop import ClosedLoopController
    from rnea_ros.control.parallel import ParallelController
    from rnea_ros.nodes.simulator import SimulatorNode  # noqa: F401  (its imports, not timed)
    c = node.controller
    names = list(c.config.joints) if isinstance(c, ClosedLoopController) else \
        list(c.state_names)
    n = len(names)
    low = np.asarray(c._low) if isinstance(c, ClosedLoopController) else None
    q0 = ([0.02, -0.01, 0.03, 0.0, -0.02, 0.01] if robot == "gough_stewart" else [0.0] * n)
    if isinstance(c, ClosedLoopController) and not isinstance(c, ParallelController):
        q0 = list(c.loops.q_reference[c.loops.active_index])
    t = [time.time()]

    def feed(what: str, position: list[float], **kw: Any) -> None:
        t[0] += 1e-3
        with watch.input(what):
            node.on_joint_state(_state(kw.pop("names", names), position, t[0], **kw))

    def call(what: str, f: Callable[[], Any]) -> None:
        with watch.input(what):
            f()

    for k in range(3):
        feed("good state", [q + 1e-3 * k for q in q0])
    feed("a far state (rate-limited command)", [q + 0.05 for q in q0])
    feed("NaN position", [math.nan] * n)
    feed("1e308 position", [1e308] * n)
    feed("short position", q0[:-1])
    feed("duplicate names", [*q0, 0.0], names=[*names, names[0]])
    feed("unknown names", [0.0], names=["other"])
    t[0] -= 5.0
    feed("backwards stamp", q0)
    t[0] += 3600.0
    feed("future stamp", q0)
    t[0] -= 3600.0 - 5.0
    if low is not None:
        feed("beyond the limits", [float(x) - 1.0 for x in low])
    if isinstance(c, ParallelController):
        far = [0.12, 0.12, 0.12, -0.12, -0.12, -0.12] if robot == "gough_stewart" \
            else [1.4, 1.4, 1.4]
        feed("out of reach", far)
        feed("good state again", q0)
    elif isinstance(c, ClosedLoopController):
        feed("far crank angle", [q + 2e4 for q in q0])
        feed("good state again", q0)
    call("trajectory", lambda: node.on_trajectory_raw(
        _trajectory(list(c.reference_names), q0[:len(c.reference_names)], 0.01)))
    call("bad trajectory", lambda: node.on_trajectory_raw(
        _trajectory(list(c.reference_names), [math.nan] * len(c.reference_names), 0.0)))
    for mode in ("inverse_dynamics", "gravity", *(("elastic",) if c.elastic else ())):
        call(f"mode '{mode}'", lambda mode=mode: node.set_parameters(
            [Parameter("mode", value=mode)]))
        for k in range(3):
            feed(f"good state in '{mode}'", [q + 1e-3 * k for q in q0])
    c.last_valid_wall -= 10.0
    call("watchdog (stale: hold)", node.on_watchdog)
    feed("good state after the watchdog", q0)
    call("diagnostics", node.publish_diagnostics)
    # The lifecycle (issue 39): its final command, reports and the bumpless restart.
    call("deactivate (the final command)", node.trigger_deactivate)
    call("diagnostics while inactive", node.publish_diagnostics)
    feed("state while inactive", q0)
    call("activate", node.trigger_activate)
    for k in range(3):
        feed("good state after activation", [q + 1e-3 * k for q in q0])


def _imu_inputs(node: Any, watch: Watch) -> None:
    from sensor_msgs.msg import Imu
    for what, w in (("IMU sample", 1.0), ("bad IMU sample", 2.0)):
        msg = Imu()
        t = time.time()
        msg.header.stamp.sec, msg.header.stamp.nanosec = math.floor(t), 0
        msg.header.frame_id = node.controller.config.imu.frame_id
        msg.orientation.w = w
        msg.linear_acceleration.z = 9.81
        with watch.input(what):
            node.on_imu(msg)
            node.on_imu_watch()


def _rate_limiter_inputs(node: Any, watch: Watch) -> None:
    from std_msgs.msg import Float64MultiArray
    n = len(node.joints)
    for what, value in (("first input", 0.0), ("limited input", 100.0), ("input", 100.0),
                        ("NaN input", math.nan)):
        with watch.input(what):
            node.on_array(Float64MultiArray(data=[value] * n))
    with watch.input("diagnostics"):
        node.publish_diagnostics()
    with watch.input("deactivate, input while inactive, activate"):  # (issue 39)
        node.trigger_deactivate()
        node.on_array(Float64MultiArray(data=[1.0] * n))
        node.publish_diagnostics()
        node.trigger_activate()
    with watch.input("input after activation"):
        node.on_array(Float64MultiArray(data=[50.0] * n))


def _simulator_inputs(node: Any, watch: Watch) -> None:
    """Commands good, clamped and bad, its ticks (stepping, the command timeout),
    ``/diagnostics``."""
    from std_msgs.msg import Float64MultiArray
    n = len(node.command_index)
    for what, value, count in (("command", 0.1, 1), ("clamped command", 1e9, 1),
                               ("NaN command", math.nan, 1), ("short command", 0.0, 0)):
        with watch.input(what):
            node.on_command(Float64MultiArray(data=[value] * (n - 1 + count)))
            node.on_tick()
    node.last_command_wall -= 10.0
    node.steps_since_command = 10**6
    with watch.input("tick past the command timeout"):
        node.on_tick()
    with watch.input("diagnostics"):
        node.publish_diagnostics()


def _simulator(robot: str, context: Any, watch: Watch) -> None:
    """``robot``'s simulator as rnea-precompile builds it (arm7: the rocking base with its
    IMU), fed."""
    from rnea_ros.nodes.precompile import MOVING_BASE
    from rnea_ros.nodes.simulator import SimulatorNode
    args = ["--ros-args", "--params-file", str(ROOT / f"config/{robot}_simulator.yaml"),
            "-p", f"urdf_path:={ROOT / f'urdf/{robot}.urdf'}", "-p", "lockstep:=false"]
    loops = ROOT / f"urdf/{robot}.loops.yaml"
    if loops.is_file():
        args += ["-p", f"loops_file:={loops}"]
    if robot == "arm7":
        for name, value in MOVING_BASE.items():
            args += ["-p", f"{name}:={value}"]
    node = SimulatorNode(context=context, cli_args=args)
    watch.arm()
    _simulator_inputs(node, watch)
    node.destroy_node()


def probe(robot: str, watch: Watch) -> list[str]:
    """Build ``robot``'s nodes (its controller in every mode it has, its simulator; the
    rate limiter for 'rate_limiter') and feed them; the misses."""
    from rnea_ros.nodes.controller import ControllerNode
    from rnea_ros.nodes.precompile import quiet_context
    from rnea_ros.nodes.rate_limiter import RateLimiterNode
    with quiet_context() as context:
        if robot == "rate_limiter":
            node: Any = RateLimiterNode(context=context, cli_args=[
                "--ros-args", "--params-file", str(ROOT / "config/rate_limiter.yaml"),
                "-p", "joints:=[a, b]", "-p", "effort_rate_limits:=[10.0]"])
            watch.arm()
            _rate_limiter_inputs(node, watch)
            node.destroy_node()
            return watch.misses
        args = ["--ros-args", "--params-file", str(ROOT / f"config/{robot}_controller.yaml"),
                "-p", f"urdf_path:={ROOT / f'urdf/{robot}.urdf'}"]
        loops = ROOT / f"urdf/{robot}.loops.yaml"
        if loops.is_file():
            args += ["-p", f"loops_file:={loops}"]
        if robot == "arm7":
            args += ["-p", "imu.topic:=imu"]
        node = ControllerNode(context=context, cli_args=args)
        watch.arm()
        _controller_inputs(node, watch, robot)
        if node.controller.imu is not None:
            _imu_inputs(node, watch)
        node.destroy_node()
        _simulator(robot, context, watch)
    return watch.misses


def run_probe(robot: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, str(HERE), "probe", robot], capture_output=True,
                          text=True, timeout=900, env=env, cwd=ROOT)


@pytest.mark.parametrize("robot", [*CONTROLLERS, "rate_limiter"])
def test_no_kernel_is_compiled_or_loaded_in_a_callback(robot: str) -> None:
    """Serial (arm7 with an IMU), closed loop (five_bar), parallel (delta,
    gough_stewart), elastic (mixed_3dof) controllers in every mode and their simulators
    (arm7's on a rocking base with an IMU), and the rate limiter."""
    done = run_probe(robot)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "checked" in done.stdout, done.stdout + done.stderr[-3000:]


if __name__ == "__main__" and sys.argv[1:2] == ["probe"]:
    watch_ = Watch()
    found = probe(sys.argv[2], watch_)
    for line in found:
        print(f"kernel dispatched in a callback: {line}")
    print(f"{sys.argv[2]}: checked {watch_.inputs} inputs, {len(found)} misses")
    raise SystemExit(1 if found else 0)
