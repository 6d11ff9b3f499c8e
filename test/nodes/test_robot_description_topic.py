"""Issue 39 §1: the model from the ``robot_description`` topic (``std_msgs/String``,
transient local, as ``robot_state_publisher`` publishes it and ``controller_manager``
takes it), over DDS, in a namespace, with a URDF that is not in our package (UR5 from
example-robot-data) and the parameter file ``rnea-config`` writes for it.

The description is published before the controller exists (transient local: a late
joiner gets it) and after (the node waits, naming the resolved topic); a malformed one is
a typed error logged and counted, the node keeps waiting, and a later good one starts it;
the controller and the simulator both from the topic hold the robot in lockstep."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import rclpy
import yaml
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from rnea_ros.control.starting_config import main as rnea_config
from rnea_ros.control.starting_config import reference_pose
from rnea_ros.core import load_urdf
from rnea_ros.core.errors import ParameterError
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.description import DESCRIPTION_QOS, from_topic
from rnea_ros.nodes.harness import Probe, overrides
from rnea_ros.nodes.simulator import SimulatorNode
from rnea_ros.samples import example_robot_urdf

NAMESPACE = "cell9"


@pytest.fixture(scope="module")
def ur5(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    """The UR5's URDF text (copied out of example-robot-data, as a user's robot) and the
    controller parameters rnea-config writes for it."""
    folder = tmp_path_factory.mktemp("ur5")
    urdf = folder / "my_ur5.urdf"
    shutil.copy(example_robot_urdf("ur5"), urdf)
    config = folder / "my_ur5_controller.yaml"
    assert rnea_config(["--urdf", str(urdf), "--out", str(config)]) == 0
    return urdf.read_text(), yaml.safe_load(config.read_text())["/**"]["ros__parameters"]


class Bus:
    """One context and executor; the nodes of a test, destroyed at the end."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes: list[Node] = []

    def add(self, node: Node) -> Node:
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def publisher(self, text: str | None = None) -> Callable[[str], None]:
        """A robot_state_publisher stand-in in the namespace: publishes ``text`` (now, if
        given) and returns the function that publishes another."""
        node = self.add(Node("description_publisher", context=self.context,
                             namespace=NAMESPACE))
        pub = node.create_publisher(String, "robot_description", DESCRIPTION_QOS)

        def publish(data: str) -> None:
            pub.publish(String(data=data))
        if text is not None:
            publish(text)
        return publish

    def spin_until(self, done: Callable[[], bool], timeout: float = 20.0) -> bool:
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        return done()

    def close(self) -> None:
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def bus() -> Iterator[Bus]:
    b = Bus()
    yield b
    b.close()


def controller(bus: Bus, params: dict, **extra: object) -> ControllerNode:
    values = {**params, "robot_description_source": "topic", "watchdog_timeout": 1.0, **extra}
    node = ControllerNode(context=bus.context, namespace=NAMESPACE,
                          parameter_overrides=overrides(values))
    bus.add(node)
    return node


def test_a_description_published_before_the_controller_starts_it(bus: Bus, ur5) -> None:
    text, params = ur5
    bus.publisher(text)  # transient local: kept for the controller that joins later
    node = controller(bus, params)
    assert node.description is not None and not node.description.started
    assert node.description.topic == f"/{NAMESPACE}/robot_description"
    assert bus.spin_until(lambda: node.description.started)
    assert node.controller.base_model.name == load_urdf(text).name
    assert node.controller.config.joints == tuple(params["joints"])
    assert node.command_pub.topic_name == f"/{NAMESPACE}/effort_controller/commands"


def test_the_controller_waits_then_refuses_a_bad_one_and_takes_a_good_one(bus: Bus,
                                                                          ur5) -> None:
    text, params = ur5
    node = controller(bus, params)
    waiter = node.description
    assert waiter is not None
    line = waiter.waiting_line()
    assert f"'/{NAMESPACE}/robot_description'" in line and "transient local" in line
    assert not bus.spin_until(lambda: waiter.started, 0.5)  # nothing published: it waits
    # a managed node: unconfigured (no model, no controller, nothing commanded) until then
    assert node.controller is None and node.state_label == "unconfigured" and not node.active
    publish = bus.publisher()
    publish('<robot name="broken"><link name="a"></robot')  # malformed XML
    assert bus.spin_until(lambda: waiter.rejected == 1)
    assert "URDFError" in waiter.error and not waiter.started
    assert "refused" in waiter.waiting_line()
    # a URDF that does not fit the parameter file: its joints are not the UR5's
    publish(text.replace("shoulder_pan_joint", "other_joint"))
    assert bus.spin_until(lambda: waiter.rejected == 2)
    assert "ParameterError" in waiter.error and "shoulder_pan_joint" in waiter.error
    publish(text)
    assert bus.spin_until(lambda: waiter.started)
    assert waiter.rejected == 2 and node.controller.base_model.nv == 6
    assert node.state_label == "active"  # autostart: active, with this description
    publish(text.replace('name="ur5"', 'name="ur5_other"'))  # later ones: ignored
    bus.spin_until(lambda: False, 0.3)
    assert node.controller.base_model.name == load_urdf(text).name


def test_two_sources_are_refused_naming_both() -> None:
    assert not from_topic({"robot_description_source": "parameter", "urdf_path": "a.urdf"})
    with pytest.raises(ParameterError, match="'urdf_path' also set"):
        from_topic({"robot_description_source": "topic", "urdf_path": "a.urdf"})


def test_controller_and_simulator_from_the_topic_hold_the_robot(bus: Bus, ur5) -> None:
    """Both nodes wait on /cell9/robot_description (published after them), then close
    the loop in lockstep; the robot holds its pose in gravity and inverse_dynamics."""
    text, params = ur5
    model = load_urdf(text)
    q0 = reference_pose(model) + np.array([0.1, -0.4, 0.6, -0.3, 0.2, 0.1])
    sim = SimulatorNode(context=bus.context, namespace=NAMESPACE, parameter_overrides=overrides(
        {"robot_description_source": "topic", "lockstep": True, "publish_clock": True,
         "initial_positions": q0.tolist()}))
    bus.add(sim)
    node = controller(bus, params, use_sim_time=True, mode="inverse_dynamics")
    probe = bus.add(Probe(bus.context, namespace=NAMESPACE))
    bus.publisher(text)
    assert bus.spin_until(lambda: sim.description.started and node.description.started, 60.0)
    assert bus.spin_until(lambda: sim.state_pub.get_subscription_count() >= 2
                          and sim.command_sub.get_publisher_count() >= 1)
    sim.publish_state()
    assert bus.spin_until(lambda: sim.sim.t >= 2.0, 60.0)
    c = node.controller
    assert c.commands >= 1990 and sum(c.rejected.values()) == 0
    q = np.array(probe.recording.q)
    assert q.shape[1] == 6 and np.abs(q - q0).max() < 1e-3, np.abs(q - q0).max()
