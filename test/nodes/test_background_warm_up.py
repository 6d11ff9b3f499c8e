"""Issue 39 §2: ``rnea-controller`` compiles the other modes' kernels in the background
(:mod:`rnea_ros.nodes.warm_up`), so its first command does not wait for them; a mode
switch asked for meanwhile is refused with the reason (it would compile inside the
parameter callback and stall the commands), and accepted once they are ready. The
background thread works on a copy of the controller, never the live one."""

from __future__ import annotations

import gc
import re
import sys
import threading
from collections.abc import Mapping
from typing import Any

import pytest
from rclpy.parameter import Parameter

from rnea_ros.nodes import warm_up
from rnea_ros.nodes.controller import ControllerNode, main
from rnea_ros.nodes.precompile import quiet_context
from rnea_ros.samples import robot_files


def test_the_warm_up_thread_reports_and_restores_the_switch_interval() -> None:
    release, logged = threading.Event(), []
    interval = sys.getswitchinterval()
    seen = []

    def warm(values: Mapping[str, Any]) -> None:
        seen.append(sys.getswitchinterval())
        release.wait(10.0)
        raise RuntimeError("boom")

    w = warm_up.BackgroundWarmUp(warm, {"mode": "gravity"}, logged.append)
    assert not w.begun and not seen  # nothing before start() (the node's first command)
    w.start()
    why = w.refusal()
    assert why is not None and "still being prepared in the background" in why
    # the time so far to a tenth of a second, not "0 s" or a claim of a cold cache
    assert re.search(r"\(compiled, or loaded .*; \d+\.\d s so far\)", why), why
    release.set()
    assert w.wait(10.0) and w.refusal() is None
    w.thread.join(10.0)
    assert seen == [pytest.approx(warm_up.SWITCH_INTERVAL)]
    assert sys.getswitchinterval() == interval and gc.isenabled()
    assert w.error == "RuntimeError: boom" and len(logged) == 1 and "failed" in logged[0]


def test_a_switch_waits_for_the_background_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    files = robot_files("arm7")
    release = threading.Event()
    copies: list[Any] = []
    original = ControllerNode.warm_copy

    def blocked(self: ControllerNode, values: Mapping[str, Any]) -> None:
        release.wait(30.0)
        original(self, values)
        copies.append(self.controller)
    monkeypatch.setattr(ControllerNode, "warm_copy", blocked)
    with quiet_context() as context:
        node = ControllerNode(background_warm_up=True, context=context, cli_args=[
            "--ros-args", "--params-file", str(files.controller), "-p",
            f"urdf_path:={files.urdf}"])
        try:
            live = node.controller
            assert node.warm_up is not None and not node.warm_up.begun
            node.publish_command(node.command_view, node.get_clock().now().to_msg())
            assert node.warm_up.begun and not node.warm_up.done.is_set()  # the first command
            (result,) = node.set_parameters([Parameter("mode", value="inverse_dynamics")])
            assert not result.successful and "still being prepared" in result.reason
            assert node.controller.config.mode == "gravity"
            # a change within the mode is not a switch: accepted at once
            (result,) = node.set_parameters([Parameter("kp", value=[50.0] * 7)])
            assert result.successful, result.reason
            release.set()
            assert node.warm_up.wait(120.0) and node.warm_up.error == ""
            (result,) = node.set_parameters([Parameter("mode", value="inverse_dynamics")])
            assert result.successful, result.reason
            assert node.controller is live and copies == [live]  # the live one, switched
            assert live.config.mode == "inverse_dynamics"
        finally:
            release.set()
            node.destroy_node()


def test_rnea_controller_warms_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    """``main`` (rnea-controller, ros2 run) builds the node with the background warm-up;
    direct constructions (rnea-precompile, tests) keep the warm-up before the start."""
    built: list[dict[str, Any]] = []
    monkeypatch.setattr("rnea_ros.nodes.controller.run",
                        lambda name, make, args: built.append({"make": make}) or 0)
    assert main([]) == 0
    monkeypatch.setattr(ControllerNode, "__init__",
                        lambda self, **kw: built.append(kw))
    built[0]["make"]()
    assert built[1] == {"background_warm_up": True}
