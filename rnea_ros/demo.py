"""Demo: the RNEA controller and the embedded simulator in closed loop over DDS.

Run with ``make demo`` (or ``python -m rnea_ros.demo``). A 7-DoF arm
(``urdf/arm7.urdf``, Panda kinematics and inertias) starts at a random pose:

1. the model is checked against Pinocchio on random states;
2. ``gravity`` mode holds the arm for a few seconds: the drift is printed;
3. the controller switches to ``inverse_dynamics`` at runtime and tracks a
   0.5 rad, 0.5 Hz sinusoid on every joint: the tracking RMS is printed;
4. a minimum-time motion planned by ``rnea_ros.planning`` (torque limits at 90 %
   of the URDF's, torque rate at 70 % of the controller's 1000 N m/s) to a pose
   0.5 rad away is executed by ``inverse_dynamics``: its duration, the tracking
   error and the measured |tau|, |tau_dot| against the limits are printed;
5. compute latency and diagnostics are printed;
6. the mixed rigid/elastic 3-DoF arm of hua-2024 section V (``urdf/mixed_3dof.urdf``,
   joint 3 elastic, motors on the base and on link 1) runs in mode ``elastic``:
   the simulator integrates link and motor states (our forward dynamics), the
   controller (hua-2024 section IV law) gets the motor as ``joint3_motor``; it
   starts with its spring relaxed, then tracks a sinusoid: the errors are printed;
7. identification in closed loop: the simulator runs a "true" arm7 (masses +-20 %,
   centres of mass moved by up to 3 cm, Coulomb and viscous joint friction) while the
   controller has the nominal URDF. ``rnea-identify excite`` designs an excitation
   trajectory, ``inverse_dynamics`` executes it, the joint states and commands are
   written to a bag, ``rnea-identify`` identifies, and the controller restarts with the
   identified URDF and drive file: the gravity-mode hold drift and the tracking RMS
   before and after are printed (files in a temporary directory, or ``--identify-dir``).

The simulator (Pinocchio's ABA, not our code) runs in lockstep at 1 kHz. DDS
stays on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``). Exits 0
when the drift and the RMS are below 1e-3 rad, the elastic arm tracks to 1e-3 rad
and the model agrees with Pinocchio to 1e-9, and identification improves the hold drift and
the tracking RMS on the true robot 10x or more.
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before any rclpy import
os.environ.setdefault("ROS_DOMAIN_ID", "57")

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np

from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
GAINS = {"kp": [60.0, 60.0, 60.0, 60.0, 20.0, 20.0, 10.0],
         "kd": [8.0, 8.0, 8.0, 4.0, 1.0, 1.0, 0.5]}
TOLERANCE = 1e-3  # rad, hold drift and tracking RMS
RATE_LIMIT = 1000.0  # N m/s, the controller's default effort_rate_limits


def check_model(samples: int, rng: np.random.Generator) -> float:
    """Largest relative difference to Pinocchio (RNEA, g, M) over random states."""
    model = load_robot("arm7")
    oracle = PinocchioOracle(sample_urdf("arm7"), model)
    worst = 0.0
    for _ in range(samples):
        q = rng.uniform(model.lower_limit, model.upper_limit)
        qd, qdd = rng.normal(0, 1, model.nv), rng.normal(0, 3, model.nv)
        for ours, ref in ((rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd)),
                          (gravity_torques(model, q), oracle.gravity(q)),
                          (mass_matrix(model, q), oracle.mass_matrix(q))):
            worst = max(worst, float(np.abs(ours - ref).max() / max(np.abs(ref).max(), 1e-12)))
    return worst


def run_elastic(seconds: float) -> float:
    """Mode ``elastic`` on the hua-2024 arm over DDS; the max link error after 1 s of tracking."""
    from rnea_ros.nodes.harness import ClosedLoop, cosine_motion

    robot = {"urdf_path": "package://rnea_ros/urdf/mixed_3dof.urdf", "inertia_check": "warn",
             "elastic_file": "package://rnea_ros/config/mixed_3dof_elastic.yaml"}
    controller = {**robot, "mode": "elastic", "elastic.law": "hua", "slew_limit.enable": False,
                  "elastic.lambda_q": [50.0], "elastic.kd_q": [50.0], "watchdog_timeout": 1.0}
    q0 = np.array([0.0, 0.0, -0.4363])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hua-2024 table I's link inertias are not physical
        loop = ClosedLoop(controller, {**robot, "initial_positions": q0.tolist()})
    with loop:
        loop.run_for(1.0, wall_timeout=30.0)
        q = loop.probe.recording.q[-1]
        print(f"\n[elastic] hua-2024 arm, joint 3 elastic (K = 100 N m/rad): after 1 s from a "
              f"relaxed spring, q = {np.array2string(q[:3], precision=4)}, motor 3 at "
              f"{q[3]:.4f} rad (spring {100 * (q[3] - q[2]):.2f} N m)")
        reference = loop.controller.controller.reference if loop.controller else None
        assert reference is not None
        T = np.arange(0.0, seconds + 1.0, 0.01)
        loop.probe.send_trajectory(("joint1", "joint2", "joint3"), T,
                                   *cosine_motion(q0, 0.3, 2.0, T))
        loop.spin_until(lambda: reference.trajectory is not None, 5.0)
        start = float(reference.trajectory.times[0]) if reference.trajectory else 0.0
        loop.run_for(seconds, wall_timeout=30 + 10 * seconds)
        t = np.array(loop.probe.recording.t)
        mask = t > start + 1.0
        error = np.array(loop.probe.recording.q)[mask][:, :3] - \
            cosine_motion(q0, 0.3, 2.0, t[mask] - start)[0]
        worst = float(np.abs(error).max()) if error.size else np.inf
        print(f"[elastic] {seconds:.1f} s of a 0.3 rad cosine on all joints: max link error "
              f"after the first second {worst:.2e} rad (RMS {np.sqrt(np.mean(error**2)):.2e})")
    return worst


def plan_motion(model, q_start: np.ndarray):  # type: ignore[no-untyped-def]
    """Phase 4's minimum-time plan, solved before the loop starts (it would stall it)."""
    from rnea_ros.planning import Limits, plan_min_time

    limits = Limits.from_model(model, torque=0.9 * model.effort_limit,
                               torque_rate=0.7 * RATE_LIMIT)
    goal = np.clip(q_start + 0.5 * np.array([1, -1, 1, 1, -1, 1, 1]),
                   model.lower_limit + 0.1, model.upper_limit - 0.1)
    return plan_min_time(model, [q_start, goal], limits)


def run_planned(loop, model, plan) -> bool:  # type: ignore[no-untyped-def]
    """Execute the plan from where the sinusoid ended, at rest (phase 4)."""
    ctl = loop.controller.controller
    loop.run_for(1.5)  # the sinusoid's last second, then at rest on its last point
    q_start, goal = plan.spline.P[0], plan.spline.P[-1]
    if not np.allclose(ctl.reference.trajectory.positions[-1], q_start, atol=1e-6):
        print("[planned] the sinusoid did not end at the planned start")
        return False
    rate = RATE_LIMIT * np.ones(model.nv)
    t, q, qd, qdd = plan.sample(0.002)
    before = len(loop.probe.recording.commands), ctl.saturated
    loop.probe.send_trajectory(model.joint_names, t, q, qd, qdd)
    loop.spin_until(lambda: ctl.reference.trajectory is not None
                    and np.allclose(ctl.reference.trajectory.positions[-1], goal), 5.0)
    start = float(ctl.reference.trajectory.times[0])
    loop.run_for(plan.T + 0.5, wall_timeout=60.0)
    rec = loop.probe.recording
    times = np.array(rec.t)
    mask = (times > start) & (times < start + plan.T)
    error = np.abs(np.array(rec.q)[mask] - plan.spline.derivatives(times[mask] - start, 0)[0])
    commands = np.array(rec.commands[before[0]:])
    tau_ratio = float((np.abs(commands) / model.effort_limit).max())
    rate_ratio = float((np.abs(np.diff(commands, axis=0)) / 1e-3 / rate).max())
    print(f"[planned] minimum-time motion of {np.abs(goal - q_start).max():.2f} rad: T = "
          f"{plan.T:.3f} s (solved in {plan.solve_time:.2f} s incl. first-call compile, |tau| <= "
          f"{plan.check.torque:.3f} x 90 %, |tau_dot| <= {plan.check.torque_rate:.3f} x 70 %); "
          f"tracking error max {error.max():.2e} rad; commanded |tau| up to "
          f"{100 * tau_ratio:.1f} % of the URDF limit, |tau_dot| up to {100 * rate_ratio:.1f} % "
          f"of {rate[0]:g} N m/s; saturated {ctl.saturated - before[1]}")
    return bool(error.max() < 5e-3 and tau_ratio <= 1.0 and rate_ratio <= 1.0)


# --- 7. identification in closed loop (issue 15) -------------------------------------------
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; 0 when the arm held, tracked and agreed with Pinocchio."""
    parser = argparse.ArgumentParser(prog="rnea-demo", description=__doc__.splitlines()[0])
    parser.add_argument("--hold", type=float, default=3.0, help="gravity-mode time [s]")
    parser.add_argument("--track", type=float, default=5.0, help="tracking time [s]")
    parser.add_argument("--seed", type=int, default=0, help="random start pose")
    parser.add_argument("--elastic", type=float, default=4.0,
                        help="elastic-arm tracking time [s]")
    parser.add_argument("--identify-periods", type=int, default=2,
                        help="excitation periods (5 s each) of phase 7; 0 skips it")
    parser.add_argument("--identify-dir", help="keep phase 7's files here")
    args = parser.parse_args(argv)
    # rclpy only after the environment is set
    from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid

    rng = np.random.default_rng(args.seed)
    model = load_robot("arm7")
    worst = check_model(200, rng)
    print(f"model: arm7, {model.nv} joints; RNEA, g(q), M(q) vs Pinocchio on 200 random "
          f"states: max relative difference {worst:.1e}")
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    q0 = rng.uniform(mid - 0.5, mid + 0.5)
    print(f"start pose [rad]: {np.array2string(q0, precision=3)}")
    # Phase 3's reference (sampled every 10 ms, 1 s longer than tracked) is held at its last
    # point: the planned motion starts there, up to the hold drift.
    from rnea_ros.nodes.harness import cosine_motion

    end = cosine_motion(q0, 0.5, np.pi, np.arange(0.0, args.track + 1.0, 0.01)[-1:])[0][0]
    plan = plan_motion(model, end)
    started = time.monotonic()
    with ClosedLoop({"urdf_path": URDF, "watchdog_timeout": 1.0, **GAINS},
                    {"urdf_path": URDF, "initial_positions": q0.tolist()}) as loop:
        # 1. Gravity compensation from the random pose.
        if not loop.run_for(args.hold, wall_timeout=30 + 10 * args.hold):
            print("the closed loop did not run (no DDS traffic?)")
            return 1
        q_hold = loop.probe.recording.q[-1]
        drift = float(np.abs(q_hold - q0).max())
        g = gravity_torques(model, q_hold)
        print(f"\n[gravity] {args.hold:.1f} s held, drift {drift:.2e} rad; "
              f"|g(q)| up to {np.abs(g).max():.1f} N m")
        # 2. Switch to inverse dynamics at runtime and track a sinusoid.
        result = loop.set_controller_parameters({"mode": "inverse_dynamics"})[0]
        if not result.successful:
            print(f"mode switch refused: {result.reason}")
            return 1
        amplitude, omega = 0.5, 2 * np.pi * 0.5
        _, error, _ = track_sinusoid(loop, q_hold, amplitude, omega, args.track)
        ctl = loop.controller.controller if loop.controller else None
        assert ctl is not None
        rms = float(np.sqrt(np.mean(error**2)))
        print(f"[inverse_dynamics] {args.track:.1f} s of a 0.5 rad, 0.5 Hz sinusoid on all "
              f"joints: RMS {rms:.2e} rad, max {np.abs(error).max():.2e} rad")
        planned_ok = run_planned(loop, model, plan)
        p50, p99 = ctl.compute_percentiles()
        print(f"[controller] {ctl.commands} commands, compute p50 {p50:.1f} us, p99 {p99:.1f} "
              f"us; rejected {sum(ctl.rejected.values())}, saturated {ctl.saturated}")
    elastic_error = run_elastic(args.elastic)
    identified_ok, simulated = True, 0.0
    if args.identify_periods > 0:
        import tempfile
        from pathlib import Path

        print()
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(args.identify_dir or tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            before, after = identification_loop(workdir, args.identify_periods)
        print(f"[identify] on the true robot, nominal URDF -> identified files: gravity-mode "
              f"hold drift (1 s) {before[0]:.2e} -> {after[0]:.2e} rad "
              f"({before[0] / after[0]:.0f}x); inverse_dynamics tracking RMS (0.3 rad, 0.5 Hz) "
              f"{before[1]:.2e} -> {after[1]:.2e} rad ({before[1] / after[1]:.0f}x)")
        identified_ok = after[0] * 10 <= before[0] and after[1] * 10 <= before[1]
        simulated = 5.0 * args.identify_periods + 0.6 + 2 * 3.0
    wall = time.monotonic() - started
    ok = (drift < TOLERANCE and rms < TOLERANCE and worst < 1e-9 and elastic_error < TOLERANCE
          and planned_ok and identified_ok)
    print(f"\n{'PASS' if ok else 'FAIL'}: drift and RMS below {TOLERANCE:g} rad, model within "
          f"1e-9 of Pinocchio{', identification >= 10x better' if simulated else ''} "
          f"({wall:.1f} s wall for "
          f"{args.hold + args.track + args.elastic + 1.0 + simulated:.1f} s simulated)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
