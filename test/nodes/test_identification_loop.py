"""Identification in closed loop (issue 15), shortened: the embedded simulator runs a "true"
arm7 (masses +-20 %, centres of mass moved by up to 3 cm, Coulomb and viscous friction) while
the controller uses the nominal URDF. An excitation trajectory from ``rnea-identify excite``
is executed by ``inverse_dynamics`` over DDS; the simulator's joint states (effort = applied
torque) and the commands are written to a bag; ``rnea-identify`` identifies; the controller
restarts with the identified URDF and drive file. Gravity-mode hold drift and
``inverse_dynamics`` tracking RMS improve by >= 10x over the nominal URDF."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.identification.cli import main as identify
from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid
from rnea_ros.planning.output import read_trajectory
from rnea_ros.samples import sample_urdf

NOMINAL = Path(sample_urdf("arm7"))
MODEL = load_urdf(NOMINAL)
GAINS = {"kp": [60.0, 60.0, 60.0, 60.0, 20.0, 20.0, 10.0],
         "kd": [8.0, 8.0, 8.0, 4.0, 1.0, 1.0, 0.5]}
RNG = np.random.default_rng(11)
COULOMB = RNG.uniform(0.2, 0.8, 7).round(3)
VISCOUS = RNG.uniform(0.1, 0.4, 7).round(3)


def true_urdf(text: str, seed: int = 5) -> str:
    """Every ``<inertial>``: mass x U(0.8, 1.2), COM moved by U(-3, 3) cm per axis."""
    rng = np.random.default_rng(seed)

    def change(block: re.Match[str]) -> str:
        inner = block.group(0)
        mass = float(re.search(r'<mass value="([^"]+)"', inner).group(1))  # type: ignore[union-attr]
        xyz = re.search(r'<origin xyz="([^"]+)"', inner)
        com = np.array(xyz.group(1).split(), dtype=float) + rng.uniform(-0.03, 0.03, 3)  # type: ignore[union-attr]
        inner = re.sub(r'<mass value="[^"]+"', f'<mass value="{mass * rng.uniform(0.8, 1.2):.6f}"',
                       inner)
        return re.sub(r'<origin xyz="[^"]+"', '<origin xyz="{:.6f} {:.6f} {:.6f}"'.format(*com),
                      inner, count=1)

    return re.sub(r"<inertial>.*?</inertial>", change, text, flags=re.S)


def write_bag(path: Path, names: list[str], states: list[tuple[float, list[float], list[float],
              list[float]]], commands: list[tuple[float, list[float]]]) -> None:
    """``/joint_states`` (position, velocity, effort) and the commands, as a rosbag2 (MCAP)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    JS, Header, Time = (ts.types[k] for k in ("sensor_msgs/msg/JointState",
                                              "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    Multi, Layout = ts.types["std_msgs/msg/Float64MultiArray"], ts.types[
        "std_msgs/msg/MultiArrayLayout"]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        state_topic = writer.add_connection("/joint_states", JS.__msgtype__, typestore=ts)
        command_topic = writer.add_connection("/effort_controller/commands", Multi.__msgtype__,
                                              typestore=ts)
        for t, q, qd, effort in states:
            sec = int(t)
            msg = JS(header=Header(stamp=Time(sec=sec, nanosec=round((t - sec) * 1e9)),
                                   frame_id=""), name=names, position=np.array(q),
                     velocity=np.array(qd), effort=np.array(effort))
            writer.write(state_topic, round(t * 1e9), ts.serialize_cdr(msg, JS.__msgtype__))
        for t, data in commands:
            msg = Multi(layout=Layout(dim=[], data_offset=0), data=np.array(data))
            writer.write(command_topic, round(t * 1e9) + 1,
                         ts.serialize_cdr(msg, Multi.__msgtype__))


def simulator(truth: str, q0: np.ndarray) -> dict[str, object]:
    return {"robot_description": truth, "initial_positions": q0.tolist(),
            "friction": COULOMB.tolist(), "damping": VISCOUS.tolist()}


def excite_and_record(truth: str, trajectory: Path, bag: Path) -> None:
    names, t, q, qd, qdd = read_trajectory(trajectory)
    controller = {"urdf_path": str(NOMINAL), "watchdog_timeout": 1.0, "mode": "inverse_dynamics",
                  **GAINS}
    states: list[tuple[float, list[float], list[float], list[float]]] = []
    commands: list[tuple[float, list[float]]] = []
    with ClosedLoop(controller, simulator(truth, q[0])) as loop:
        loop.probe.create_subscription(
            JointState, "joint_states", lambda m: states.append(
                (m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, list(m.position),
                 list(m.velocity), list(m.effort))) if m.effort else None, 1000)
        loop.probe.create_subscription(
            Float64MultiArray, "effort_controller/commands",
            lambda m: commands.append((loop.sim_time, list(m.data))), 1000)
        assert loop.run_for(0.3)
        ctl = loop.controller.controller if loop.controller else None
        assert ctl is not None
        loop.probe.send_trajectory(names, t, q, qd, qdd)
        assert loop.spin_until(lambda: ctl.reference.trajectory is not None, 5.0)
        assert loop.run_for(float(t[-1]) + 0.3, wall_timeout=120.0)
    assert len(states) > 0.9 * 1000 * t[-1]
    write_bag(bag, names, states, commands)


def hold_and_track(truth: str, urdf: Path, drives: Path | None, q0: np.ndarray
                   ) -> tuple[float, float]:
    """Gravity mode holds ``q0`` for 1 s (drift), then ``inverse_dynamics`` with friction
    compensation tracks a 0.3 rad, 0.5 Hz sinusoid for 2 s (RMS). (Gravity mode compensates
    no friction: at the measured velocity it would cancel the friction that holds the arm.)"""
    controller = {"urdf_path": str(urdf), "watchdog_timeout": 1.0, "mode": "gravity",
                  **GAINS}
    if drives is not None:
        controller["drives_file"] = str(drives)
    with ClosedLoop(controller, simulator(truth, q0)) as loop:
        assert loop.run_for(1.0, wall_timeout=60.0)
        drift = float(np.abs(loop.probe.recording.q[-1] - q0).max())
        assert all(r.successful for r in loop.set_controller_parameters(
            {"mode": "inverse_dynamics", "friction_compensation": True}))
        _, error, _ = track_sinusoid(loop, loop.probe.recording.q[-1], 0.3, np.pi, 2.0)
    return drift, float(np.sqrt(np.mean(error**2)))


def test_excite_record_identify_reload_improves_hold_and_tracking_tenfold(tmp_path: Path
                                                                           ) -> None:
    truth = true_urdf(NOMINAL.read_text())
    trajectory = tmp_path / "excitation.yaml"
    assert identify(["excite", "--urdf", str(NOMINAL), "--out", str(trajectory),
                     "--frequency", "0.2", "--harmonics", "4",
                     "--torque-fraction", "0.6", "--acceleration", "4", "--periods", "2",
                     "--limits", "velocity=1.5"]) == 0
    bag = tmp_path / "bag"
    excite_and_record(truth, trajectory, bag)
    out = tmp_path / "ident"
    assert identify([str(bag), "--urdf", str(NOMINAL), "--out", str(out), "--no-plots",
                     "--validation", "0.15", "--rate", "40", "--cutoff", "20"]) == 0
    mid = 0.5 * (MODEL.lower_limit + MODEL.upper_limit)
    q0 = np.random.default_rng(2).uniform(mid - 0.4, mid + 0.4)
    before = hold_and_track(truth, NOMINAL, None, q0)
    after = hold_and_track(truth, out / "robot_identified.urdf", out / "drives_identified.yaml",
                           q0)
    print(f"hold drift {before[0]:.3e} -> {after[0]:.3e} rad, "
          f"tracking RMS {before[1]:.3e} -> {after[1]:.3e} rad")
    assert after[0] * 10 <= before[0], (before, after)
    assert after[1] * 10 <= before[1], (before, after)
