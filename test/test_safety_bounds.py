"""Issue 35's attacks on the safety parameters, without ROS: a value whose extreme
switches a protection off (the watchdog, the rate limit, /diagnostics' period, the
limiter's joint order) is refused by the parameter table itself, so by the node at
start-up (``declare``), on every runtime set (``watch`` -> ``refusal``) and by the
ROS-free builders (``controller_config``, ``EffortLimiter.from_parameters``) alike,
naming the parameter and the reason of the bound. Each bound has its reason in the
table, shown by ``python -m rnea_ros.parameters``."""

from __future__ import annotations

import math

import pytest

from rnea_ros.control.config import CONTROLLER_PARAMETERS, controller_config, default_values
from rnea_ros.control.effort_limiter import EffortLimiter
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import check, defaults, load_table, main, markdown, table_names
from rnea_ros.samples import load_robot, sample_urdf

URDF = str(sample_urdf("arm7"))
RATE_LIMITER_PARAMETERS = load_table("rate_limiter")

# (table, parameter, a value an attack used or the like, the text of the refusal)
ATTACKS = [
    ("controller", "watchdog_timeout", 1e9, "must be in [0.001, 10] s, got 1000000000.0"),
    ("controller", "watchdog_grace", 1e9, "must be <= 1 s, got 1000000000.0"),
    ("controller", "watchdog_timeout", 1e-9, "must be in [0.001, 10] s"),
    ("controller", "diagnostics_period", 1e-9, "must be in [0.05, 5] s, got 1e-09"),
    ("controller", "diagnostics_period", 1e9, "must be in [0.05, 5] s"),
    ("controller", "diagnostics_window", 1e-9, "must be in [0.05, 600] s, got 1e-09"),
    ("controller", "effort_rate_limits", [1e-300], "must be in [0.001, 10000000] N m/s or N/s "
     "(each element), got [1e-300]"),
    ("controller", "effort_rate_limits", [1000.0, 1e300], "(each element)"),
    ("controller", "diagnostics_window", math.inf, "must be in [0.05, 600] s, got inf"),
    ("controller", "diagnostics_window", 1e308, "must be in [0.05, 600] s"),
    ("controller", "stamp_pace.min_ratio", 0.01, "must be in [0.05, 0.9], got 0.01"),
    ("controller", "stamp_pace.tolerance", 1e9, "must be in [0.01, 1] s"),
    ("controller", "clock_reset.threshold", 1e9, "must be <= 10 s"),
    ("controller", "clock_reset.count", 10**9, "must be <= 1000"),
    ("controller", "trajectory.max_bytes", 2**40, "must be <= 1048576 bytes"),
    ("controller", "imu.timeout", 1e9, "must be <= 1 s"),
    ("controller", "oracle.tolerance", 1e9, "must be <= 0.1, got"),
    ("controller", "oracle.every_n", 10**12, "must be <= 10000"),
    ("controller", "mimic.tolerance", math.inf, "must be <= 0.5 rad or m"),
    ("controller", "loops.passive_tolerance", 1e9, "must be <= 0.5 rad or m"),
    ("rate_limiter", "diagnostics_period", 1e-9, "must be in [0.05, 5] s"),
    ("rate_limiter", "effort_rate_limits", [1e-300], "(each element), got [1e-300]"),
    ("rate_limiter", "clock_reset.count", 10**9, "must be <= 1000"),
    ("rate_limiter", "diagnostics_window", math.inf, "must be in [0.05, 600] s, got inf"),
    ("simulator", "command_timeout", math.inf, "must be <= 10 s, got inf"),
]


@pytest.mark.parametrize(("table", "name", "value", "text"), ATTACKS)
def test_a_value_that_switches_a_protection_off_is_refused_with_its_reason(
        table: str, name: str, value: object, text: str) -> None:
    spec = load_table(table)[name]
    why = spec.refusal(name, value)
    assert why is not None and why.startswith(f"parameter '{name}' must be ") and text in why
    assert why.endswith(f": safety bound, {spec.safety}") and spec.safety
    with pytest.raises(ParameterError, match=f"parameter '{name}'"):
        check(load_table(table), {name: value})


@pytest.mark.parametrize("table", table_names())
def test_every_safety_bound_admits_its_default_and_states_its_reason(table: str) -> None:
    specs = load_table(table)
    bounded = {n: s for n, s in specs.items() if s.safe.text()}
    assert bounded, table
    for name, spec in bounded.items():
        assert spec.refusal(name, spec.default) is None
        assert len(spec.safety) > 30, (name, spec.safety)  # a reason, not a word
        # NaN and both infinities are outside every bounded side
        for value in (math.nan, math.inf, -math.inf):
            item = [value] if spec.kind.endswith("_array") else value
            if spec.kind.startswith("int"):
                continue
            lower, upper = spec.safe.lower, spec.safe.upper
            if (value == math.inf and upper is None) or (value == -math.inf and lower is None):
                continue
            assert spec.refusal(name, item) is not None, (name, value)
    text = markdown(specs)
    for name, spec in bounded.items():
        row = next(r for r in text.splitlines() if r.startswith(f"| `{name}` |"))
        assert row.endswith(f"| {spec.safe.text()} ({spec.safety}) |"), row


def test_the_protections_named_by_issue_35_are_bounded() -> None:
    """watchdog timeout and grace, effort-rate limits, diagnostics period (both nodes),
    the limiter's joints distinct; both watchdog parameters finite above."""
    c, r = CONTROLLER_PARAMETERS, RATE_LIMITER_PARAMETERS
    for name in ("watchdog_timeout", "watchdog_grace", "diagnostics_period",
                 "effort_rate_limits"):
        assert c[name].safe.upper is not None and math.isfinite(c[name].safe.upper), name
    assert c["diagnostics_period"].safe.lower == r["diagnostics_period"].safe.lower == 0.05
    assert r["effort_rate_limits"].safe == c["effort_rate_limits"].safe
    assert r["joints"].unique and c["joints"].unique and load_table("simulator")["joints"].unique


@pytest.mark.parametrize(("name", "value"), [
    ("watchdog_timeout", 1e9), ("watchdog_grace", 1e9), ("diagnostics_period", 1e-9),
    ("effort_rate_limits", [1e-300]), ("diagnostics_window", 1e-12),
])
def test_controller_config_refuses_the_attacks(name: str, value: object) -> None:
    values = {**default_values(), "urdf_path": URDF, name: value}
    with pytest.raises(ParameterError, match=f"parameter '{name}' .*safety bound"):
        controller_config(values, load_robot("arm7"))


@pytest.mark.parametrize(("changes", "message"), [
    ({"joints": ["a", "a", "b"]}, "parameter 'joints' lists 'a' more than once"),
    ({"joints": ["a", "b", "b", "a"]}, "parameter 'joints' lists 'a', 'b' more than once"),
    ({"diagnostics_period": 1e-9}, "parameter 'diagnostics_period' must be in [0.05, 5] s"),
    ({"effort_rate_limits": [1e-300]}, "parameter 'effort_rate_limits' must be in [0.001, "),
])
def test_the_rate_limiter_refuses_the_attacks(changes: dict[str, object], message: str) -> None:
    values = {**defaults(RATE_LIMITER_PARAMETERS), "joints": ["a", "b"], **changes}
    with pytest.raises(ParameterError) as error:
        EffortLimiter.from_parameters(values)
    assert message in str(error.value)


def test_the_bounds_show_in_the_printed_table(capsys) -> None:
    assert main(["controller"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("| description | safety bound |")
    row = next(r for r in out.splitlines() if r.startswith("| `watchdog_grace` |"))
    assert "| <= 1 (a grace is a scheduling hiccup" in row
