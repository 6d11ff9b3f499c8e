"""The nodes' parameter tables as data (rnea_ros/params/*.yaml, rnea_ros.parameters),
without ROS: they load, their defaults have their types and lie in their ranges, a
range refuses what it should (open and closed bounds, NaN, choices) with a reason
naming the parameter, the controller's table agrees with the controller's own
validation, bad table entries are refused naming the entry, and a table renders as
Markdown (the CLI too)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

import rnea_ros
from rnea_ros.control.config import (
    CONTROLLER_PARAMETERS,
    controller_config,
    default_values,
    load_model,
)
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import (
    ParameterSpec,
    check,
    load_table,
    main,
    markdown,
    parse_spec,
    table_names,
)
from rnea_ros.samples import load_loop_robot, load_robot, sample_urdf

PYTHON = {"bool": bool, "int": int, "double": float, "string": str}


def test_the_node_tables_ship_with_the_package_and_load() -> None:
    assert {"controller", "rate_limiter"} <= set(table_names())
    for name in table_names():
        table = load_table(name)
        assert table, name
        for key, spec in table.items():
            python = PYTHON[spec.kind.removesuffix("_array")]
            items = spec.default if spec.kind.endswith("_array") else [spec.default]
            assert all(type(x) is python for x in items), (name, key, spec.default)
            assert spec.refusal(key, spec.default) is None, (name, key)
            assert spec.description, (name, key)
    assert CONTROLLER_PARAMETERS == load_table("controller")
    assert default_values()["watchdog_timeout"] == 0.1
    assert CONTROLLER_PARAMETERS["oracle.tolerance"].default == 1e-9


@pytest.mark.parametrize(("spec", "good", "bad", "message"), [
    (ParameterSpec(0.1, "t", lower=0.0, lower_open=True, unit="s"), [1e-9, 5.0, math.inf],
     [0.0, -1.0, math.nan], "parameter 'x' must be > 0 s, got "),
    (ParameterSpec(0.0, "t", lower=0.0), [0.0, 3.0], [-1e-12, math.nan], "must be >= 0, got"),
    (ParameterSpec(0.5, "t", lower=0.0, lower_open=True, upper=1.0), [1.0, 1e-6],
     [0.0, 1.0 + 1e-9, math.nan], "must be in (0, 1], got"),
    (ParameterSpec(5, "t", lower=2), [2, 100], [1, -3], "must be >= 2, got"),
    (ParameterSpec("a", "t", choices=("a", "b")), ["a", "b"], ["c", ""],
     "parameter 'x' is 'c'; valid: 'a', 'b'"),
])
def test_a_range_refuses_what_lies_outside_with_a_reason(spec, good, bad, message) -> None:
    for value in good:
        assert spec.refusal("x", value) is None, value
    reasons = [spec.refusal("x", value) for value in bad]
    assert all(reasons), reasons
    assert message in str(reasons[0])
    with pytest.raises(ParameterError, match="parameter 'x'"):
        check({"x": spec}, {"x": bad[0], "other": 1})


def outside(spec: ParameterSpec) -> object:
    """A value just outside ``spec``'s range."""
    if spec.choices:
        return "no_such_choice"
    if spec.lower is not None:
        return spec.lower if spec.lower_open else spec.lower - 1
    assert spec.upper is not None
    return spec.upper if spec.upper_open else spec.upper + 1


RANGED = [name for name, spec in CONTROLLER_PARAMETERS.items() if spec.range_text()]


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("name", RANGED)
def test_the_controllers_table_agrees_with_its_validation(name: str) -> None:
    """Each range of the controller's table is one controller_config (or load_model)
    enforces too: a value just outside it is refused there, naming the parameter
    (IMU ranges with an IMU configured, the passive tolerance on a closed-loop robot)."""
    value = outside(CONTROLLER_PARAMETERS[name])
    values = {**default_values(), "urdf_path": str(sample_urdf("arm7")), name: value}
    with pytest.raises(ParameterError, match=f"'{name}'"):
        check(CONTROLLER_PARAMETERS, {name: value})
    with pytest.raises(ParameterError, match=f"'{name}'"):
        if name == "inertia_check":
            load_model(values)
        elif name.startswith("loops."):
            five_bar = load_loop_robot("five_bar")
            controller_config(values, five_bar.tree, loops=five_bar)
        else:
            controller_config({**values, "imu.topic": "imu"} if name.startswith("imu.")
                              else values, load_robot("arm7"))
    assert len(RANGED) >= 20


@pytest.mark.parametrize(("entry", "message"), [
    ({"type": "double", "default_value": 1.0, "units": "s"}, "unknown keys 'units'"),
    ({"type": "float", "default_value": 1.0}, "type 'float'; valid: 'bool'"),
    ({"type": "double", "default_value": "1e-9"}, "(double) has default '1e-9'"),
    ({"type": "int", "default_value": True}, "(int) has default True"),
    ({"type": "double_array", "default_value": []}, "non-empty list default"),
    ({"type": "double", "default_value": 0.0, "validation": {"gt<>": [0.0]}},
     "the default is out of range: parameter 'p' must be > 0"),
    ({"type": "string", "default_value": "a", "validation": {"gt<>": [0.0]}},
     "bounds apply to int and double parameters only"),
    ({"type": "double", "default_value": 1.0, "validation": {"positive<>": []}},
     "validation 'positive<>'"),
])
def test_a_bad_table_entry_is_refused_naming_it(entry, message: str) -> None:
    with pytest.raises(ParameterError, match="parameter 'p'") as error:
        parse_spec("p", entry, "t.yaml")
    assert message in str(error.value) and "t.yaml" in str(error.value)


def test_an_int_default_of_a_double_is_a_float() -> None:
    assert parse_spec("p", {"type": "double", "default_value": 2}).default == 2.0
    assert type(parse_spec("p", {"type": "double_array", "default_value": [1, 2.5]})
                .default[0]) is float


def _raw_choices(table: str, name: str) -> tuple[str, list[str]]:
    """``(default, choices)`` of string parameter ``name`` read straight from the YAML
    file (not through the loader): what a rendered row must show."""
    path = Path(rnea_ros.__file__).parent / "params" / f"{table}.yaml"
    (entries,) = yaml.safe_load(path.read_text()).values()
    entry = entries[name]
    (choices,) = entry["validation"]["one_of<>"]
    return entry["default_value"], choices


def _choice_row(table: str, name: str) -> str:
    default, choices = _raw_choices(table, name)
    assert len(choices) >= 2 and default in choices
    return (f"| `{name}` | string | `'{default}'` | "
            + ", ".join(f"'{c}'" for c in choices) + " |")


def test_a_table_renders_as_markdown(capsys) -> None:
    text = markdown(CONTROLLER_PARAMETERS)
    lines = text.splitlines()
    assert len(lines) == 2 + len(CONTROLLER_PARAMETERS)
    row = next(line for line in lines if line.startswith("| `watchdog_timeout` |"))
    assert row.startswith("| `watchdog_timeout` | double | `0.1` | > 0 | s |  | joint-state")
    assert _choice_row("controller", "mode") in text  # every choice of the YAML, in order
    assert main(["rate_limiter"]) == 0
    assert _choice_row("rate_limiter", "input_type") + "  | yes |" in capsys.readouterr().out
    with pytest.raises(ParameterError, match="no parameter table 'x'; valid: 'controller'"):
        load_table("x")


def test_a_parameter_set_is_the_table_by_dotted_name_typed_and_checked() -> None:
    """parameter_set: one object per node, built from the table alone: every parameter by
    its dotted name, of its table type, absent ones at their default; checked first."""
    from rnea_ros.parameters import parameter_set

    given = {"clock_reset.count": 7, "watchdog_timeout": 1, "kp": [3, 4.5],
             "joints": ["a", "b"]}
    p = parameter_set(CONTROLLER_PARAMETERS, given)
    assert p.clock_reset.count == 7 and type(p.clock_reset.count) is int
    assert p.watchdog_timeout == 1.0 and type(p.watchdog_timeout) is float
    assert p.kp == (3.0, 4.5) and p.joints == ("a", "b")
    assert p.slew_limit.enable is True and p.get("time_scaling.margin") == 0.9
    for name, spec in CONTROLLER_PARAMETERS.items():  # nothing renamed, nothing left out
        value = given.get(name, spec.default)
        assert p.get(name) == (tuple(value) if spec.kind.endswith("_array") else value), name
    with pytest.raises(AttributeError, match="no parameter or namespace 'count'"):
        _ = p.count
    with pytest.raises(AttributeError, match="read-only"):
        p.watchdog_timeout = 2.0
    with pytest.raises(ParameterError, match="parameter 'watchdog_grace' must be <= 1 s"):
        parameter_set(CONTROLLER_PARAMETERS, {"watchdog_grace": 1e9})
    with pytest.raises(ParameterError, match=r"parameter 'oracle\.every_n': 'x' is not a number"):
        parameter_set(CONTROLLER_PARAMETERS, {"oracle.every_n": "x"})
    with pytest.raises(ParameterError, match=r"parameter 'payload.mass' \(double\): 'x'"):
        parameter_set(CONTROLLER_PARAMETERS, {"payload.mass": "x"})


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
def test_the_controllers_configuration_carries_its_parameter_set() -> None:
    values = {**default_values(), "urdf_path": str(sample_urdf("arm7")),
              "diagnostics_period": 0.25, "trajectory.max_bytes": 1000,
              "clock_reset.count": 9}
    config = controller_config(values, load_robot("arm7"))
    assert config.params.diagnostics_period == 0.25
    assert config.params.trajectory.max_bytes == 1000
    assert config.clock_reset.count == config.params.clock_reset.count == 9


def test_no_module_copies_a_tables_choice_list() -> None:
    """One fact in one place: no tuple, list or set literal in the layers that read the
    tables (control/, nodes/, the package root) spells a string parameter's choices (on
    main: MODES, ELASTIC_LAWS, STALE_BEHAVIORS, PARALLEL_FAMILIES, IMU_FALLBACKS,
    LINEAR_ACCELERATION_MODES, INPUT_TYPES and load_model's inertia_check did); they
    are read from the tables. (core/ and simulation/ check their own arguments'
    choices, which the tables name: inertia_check, engine, integrator.)"""
    import ast
    from pathlib import Path

    import rnea_ros

    choices = {frozenset(spec.choices): f"{table}:{name}" for table in table_names()
               for name, spec in load_table(table).items() if len(spec.choices) >= 2}
    copies = []
    root = Path(rnea_ros.__file__).parent
    paths = [*root.glob("*.py"), *(root / "control").rglob("*.py"),
             *(root / "nodes").rglob("*.py")]
    for path in sorted(paths):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str)
                    for e in node.elts):
                key = frozenset(e.value for e in node.elts)
                if key in choices:
                    copies.append(f"{path.name}:{node.lineno} copies {choices[key]}")
    assert not copies, copies
