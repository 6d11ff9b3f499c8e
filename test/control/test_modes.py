"""Controller families as data (rnea_ros.control.modes): the modes each family runs are
the table's mode choices, no more and no fewer; each family's controller builds, for
each of its modes, the stages the family table names, in order (friction stages with
friction_compensation); each fused step named exists; a mode a family does not run is
refused by the configuration and by the controller's build_stages, never run as
another (on main the closed-loop, parallel and serial pipelines ran inverse dynamics
for any mode but gravity)."""

from __future__ import annotations

import pytest

import rnea_ros.control as control_package
from rnea_ros.control import command
from rnea_ros.control.config import CONTROLLER_PARAMETERS, MODES, default_values
from rnea_ros.control.factory import build_controller
from rnea_ros.control.modes import FAMILIES, all_modes, family_mode, family_of
from rnea_ros.core.errors import ParameterError
from rnea_ros.samples import elastic_robot_drives, sample_urdf, share_directory

ROBOTS = {  # family -> parameters selecting it on a shipped robot
    "serial": {"urdf_path": str(sample_urdf("arm7"))},
    "elastic": {"urdf_path": str(sample_urdf("mixed_3dof")),
                "elastic_file": str(elastic_robot_drives("mixed_3dof")),
                "inertia_check": "warn"},  # (as its config/mixed_3dof_controller.yaml)
    "closed_chain": {"urdf_path": str(sample_urdf("five_bar"))},
    "parallel": {"urdf_path": str(share_directory() / "urdf" / "delta.urdf"),
                 "loops.parallel": "delta",
                 "kp": [200.0], "kd": [10.0]},
}


def stage_name(stage: object) -> str:
    """``<module>.<class>`` under rnea_ros.control, as the family table names stages."""
    kind = type(stage)
    return f"{kind.__module__.removeprefix(control_package.__name__ + '.')}.{kind.__name__}"


def test_the_families_run_exactly_the_tables_modes() -> None:
    assert set(all_modes()) == set(MODES) == set(CONTROLLER_PARAMETERS["mode"].choices)
    assert set(FAMILIES) == {"serial", "elastic", "closed_chain", "parallel"}
    assert [family_of(e, lo, p) for e, lo, p in ((False, False, ""), (True, False, ""),
                                                 (False, True, ""), (False, True, "delta"))] \
        == ["serial", "elastic", "closed_chain", "parallel"]


def test_each_fused_step_named_exists_and_each_stage_is_a_class() -> None:
    import importlib
    for family in FAMILIES.values():
        module, name = family.controller.split(".")
        assert isinstance(getattr(importlib.import_module(f"rnea_ros.control.{module}"), name),
                          type)
        for mode in family.modes.values():
            for stage in mode.stages + mode.friction:
                module, name = stage.split(".")
                cls = getattr(importlib.import_module(f"rnea_ros.control.{module}"), name)
                assert isinstance(cls, type), stage
            if mode.fused:
                assert mode.fused.startswith("command.")
                assert callable(getattr(command, mode.fused.removeprefix("command.")))


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_builds_the_stages_its_table_names(family: str) -> None:
    spec = FAMILIES[family]
    for mode, expected in spec.modes.items():
        for friction in (False, True) if expected.friction else (False,):
            values = {**default_values(), **ROBOTS[family], "mode": mode,
                      "friction_compensation": friction}
            ctl, _ = build_controller(values)
            assert stage_name(ctl) == spec.controller
            names = [stage_name(s) for s in ctl.stages]
            assert names == list(expected.stages + (expected.friction if friction else ())), \
                (family, mode)


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_mode_the_family_does_not_run_is_refused_never_defaulted(family: str) -> None:
    """By the configuration (naming the family's modes) and by the controller's own
    build_stages when handed such a configuration (on main: inverse dynamics ran)."""
    values = {**default_values(), **ROBOTS[family], "mode": "gravity"}
    ctl, _ = build_controller(values)
    stages = ctl.stages
    for mode in ("torque", *[m for m in MODES if m not in FAMILIES[family].modes]):
        with pytest.raises(ParameterError, match=f"'{mode}'"):
            ctl.build_stages(ctl.config.with_values({"mode": mode}, checked=False))
        with pytest.raises(ParameterError, match="mode"):
            build_controller({**values, "mode": mode})
    assert ctl.stages is stages  # untouched


def test_a_family_names_its_modes_when_it_refuses_one() -> None:
    with pytest.raises(ParameterError, match="a parallel robot runs 'gravity' or "
                                             "'inverse_dynamics'"):
        family_mode("parallel", "elastic")
    with pytest.raises(ParameterError, match="needs parameter 'elastic_file'"):
        family_mode("serial", "elastic")


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_says_its_loops_so_no_caller_tests_its_class(family: str) -> None:
    """``loops``: the closed-loop model of the closed-chain and parallel families (the
    one the controller solves), ``None`` for the serial ones; ``passive_alarm`` a str on
    every family ('' before any passive-encoder check). The node reads these instead of
    ``isinstance(controller, ClosedLoopController)`` (on main: an AttributeError on a
    serial controller)."""
    from rnea_ros.core.coupling.loops import ClosedLoopModel
    ctl, _ = build_controller({**default_values(), **ROBOTS[family], "mode": "gravity"})
    closed = family in ("closed_chain", "parallel")
    assert isinstance(ctl.loops, ClosedLoopModel) if closed else ctl.loops is None
    assert ctl.passive_alarm == ""
    if closed:
        assert ctl.loops is not None and ctl.measured_names(ctl.base_model, None) \
            == ctl.loops.active_names


def test_no_module_tests_a_controller_class() -> None:
    """The brief: never a class test. The controller families answer ``loops``,
    ``passive_alarm``, ``passive_mismatches`` and ``loop_values`` (on main
    nodes/controller.py tested ClosedLoopController three times, control/controller_status.py
    twice). (The elastic laws' ``HuaController`` is a law, not a family.)"""
    import re
    from pathlib import Path
    root = Path(control_package.__file__).resolve().parents[1]
    found = [f"{path.relative_to(root)}:{n}"
             for sub in ("control", "nodes") for path in sorted((root / sub).rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"isinstance\([^)]*(Torque|ClosedLoop|Parallel)Controller\b", line)]
    assert found == []
