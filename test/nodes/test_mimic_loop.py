"""arm7_gripper (finger_joint2 mimics finger_joint1, multiplier -1) in closed loop over
DDS: held in gravity and inverse-dynamics modes with the follower on joint_states and
without it; a follower published with a wrong value is reported on /diagnostics, never
a crash; a follower in 'joints' stops either node at start with one line."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from rnea_ros.core.errors import ParameterError
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop, overrides, track_sinusoid
from rnea_ros.nodes.simulator import SimulatorNode
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7_gripper.urdf"
MODEL = load_urdf(sample_urdf("arm7_gripper"))
Q0 = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.6, 0.7, 0.02])
GAINS = {"kp": [60.0, 60.0, 60.0, 60.0, 20.0, 20.0, 10.0, 200.0],
         "kd": [8.0, 8.0, 8.0, 4.0, 1.0, 1.0, 0.5, 2.0]}
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 1.0, **GAINS}


def simulator(followers: bool) -> dict:
    return {"urdf_path": URDF, "initial_positions": Q0.tolist(),
            "publish_mimic_joints": followers}


def states(loop: ClosedLoop) -> np.ndarray:
    return np.array(loop.probe.recording.q)


@pytest.mark.parametrize("followers", [True, False], ids=["with_follower", "without"])
def test_gravity_mode_holds_arm7_gripper(followers: bool) -> None:
    with ClosedLoop(CONTROLLER, simulator(followers)) as loop:
        assert loop.run_for(2.0)
        q = states(loop)
        assert q.shape[1] == (9 if followers else 8)  # the simulator publishes the follower
        assert float(np.abs(q[:, :8] - Q0).max()) < 1e-3
        if followers:
            assert np.array_equal(q[:, 8], -q[:, 7])  # finger_joint2 = -finger_joint1
        c = loop.controller.controller
        assert c.commands + loop.controller.intake.shed >= 1990 and sum(c.rejected.values()) == 0
        assert all(len(command) == 8 for command in loop.probe.recording.commands)
        assert c.mimic_mismatches == 0
        assert c.mimic_checks >= (c.commands if followers else 0)
        assert c.mimic_checks <= (c.accepted if followers else 0)


@pytest.mark.parametrize("followers", [True, False], ids=["with_follower", "without"])
def test_inverse_dynamics_tracks_arm_and_finger(followers: bool) -> None:
    """0.2 rad on the arm, 5 mm on the finger at 0.5 Hz: the finger's feedforward moves
    both fingers' 30 g (the follower's inertia through the coupling)."""
    amplitude = np.array([0.2] * 7 + [0.005])
    with ClosedLoop({**CONTROLLER, "mode": "inverse_dynamics"}, simulator(followers)) as loop:
        assert loop.run_for(0.05)
        t, error, _ = track_sinusoid(loop, Q0, amplitude, 2 * np.pi * 0.5, 3.0)
        assert t.size > 2500
        rms = np.sqrt(np.mean(error[:, :8] ** 2, axis=0))
        assert rms[:7].max() < 1e-3 and rms[7] < 1e-4, rms
        c = loop.controller.controller
        assert sum(c.rejected.values()) == 0 and c.mimic_mismatches == 0


def test_a_follower_published_wrong_is_a_diagnostics_warning() -> None:
    """The probe plays the robot's driver, with finger_joint2 = +finger_joint1 (the sign
    of the URDF's coupling wrong): every state is still used, the mismatch counted and
    reported as WARN on /diagnostics with the follower and its deviation."""
    with ClosedLoop({**CONTROLLER, "diagnostics_period": 0.2, "use_sim_time": False},
                    None) as loop:
        pub = loop.probe.state_pub
        loop.spin_until(lambda: pub.get_subscription_count() >= 1, 5.0)
        commands = loop.probe.recording.commands
        for k in range(20):
            msg = JointState(name=[*MODEL.joint_names, "finger_joint2"],
                             position=[*Q0, +Q0[7]], velocity=[0.0] * 9)
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100, k * 1_000_000
            pub.publish(msg)
            loop.spin_until(lambda n=k: len(commands) > n, 5.0)
        c = loop.controller.controller
        assert len(commands) == 20 and c.mimic_mismatches == 20
        assert sum(c.rejected.values()) == 0
        diagnostics = loop.probe.recording.diagnostics

        def warned() -> bool:
            return any("mimic follower off its coupling" in s.message
                       for d in diagnostics for s in d.status
                       if "rnea_controller" in s.name)
        assert loop.spin_until(warned, 5.0)
        status = next(s for d in diagnostics for s in d.status
                      if "mimic follower off its coupling" in s.message)
        assert status.level == b"\x01"  # WARN
        values = {kv.key: kv.value for kv in status.values}
        assert values["mimic mismatches"] == "20"
        assert values["mimic worst deviation"] == "finger_joint2: +0.04"
        assert values["mimic followers"] == "finger_joint2 = -1 finger_joint1 + 0"


def test_a_follower_in_the_simulators_joints_is_refused() -> None:
    params = {**simulator(True), "joints": [*MODEL.joint_names[:7], "finger_joint2"]}
    with ClosedLoop(None, None) as loop:
        with pytest.raises(ParameterError, match="'finger_joint2' follows 'finger_joint1'"):
            SimulatorNode(context=loop.context, parameter_overrides=overrides(params))


def test_a_follower_in_the_controllers_joints_stops_it_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rnea_ros.nodes.controller", "--ros-args", "-p",
         f"urdf_path:={URDF}", "-p", "joints:=[joint1, finger_joint2]"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "'finger_joint2' follows 'finger_joint1'" in output and "Traceback" not in output
    assert sum("cannot start" in line for line in output.splitlines()) == 1
