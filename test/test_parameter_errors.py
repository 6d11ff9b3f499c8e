"""The parameters' errors are their own, not model errors (issue 36): a node's or a
command line's parameter raises ``rnea_ros.parameter_errors.ParameterError``
(``RneaError`` and ``ValueError``, not ``ModelError``; the old name in
``rnea_ros.core.errors`` still resolves), a malformed table ``ParameterTableError``, a
model's side file ``core.errors.ModelParameterError`` (a model error); the control
layer's last plain ``ValueError``s are typed and name the field with its valid
options."""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
import pytest
from plain_raises import PACKAGE, plain_raises

import rnea_ros.core as rc
from rnea_ros import parameter_errors
from rnea_ros.control.clock_rule import ClockRule
from rnea_ros.control.config import controller_config, default_values
from rnea_ros.control.diagnostics import SlidingWindow
from rnea_ros.control.errors import ControlError, IntakeStatusError
from rnea_ros.control.joint_state import MERGED, NON_FINITE
from rnea_ros.control.message_map import REJECTIONS, rejection
from rnea_ros.core import errors
from rnea_ros.core.model.drives import apply_drive_parameters
from rnea_ros.parameter_errors import ParameterError, ParameterTableError
from rnea_ros.parameters import parse_spec
from rnea_ros.samples import load_robot


def test_a_parameter_error_is_not_a_model_error() -> None:
    assert issubclass(ParameterError, rc.RneaError) and issubclass(ParameterError, ValueError)
    assert not issubclass(ParameterError, rc.ModelError)  # on main it was one
    assert errors.ParameterError is rc.ParameterError is ParameterError  # the old names
    assert issubclass(ParameterTableError, ParameterError)
    assert issubclass(rc.ModelParameterError, rc.ModelError)
    assert not issubclass(rc.ModelParameterError, ParameterError)


def test_each_kind_of_bad_parameter_raises_its_class() -> None:
    model = load_robot("arm7")
    with pytest.raises(ParameterError, match="parameter 'mode' is 'torque'; valid") as bad:
        controller_config({**default_values(), "mode": "torque"}, model)
    assert not isinstance(bad.value, rc.ModelError)
    with pytest.raises(ParameterTableError, match="parameter 'x' has unknown keys 'units'"):
        parse_spec("x", {"type": "double", "default_value": 1.0, "units": "s"})
    with pytest.raises(rc.ModelParameterError, match="unknown joint 'elbow'") as side:
        apply_drive_parameters(model, {"joints": {"elbow": {"armature": 1.0}}})
    assert isinstance(side.value, rc.ModelError)


def test_the_diagnostics_window_names_its_parameter() -> None:
    """On main: a plain ValueError('window must be > 0 s, got 0.0')."""
    with pytest.raises(ParameterError, match=r"parameter 'diagnostics_window' must be > 0 s"):
        SlidingWindow(0.0)


def test_the_clock_rule_names_its_parameters() -> None:
    with pytest.raises(ParameterError, match=r"'clock_reset\.threshold' \(0\.0\)"):
        ClockRule(0.0, 1.0, 10.0)
    with pytest.raises(ParameterError, match=r"'clock_max_speed' \(0\.5\) finite and >= 1"):
        ClockRule(1.0, 1.0, 0.5)


def test_a_status_that_is_no_rejection_is_named_with_the_valid_ones() -> None:
    """On main: a plain ValueError('intake status 1 is not a rejection')."""
    idx = np.zeros((2, 0), dtype=np.int64)
    empty = array("d")
    args = ("gravity", [], ("a",), empty, empty, idx, (), 0.0, 0.0, 0.0, 0.0)
    found = rejection(NON_FINITE, *args)
    assert found is not None and found[0] == "non_finite"  # a rejection: worded
    with pytest.raises(IntakeStatusError) as error:
        rejection(MERGED, *args)
    text = str(error.value)
    assert f"intake status {MERGED} is not a rejection; valid: " in text
    assert all(f"'{name} ({code})'" in text for name, code in REJECTIONS.items())
    assert isinstance(error.value, ControlError) and isinstance(error.value, rc.RneaError)


def test_control_simulation_and_the_parameters_raise_typed_errors() -> None:
    files = [*(PACKAGE / "control").rglob("*.py"), *(PACKAGE / "simulation").rglob("*.py"),
             PACKAGE / "parameters.py", PACKAGE / "values.py", PACKAGE / "nodes" / "parameters.py",
             Path(parameter_errors.__file__)]
    assert len(files) > 40
    found = [hit for path in files for hit in plain_raises(path)]
    assert not found, found
