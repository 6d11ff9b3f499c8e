"""A launch whose node fails exits non-zero; ``--show-args`` descriptions name every
robot and mode; gazebo.launch.py needs the xacro command, not its ROS package.

``ros2 launch`` exits with ``LaunchService.run()``'s return code, which is 1 only when
an exception reached the launch service (a ``Shutdown`` action with any reason gives
0): the launch files' ``OnProcessExit`` handlers (:mod:`rnea_ros.launching`) raise
:class:`~rnea_ros.launching.ProcessFailedError` when a node failed. Checked here without
``launch`` (a stand-in ``launch.actions`` module); where ``launch`` is installed, a
real ``LaunchService`` runs a failing process and returns 1.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from test_launch_files import LAUNCH_FILES, ROOT, load

from rnea_ros.control.config import MODES
from rnea_ros.launching import (
    ProcessFailedError,
    exit_failure,
    on_exit_shutdown,
    on_exit_then,
)
from rnea_ros.samples import robot_files, shipped_robots


@pytest.fixture
def fake_launch(monkeypatch: pytest.MonkeyPatch) -> type:
    """A stand-in ``launch.actions`` with a ``Shutdown`` that records its reason."""
    class Shutdown:
        def __init__(self, *, reason: str) -> None:
            self.reason = reason

    launch = ModuleType("launch")
    actions = ModuleType("launch.actions")
    actions.Shutdown = Shutdown  # type: ignore[attr-defined]
    launch.actions = actions  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "launch", launch)
    monkeypatch.setitem(sys.modules, "launch.actions", actions)
    return Shutdown


def exited(code: int) -> SimpleNamespace:
    return SimpleNamespace(returncode=code)


def context(shutting_down: bool) -> SimpleNamespace:
    return SimpleNamespace(is_shutdown=shutting_down)


def test_exit_failure_names_the_node_and_the_code_or_signal() -> None:
    assert exit_failure("rnea_controller", 1, False) == "rnea_controller exited with code 1"
    assert exit_failure("rnea_simulator", -9, False) == "rnea_simulator was killed by SIGKILL"
    assert exit_failure("rnea_controller", 0, False) is None
    for code in (0, 1, -9, -15):  # the launch stopping its nodes: never a failure
        assert exit_failure("rnea_controller", code, True) is None


def test_a_failed_node_raises_a_clean_exit_shuts_down(fake_launch: type) -> None:
    handler = on_exit_shutdown("rnea_controller")
    with pytest.raises(ProcessFailedError, match=r"^rnea_controller exited with code 1$"):
        handler(exited(1), context(False))  # a FATAL bad parameter
    with pytest.raises(ProcessFailedError, match="killed by SIGKILL"):
        handler(exited(-9), context(False))
    for event, ctx in ((exited(0), context(False)), (exited(-15), context(True))):
        (action,) = handler(event, ctx)
        assert isinstance(action, fake_launch) and action.reason == "rnea_controller exited"


def test_a_failed_step_raises_a_successful_one_starts_the_next() -> None:
    nxt = [object(), object()]
    handler = on_exit_then("spawner joint_state_broadcaster", nxt)
    assert handler(exited(0), context(False)) == nxt
    with pytest.raises(ProcessFailedError, match="spawner joint_state_broadcaster exited with "
                       "code 1"):
        handler(exited(1), context(False))


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_every_process_exit_handler_fails_the_launch_on_a_failure(path: Path) -> None:
    """No ``OnProcessExit`` with a bare action list (a ``Shutdown`` in it exits 0)."""
    handlers = [node for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "OnProcessExit"]
    assert handlers, path.name
    for call in handlers:
        on_exit = {k.arg: k.value for k in call.keywords}["on_exit"]
        assert isinstance(on_exit, ast.Call) and ast.unparse(on_exit.func) in (
            "on_exit_shutdown", "on_exit_then"), ast.unparse(call)
    module = load(path)
    nodes = [name for _, _, name, _ in module.NODES]
    assert path.read_text().count("on_exit=on_exit_shutdown(name)") == 1 and nodes


def test_a_real_launch_service_returns_1_when_a_process_fails(tmp_path: Path) -> None:
    """Where ``launch`` is installed: our handler in a real ``LaunchService``."""
    # (launch_ros, not launch: the repository's launch/ folder imports as a namespace package)
    pytest.importorskip("launch_ros", reason="launch is not on PyPI (ROS workspace, or the "
                        "scratch check of the README)")
    from launch.actions import ExecuteProcess, RegisterEventHandler
    from launch.event_handlers import OnProcessExit

    import launch

    def run(code: int) -> int:
        process = ExecuteProcess(cmd=[sys.executable, "-c", f"raise SystemExit({code})"])
        service = launch.LaunchService()
        service.include_launch_description(launch.LaunchDescription([
            RegisterEventHandler(OnProcessExit(target_action=process,
                                               on_exit=on_exit_shutdown("node"))),
            process]))
        return int(service.run())

    assert run(1) == 1
    assert run(0) == 0


def described(path: Path, argument: str) -> str:
    return str(load(path).ARGUMENTS[argument][1])


def named(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_show_args_name_every_configured_robot_and_every_mode(path: Path) -> None:
    """``robot``: every robot with a config/<robot>_controller.yaml (gazebo.launch.py: those
    with a Gazebo description); ``mode``: every controller mode."""
    robots = [r for r in shipped_robots(ROOT)
              if (ROOT / "config" / f"{r}_controller.yaml").is_file()]
    if path.name == "gazebo.launch.py":
        robots = [r for r in robots if robot_files(r, ROOT).gazebo is not None]
    assert "arm7_gripper" in robots
    text = described(path, "robot")
    missing = [r for r in robots if not named(r, text)]
    assert not missing, f"{path.name}: robot description omits {missing}"
    text = described(path, "mode")
    missing = [m for m in MODES if not named(f"'{m}'", text)]
    assert not missing, f"{path.name}: mode description omits {missing}"


def test_gazebo_runs_the_xacro_command_without_its_ros_package() -> None:
    gazebo = load(ROOT / "launch" / "gazebo.launch.py")
    assert "xacro" not in gazebo.GAZEBO_PACKAGES
    gazebo.check_requirements(which=lambda name: "/usr/bin/" + name,
                              installed=lambda package: package != "xacro")
    assert 'FindExecutable(name="xacro")' in (ROOT / "launch" / "gazebo.launch.py").read_text()
