"""Closed-loop robots over DDS (loopback, in-process): the five-bar's own launch files
(``config/five_bar_*.yaml``: controller on the active joints, the embedded simulator in
Pinocchio's constrained dynamics publishing active and passive joints) hold and track in
a namespace; passive encoders published with a wrong value are reported; a singular state
is rejected without a non-finite command, the watchdog holds, good states recover; a loop
file naming an unknown link ends the node at start with one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from sensor_msgs.msg import JointState
from test_multi_robot import launch_parameters

import rnea_ros.core as rc
from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid
from rnea_ros.samples import load_loop_robot

FIVE_BAR = load_loop_robot("five_bar")
ACTIVE = list(FIVE_BAR.active_names)
EVERYTHING = ACTIVE + list(FIVE_BAR.passive_names)
URDF = "package://rnea_ros/urdf/five_bar.urdf"
SINGULAR = np.array([np.pi - 2.260904310996017, -0.8806883425937764])  # stretched
HOLD_TOLERANCE = 1e-6  # rad, every joint (active and passive) over the hold
TRACK_TOLERANCE = 5e-4  # rad, active joints, whole motion


def state(t: float, position, names=EVERYTHING) -> JointState:
    msg = JointState()
    msg.header.stamp.sec = int(t)
    msg.header.stamp.nanosec = round((t - int(t)) * 1e9)
    msg.name = list(names)
    msg.position = [float(x) for x in position]
    msg.velocity = [0.0] * len(names)
    return msg


def controller_status(loop: ClosedLoop) -> tuple[object, dict[str, str]]:
    for array in reversed(loop.probe.recording.diagnostics):
        for s in array.status:
            if "rnea_controller" in s.name:
                return s, {v.key: v.value for v in s.values}
    return None, {}


def test_five_bar_holds_then_tracks_in_a_namespace() -> None:
    """sim.launch.py robot:=five_bar namespace:=five: gravity mode holds the start pose
    (active and passive joints within HOLD_TOLERANCE, 3 s), then inverse_dynamics
    (switched at runtime) tracks a 0.15 rad, 0.5 Hz cosine on both motors; the live
    oracle (Pinocchio's constrained dynamics) agrees with every 50th torque."""
    controller, simulator = launch_parameters("five_bar")
    assert simulator["publish_passive"] and controller["mode"] == "gravity"
    q0 = rc.solve_loops(FIVE_BAR, simulator["initial_positions"])
    oracle = {"oracle.enable": True, "oracle.every_n": 50}
    with ClosedLoop({**controller, "diagnostics_period": 0.2, **oracle}, simulator,
                    namespace="five") as loop:
        assert loop.simulator.state_pub.topic_name == "/five/joint_states"
        assert loop.controller.command_pub.topic_name == "/five/effort_controller/commands"
        assert loop.run_for(3.0)
        recorded = np.array(loop.probe.recording.q)
        assert recorded.shape[1] == 4  # active, then passive joints
        expected = np.r_[q0[FIVE_BAR.active_index], q0[FIVE_BAR.passive_index]]
        assert np.abs(recorded - expected).max() < HOLD_TOLERANCE
        c = loop.controller.controller
        assert c.commands + loop.controller.intake.shed >= 2990 and sum(c.rejected.values()) == 0
        assert c.passive_checks + loop.controller.intake.shed >= 2990
        assert c.passive_deviation_max < HOLD_TOLERANCE
        status, values = controller_status(loop)
        assert status is not None and status.level == DiagnosticStatus.OK, values
        assert values["closed loops"] == "tool_pin"
        assert float(values["passive encoder max deviation [rad or m]"]) < HOLD_TOLERANCE
        assert c.oracle_checks >= min(59, c.commands // 50 - 1) and c.oracle_discrepancy < 1e-12

        result = loop.set_controller_parameters({"mode": "inverse_dynamics"})[0]
        assert result.successful, result.reason
        q_hold = recorded[-1, :2]
        t, error, _ = track_sinusoid(loop, q_hold, 0.15, np.pi, 3.0)
        assert t.size > 2900
        assert np.abs(error).max() < TRACK_TOLERANCE, np.abs(error).max()
        assert sum(c.rejected.values()) == 0 and c.saturated == 0
        assert np.all(np.isfinite(loop.probe.recording.commands))
        assert c.oracle_checks >= min(119, c.commands // 50 - 1) and c.oracle_discrepancy < 1e-9


@pytest.fixture
def fed():
    """The five-bar controller fed by the probe (no simulator)."""
    params = {"urdf_path": URDF, "watchdog_timeout": 0.3, "diagnostics_period": 0.1,
              "diagnostics_window": 0.1,  # (the report period: OK again at once)
              "loops.passive_tolerance": 0.01}
    with ClosedLoop(params, None) as closed:
        closed.spin_until(lambda: closed.probe.state_pub.get_subscription_count() >= 1, 10.0)
        yield closed


def publish_until_command(loop: ClosedLoop, msg: JointState) -> None:
    commands = loop.probe.recording.commands
    before = len(commands)
    loop.probe.state_pub.publish(msg)
    assert loop.spin_until(lambda: len(commands) > before, 5.0)


def test_passive_encoders_with_a_wrong_value_are_reported(fed: ClosedLoop) -> None:
    """The loop file is found next to urdf_path; the right elbow's encoder reads 0.05 rad
    off: /diagnostics says so (WARN, the joint and the deviation), the commands go on."""
    qa = np.array([0.1, -0.1])
    q = rc.solve_loops(FIVE_BAR, qa)
    good = np.r_[qa, q[FIVE_BAR.passive_index]]
    t = 1.0
    for _ in range(5):
        publish_until_command(fed, state(t, good))
        t += 0.01
    c = fed.controller.controller
    assert c.passive_deviation < 1e-12 and c.passive_mismatches == 0
    wrong = good + np.array([0.0, 0.0, 0.0, 0.05])
    for _ in range(30):
        publish_until_command(fed, state(t, wrong))
        t += 0.01
    assert c.passive_mismatches == 30 and c.passive_worst == "right_elbow"
    def flagged() -> list[tuple[object, dict[str, str]]]:  # the periods with mismatches
        return [(status, values) for array in fed.probe.recording.diagnostics
                for status in array.status if "rnea_controller" in status.name
                for values in [{v.key: v.value for v in status.values}]
                if values.get("passive encoder mismatches (period)", "0") != "0"]
    assert fed.spin_until(lambda: bool(flagged()), 5.0)
    status, values = flagged()[-1]
    assert status.level == DiagnosticStatus.WARN and "passive encoders disagree" in status.message
    assert values["passive encoder deviation [rad or m]"].startswith("5.000e-02 (right_elbow)")
    assert fed.spin_until(lambda: controller_status(fed)[1]["passive encoder mismatches"]
                          == "30", 5.0)
    # Correct encoders again: the next periods are OK, the totals stay.
    for _ in range(5):
        publish_until_command(fed, state(t, good))
        t += 0.01
    count = len(fed.probe.recording.diagnostics)
    assert fed.spin_until(lambda: len(fed.probe.recording.diagnostics) > count + 2, 5.0)
    status, values = controller_status(fed)
    assert status.level == DiagnosticStatus.OK and values["passive encoder mismatches"] == "30"
    assert values["passive encoder max deviation [rad or m]"] == "5.000e-02"
    assert np.allclose(fed.probe.recording.commands[-1], rc.loop_gravity(FIVE_BAR, q))


def test_a_singular_state_is_rejected_the_watchdog_holds_and_good_states_recover(
        fed: ClosedLoop) -> None:
    c = fed.controller.controller
    qa = np.array([0.1, -0.1])
    q_good = rc.solve_loops(FIVE_BAR, qa)
    commands = fed.probe.recording.commands
    publish_until_command(fed, state(1.0, qa, ACTIVE))
    before = len(commands)
    intake = fed.controller.intake
    shed = intake.shed
    for k in range(20):  # a sensor stuck at the singular (stretched) configuration
        fed.probe.state_pub.publish(state(1.01 + 0.01 * k, SINGULAR, ACTIVE))
        fed.spin_until(lambda: False, 0.005)
    # Each one rejected, or shed unread behind a newer one (a busy machine): none taken.
    assert fed.spin_until(
        lambda: c.rejected["loop_closure"] + intake.shed - shed == 20, 5.0)
    rejected = c.rejected["loop_closure"]
    assert rejected >= 1
    assert fed.spin_until(lambda: c.stale, 5.0)  # the watchdog fires after 0.3 s
    assert fed.spin_until(lambda: len(commands) > before, 5.0)
    held = np.array(commands[before:])
    assert np.all(np.isfinite(held)) and np.all(np.abs(held) <= 5.0)
    assert np.allclose(held[-1], rc.loop_gravity(FIVE_BAR, q_good), atol=1e-12)
    # A status can say 'stale' before the last rejections are handled (a busy machine):
    # wait for the one that reports both (published every diagnostics_period), then read it.
    assert fed.spin_until(lambda: controller_status(fed)[1].get("watchdog") == "stale" and
                          controller_status(fed)[1].get("rejected: loop_closure") ==
                          str(rejected), 5.0), controller_status(fed)[1]
    status, values = controller_status(fed)
    assert status.level == DiagnosticStatus.ERROR  # stale
    assert values["rejected: loop_closure"] == str(rejected)
    # Good states again: commands computed from them, the watchdog clears.
    q_new = rc.solve_loops(FIVE_BAR, qa + 0.02)
    # (not publish_until_command: while stale the watchdog publishes its hold at every
    # look, so the next command may be a hold; wait for the state to clear the watchdog)
    fed.probe.state_pub.publish(state(2.0, qa + 0.02, ACTIVE))
    assert fed.spin_until(lambda: not c.stale, 5.0)
    expected = rc.loop_gravity(FIVE_BAR, q_new)  # (its command reaches the probe next)
    assert fed.spin_until(lambda: np.allclose(commands[-1], expected, atol=1e-12), 5.0)


def start(node: str, params: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"rnea_ros.nodes.{node}", "--ros-args",
                           *params], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ), check=False)


@pytest.mark.parametrize("node", ["controller", "simulator"])
def test_a_loop_file_naming_an_unknown_link_ends_the_node_with_one_line(
        node: str, tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "urdf" / "five_bar.loops.yaml").read_text()
    bad = tmp_path / "five_bar.loops.yaml"
    bad.write_text(text.replace("link2: distal_right", "link2: distal_rihgt"))
    result = start(node, ["-p", f"urdf_path:={URDF}", "-p", f"loops_file:={bad}"])
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"loop file '{bad}'" in output and "link2 'distal_rihgt' is not a link of model " \
        "'five_bar'" in output and "distal_right" in output, output
    assert "Traceback" not in output
    assert sum("cannot start" in line for line in output.splitlines()) == 1
    # A passive joint named as commanded: one line too.
    result = start(node, ["-p", f"urdf_path:={URDF}", "-p", "joints:=[left_motor, left_elbow]"])
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "'left_elbow' passive" in output, output
