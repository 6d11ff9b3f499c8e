"""A node's parameter table (:mod:`rnea_ros.parameters`, ``rnea_ros/params/<node>.yaml``)
declared on an rclpy node: each parameter with a ``ParameterDescriptor`` (description,
read-only flag, ``FloatingPointRange``/``IntegerRange`` of its bounds,
``additional_constraints`` naming its choices, element bounds, unit and safety bound
with its reason) and start-up values checked against the table (:func:`declare`); a set
refused with the table's reason before the node's own callback sees it (:func:`watch`).

rclpy enforces a descriptor's range itself, as a closed interval (an open bound such as
``> 0`` is declared as ``[0, ...]``: its edge passes rclpy and is refused here, with a
reason naming the parameter); the safety bounds, element bounds and distinct items are
enforced here, at start-up (:func:`declare`) and on every set (:func:`watch`) alike.
``python -m rnea_ros.nodes.parameters controller`` prints a table as Markdown (as
``python -m rnea_ros.parameters`` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter

from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import ParameterSpec, main

INT64 = 2**63 - 1

OnSet = Callable[[list[Parameter[Any]]], SetParametersResult]


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The ``ParameterDescriptor`` of ``spec`` (its type is left to rclpy, which infers
    it from the default, as the table's type says)."""
    constraints = [f"one of {spec.range_text()}"] if spec.choices else []
    if spec.kind.endswith("_array") and spec.range_text():
        constraints.append(f"each element {spec.range_text()}")
    if spec.unique:
        constraints.append("items distinct")
    if spec.unit:
        constraints.append(f"unit: {spec.unit}")
    if spec.safety:
        constraints.append(f"safety bound {spec.safety_text()}")
    out = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                              additional_constraints="; ".join(constraints))
    if spec.lower is None and spec.upper is None:
        return out
    if spec.kind == "int":
        out.integer_range = [IntegerRange(
            from_value=-INT64 if spec.lower is None else math.ceil(spec.lower),
            to_value=INT64 if spec.upper is None else math.floor(spec.upper), step=0)]
    elif spec.kind == "double":
        out.floating_point_range = [FloatingPointRange(
            from_value=-math.inf if spec.lower is None else spec.lower,
            to_value=math.inf if spec.upper is None else spec.upper, step=0.0)]
    return out


def refusal(table: Mapping[str, ParameterSpec], params: list[Parameter[Any]]
            ) -> SetParametersResult | None:
    """The refusal of a set of ``params`` by ``table`` (a read-only parameter, a value
    out of its range), or None."""
    for p in params:
        spec = table.get(p.name)
        if spec is None:
            continue
        if spec.read_only:
            return SetParametersResult(successful=False,
                                       reason=f"parameter '{p.name}' is read-only")
        why = spec.refusal(p.name, p.value)
        if why:
            return SetParametersResult(successful=False, reason=why)
    return None


def declare(node: Node, table: Mapping[str, ParameterSpec]) -> dict[str, Any]:
    """Declare every parameter of ``table`` on ``node`` (:func:`descriptor`) and return
    their values (launch/YAML overrides applied); a value out of its range raises
    :class:`ParameterError` naming the parameter. Then :func:`watch` the table."""
    values: dict[str, Any] = {}
    for name, spec in table.items():
        try:
            node.declare_parameter(name, spec.default, descriptor(spec))
        except InvalidParameterValueException as exc:  # outside the descriptor's range
            raise ParameterError(f"parameter '{name}' must be {spec.range_text()}"
                                 f"{' ' + spec.unit if spec.unit else ''}: {exc}") from None
        values[name] = node.get_parameter(name).value
        why = spec.refusal(name, values[name])
        if why:
            raise ParameterError(why)
    return values


def watch(node: Node, table: Mapping[str, ParameterSpec], on_set: OnSet | None = None) -> None:
    """Refuse a set of ``node``'s parameters with ``table``'s reason (:func:`refusal`);
    pass the others to ``on_set`` (the node's own validation and reconfiguration) when
    given. Register it once the node is built: rclpy calls these callbacks also for the
    parameters it declares itself (``qos_overrides.*`` of a subscription)."""

    def on_set_parameters(params: list[Parameter[Any]]) -> SetParametersResult:
        refused = refusal(table, params)
        if refused is not None:
            return refused
        return on_set(params) if on_set is not None else SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set_parameters)


__all__ = ["declare", "descriptor", "refusal", "watch"]

if __name__ == "__main__":
    raise SystemExit(main())
