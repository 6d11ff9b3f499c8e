"""One typed configuration per node, built from its table with the dotted names kept
(issue 36): the controller's ``ControllerConfig``, the rate limiter's
``EffortLimiter.config``, the simulator node's ``config``. Nothing is renamed
(``slew_limit.enable`` is ``config.slew_limit.enable``, not ``config.slew_limit``),
every value has the table's type, and the nodes read no raw parameter dict."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from rnea_ros.control.config import (
    CONTROLLER_PARAMETERS,
    ControllerConfig,
    controller_config,
    default_values,
    load_model,
)
from rnea_ros.control.effort_limiter import RATE_LIMITER_PARAMETERS, EffortLimiter
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import ParameterSet, defaults, load_table, parameter_set
from rnea_ros.samples import sample_urdf

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
NODES = Path(__file__).resolve().parents[1] / "rnea_ros" / "nodes"
PYTHON = {"bool": bool, "int": int, "double": float, "string": str}
# Values the controller resolves against the robot: a field of their own, under the
# parameter's name (or, for what no parameter names, under a name of their own).
RESOLVED = {"joints", "gravity", "payload", "effort_limits", "kp", "kd",
            "effort_rate_limits", "imu"}
DERIVED = {"command_index", "elastic_gains", "params"}


def walk(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def typed(spec_kind: str, value: Any) -> bool:
    scalar = PYTHON[spec_kind.removesuffix("_array")]
    items = value if spec_kind.endswith("_array") else (value,)
    return all(type(x) is scalar for x in items) and (
        not spec_kind.endswith("_array") or isinstance(value, tuple))


@pytest.fixture(scope="module")
def config() -> ControllerConfig:
    values = {**default_values(), "urdf_path": str(sample_urdf("arm7")),
              "slew_limit.enable": False, "oracle.every_n": 7, "clock_reset.count": 9,
              "loops.passive_tolerance": 0.02, "time_scaling.margin": 0.8,
              "mimic.tolerance": 0.01}
    return controller_config(values, load_model(values))


def test_the_controller_config_renames_no_parameter(config: ControllerConfig) -> None:
    """Its fields are the table's names (values resolved against the robot) or a
    name no parameter has; on main 23 fields renamed parameters (``slew_limit`` for
    ``slew_limit.enable``, ``oracle_enable``, ``parallel``, ``clock_reset_count``...)."""
    top = {name.split(".")[0] for name in CONTROLLER_PARAMETERS}
    fields = {f.name for f in dataclasses.fields(ControllerConfig)}
    assert fields - top == DERIVED
    assert fields & top == RESOLVED


def test_every_parameter_reads_by_its_dotted_name_with_the_tables_type(
        config: ControllerConfig) -> None:
    read = 0
    for name, spec in CONTROLLER_PARAMETERS.items():
        value = walk(config, name) if name.split(".")[0] not in RESOLVED else \
            config.params.get(name)
        assert typed(spec.kind, value), (name, value)
        assert value == config.params.get(name), name
        read += 1
    assert read == len(CONTROLLER_PARAMETERS) > 60
    assert config.slew_limit.enable is False and config.oracle.every_n == 7
    assert config.clock_reset.count == 9 and config.loops.passive_tolerance == 0.02
    assert config.time_scaling.margin == 0.8 and config.mimic.tolerance == 0.01


def test_a_name_not_in_the_table_is_refused_with_the_valid_ones(
        config: ControllerConfig) -> None:
    with pytest.raises(AttributeError, match=r"'oracle_enable'.*valid: .*'oracle'"):
        config.oracle_enable  # noqa: B018 -- the old renamed field
    with pytest.raises(AttributeError, match=r"'enabled'.*valid: 'enable'"):
        config.slew_limit.enabled  # noqa: B018


def test_with_values_is_checked_by_the_table(config: ControllerConfig) -> None:
    other = config.with_values({"mode": "inverse_dynamics", "oracle.every_n": 3})
    assert (other.mode, other.oracle.every_n) == ("inverse_dynamics", 3)
    assert (config.mode, config.oracle.every_n) == ("gravity", 7)  # untouched
    assert other.kp is config.kp  # the resolved fields are kept
    with pytest.raises(ParameterError, match="parameter 'mode' is 'torque'; valid"):
        config.with_values({"mode": "torque"})
    assert config.with_values({"mode": "torque"}, checked=False).mode == "torque"


def test_the_imu_settings_keep_the_clock_reset_namespace() -> None:
    values = {**default_values(), "urdf_path": str(sample_urdf("arm7")), "imu.topic": "imu",
              "clock_reset.threshold": 0.5, "clock_reset.count": 4}
    imu = controller_config(values, load_model(values)).imu
    assert imu is not None and imu.link == load_model(values).root_link
    assert (imu.clock_reset.threshold, imu.clock_reset.count) == (0.5, 4)
    assert not hasattr(imu, "clock_reset_threshold")


def test_the_rate_limiter_keeps_its_typed_config() -> None:
    values = {"joints": ["a", "b"], "effort_rate_limits": [100.0], "input_type": "joint_state",
              "clock_reset.count": 3, "diagnostics_window": 5.0}
    limiter = EffortLimiter.from_parameters(values)
    config = limiter.config
    assert isinstance(config, ParameterSet)
    assert config.input_type == "joint_state" and config.clock_reset.count == 3
    assert config.diagnostics_window == 5.0 and config.joints == ("a", "b")
    assert limiter.reset_count == 3
    for name, spec in RATE_LIMITER_PARAMETERS.items():
        assert typed(spec.kind, walk(config, name)), name
    # the same object built from a ParameterSet
    again = EffortLimiter.from_parameters(parameter_set(RATE_LIMITER_PARAMETERS, values))
    assert again.config.dotted() == config.dotted()


def test_the_rate_limiters_ranges_are_the_tables_alone() -> None:
    """On main a hand check beside the table said "parameters 'clock_reset.threshold'
    > 0 and 'clock_reset.count' >= 2" instead of the table's refusal."""
    with pytest.raises(ParameterError) as error:
        EffortLimiter.from_parameters({**defaults(RATE_LIMITER_PARAMETERS), "joints": ["a"],
                                       "effort_rate_limits": [1.0], "clock_reset.count": 1})
    assert str(error.value) == "parameter 'clock_reset.count' must be >= 2, got 1"


def test_the_simulator_table_builds_its_typed_config() -> None:
    table = load_table("simulator")
    config = parameter_set(table, {"rate": 500, "imu.noise.orientation": 0.01})
    assert config.rate == 500.0 and type(config.rate) is float
    assert config.imu.noise.orientation == 0.01
    for name, spec in table.items():
        assert typed(spec.kind, walk(config, name)), name


@pytest.mark.parametrize("node", ["controller", "rate_limiter", "simulator"])
def test_the_nodes_read_no_raw_parameter_value(node: str) -> None:
    """A node reads its parameters from its typed config (``config.imu.link``), not
    ``values["imu.link"]``: no subscript of a parameter dict by a literal dotted name
    (on main the simulator node did 30 times, the rate limiter 3, the controller 3)."""
    tree = ast.parse((NODES / f"{node}.py").read_text())
    table = load_table(node)
    raw = [f"line {n.lineno}: {ast.unparse(n)}" for n in ast.walk(tree)
           if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
           and isinstance(n.slice, ast.Constant) and n.slice.value in table
           and ast.unparse(n.value) in ("v", "values", "self.values")]
    assert not raw, raw
