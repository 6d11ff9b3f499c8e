"""The demo's contact phase (:mod:`rnea_ros.nodes.contact_loop`) over DDS in lockstep:
arm7 on MuJoCo tracking in ``inverse_dynamics``, thresholds calibrated on the same
contact-free motion, a 30 N push on link4: no false contact, detected within 30 ms,
isolated to link4, joint torques within 10 % of ``J^T F`` at their peak and the force
within 3 N (10 %), every command step within the slew limit, the arm still (below
0.01 rad/s) from 0.5 s after the push began; and the demo's checks built from it pass."""

from __future__ import annotations

import pytest

from rnea_ros.nodes.contact_loop import FORCE, LINK, RATE, contact_loop

pytest.importorskip("mujoco")


def test_push_on_the_tracking_arm_detected_estimated_and_held() -> None:
    o = contact_loop(namespace="contact_test")
    print(o)
    assert o.false_contacts == 0
    assert o.detected and 0.0 <= o.delay <= 0.03
    assert o.link == LINK
    assert o.torque_error <= 0.10
    assert o.force_error <= 0.10 * FORCE
    assert o.max_step <= RATE * 1e-3 * (1 + 1e-6)
    assert o.speed_before > 0.05  # (the arm was moving: a hold that did something)
    assert o.speed_after < 0.01
