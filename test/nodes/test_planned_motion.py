"""A minimum-time plan (rnea_ros.planning) executed by the controller's ``inverse_dynamics``
mode in the embedded simulator, over DDS: tracked, with the commanded |tau| and |tau_dot|
within the limits and the controller's saturation and slew stages idle."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.planning import Limits, plan_min_time
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
MID = 0.5 * (MODEL.lower_limit + MODEL.upper_limit)
Q0 = np.random.default_rng(3).uniform(MID - 0.5, MID + 0.5)
Q1 = np.clip(Q0 + np.array([0.6, -0.4, 0.5, 0.5, -0.6, 0.4, 0.8]),
             MODEL.lower_limit + 0.1, MODEL.upper_limit - 0.1)
GAINS = {"kp": [60.0, 60.0, 60.0, 60.0, 20.0, 20.0, 10.0],
         "kd": [8.0, 8.0, 8.0, 4.0, 1.0, 1.0, 0.5]}
RATE = 1000.0  # N m/s: the controller's effort_rate_limits (config/controller.yaml)
# The plan keeps 10 % of the torque and 30 % of the rate for the feedback terms.
LIMITS = Limits.from_model(MODEL, torque=0.9 * MODEL.effort_limit, torque_rate=0.7 * RATE)


def test_planned_minimum_time_motion_is_tracked_within_the_limits() -> None:
    plan = plan_min_time(MODEL, [Q0, Q1], LIMITS)
    assert plan.check.torque <= 1.0 and plan.check.torque_rate <= 1.0
    t, q, qd, qdd = plan.sample(0.002)
    controller = {"urdf_path": URDF, "watchdog_timeout": 1.0, "mode": "inverse_dynamics",
                  "effort_rate_limits": [RATE], **GAINS}
    with ClosedLoop(controller, {"urdf_path": URDF, "initial_positions": Q0.tolist()}) as loop:
        assert loop.run_for(0.05)
        ctl = loop.controller.controller if loop.controller else None
        assert ctl is not None
        assert loop.run_for(0.2)  # the slew limiter ramps the first command up from zero
        assert ctl.slew is not None
        idle = (ctl.saturated, ctl.slew.limited)
        loop.probe.send_trajectory(MODEL.joint_names, t, q, qd, qdd)
        assert loop.spin_until(lambda: ctl.reference.trajectory is not None, 5.0)
        start = float(ctl.reference.trajectory.times[0])
        commands_before = len(loop.probe.recording.commands)
        assert loop.run_for(plan.T + 0.3, wall_timeout=60.0)
        rec = loop.probe.recording
        times = np.array(rec.t)
        mask = (times > start) & (times < start + plan.T)
        error = np.array(rec.q)[mask] - plan.spline.derivatives(times[mask] - start, 0)[0]
        final = np.abs(rec.q[-1] - Q1).max()
        commands = np.array(rec.commands[commands_before:])
        stages = (ctl.saturated - idle[0], ctl.slew.limited - idle[1])
    assert np.abs(error).max() < 5e-3, np.abs(error).max()
    assert final < 2e-3, final
    assert np.all(np.abs(commands) <= MODEL.effort_limit)
    # The slew stage is idle: every command step stays clear of rate * dt, so the limiter
    # changed nothing, and its counter says so.
    rate = np.abs(np.diff(commands, axis=0)).max() / 1e-3  # 1 kHz lockstep
    assert rate <= 0.95 * RATE, rate
    assert stages == (0, 0)  # saturation and slew idle
