"""The demo's last line (issue 35 §11): a FAIL names each failed criterion with its
value and its bound, not every criterion; a PASS lists none. Old main printed "FAIL:"
followed by the whole list of criteria, passed or not (the elastic arm's 6.36 rad error
had to be found in the log above)."""

from __future__ import annotations

import math

from rnea_ros.demo import Check, verdict

CHECKS = [Check("gravity hold drift", 2.1e-4, "<", 1e-3, "rad"),
          Check("elastic arm max link error", 6.36, "<", 1e-3, "rad"),
          Check("rocking base drift without the IMU", 0.2, ">", 0.05, "rad"),
          Check("identification: hold drift improvement", 9.5, ">=", 10.0, "x")]


def test_a_fail_names_each_failed_criterion_with_its_value_and_only_those() -> None:
    line = verdict(CHECKS, "everything held")
    assert line.startswith("FAIL (2 of 4 criteria): ")
    assert "elastic arm max link error 6.36 rad (needs < 0.001 rad)" in line
    assert "identification: hold drift improvement 9.5 x (needs >= 10 x)" in line
    assert "gravity hold drift" not in line and "rocking" not in line
    assert "everything held" not in line


def test_a_pass_is_the_summary_and_nan_never_passes() -> None:
    passed = [c for c in CHECKS if c.ok]
    assert len(passed) == 2 and verdict(passed, "everything held") == "PASS: everything held"
    for op in ("<", "<=", ">", ">="):
        assert not Check("x", math.nan, op, 1.0).ok
    assert Check("x", 1.0, "<=", 1.0).ok and not Check("x", 1.0, "<", 1.0).ok
