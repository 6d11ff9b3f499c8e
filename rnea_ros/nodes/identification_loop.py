"""Identification in closed loop over DDS (issue 15): the embedded simulator runs a
"true" arm7 (masses +-20 %, centres of mass moved by up to 3 cm, Coulomb and viscous
joint friction) while the controller has the nominal URDF; ``rnea-identify excite``
designs the excitation, ``inverse_dynamics`` executes it, the simulator's joint states
(effort = applied torque) and the commands go to a bag, ``rnea-identify`` identifies,
and the controller restarts with the identified files. Used by the demo (phase 7) and
``test/nodes/test_identification_loop.py``.
"""

from __future__ import annotations

import numpy as np

from rnea_ros.nodes.harness import ARM7_GAINS as GAINS
from rnea_ros.samples import load_robot, sample_urdf

# The "true" robot of phase 7: the simulator's arm7 has other masses and centres of mass and
# joint friction; the controller starts with the nominal URDF.
TRUE_COULOMB = [0.33, 0.51, 0.76, 0.42, 0.25, 0.61, 0.37]  # N m
TRUE_VISCOUS = [0.21, 0.35, 0.12, 0.28, 0.17, 0.39, 0.24]  # N m s/rad


def true_urdf(text: str, seed: int = 5) -> str:
    """``text`` with every ``<inertial>`` changed: mass x U(0.8, 1.2), COM moved by
    U(-3, 3) cm per axis (the rotational inertia about the COM kept)."""
    import re

    rng = np.random.default_rng(seed)

    def change(block: re.Match[str]) -> str:
        inner = block.group(0)
        mass = re.search(r'<mass value="([^"]+)"', inner)
        xyz = re.search(r'<origin xyz="([^"]+)"', inner)
        assert mass is not None and xyz is not None, "arm7's inertials have both"
        com = np.array(xyz.group(1).split(), dtype=float) + rng.uniform(-0.03, 0.03, 3)
        inner = re.sub(r'<mass value="[^"]+"',
                       f'<mass value="{float(mass.group(1)) * rng.uniform(0.8, 1.2):.6f}"', inner)
        return re.sub(r'<origin xyz="[^"]+"', '<origin xyz="{:.6f} {:.6f} {:.6f}"'.format(*com),
                      inner, count=1)

    return re.sub(r"<inertial>.*?</inertial>", change, text, flags=re.S)


def write_bag(path, names, states, commands) -> None:  # type: ignore[no-untyped-def]
    """``/joint_states`` (``(t, position, velocity, effort)`` tuples) and the commands
    (``(t, data)``) as a rosbag2 (MCAP) directory ``path``."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    JS, Header, Time = (ts.types[k] for k in ("sensor_msgs/msg/JointState",
                                              "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    Multi = ts.types["std_msgs/msg/Float64MultiArray"]
    Layout = ts.types["std_msgs/msg/MultiArrayLayout"]
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        state_topic = writer.add_connection("/joint_states", JS.__msgtype__, typestore=ts)
        command_topic = writer.add_connection("/effort_controller/commands", Multi.__msgtype__,
                                              typestore=ts)
        for t, q, qd, effort in states:
            sec = int(t)
            msg = JS(header=Header(stamp=Time(sec=sec, nanosec=round((t - sec) * 1e9)),
                                   frame_id=""), name=list(names), position=np.array(q),
                     velocity=np.array(qd), effort=np.array(effort))
            writer.write(state_topic, round(t * 1e9), ts.serialize_cdr(msg, JS.__msgtype__))
        for t, data in commands:
            msg = Multi(layout=Layout(dim=[], data_offset=0), data=np.array(data))
            writer.write(command_topic, round(t * 1e9) + 1,
                         ts.serialize_cdr(msg, Multi.__msgtype__))


def true_simulator(truth: str, q0: np.ndarray) -> dict[str, object]:
    return {"robot_description": truth, "initial_positions": q0.tolist(),
            "friction": TRUE_COULOMB, "damping": TRUE_VISCOUS}


def excite_and_record(truth: str, nominal: str, trajectory, bag) -> int:  # type: ignore[no-untyped-def]
    """Execute the excitation ``trajectory`` (YAML) with ``inverse_dynamics`` on the nominal
    URDF, the simulator running ``truth``; write its joint states (effort = applied torque)
    and the commands to ``bag``. Returns the number of states recorded."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from rnea_ros.nodes.harness import ClosedLoop
    from rnea_ros.planning.output import read_trajectory

    names, t, q, qd, qdd = read_trajectory(trajectory)
    controller = {"urdf_path": nominal, "watchdog_timeout": 1.0, "mode": "inverse_dynamics",
                  **GAINS}
    states: list[tuple[float, list[float], list[float], list[float]]] = []
    commands: list[tuple[float, list[float]]] = []

    def on_state(m: JointState) -> None:
        if m.effort:  # the simulator's (the probe publishes none)
            states.append((m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec,
                           list(m.position), list(m.velocity), list(m.effort)))

    with ClosedLoop(controller, true_simulator(truth, q[0])) as loop:
        loop.probe.create_subscription(JointState, "joint_states", on_state, 1000)
        loop.probe.create_subscription(
            Float64MultiArray, "effort_controller/commands",
            lambda m: commands.append((loop.sim_time, list(m.data))), 1000)
        ctl = loop.controller.controller if loop.controller else None
        if ctl is None or not loop.run_for(0.3):
            raise RuntimeError("the closed loop did not run (no DDS traffic?)")
        loop.probe.send_trajectory(names, t, q, qd, qdd)
        if not loop.spin_until(lambda: ctl.reference.trajectory is not None, 5.0):
            raise RuntimeError("the controller did not take the excitation trajectory")
        loop.run_for(float(t[-1]) + 0.3, wall_timeout=60 + 10 * float(t[-1]))
    write_bag(bag, names, states, commands)
    return len(states)


def hold_and_track(truth: str, urdf: str, drives: str | None, q0: np.ndarray
                   ) -> tuple[float, float]:
    """Gravity mode holds ``q0`` for 1 s: the drift; then ``inverse_dynamics`` with
    friction compensation tracks a 0.3 rad, 0.5 Hz sinusoid for 2 s: the RMS. (Gravity
    mode compensates no friction: at the measured velocity it would cancel the friction
    that holds the arm.)"""
    from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid

    controller = {"urdf_path": urdf, "watchdog_timeout": 1.0, "mode": "gravity", **GAINS}
    if drives is not None:
        controller["drives_file"] = drives
    with ClosedLoop(controller, true_simulator(truth, q0)) as loop:
        loop.run_for(1.0, wall_timeout=60.0)
        drift = float(np.abs(loop.probe.recording.q[-1] - q0).max())
        results = loop.set_controller_parameters({"mode": "inverse_dynamics",
                                                  "friction_compensation": True})
        if not all(r.successful for r in results):
            raise RuntimeError(f"mode switch refused: {[r.reason for r in results]}")
        _, error, _ = track_sinusoid(loop, loop.probe.recording.q[-1], 0.3, np.pi, 2.0)
    return drift, float(np.sqrt(np.mean(error**2)))


def identification_loop(workdir, periods: int = 2, seed: int = 2):  # type: ignore[no-untyped-def]
    """Phase 7: ``rnea-identify excite`` -> execute and record a bag -> ``rnea-identify``
    -> hold and track with the nominal and the identified files, on the true robot.
    Returns ``(before, after)``, each ``(hold drift, tracking RMS)`` [rad]."""
    from pathlib import Path

    from rnea_ros.identification.cli import main as identify

    workdir = Path(workdir)
    nominal = str(sample_urdf("arm7"))
    truth = true_urdf(Path(nominal).read_text(encoding="utf-8"))
    trajectory, bag, out = workdir / "excitation.yaml", workdir / "bag", workdir / "ident"
    if identify(["excite", "--urdf", nominal, "--out", str(trajectory), "--frequency", "0.2",
                 "--harmonics", "4", "--periods", str(periods), "--torque-fraction", "0.6",
                 "--acceleration", "4", "--limits", "velocity=1.5"]) != 0:
        raise RuntimeError("rnea-identify excite failed")
    count = excite_and_record(truth, nominal, trajectory, bag)
    print(f"[identify] executed and recorded {count} joint states to {bag}")
    # The simulator has no sensor noise: a higher cutoff and rate keep more samples.
    if identify([str(bag), "--urdf", nominal, "--out", str(out), "--no-plots",
                 "--validation", "0.15", "--rate", "40", "--cutoff", "20"]) != 0:
        raise RuntimeError("rnea-identify failed")
    model = load_robot("arm7")
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    q0 = np.random.default_rng(seed).uniform(mid - 0.4, mid + 0.4)
    before = hold_and_track(truth, nominal, None, q0)
    after = hold_and_track(truth, str(out / "robot_identified.urdf"),
                           str(out / "drives_identified.yaml"), q0)
    return before, after
