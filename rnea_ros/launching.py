"""What the launch files do when a process they started exits (no ``launch`` import at
module level: the test suite checks this without a ROS install).

``ros2 launch`` exits with what ``launch.LaunchService.run()`` returns, and that is
0 unless an exception reached the launch service's loop: a ``Shutdown`` action,
whatever its ``reason``, ends the launch with exit status 0. So a node that died
(a FATAL bad parameter: exit code 1; SIGKILL: -9) would end the launch "successfully"
and a supervisor, systemd or CI could not see it. :func:`on_exit_shutdown` is the
``OnProcessExit`` handler of our nodes: a clean exit shuts the launch down (status 0,
as before); a failure before any shutdown raises :class:`ProcessFailedError`, which the
launch service logs ("Caught exception in launch ...: rnea_controller exited with
code 1") and turns into a shutdown and a return code of 1. Exits during a shutdown
(the launch stopping its nodes, e.g. Ctrl-C) are not failures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# The launch arguments that run a robot of the user's instead of robot:= (sim.launch.py
# and robot.launch.py): name -> (default, description).
USER_ROBOT_ARGUMENTS = {
    "urdf": ("", "a robot of your own instead of robot:=: its URDF, a path or "
             "package://pkg/file.urdf (needs controller_config:=; a <stem>.loops.yaml beside "
             "it closes loops); empty: robot:='s"),
    "controller_config": ("", "controller parameter file: a path, package://pkg/file.yaml or "
                          "a name in rnea_ros/config ('rnea-config --urdf URDF --out FILE' "
                          "writes one for your robot); empty: <robot>_controller.yaml"),
    "robot_description_source": (
        "parameter", "'parameter': the nodes get the URDF (robot:= or urdf:=) as their "
        "robot_description parameter; 'topic': they wait for it on the robot_description "
        "topic in their namespace (std_msgs/String, transient local: your "
        "robot_state_publisher's) and start with the first one that loads"),
}

# The lifecycle argument of every launch file (rnea_ros.nodes.lifecycle): name -> (default,
# description); autostart() turns it into the managed nodes' parameter.
LIFECYCLE_ARGUMENTS = {
    "start_inactive": ("false", "true: bring the controller up configured but inactive (model "
                       "loaded, kernels warm, nothing commanded) until a lifecycle manager or "
                       "'ros2 lifecycle set <node> activate' activates it, like ros2_control's "
                       "spawner --inactive; false: active at once"),
}


def autostart(start_inactive: bool) -> dict[str, str]:
    """The managed nodes' ``autostart`` parameter for ``start_inactive:=``."""
    return {"autostart": "inactive" if start_inactive else "active"}


def description_parameters(source: str, urdf_text: str, urdf_path: str) -> list[dict[str, Any]]:
    """The nodes' parameters that say where their URDF comes from (the launch argument
    ``robot_description_source``, one of the controller table's choices): the text and
    the file, or the topic. A ``ValueError`` (one line in the launch's log) for another
    value."""
    from rnea_ros.parameters import load_table

    choices = load_table("controller")["robot_description_source"].choices
    if source not in choices:
        raise ValueError(f"robot_description_source:='{source}': expected "
                         f"{' or '.join(choices)}")
    if source == "topic":
        return [{"robot_description_source": "topic"}]
    # the file too: a loop file beside it (<stem>.loops.yaml) is found from urdf_path
    return [{"robot_description": urdf_text}, {"urdf_path": urdf_path}]


class ProcessFailedError(RuntimeError):
    """A process of the launch exited with a non-zero code before any shutdown."""


def exit_failure(name: str, returncode: int | None, shutting_down: bool) -> str | None:
    """Why the exit of process ``name`` with ``returncode`` fails the launch (one line),
    or None: a clean exit (0), or any exit while the launch is shutting down."""
    if shutting_down or returncode == 0:
        return None
    if returncode is not None and returncode < 0:
        import signal

        try:
            how = f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            how = f"was killed by signal {-returncode}"
    else:
        how = f"exited with code {returncode}"
    return f"{name} {how}"


def check_exit(name: str, event: Any, context: Any) -> None:
    """Raise :class:`ProcessFailedError` when ``event`` (a ``launch`` ``ProcessExited``) is a
    failure of process ``name`` (:func:`exit_failure`; ``context``: the launch context)."""
    failure = exit_failure(name, event.returncode, bool(context.is_shutdown))
    if failure is not None:
        raise ProcessFailedError(failure)


def on_exit_shutdown(name: str) -> Callable[[Any, Any], Sequence[Any]]:
    """``OnProcessExit(on_exit=...)`` for a process the launch cannot run without: the
    launch shuts down; with exit status 1 when the process failed (:func:`check_exit`)."""
    def handler(event: Any, context: Any) -> Sequence[Any]:
        check_exit(name, event, context)
        from launch.actions import Shutdown

        return [Shutdown(reason=f"{name} exited")]
    return handler


def on_exit_then(name: str, actions: Sequence[Any]) -> Callable[[Any, Any], Sequence[Any]]:
    """``OnProcessExit(on_exit=...)`` for a step that must succeed before ``actions``
    start (e.g. a controller spawner): a failure ends the launch with exit status 1."""
    def handler(event: Any, context: Any) -> Sequence[Any]:
        check_exit(name, event, context)
        return list(actions)
    return handler


def launch_main(path: str, argv: list[str]) -> int:
    """``python <prefix>/share/rnea_ros/launch/<file>.launch.py [name:=value ...]``: the
    launch file run by ``launch``'s ``LaunchService`` as ``ros2 launch`` runs it (for a
    pip install, where the ``ros2`` command may be absent), with this interpreter's
    prefix on ``AMENT_PREFIX_PATH`` when the package is registered there. Without
    ``launch``/``launch_ros`` (not on PyPI): one line saying what to install and how to
    run the nodes instead, exit 1."""
    import os
    import sys
    from pathlib import Path

    name = Path(path).name
    try:
        import launch_ros  # noqa: F401
        from launch.actions import IncludeLaunchDescription
        from launch.launch_description_sources import PythonLaunchDescriptionSource

        from launch import LaunchDescription, LaunchService  # type: ignore[attr-defined]
    except ModuleNotFoundError as exc:
        print(f"{name}: error: the Python module '{(exc.name or '').split('.')[0]}' is not "
              "installed: launch files need ROS 2's launch and launch_ros, which are not on "
              "PyPI (install ROS 2: apt install ros-$ROS_DISTRO-launch-ros, then ros2 launch "
              f"rnea_ros {name}); without them start the nodes themselves: rnea-simulator "
              "and rnea-controller --ros-args --params-file FILE (docs/nodes.md)",
              file=sys.stderr)
        return 1
    arguments = [tuple(a.split(":=", 1)) for a in argv]
    bad = [a for a in argv if ":=" not in a]
    if bad:
        print(f"{name}: error: arguments are name:=value, not {' '.join(bad)}",
              file=sys.stderr)
        return 2
    marker = Path(sys.prefix) / "share" / "ament_index" / "resource_index" / "packages"
    prefixes = os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
    if (marker / "rnea_ros").is_file() and sys.prefix not in prefixes:
        os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join([sys.prefix, *filter(None, prefixes)])
    service = LaunchService(argv=argv)
    service.include_launch_description(LaunchDescription([IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(path)), launch_arguments=arguments)]))
    return int(service.run())
