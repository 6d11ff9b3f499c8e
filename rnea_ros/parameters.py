"""Node parameters as data: one table per node, ``rnea_ros/params/<node>.yaml``, in the
style of generate_parameter_library's YAML, read here without ROS.

A file holds one top-level key (the node's name) whose mapping nests the parameters:
a mapping with a ``type`` is a parameter, any other a namespace (``clock_reset:
{count: ...}`` is ``clock_reset.count``). A parameter's keys::

    type: double          # bool, int, double, string, or <one of those>_array
    default_value: 0.1
    description: "joint-state silence after which ..."
    unit: s               # optional (not in generate_parameter_library)
    read_only: true       # optional, default false
    validation:           # optional; generate_parameter_library's names
      gt<>: [0.0]         # also gt_eq<>, lt<>, lt_eq<>, bounds<> (inclusive), one_of<>;
                          # arrays: lower_element_bounds<>, upper_element_bounds<>,
                          # element_bounds<> (inclusive, on each element), unique<>
    safety:               # optional (not in generate_parameter_library)
      lt_eq<>: [10.0]     # the same bound validators: the values past which the
      reason: "..."       # parameter would switch a protection off, and why

``validation`` is what the quantity means (a period is > 0); ``safety`` narrows it to
what keeps the node's protections working (a watchdog timeout of 1e9 s, a
``diagnostics_period`` of 1e-9 s or an effort-rate limit of 1e-300 N m/s is a valid
number but no protection), each bound with the reason shown in the docs and in the
node's ``ParameterDescriptor``. Both are enforced alike, at start-up and on every set.

The table is used three ways: :mod:`rnea_ros.nodes.parameters` declares it on a node
(``ParameterDescriptor`` with description, read-only flag and the range) and refuses
an out-of-range set with :func:`refusal`'s reason; the layers below the nodes check
values by it and read them through it (:func:`check`, :func:`parameter_set`: one
:class:`ParameterSet` per node, dotted names kept; ``control.config.CONTROLLER_PARAMETERS``);
and :func:`markdown` documents it (``python -m rnea_ros.parameters controller``).

A range here is what a value must satisfy whatever else is set; checks that involve
several parameters or the robot (a gain per joint, a link name) stay in the code that
builds the node's configuration (e.g. :func:`rnea_ros.control.config.controller_config`).
Ranges apply to scalars (``int``, ``double``); ``one_of`` to strings.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rnea_ros.core.errors import options
from rnea_ros.parameter_errors import ParameterError, ParameterTableError

TABLES = Path(__file__).resolve().parent / "params"
TYPES = ("bool", "int", "double", "string",
         "bool_array", "int_array", "double_array", "string_array")
_SCALAR = {"bool": bool, "int": int, "double": float, "string": str}
# generate_parameter_library validator -> (lower or upper, open)
_BOUNDS = {"gt<>": ("lower", True), "gt_eq<>": ("lower", False),
           "lt<>": ("upper", True), "lt_eq<>": ("upper", False)}
# generate_parameter_library's array validators -> (lower or upper, open) per element
_ELEMENT_BOUNDS = {"lower_element_bounds<>": ("lower", False),
                   "upper_element_bounds<>": ("upper", False)}


@dataclass(frozen=True)
class Bounds:
    """A range of a number, or of each element of an array: lower and upper bounds
    (``None``: unbounded; ``*_open``: the bound itself excluded)."""

    lower: float | None = None
    lower_open: bool = False
    upper: float | None = None
    upper_open: bool = False

    def text(self) -> str:
        """The range as a reader writes it: ``> 0``, ``(0, 1]``, ``>= 2``; ``""``: none."""
        low, high = self.lower, self.upper
        if low is not None and high is not None:
            return (f"{'(' if self.lower_open else '['}{low:.10g}, {high:.10g}"
                    f"{')' if self.upper_open else ']'}")
        if low is not None:
            return f"{'>' if self.lower_open else '>='} {low:.10g}"
        if high is not None:
            return f"{'<' if self.upper_open else '<='} {high:.10g}"
        return ""

    def holds(self, x: float) -> bool:
        """Whether ``x`` lies in the range (NaN never does when a bound is set)."""
        ok = True
        if self.lower is not None:
            ok = x > self.lower if self.lower_open else x >= self.lower
        if ok and self.upper is not None:
            ok = x < self.upper if self.upper_open else x <= self.upper
        return ok

    def refusal(self, name: str, value: Any, unit: str) -> str | None:
        """Why ``value`` (a number, or an array checked element by element) lies
        outside: ``parameter 'x' must be > 0 s, got 0.0``; None: it lies inside."""
        if self.lower is None and self.upper is None:
            return None
        items = _items(value)
        try:
            if all(self.holds(float(x)) for x in (items if items is not None else [value])):
                return None
        except (TypeError, ValueError):
            return f"parameter '{name}': {value!r} is not a number (or a list of numbers)"
        text = self.text()
        where = f"in {text}" if text[0] in "([" else text
        each = " (each element)" if items is not None else ""
        got = value if items is None else items
        return (f"parameter '{name}' must be {where}{' ' + unit if unit else ''}{each}, "
                f"got {got!r}")


def _items(value: Any) -> list[Any] | None:
    """An array value's items as a list (rclpy gives ``array.array``, ROS-free callers
    lists, tuples or numpy arrays); None for a scalar or a string."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        return None
    return [x.item() if hasattr(x, "item") else x for x in value]


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter: default value, description, read-only flag; its type (one of
    :data:`TYPES`; ``""``: inferred from the default), unit, and its range: lower and
    upper bounds (``None``: unbounded; ``*_open``: the bound itself excluded; on each
    element of an array) or the ``choices`` of a string; ``unique``: an array's items
    are distinct; ``safe``: the narrower bounds that keep a protection on, and
    ``safety``, their reason."""

    default: Any
    description: str
    read_only: bool = False
    type: str = ""
    unit: str = ""
    lower: float | None = None
    lower_open: bool = False
    upper: float | None = None
    upper_open: bool = False
    choices: tuple[str, ...] = ()
    unique: bool = False
    safe: Bounds = Bounds()
    safety: str = ""

    @property
    def bounds(self) -> Bounds:
        """The range of :attr:`lower`, :attr:`upper` as :class:`Bounds`."""
        return Bounds(self.lower, self.lower_open, self.upper, self.upper_open)

    @property
    def kind(self) -> str:
        """The type, one of :data:`TYPES` (inferred from the default when not given)."""
        if self.type:
            return self.type
        value = self.default
        if isinstance(value, (list, tuple)):
            inner = _kind_of(value[0]) if value else "string"
            return f"{inner}_array"
        return _kind_of(value)

    def range_text(self) -> str:
        """The range as a reader writes it: ``> 0``, ``(0, 1]``, ``>= 2``, ``'a', 'b'``;
        ``""`` without one."""
        if self.choices:
            return options(self.choices)
        return self.bounds.text()

    def safety_text(self) -> str:
        """The safety bounds and their reason: ``<= 10 (why ...)``; ``""``: none."""
        text = self.safe.text()
        return f"{text} ({self.safety})" if text else ""

    def refusal(self, name: str, value: Any) -> str | None:
        """Why ``value`` is not a valid value of parameter ``name`` (None: it is): out of
        the choices, the range, the safety bounds (with their reason), or an array
        naming an item twice."""
        if self.choices:
            if value not in self.choices:
                return f"parameter '{name}' is '{value}'; valid: {options(self.choices)}"
            return None
        items = _items(value)
        if self.unique and items is not None:
            twice = sorted({str(x) for x in items if items.count(x) > 1})
            if twice:
                return (f"parameter '{name}' lists {options(twice)} more than once; its "
                        "items must be distinct")
        why = self.bounds.refusal(name, value, self.unit)
        if why:
            return why
        why = self.safe.refusal(name, value, self.unit)
        return f"{why}: safety bound, {self.safety}" if why else None


def _kind_of(value: Any) -> str:
    for kind, python in (("bool", bool), ("int", int), ("double", float), ("string", str)):
        if isinstance(value, python):
            return kind
    raise TypeError(f"no parameter type for {value!r}")


def _typed_default(name: str, kind: str, value: Any, source: str) -> Any:
    """``value`` as a ``kind`` (an int given for a double becomes a float); a
    :class:`ParameterError` naming the parameter and the file otherwise."""
    if kind not in TYPES:
        raise ParameterTableError(f"{source}: parameter '{name}' has type '{kind}'; valid: "
                             f"{options(TYPES)}")
    scalar = kind.removesuffix("_array")
    items = value if kind.endswith("_array") else [value]
    if kind.endswith("_array") and (not isinstance(value, list) or not value):
        raise ParameterTableError(f"{source}: parameter '{name}' ({kind}) needs a non-empty list "
                             f"default (rclpy types a parameter by its value), got {value!r}")
    out = []
    for item in items:
        if scalar == "double" and isinstance(item, int) and not isinstance(item, bool):
            item = float(item)
        if not isinstance(item, _SCALAR[scalar]) or \
                (scalar == "int" and isinstance(item, bool)):
            raise ParameterTableError(f"{source}: parameter '{name}' ({kind}) has default "
                                 f"{value!r}")
        out.append(item)
    return out if kind.endswith("_array") else out[0]


def _bounds(name: str, rules: Mapping[str, Any], kind: str, source: str,
            allowed: tuple[str, ...] = ()) -> Bounds:
    """The bounds of validators ``rules`` (scalar ones on an int or double, element ones
    on an int or double array); other rules must be in ``allowed``."""
    array = kind.endswith("_array")
    table = _ELEMENT_BOUNDS if array else _BOUNDS
    both = "element_bounds<>" if array else "bounds<>"
    out: dict[str, Any] = {}
    for rule, args in rules.items():
        if rule in allowed:
            continue
        if rule == both:
            out.update(lower=float(args[0]), upper=float(args[1]))
        elif rule in table:
            side, is_open = table[rule]
            out.update({side: float(args[0]), f"{side}_open": is_open})
        else:
            valid = [*allowed, both, *table]
            raise ParameterTableError(f"{source}: parameter '{name}' ({kind}) has validation "
                                 f"'{rule}'; valid: {options(valid)}")
    if out and kind.removesuffix("_array") not in ("int", "double"):
        raise ParameterTableError(f"{source}: parameter '{name}' ({kind}): bounds apply to int "
                             "and double parameters only (of an array: to its elements)")
    return Bounds(**out)


def parse_spec(name: str, entry: Mapping[str, Any], source: str = "table") -> ParameterSpec:
    """One parameter's mapping (see the module docstring) as a :class:`ParameterSpec`."""
    known = {"type", "default_value", "description", "unit", "read_only", "validation",
             "safety"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise ParameterTableError(f"{source}: parameter '{name}' has unknown keys "
                             f"{options(unknown)}; valid: {options(sorted(known))}")
    kind = str(entry["type"])
    default = _typed_default(name, kind, entry.get("default_value"), source)
    rules = dict(entry.get("validation") or {})
    bounds = _bounds(name, rules, kind, source, ("one_of<>", "unique<>"))
    choices = tuple(str(c) for c in rules["one_of<>"][0]) if "one_of<>" in rules else ()
    if choices and kind != "string":
        raise ParameterTableError(f"{source}: parameter '{name}' ({kind}): one_of<> applies to "
                             "string parameters only")
    if "unique<>" in rules and not kind.endswith("_array"):
        raise ParameterTableError(f"{source}: parameter '{name}' ({kind}): unique<> applies to "
                             "array parameters only")
    safety = dict(entry.get("safety") or {})
    reason = str(safety.pop("reason", ""))
    safe = _bounds(name, safety, kind, source)
    if bool(reason) != bool(safe.text()):
        raise ParameterTableError(f"{source}: parameter '{name}': 'safety' needs bounds and a "
                             "'reason' together")
    spec = ParameterSpec(default, str(entry.get("description", "")),
                         bool(entry.get("read_only", False)), kind,
                         str(entry.get("unit", "")), bounds.lower, bounds.lower_open,
                         bounds.upper, bounds.upper_open, choices, "unique<>" in rules,
                         safe, reason)
    why = spec.refusal(name, default)
    if why:
        raise ParameterTableError(f"{source}: the default is out of range: {why}")
    return spec


def _flatten(tree: Mapping[str, Any], prefix: str, source: str,
             out: dict[str, ParameterSpec]) -> None:
    for key, entry in tree.items():
        name = f"{prefix}{key}"
        if not isinstance(entry, Mapping):
            raise ParameterTableError(f"{source}: '{name}' is neither a parameter (a mapping with "
                                 "a 'type') nor a namespace")
        if "type" in entry:
            out[name] = parse_spec(name, entry, source)
        else:
            _flatten(entry, f"{name}.", source, out)


def table_names() -> list[str]:
    """The tables shipped: ``controller``, ``rate_limiter``, ..."""
    return sorted(p.stem for p in TABLES.glob("*.yaml"))


def load_table(name: str) -> dict[str, ParameterSpec]:
    """The parameters of table ``name`` (``rnea_ros/params/<name>.yaml``), dotted names
    in the file's order."""
    path = TABLES / f"{name}.yaml"
    if not path.is_file():
        raise ParameterTableError(f"no parameter table '{name}'; valid: {options(table_names())}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, Mapping) or len(data) != 1:
        raise ParameterTableError(f"{path}: needs one top-level key (the node's name)")
    (tree,) = data.values()
    out: dict[str, ParameterSpec] = {}
    _flatten(tree, "", str(path), out)
    return out


def check(table: Mapping[str, ParameterSpec], values: Mapping[str, Any]) -> None:
    """Raise :class:`ParameterError` for the first value of ``values`` outside its
    parameter's range (names not in ``table`` are not checked)."""
    for name, value in values.items():
        spec = table.get(name)
        why = spec.refusal(name, value) if spec is not None else None
        if why:
            raise ParameterError(why)


class ParameterSet:
    """A node's parameter values as one object built from its table (as
    generate_parameter_library's ``Params`` struct): attributes by the table's dotted
    names (``p.watchdog_timeout``, ``p.clock_reset.count``, ``p.slew_limit.enable``),
    each value of the table's type (``double`` a float, ``int`` an int, arrays tuples);
    read-only. Build it with :func:`parameter_set`, which checks the values first."""

    def __init__(self, items: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_items", dict(items))

    def __getattr__(self, name: str) -> Any:
        items = object.__getattribute__(self, "_items")
        if name not in items:
            raise AttributeError(f"no parameter or namespace '{name}'; valid: "
                                 f"{options(sorted(items), limit=100)}")
        return items[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"parameter '{name}' is read-only here (set it on the node)")

    def get(self, dotted: str) -> Any:
        """The value of ``dotted`` (``'clock_reset.count'``)."""
        out: Any = self
        for part in dotted.split("."):
            out = getattr(out, part)
        return out

    def dotted(self) -> dict[str, Any]:
        """Every value by its dotted name (``{'clock_reset.count': 5, ...}``), as
        :func:`parameter_set` takes them."""
        out: dict[str, Any] = {}
        for key, value in object.__getattribute__(self, "_items").items():
            if isinstance(value, ParameterSet):
                out.update({f"{key}.{k}": v for k, v in value.dotted().items()})
            else:
                out[key] = value
        return out

    def __repr__(self) -> str:
        return f"ParameterSet({object.__getattribute__(self, '_items')!r})"


def _typed(name: str, spec: ParameterSpec, value: Any) -> Any:
    """``value`` as ``spec``'s type: float, int, bool, str, or a tuple of them; a
    :class:`ParameterError` naming the parameter when it is not one."""
    scalar = {"double": float, "int": int, "bool": bool, "string": str}[
        spec.kind.removesuffix("_array")]
    items = _items(value)
    try:
        if spec.kind.endswith("_array"):
            return tuple(scalar(x) for x in (items if items is not None else [value]))
        return scalar(value)
    except (TypeError, ValueError):
        raise ParameterError(f"parameter '{name}' ({spec.kind}): {value!r} is not of that "
                             "type") from None


def parameter_set(table: Mapping[str, ParameterSpec], values: Mapping[str, Any],
                  checked: bool = True) -> ParameterSet:
    """``values`` (a parameter absent: its default) checked by ``table`` (:func:`check`:
    ranges, choices, safety bounds, distinct items) as a :class:`ParameterSet`
    (``checked=False``: typed only, for a test handing a lower layer a value the table
    refuses, to see that layer refuse it too)."""
    if checked:
        check(table, values)
    tree: dict[str, Any] = {}
    for name, spec in table.items():
        *spaces, leaf = name.split(".")
        node = tree
        for space in spaces:
            node = node.setdefault(space, {})
        node[leaf] = _typed(name, spec, values.get(name, spec.default))

    def build(node: dict[str, Any]) -> ParameterSet:
        return ParameterSet({k: build(v) if isinstance(v, dict) else v
                             for k, v in node.items()})
    return build(tree)


def defaults(table: Mapping[str, ParameterSpec]) -> dict[str, Any]:
    """Every parameter of ``table`` at its default."""
    return {name: spec.default for name, spec in table.items()}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(table: Mapping[str, ParameterSpec]) -> str:
    """``table`` as a Markdown table: name, type, default, range (``unique`` for an
    array of distinct items), unit, read-only, description, safety bound (and why)."""
    lines = ["| name | type | default | range | unit | read-only | description | "
             "safety bound |", "|---|---|---|---|---|---|---|---|"]
    for name, s in table.items():
        default = "''" if s.default == "" else repr(s.default)
        each = "each " if s.kind.endswith("_array") and s.range_text() else ""
        valid = ", ".join(x for x in (each + s.range_text(), "unique" if s.unique else "")
                          if x)
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{name}`", s.kind, f"`{default}`", valid, s.unit,
            "yes" if s.read_only else "", s.description, s.safety_text())) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m rnea_ros.parameters <table>``: print the table as Markdown."""
    parser = argparse.ArgumentParser(prog="python -m rnea_ros.parameters",
                                     description="Print a node's parameter table as Markdown.")
    parser.add_argument("table", choices=table_names())
    args = parser.parse_args(argv)
    print(markdown(load_table(args.table)))
    return 0


__all__ = ["TABLES", "TYPES", "Bounds", "ParameterSet", "ParameterSpec", "check", "defaults",
           "load_table", "markdown", "parameter_set", "parse_spec", "table_names"]

if __name__ == "__main__":
    raise SystemExit(main())
