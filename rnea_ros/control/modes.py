"""Controller families as data: each family of robots the controller runs (serial,
elastic, closed chain, parallel) states the modes it supports and, per mode, its
pipeline's stages in order and the compiled step of :mod:`rnea_ros.control.command`
that runs the same law where the stages need nothing else. Free of ROS.

The ``mode`` parameter's choices are the table's (``rnea_ros/params/controller.yaml``);
every choice is run by some family here and no family runs a mode outside them
(``test/control/test_modes.py``). A mode a family does not list is refused
(:func:`family_mode`, raised by the configuration's rules and by each controller's
``build_stages``), never run as another. Stage builders stay with their controller
(:mod:`~rnea_ros.control.pipeline` for serial and elastic robots,
:mod:`~rnea_ros.control.closed_loop`, :mod:`~rnea_ros.control.parallel`); the test
checks the stages they build are the ones named here, and that each fused step equals
its stages (``test_command.py``).

Stages are named ``<module>.<class>`` under ``rnea_ros.control``; ``friction`` lists
the stages appended when ``friction_compensation`` is set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rnea_ros.parameter_errors import ParameterError


@dataclass(frozen=True)
class Mode:
    """One mode of a family: its ``stages`` in order, the ``friction`` stages added by
    ``friction_compensation``, and ``fused``, the compiled step of
    :mod:`rnea_ros.control.command` (``command.<function>``) computing the same law,
    or ``""``."""

    stages: tuple[str, ...]
    friction: tuple[str, ...] = ()
    fused: str = ""


@dataclass(frozen=True)
class Family:
    """A family of robots: how a reader names it (``label``), what selects it
    (``selected_by``), the controller class (``<module>.<class>``), its modes and
    ``no_contact``: why it does not run contact monitoring (``contact.enable``), ``""``
    when it does (:mod:`rnea_ros.control.contact.reaction`)."""

    label: str
    selected_by: str
    controller: str
    modes: Mapping[str, Mode] = field(default_factory=dict)
    no_contact: str = ""


GRAVITY = Mode(("laws.GravityCompensation",), friction=("laws.FrictionCompensation",),
               fused="command.gravity_command")
INVERSE_DYNAMICS = Mode(("laws.Reference", "laws.InverseDynamicsPD"),
                        fused="command.inverse_dynamics_command")

FAMILIES: dict[str, Family] = {
    "serial": Family("serial", "neither elastic_file nor loops_file",
                     "controller.TorqueController",
                     {"gravity": GRAVITY, "inverse_dynamics": INVERSE_DYNAMICS}),
    "elastic": Family("elastic-joint", "elastic_file", "controller.TorqueController",
                      {"gravity": GRAVITY, "inverse_dynamics": INVERSE_DYNAMICS,
                       "elastic": Mode(("laws.Reference", "elastic.ElasticStage"))},
                      no_contact="the link-side momentum observer needs the joint torques "
                      "after the springs, which joint_states does not carry"),
    "closed_chain": Family(
        "closed-loop", "loops_file", "closed_loop.ClosedLoopController",
        {"gravity": Mode(("closed_loop.LoopGravityCompensation",)),
         "inverse_dynamics": Mode(("laws.Reference", "closed_loop.LoopInverseDynamicsPD"))},
        no_contact="the momentum observer needs the open chain's M(q) and C(q, qd); the loop "
        "constraints' forces would read as contacts"),
    "parallel": Family(
        "parallel", "loops_file and loops.parallel", "parallel.ParallelController",
        {"gravity": Mode(("parallel.PlatformGravityCompensation",)),
         "inverse_dynamics": Mode(("laws.Reference", "parallel.PlatformInverseDynamicsPD"))},
        no_contact="the momentum observer needs the open chain's M(q) and C(q, qd); the "
        "platform's constraint forces would read as contacts"),
}


def family_of(elastic: bool, loops: bool, parallel: str) -> str:
    """The family (a key of :data:`FAMILIES`) of a robot with elastic joints
    (``elastic_file``), closed loops (``loops_file``) and ``loops.parallel``."""
    if loops:
        return "parallel" if parallel else "closed_chain"
    return "elastic" if elastic else "serial"


def _either(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def family_mode(family: str, mode: str) -> Mode:
    """The :class:`Mode` ``mode`` of ``family``; :class:`ParameterError` naming the
    family's modes when it does not run it (an elastic mode on a robot without
    elastic joints: naming ``elastic_file``)."""
    spec = FAMILIES[family]
    if mode in spec.modes:
        return spec.modes[mode]
    if family == "serial" and mode in FAMILIES["elastic"].modes:
        raise ParameterError(f"mode '{mode}' needs parameter 'elastic_file' (the side file "
                             "with the elastic joints and motors)")
    label = spec.label
    raise ParameterError(f"parameter 'mode' is '{mode}', not a mode of a {label} robot "
                         f"({spec.selected_by}); a {label} robot runs "
                         f"{_either(list(spec.modes))}")


def all_modes() -> tuple[str, ...]:
    """Every mode some family runs, in the families' order."""
    return tuple(dict.fromkeys(m for f in FAMILIES.values() for m in f.modes))


__all__ = ["FAMILIES", "Family", "Mode", "all_modes", "family_mode", "family_of"]
