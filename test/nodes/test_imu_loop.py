"""A rocking base in closed loop over DDS (issue 12 §3): the simulator rocks and heaves
arm7's base and publishes the IMU, the controller compensates with it.

The simulator's joints follow our moving-base dynamics (checked against Pinocchio's
free-flyer in test/test_simulation.py); its IMU readings come from Pinocchio's
free-flyer kinematics, not our code; the controller's torques are cross-checked live
against Pinocchio (``oracle.enable``)."""

from __future__ import annotations

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ARM7_GAINS, ROCKING_BASE, ClosedLoop, track_sinusoid
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
MID = 0.5 * (MODEL.lower_limit + MODEL.upper_limit)
Q0 = np.random.default_rng(3).uniform(MID - 0.5, MID + 0.5)
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 1.0, "imu.topic": "imu",
              "diagnostics_period": 0.2}


def simulator(**extra):
    return {"urdf_path": URDF, "initial_positions": Q0.tolist(), **ROCKING_BASE, **extra}


def deviation(loop: ClosedLoop, since: float = -1.0) -> float:
    t = np.array(loop.probe.recording.t)
    q = np.array(loop.probe.recording.q)
    return float(np.abs(q[t > since] - Q0).max())


def status(loop: ClosedLoop, name: str) -> tuple[bytes, dict[str, str]] | None:
    for array in reversed(loop.probe.recording.diagnostics):
        for s in array.status:
            if s.name == ("/rnea_controller" if name == "torque computation" else
                           f"/rnea_controller: {name}"):
                return s.level, {v.key: v.value for v in s.values}
    return None


def test_rocking_base_held_with_the_imu_and_checked_against_pinocchio() -> None:
    """+-5 deg of roll at 0.5 Hz and 5 cm of heave: the arm stays within 1e-3 rad of its
    start pose relative to the base for 3 s; the torques agree with Pinocchio's
    free-flyer (live oracle)."""
    with ClosedLoop({**CONTROLLER, "oracle.enable": True, "oracle.every_n": 50},
                    simulator()) as loop:
        assert loop.run_for(3.0)
        c = loop.controller.controller
        held = deviation(loop)
        print(f"rocking base, gravity mode with the IMU: max deviation {held:.2e} rad over 3 s")
        assert held < 1e-3
        assert c.imu.fallback_steps == 0 and c.imu.fresh_steps >= 2990
        assert sum(c.imu.rejected.values()) == 0 and sum(c.rejected.values()) == 0
        assert c.oracle_checks >= 50 and c.oracle_discrepancy < 1e-9, c.oracle_discrepancy
        assert loop.spin_until(lambda: status(loop, "imu") is not None, 5.0)
        level, values = status(loop, "imu")
        assert level == b"\x00" and values["imu state"] == "ok"
        assert abs(float(values["base |f| [m/s^2]"]) - 9.81) < 0.6  # heave: +-0.49


def test_without_the_imu_the_arm_drifts() -> None:
    with ClosedLoop({**CONTROLLER, "imu.topic": ""}, simulator()) as loop:
        assert loop.run_for(2.0)
        drift = deviation(loop)
        print(f"rocking base, gravity mode without the IMU: max deviation {drift:.2e} rad")
        assert drift > 0.05
        assert loop.controller.controller.imu is None


@pytest.mark.parametrize("case", ["flange", "no orientation"])
def test_imu_on_a_moving_link_or_without_orientation(case: str) -> None:
    """On the flange, the link's motion relative to the base is removed (orientation and
    angular velocity; the accelerometer is not used there, so no heave); a 6-axis IMU
    (orientation covariance -1, REP-145): the specific force alone."""
    if case == "flange":
        sim = simulator(**{"imu.link": "flange", "base_motion.heave_amplitude": 0.0,
                           "base_motion.pitch_amplitude": 0.05,
                           "base_motion.pitch_frequency": 0.3})
        ctl = {**CONTROLLER, "imu.link": "flange", "imu.frame_id": "flange"}
    else:
        sim = simulator(**{"imu.orientation": False})
        ctl = CONTROLLER
    with ClosedLoop(ctl, sim) as loop:
        assert loop.run_for(2.0)
        c = loop.controller.controller
        held = deviation(loop)
        print(f"{case}: max deviation {held:.2e} rad over 2 s")
        assert held < 1e-3
        assert c.imu.fallback_steps == 0 and not c.imu.rejected
        assert (c.imu.estimate.R_wb is None) == (case == "no orientation")
        assert c.imu.config.linear_acceleration == ("ignore" if case == "flange" else "measured")


@pytest.mark.parametrize("fallback", ["fixed_gravity", "hold"])
def test_imu_stops_mid_run_then_recovers(fallback: str) -> None:
    """The IMU stops for 0.5 s: stale after imu.timeout, the fallback (WARN: the model's
    gravity; ERROR: the watchdog's stale command), reported; it resumes: compensation
    again, diagnostics back to OK."""
    with ClosedLoop({**CONTROLLER, "imu.fallback": fallback}, simulator()) as loop:
        assert loop.run_for(1.0)
        c = loop.controller.controller
        assert c.imu.state == "ok"
        sim = loop.simulator
        sim.publish_imu = lambda sec, nanosec: None  # the IMU falls silent
        assert loop.run_for(0.5)
        assert c.imu.state == "stale" and c.imu.stale_events == 1
        assert 350 <= c.imu.fallback_steps <= 500  # 0.5 s less imu.timeout (0.1 s)
        if fallback == "hold":  # g(q) on a fixed base at one of the last poses the probe saw
            last = loop.probe.recording.commands[-1]
            assert min(np.abs(last - rc.gravity_torques(MODEL, q)).max()
                       for q in loop.probe.recording.q[-5:]) < 1e-9
        assert loop.spin_until(lambda: (s := status(loop, "imu")) is not None and
                               s[1]["imu state"] == "stale", 5.0)
        level = status(loop, "imu")[0]
        assert level == (b"\x02" if fallback == "hold" else b"\x01")
        assert loop.spin_until(lambda: (s := status(loop, "torque computation")) is not None
                               and s[0] == level, 5.0)  # the computation reports it too
        commands = np.array(loop.probe.recording.commands)
        assert np.all(np.isfinite(commands)) and np.all(np.abs(commands) <= MODEL.effort_limit)
        del sim.publish_imu  # back
        fallback_steps = c.imu.fallback_steps
        assert loop.run_for(0.5)
        # (the first state after the pause may be taken before its IMU sample)
        assert c.imu.state == "ok" and c.imu.fallback_steps <= fallback_steps + 2
        assert loop.spin_until(lambda: (s := status(loop, "imu")) is not None and
                               s[0] == b"\x00", 5.0)


def test_inverse_dynamics_on_a_rocking_base() -> None:
    """A 0.3 rad, 0.5 Hz sinusoid relative to the rocking base: tracked 5x better with
    the IMU's base motion in the feedforward than without; the feedforward agrees with
    Pinocchio (live oracle: its free-flyer with the IMU's base motion)."""
    rms = {}
    for topic in ("imu", ""):
        with ClosedLoop({**CONTROLLER, "imu.topic": topic, "mode": "inverse_dynamics",
                         "oracle.enable": True, "oracle.every_n": 50, **ARM7_GAINS},
                        simulator()) as loop:
            assert loop.run_for(0.05)
            _, error, _ = track_sinusoid(loop, Q0, 0.3, np.pi, 2.0)
            rms[topic] = float(np.sqrt(np.mean(error**2)))
            c = loop.controller.controller  # the feedforward against Pinocchio's free-flyer
            assert c.oracle_checks >= 30 and c.oracle_discrepancy < 1e-9, c.oracle_discrepancy
    print(f"inverse_dynamics on the rocking base: tracking RMS {rms['imu']:.2e} rad with the "
          f"IMU, {rms['']:.2e} without")
    assert rms["imu"] < 1e-3 and rms[""] > 5 * rms["imu"]


def test_the_launch_arguments_parameters_validate() -> None:
    """sim.launch.py's rocking:= and imu:= parameters are the nodes' (the launch test
    checks the tables; here they run)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "launch" / "sim.launch.py"
    spec = importlib.util.spec_from_file_location("sim_launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with ClosedLoop({**CONTROLLER, **module.IMU["rnea_controller"]},
                    {"urdf_path": URDF, "initial_positions": Q0.tolist(), **module.ROCKING,
                     **module.IMU["rnea_simulator"]}) as loop:
        assert loop.run_for(1.0)
        assert deviation(loop) < 1e-3
        R, _ = loop.simulator.base.pose(0.5)  # the roll's crest
        assert abs(R[2, 1]) > 0.05  # it does rock


@pytest.mark.parametrize(("node", "params", "message"), [
    ("controller", ["-p", "imu.topic:=imu", "-p", "imu.link:=imu_link"],
     "parameter 'imu.link': unknown link 'imu_link' in model 'arm7'; valid links: 'world', "
     "'link0', 'link1', 'link2', 'link3', 'link4', 'link5', 'link6', 'link7', 'flange'"),
    ("controller", ["-p", "imu.topic:=imu", "-p", "imu.link:=link4", "-p",
                    "imu.linear_acceleration:=measured"], "moves with the joints"),
    ("simulator", ["-p", "imu.enable:=true", "-p", "imu.link:=imu_link"],
     "parameter 'imu.link': unknown link 'imu_link'"),
    ("simulator", ["-p", "base_motion.roll_amplitude:=.nan"],
     "'roll_amplitude' must be finite"),
])
def test_bad_imu_startup_parameters_exit_with_one_line(node: str, params: list[str],
                                                       message: str) -> None:
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", f"rnea_ros.nodes.{node}", "--ros-args", "-p",
         f"urdf_path:={URDF}", *params], capture_output=True, text=True, timeout=60,
        env=dict(os.environ), check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert message in output and "Traceback" not in output
    assert sum("cannot start" in line for line in output.splitlines()) == 1
