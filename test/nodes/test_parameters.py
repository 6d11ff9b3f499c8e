"""The parameter tables declared on the nodes (rnea_ros.nodes.parameters): what a node
declares is its table (names, types, descriptions, read-only flags, ranges as
descriptors), a set outside a range is refused with a reason naming the parameter
and leaves the node as it was, and a start-up value outside one stops the node with
a ParameterError naming it."""

from __future__ import annotations

import math

import pytest
import rclpy
from rclpy.context import Context
from rclpy.parameter import Parameter

from rnea_ros.control.config import CONTROLLER_PARAMETERS
from rnea_ros.core.errors import ParameterError
from rnea_ros.nodes.controller import ControllerNode
from rnea_ros.nodes.harness import overrides
from rnea_ros.nodes.rate_limiter import RATE_LIMITER_PARAMETERS, RateLimiterNode
from rnea_ros.parameters import ParameterSpec
from rnea_ros.samples import sample_urdf

URDF = str(sample_urdf("arm7"))
TYPES = {"bool": Parameter.Type.BOOL, "int": Parameter.Type.INTEGER,
         "double": Parameter.Type.DOUBLE, "string": Parameter.Type.STRING,
         "bool_array": Parameter.Type.BOOL_ARRAY, "int_array": Parameter.Type.INTEGER_ARRAY,
         "double_array": Parameter.Type.DOUBLE_ARRAY,
         "string_array": Parameter.Type.STRING_ARRAY}


@pytest.fixture
def context():
    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def make(kind: str, context: Context, **values: object):
    if kind == "controller":
        return ControllerNode(context=context,
                              parameter_overrides=overrides({"urdf_path": URDF, **values}))
    return RateLimiterNode(context=context,
                           parameter_overrides=overrides({"joints": ["a"], **values}))


RCLPY = {"use_sim_time", "start_type_description_service"}  # rclpy's own
TABLES = {"controller": CONTROLLER_PARAMETERS, "rate_limiter": RATE_LIMITER_PARAMETERS}


@pytest.mark.parametrize("kind", ["controller", "rate_limiter"])
def test_a_node_declares_its_table(kind: str, context: Context) -> None:
    node = make(kind, context)
    table: dict[str, ParameterSpec] = TABLES[kind]
    try:
        declared = {n for n in node.list_parameters([], 0).names
                    if n not in RCLPY and not n.startswith("qos_overrides.")}
        assert declared == set(table)
        for name, spec in table.items():
            d = node.describe_parameter(name)
            assert d.description == spec.description, name
            assert d.read_only == spec.read_only, name
            assert d.type == TYPES[spec.kind].value, name
            if spec.choices:
                assert d.additional_constraints.startswith(f"one of {spec.range_text()}")
            if spec.kind == "double" and (spec.lower is not None or spec.upper is not None):
                (r,) = d.floating_point_range
                low = -math.inf if spec.lower is None else spec.lower
                high = math.inf if spec.upper is None else spec.upper
                assert (r.from_value, r.to_value) == (low, high), name
            elif spec.kind == "int" and spec.lower is not None:
                (i,) = d.integer_range
                assert i.from_value == spec.lower, name
            else:
                assert not d.floating_point_range and not d.integer_range, name
    finally:
        node.destroy_node()


def test_a_set_out_of_range_is_refused_with_a_reason(context: Context) -> None:
    node = make("controller", context)
    try:
        config = node.controller.config
        # rclpy's own check of the descriptor's range
        (result,) = node.set_parameters([Parameter("watchdog_timeout", value=-1.0)])
        assert not result.successful and "watchdog_timeout" in result.reason
        # the edge of a closed range, outside the open one: the table's reason
        (result,) = node.set_parameters([Parameter("watchdog_timeout", value=0.0)])
        assert not result.successful
        assert result.reason == "parameter 'watchdog_timeout' must be > 0 s, got 0.0"
        (result,) = node.set_parameters([Parameter("time_scaling.margin", value=1.5)])
        assert not result.successful and "time_scaling.margin" in result.reason
        (result,) = node.set_parameters([Parameter("stale_behavior", value="coast")])
        assert not result.successful
        assert result.reason == "parameter 'stale_behavior' is 'coast'; valid: 'hold', 'zero'"
        assert node.controller.config is config  # untouched
        assert node.get_parameter("watchdog_timeout").value == 0.1
        (result,) = node.set_parameters([Parameter("watchdog_timeout", value=0.3)])
        assert result.successful and node.controller.config.watchdog_timeout == 0.3
    finally:
        node.destroy_node()


@pytest.mark.parametrize(("kind", "values", "message"), [
    ("controller", {"clock_reset.count": 1}, "parameter 'clock_reset.count' must be >= 2"),
    ("controller", {"oracle.tolerance": 0.0}, "parameter 'oracle.tolerance' must be > 0"),
    ("rate_limiter", {"diagnostics_period": 0.0},
     "parameter 'diagnostics_period' must be > 0 s, got 0.0"),
    ("rate_limiter", {"diagnostics_period": -2.0}, "parameter 'diagnostics_period' must be > 0"),
])
def test_a_start_up_value_out_of_range_names_the_parameter(kind, values, message,
                                                          context: Context) -> None:
    with pytest.raises(ParameterError) as error:
        make(kind, context, **values)
    assert message in str(error.value)


def test_a_runtime_set_over_dds_cannot_switch_the_watchdog_off() -> None:
    """Issue 35, attacks 4 and 8 through ``ros2 param set``'s path (the node's
    ``set_parameters`` service, over DDS): a watchdog timeout or grace of 1e9 s, a
    /diagnostics period of 1e-9 s or a rate limit of 1e-300 N m/s is refused with the
    table's reason; the configuration is untouched, so 1.5 s without joint states still
    makes the watchdog act (it fires 0.1 s + 0.1 s after the last state, on any
    schedule within the wall timeout)."""
    from rclpy.parameter_client import AsyncParameterClient
    from sensor_msgs.msg import JointState

    from rnea_ros.nodes.harness import ClosedLoop
    from rnea_ros.samples import load_robot

    names = list(load_robot("arm7").joint_names)
    with ClosedLoop({"urdf_path": URDF}, None) as loop:
        client = AsyncParameterClient(loop.probe, "rnea_controller")
        assert client.wait_for_services(timeout_sec=10.0)
        c = loop.controller.controller
        config = c.config

        def remote_set(name: str, value: object) -> str:
            future = client.set_parameters([Parameter(name, value=value)])
            assert loop.spin_until(future.done, 10.0)
            (result,) = future.result().results
            return "" if result.successful else result.reason

        for name, value in (("watchdog_timeout", 1e9), ("watchdog_grace", 1e9),
                            ("diagnostics_period", 1e-9), ("effort_rate_limits", [1e-300])):
            reason = remote_set(name, value)
            assert reason.startswith(f"parameter '{name}' must be "), (name, reason)
            assert "safety bound" in reason, reason
        assert c.config is config and config.watchdog_timeout == 0.1
        assert config.watchdog_grace == 0.1
        loop.spin_until(lambda: loop.probe.state_pub.get_subscription_count() >= 1, 10.0)
        msg = JointState(name=names, position=[0.1] * len(names), velocity=[0.0] * len(names))
        msg.header.stamp = loop.controller.get_clock().now().to_msg()
        loop.probe.state_pub.publish(msg)
        assert loop.spin_until(lambda: c.last_state_time is not None, 10.0)
        assert loop.spin_until(lambda: c.stale, 10.0)  # the watchdog acted
        assert remote_set("watchdog_timeout", 0.3) == ""  # a bounded value is applied
        assert c.config.watchdog_timeout == 0.3


@pytest.mark.parametrize(("kind", "values", "message"), [
    ("controller", {"watchdog_timeout": 1e9}, "parameter 'watchdog_timeout' must be in [0.001"),
    ("controller", {"watchdog_grace": 1e9}, "parameter 'watchdog_grace' must be <= 1 s"),
    ("controller", {"diagnostics_period": 1e-9}, "parameter 'diagnostics_period' must be in"),
    ("controller", {"effort_rate_limits": [1e-300]}, "parameter 'effort_rate_limits' must be"),
    ("rate_limiter", {"diagnostics_period": 1e-9}, "parameter 'diagnostics_period' must be in"),
    ("rate_limiter", {"joints": ["a", "a", "b"]}, "parameter 'joints' lists 'a' more than once"),
    ("rate_limiter", {"joints": ["a"], "effort_rate_limits": [1e-300]},
     "parameter 'effort_rate_limits' must be in [0.001"),
])
def test_a_start_up_value_past_a_safety_bound_stops_the_node(kind, values, message,
                                                             context: Context) -> None:
    """Issue 35's attacks at start-up (launch or YAML overrides): the node does not
    start, naming the parameter and the bound's reason."""
    with pytest.raises(ParameterError) as error:
        make(kind, context, **values)
    assert message in str(error.value)
    assert "safety bound" in str(error.value) or "more than once" in str(error.value)
