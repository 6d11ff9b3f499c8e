"""The rate-limiter node's logic without ROS (rnea_ros.control.effort_limiter): efforts
picked by name, clipped and slew-limited; bad inputs rejected and counted; a clock
reset found after clock_reset.count agreeing out-of-order stamps; the start-up
parameters validated naming the parameter; the diagnostics status."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.effort_limiter import EffortLimiter
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import defaults, load_table

VALUES = {**defaults(load_table("rate_limiter")), "joints": ["a", "b"],
          "input_type": "joint_state", "effort_rate_limits": [1000.0, 500.0],
          "effort_limits": [8.0]}


def test_efforts_are_picked_by_name_clipped_and_slew_limited() -> None:
    limiter = EffortLimiter.from_parameters(VALUES)
    first = limiter.joint_state(["b", "x", "a"], [-20.0, 99.0, 1.0], 1.0, 1.0, now=0.0)
    assert first is not None and first.tolist() == [1.0, -8.0]  # b clipped to -8
    out = limiter.joint_state(["a", "b"], [5.0, 8.0], 1.002, 1.002, now=0.002)
    assert out is not None and np.allclose(out, [3.0, -7.0])  # 1000 and 500 N m/s * 2 ms
    # the receipt interval bounds the time step: stamps 10 ms apart, received 1 ms apart
    out = limiter.joint_state(["a", "b"], [5.0, 8.0], 1.012, 1.003, now=0.003)
    assert out is not None and np.allclose(out, [4.0, -6.5])


@pytest.mark.parametrize(("names", "efforts", "reason"), [
    (["a", "b"], [1.0], "length_mismatch"),
    (["a", "b", "a"], [1.0, 2.0, 3.0], "duplicate_names"),
    (["a", "c"], [1.0, 2.0], "missing_joints"),
    (["a", "b"], [math.nan, 2.0], "non_finite"),
])
def test_bad_inputs_are_rejected_and_counted(names, efforts, reason: str) -> None:
    limiter = EffortLimiter.from_parameters(VALUES)
    assert limiter.joint_state(names, efforts, 1.0, 1.0, now=0.0) is None
    assert limiter.rejected == {reason: 1} and reason in limiter.message
    assert limiter.status(1, 10.0)[:2] == ("warn", "rejecting some inputs (1 in the last 10 s)")
    assert limiter.status(0, 10.0)[0] == "ok"


def test_agreeing_backward_stamps_are_a_clock_reset() -> None:
    limiter = EffortLimiter.from_parameters({**VALUES, "clock_reset.count": 3})
    assert limiter.joint_state(["a", "b"], [0.0, 0.0], 100.0, 100.0, now=0.0) is not None
    held = [limiter.joint_state(["a", "b"], [5.0, 0.0], 1.0 + 0.001 * k, 100.0 + 0.001 * k,
                                now=0.001 * k) for k in (1, 2)]
    assert [h.tolist() for h in held if h is not None] == [[0.0, 0.0], [0.0, 0.0]]
    assert limiter.slew.bad_dt == 2 and limiter.clock_resets == 0 and not limiter.event
    out = limiter.joint_state(["a", "b"], [5.0, 0.0], 1.003, 100.003, now=0.003)
    assert limiter.clock_resets == 1 and "clock reset" in limiter.event
    assert out is not None and 0.0 < out[0] <= 1000.0 * 0.003 + 1e-9


@pytest.mark.parametrize(("changes", "message"), [
    ({"joints": [""]}, "parameter 'joints'"),
    ({"effort_rate_limits": [0.0]}, "parameter 'effort_rate_limits'"),
    ({"effort_limits": [1.0, -1.0]}, "parameter 'effort_limits'"),
    ({"input_type": "wrench"}, "parameter 'input_type' is 'wrench'; valid: 'array'"),
    ({"clock_reset.count": 1}, "parameter 'clock_reset.count' must be >= 2, got 1"),
])
def test_bad_parameters_name_the_parameter(changes, message: str) -> None:
    with pytest.raises(ParameterError, match="parameter") as error:
        EffortLimiter.from_parameters({**VALUES, **changes})
    assert message in str(error.value)
