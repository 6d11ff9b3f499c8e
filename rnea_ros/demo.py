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
6b. a rocking base: the simulator rolls arm7's base by +-5 deg at 0.5 Hz and heaves it
   by +-5 cm, and publishes an IMU on the base; ``gravity`` mode with the IMU
   (``imu.topic: imu``) holds the arm still relative to the base, without it
   (``imu.topic: ''``) the arm drifts: both maximum joint deviations are printed;
7. identification in closed loop: the simulator runs a "true" arm7 (masses +-20 %,
   centres of mass moved by up to 3 cm, Coulomb and viscous joint friction) while the
   controller has the nominal URDF. ``rnea-identify excite`` designs an excitation
   trajectory, ``inverse_dynamics`` executes it, the joint states and commands are
   written to a bag, ``rnea-identify`` identifies, and the controller restarts with the
   identified URDF and drive file: the gravity-mode hold drift and the tracking RMS
   before and after are printed (files in a temporary directory, or ``--identify-dir``);
8. a closed-loop robot: the planar five-bar (``urdf/five_bar.urdf``, the spanning tree,
   closed by ``urdf/five_bar.loops.yaml``) with its own launch files
   (``config/five_bar_*.yaml``): the simulator runs Pinocchio's constrained dynamics and
   publishes motors and elbows, the controller measures and commands the two motors (the
   elbows solved from them, their encoders checked); gravity mode holds, then
   ``inverse_dynamics`` tracks a cosine on both motors: drift, tracking error, the
   elbows' encoder deviation and the cost per message are printed;
9. MuJoCo: arm7 on the simulator's second engine (``engine: mujoco``, soft contacts,
   ``world: table``: a table and a box; joints damped 5 N m s/rad), held in ``gravity``
   mode, pushed sideways at the flange (30 N for 0.1 s on ``rnea_simulator/apply_wrench``):
   how far it yields, how fast it moves and how still it is at the end are printed;
10. contact safety (``rnea_ros.nodes.contact_loop``): arm7 on MuJoCo tracks a sinusoid in
   ``inverse_dynamics`` with ``contact.enable`` and ``reaction: hold``; the thresholds are
   calibrated on 3 s of the same motion (worst residual x 2), then 30 N push on link4:
   detection delay, isolated link, estimated torques and force against the truth, the
   largest command step and the speed after the push are printed.

The simulator (Pinocchio's ABA, not our code) runs in lockstep at 1 kHz. DDS
stays on this machine (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``). Exits 0
when the drift and the RMS are below 1e-3 rad, the elastic arm tracks to 1e-3 rad
and the model agrees with Pinocchio to 1e-9, the arm on the rocking base stays within 1e-3 rad
with the IMU and drifts more than 0.05 rad without, identification improves the hold drift
and the tracking RMS on the true robot 10x or more, the five-bar holds within
1e-6 rad and tracks within 5e-4 rad, and the pushed arm yields more than 0.05 rad and
then moves less than 5e-3 rad in the last 0.5 s, and the contact phase has no false
contact, detects the push within 30 ms on link4, its torques within 10 % of J^T F and its
force within 3 N, every command step within the slew limit and the arm below 0.01 rad/s
0.5 s after the push began.
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"  # before any rclpy import
os.environ.setdefault("ROS_DOMAIN_ID", "57")

import argparse
import operator
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import rnea_ros
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea
from rnea_ros.nodes.harness import ARM7_GAINS
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
GAINS = ARM7_GAINS
TOLERANCE = 1e-3  # rad, hold drift and tracking RMS
RATE_LIMIT = 1000.0  # N m/s, the controller's default effort_rate_limits
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class Check:
    """One pass criterion of the demo: ``value op bound`` (``op`` one of ``<``, ``<=``,
    ``>``, ``>=``; NaN never passes), in ``unit``."""

    name: str
    value: float
    op: str
    bound: float
    unit: str = ""

    @property
    def ok(self) -> bool:
        return bool(_OPS[self.op](self.value, self.bound))

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name} {self.value:.3g}{unit} (needs {self.op} {self.bound:g}{unit})"


def verdict(checks: Sequence[Check], summary: str) -> str:
    """The demo's last line: ``PASS: summary`` when every check passed, else ``FAIL:``
    and each failed criterion with its value and bound."""
    failed = [c for c in checks if not c.ok]
    if not failed:
        return f"PASS: {summary}"
    return f"FAIL ({len(failed)} of {len(checks)} criteria): " + "; ".join(map(str, failed))


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
        start = loop.send_trajectory_held(("joint1", "joint2", "joint3"), T,
                                          *cosine_motion(q0, 0.3, 2.0, T))
        loop.run_for(seconds, wall_timeout=30 + 10 * seconds)
        t = np.array(loop.probe.recording.t)
        mask = t > start + 1.0
        error = np.array(loop.probe.recording.q)[mask][:, :3] - \
            cosine_motion(q0, 0.3, 2.0, t[mask] - start)[0]
        worst = float(np.abs(error).max()) if error.size else np.inf
        print(f"[elastic] {seconds:.1f} s of a 0.3 rad cosine on all joints: max link error "
              f"after the first second {worst:.2e} rad (RMS {np.sqrt(np.mean(error**2)):.2e})")
    return worst


def run_rocking(seconds: float, q0: np.ndarray) -> tuple[float, float]:
    """Phase 6b: the max joint deviation from ``q0`` on the rocking base over ``seconds``
    with the IMU, and over half as long without it."""
    from rnea_ros.nodes.harness import ROCKING_BASE, ClosedLoop

    deviations = []
    for topic, duration in (("imu", seconds), ("", 0.5 * seconds)):
        with ClosedLoop({"urdf_path": URDF, "watchdog_timeout": 1.0, "imu.topic": topic},
                        {"urdf_path": URDF, "initial_positions": q0.tolist(),
                         **ROCKING_BASE}) as loop:
            loop.run_for(duration, wall_timeout=30 + 10 * duration)
            q = np.array(loop.probe.recording.q)
            deviations.append(float(np.abs(q - q0).max()) if q.size else np.inf)
    print(f"\n[rocking] base rolling +-5 deg at 0.5 Hz and heaving +-5 cm, IMU on the base: "
          f"gravity mode with the IMU holds the arm within {deviations[0]:.2e} rad of its start "
          f"pose relative to the base over {seconds:.1f} s; without the IMU it drifts "
          f"{deviations[1]:.2e} rad in {0.5 * seconds:.1f} s")
    return deviations[0], deviations[1]


LOOP_HOLD_TOLERANCE = 1e-6  # rad, five-bar hold drift (every joint)
LOOP_TRACK_TOLERANCE = 5e-4  # rad, five-bar tracking error (motors, whole motion)


def launch_parameters(robot: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Controller and simulator parameters as ``sim.launch.py robot:=<robot>`` gives them
    (its two files and its URDF as robot_description)."""
    import yaml

    from rnea_ros.samples import robot_files

    files = robot_files(robot)

    def flat(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in params.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict)
                       else {prefix + key: value})
        return out

    def read(path: Path | None) -> dict[str, Any]:
        return {} if path is None else \
            flat(yaml.safe_load(path.read_text())["/**"]["ros__parameters"])

    urdf = {"robot_description": files.urdf.read_text()}
    return {**read(files.controller), **urdf, "watchdog_timeout": 1.0}, \
        {**read(files.simulator), **urdf}


def run_five_bar(hold: float, track: float) -> list[Check]:
    """Phase 8: the five-bar in closed loop, its own launch files; its checks: held within
    LOOP_HOLD_TOLERANCE, tracked within LOOP_TRACK_TOLERANCE, nothing rejected."""
    from rnea_ros.control.closed_loop import ClosedLoopController
    from rnea_ros.core.coupling.loop_kinematics import solve_loops
    from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid
    from rnea_ros.samples import load_loop_robot
    from rnea_ros.simulation import LoopSimulator

    loops = load_loop_robot("five_bar")
    controller, simulator = launch_parameters("five_bar")
    q0 = solve_loops(loops, simulator["initial_positions"])
    expected = np.r_[q0[loops.active_index], q0[loops.passive_index]]
    with ClosedLoop(controller, simulator, namespace="five_bar") as loop:
        if not loop.run_for(hold, wall_timeout=30 + 10 * hold):
            return [Check("five-bar simulated time (no DDS traffic?)", loop.sim_time, ">=",
                          hold, "s")]
        recorded = np.array(loop.probe.recording.q)
        drift = float(np.abs(recorded - expected).max())
        ctl = loop.controller.controller if loop.controller else None
        sim = loop.simulator.sim if loop.simulator else None
        assert isinstance(ctl, ClosedLoopController) and isinstance(sim, LoopSimulator)
        g50, _ = ctl.compute_percentiles()
        s50, _ = ctl.solve_percentiles()
        print(f"\n[five_bar] closed loop (loop '{loops.loops[0].name}', motors "
              f"{', '.join(loops.active_names)} measured and commanded, elbows "
              f"{', '.join(loops.passive_names)} solved; Pinocchio's constrained dynamics, "
              f"Baumgarte): gravity mode {hold:.1f} s, drift {drift:.1e} rad on every joint; "
              f"elbow encoders within {ctl.passive_deviation_max:.1e} rad of the solved "
              f"elbows; per message {g50:.0f} us (loop solve {s50:.0f} us) at p50")
        result = loop.set_controller_parameters({"mode": "inverse_dynamics"})[0]
        if not result.successful:
            print(f"[five_bar] mode switch refused: {result.reason}")
            return [Check("five-bar mode switches refused", 1, "<", 1)]
        ctl.compute_us.clear()
        _, error, _ = track_sinusoid(loop, recorded[-1, :loops.n_active], 0.15, np.pi, track)
        worst = float(np.abs(error).max()) if error.size else np.inf
        i50, i99 = ctl.compute_percentiles()
        print(f"[five_bar] inverse_dynamics, {track:.1f} s of a 0.15 rad, 0.5 Hz cosine on both "
              f"motors: max error {worst:.1e} rad (RMS {np.sqrt(np.mean(error**2)):.1e}); "
              f"elbow encoders within {ctl.passive_deviation_max:.1e} rad; simulator closure "
              f"error {sim.closure_error():.1e} m; per message p50 {i50:.0f} us, "
              f"p99 {i99:.0f} us (two loop solves: measured and reference); rejected "
              f"{sum(ctl.rejected.values())}")
        return [Check("five-bar hold drift", drift, "<", LOOP_HOLD_TOLERANCE, "rad"),
                Check("five-bar tracking error", worst, "<", LOOP_TRACK_TOLERANCE, "rad"),
                Check("five-bar rejected states", sum(ctl.rejected.values()), "<", 1)]


PUSH = (0.0, 30.0, 0.0)  # N, world frame, at the flange's centre of mass, 0.1 s ([mujoco])


def run_mujoco_push(seconds: float) -> list[Check]:
    """Phase 9: arm7 on MuJoCo with a table, gravity mode, one push; its checks: it yielded
    more than 0.05 rad and then settled (moved less than 5e-3 rad in the last 0.5 s)."""
    from geometry_msgs.msg import WrenchStamped

    from rnea_ros.nodes.harness import ClosedLoop

    controller, simulator = launch_parameters("arm7")
    simulator = {**simulator, "engine": "mujoco", "world": "table"}  # the shipped drive damping
    with ClosedLoop(controller, simulator, namespace="mujoco") as loop:
        node = loop.simulator
        assert node is not None
        if not loop.run_for(0.3, wall_timeout=60.0):
            return [Check("MuJoCo simulated time (no DDS traffic?)", loop.sim_time, ">=", 0.3,
                          "s")]
        before = np.array(loop.probe.recording.q[-1])
        publisher = loop.probe.create_publisher(WrenchStamped, "rnea_simulator/apply_wrench",
                                                10)
        with loop.held():  # (simulated time stands still while the publisher is discovered)
            loop.spin_until(lambda: node.wrench_sub.get_publisher_count() >= 1, 10.0)
        msg = WrenchStamped()
        msg.header.frame_id = "flange"
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = PUSH
        publisher.publish(msg)
        loop.spin_until(lambda: node.pushes == 1, 10.0)
        loop.run_for(seconds, wall_timeout=60 + 20 * seconds)
        t = np.array(loop.probe.recording.t)
        q = np.array(loop.probe.recording.q)
        qd = np.array(loop.probe.recording.qd)
        yielded = float(np.abs(q[-1] - before).max())
        peak = float(np.abs(qd).max())
        last = q[t > t[-1] - 0.5]
        settled = float(np.abs(last - last[-1]).max())
        print(f"\n[mujoco] arm7 on MuJoCo (soft contacts, world 'table'), gravity mode, "
              f"pushed {PUSH[1]:.0f} N sideways at the flange for "
              f"0.1 s: yielded {yielded:.3f} rad (peak speed {peak:.2f} rad/s), then held: "
              f"moved {settled:.1e} rad in the last 0.5 s of {seconds:.1f} s")
        return [Check("MuJoCo pushes applied", node.pushes, ">=", 1),
                Check("MuJoCo pushed arm's yield", yielded, ">", 0.05, "rad"),
                Check("MuJoCo motion in the last 0.5 s", settled, "<", 5e-3, "rad")]


def run_contact() -> list[Check]:
    """Phase 10: a push on the tracking arm, detected, isolated, estimated, held."""
    from rnea_ros.nodes.contact_loop import FORCE, LINK, contact_loop

    o = contact_loop()
    print(f"\n[contact] arm7 on MuJoCo tracking in inverse_dynamics, thresholds calibrated "
          f"on 3 s of the motion: {np.array2string(np.array(o.thresholds), precision=2)} N m; "
          f"{FORCE:.0f} N on {LINK}: detected {1e3 * o.delay:.0f} ms after the push on "
          f"'{o.link}', joint torques within {100 * o.torque_error:.1f} % of J^T F, force "
          f"{np.array2string(np.array(o.force), precision=1, suppress_small=True)} N for "
          f"{np.array2string(np.array(o.pushed), precision=1, suppress_small=True)} N; hold: "
          f"largest command step "
          f"{o.max_step:.2f} N m (slew limit {RATE_LIMIT * 1e-3:g}), speed {o.speed_before:.2f} "
          f"rad/s while pushed, {o.speed_after:.4f} rad/s from 0.5 s after the push on")
    return [Check("contact: false contacts while tracking", o.false_contacts, "<=", 0),
            Check("contact: detection delay", o.delay, "<=", 0.03, "s"),
            Check(f"contact: isolated to {LINK}", float(o.link == LINK), ">=", 1.0),
            Check("contact: torques vs J^T F", o.torque_error, "<=", 0.1),
            Check("contact: force error", o.force_error, "<=", 0.1 * FORCE, "N"),
            Check("contact: largest command step", o.max_step, "<=",
                  RATE_LIMIT * 1e-3 * (1 + 1e-6), "N m"),
            Check("contact: speed 0.5 s after the push", o.speed_after, "<", 0.01, "rad/s")]


def plan_motion(model, q_start: np.ndarray):  # type: ignore[no-untyped-def]
    """Phase 4's minimum-time plan, solved before the loop starts (it would stall it)."""
    from rnea_ros.planning import Limits, plan_min_time

    limits = Limits.from_model(model, torque=0.9 * model.effort_limit,
                               torque_rate=0.7 * RATE_LIMIT)
    goal = np.clip(q_start + 0.5 * np.array([1, -1, 1, 1, -1, 1, 1]),
                   model.lower_limit + 0.1, model.upper_limit - 0.1)
    return plan_min_time(model, [q_start, goal], limits)


def run_planned(loop, model, plan) -> list[Check]:  # type: ignore[no-untyped-def]
    """Execute the plan from where the sinusoid ended, at rest ([planned]); its checks."""
    ctl = loop.controller.controller
    loop.run_for(1.5)  # the sinusoid's last second, then at rest on its last point
    q_start, goal = plan.spline.P[0], plan.spline.P[-1]
    gap = float(np.abs(ctl.reference.trajectory.positions[-1] - q_start).max())
    if gap > 1e-6:
        return [Check("planned start to the sinusoid's end", gap, "<=", 1e-6, "rad")]
    rate = RATE_LIMIT * np.ones(model.nv)
    t, q, qd, qdd = plan.sample(0.002)
    before = len(loop.probe.recording.commands), ctl.saturated
    start = loop.send_trajectory_held(model.joint_names, t, q, qd, qdd)
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
    return [Check("planned motion tracking error", float(error.max()), "<", 5e-3, "rad"),
            Check("planned |tau| / URDF limit", tau_ratio, "<=", 1.0),
            Check(f"planned |tau_dot| / {rate[0]:g} N m/s", rate_ratio, "<=", 1.0)]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; 0 when the arm held, tracked and agreed with Pinocchio."""
    parser = argparse.ArgumentParser(prog="rnea-demo", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version",
                        version=f"rnea-demo {rnea_ros.__version__}")
    parser.add_argument("--hold", type=float, default=3.0, help="gravity-mode time [s]")
    parser.add_argument("--track", type=float, default=5.0, help="tracking time [s]")
    parser.add_argument("--seed", type=int, default=0, help="random start pose")
    parser.add_argument("--elastic", type=float, default=4.0,
                        help="elastic-arm tracking time [s]")
    parser.add_argument("--rocking", type=float, default=3.0,
                        help="rocking-base hold with the IMU [s] (half as long without); "
                             "0 skips it")
    parser.add_argument("--identify-periods", type=int, default=2,
                        help="excitation periods (5 s each) of the [identify] step; 0 skips it")
    parser.add_argument("--identify-dir", help="keep the [identify] step's files here")
    parser.add_argument("--loop-hold", type=float, default=2.0,
                        help="five-bar gravity-mode time [s] ([five_bar])")
    parser.add_argument("--loop-track", type=float, default=3.0,
                        help="five-bar tracking time [s] ([five_bar]); 0 skips that step")
    parser.add_argument("--mujoco", type=float, default=3.0,
                        help="time after the push on MuJoCo [s] ([mujoco]); 0 skips it")
    parser.add_argument("--no-contact", action="store_true", help="skip the [contact] phase")
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
        checks = [Check("RNEA, g, M vs Pinocchio (relative)", worst, "<", 1e-9),
                  Check("gravity hold drift", drift, "<", TOLERANCE, "rad"),
                  Check("inverse_dynamics tracking RMS", rms, "<", TOLERANCE, "rad"),
                  *run_planned(loop, model, plan)]
        p50, p99 = ctl.compute_percentiles()
        print(f"[controller] {ctl.commands} commands, compute p50 {p50:.1f} us, p99 {p99:.1f} "
              f"us; rejected {sum(ctl.rejected.values())}, saturated {ctl.saturated}")
    checks.append(Check("elastic arm max link error", run_elastic(args.elastic), "<",
                        TOLERANCE, "rad"))
    if args.rocking > 0:
        with_imu, without_imu = run_rocking(args.rocking, q0)
        checks += [Check("rocking base deviation with the IMU", with_imu, "<", TOLERANCE,
                         "rad"),
                   Check("rocking base drift without the IMU", without_imu, ">", 0.05, "rad")]
    simulated = 0.0
    if args.identify_periods > 0:
        import tempfile

        from rnea_ros.nodes.identification_loop import identification_loop

        print()
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(args.identify_dir or tmp)
            workdir.mkdir(parents=True, exist_ok=True)
            before, after = identification_loop(workdir, args.identify_periods)
        print(f"[identify] on the true robot, nominal URDF -> identified files: gravity-mode "
              f"hold drift (1 s) {before[0]:.2e} -> {after[0]:.2e} rad "
              f"({before[0] / after[0]:.0f}x); inverse_dynamics tracking RMS (0.3 rad, 0.5 Hz) "
              f"{before[1]:.2e} -> {after[1]:.2e} rad ({before[1] / after[1]:.0f}x)")
        checks += [Check("identification: hold drift improvement", before[0] / after[0], ">=",
                         10.0, "x"),
                   Check("identification: tracking RMS improvement", before[1] / after[1],
                         ">=", 10.0, "x")]
        simulated = 5.0 * args.identify_periods + 0.6 + 2 * 3.0
    if args.loop_track > 0:
        checks += run_five_bar(args.loop_hold, args.loop_track)
        simulated += args.loop_hold + args.loop_track
    if args.mujoco > 0:
        checks += run_mujoco_push(args.mujoco)
        simulated += 0.3 + args.mujoco
    if not args.no_contact:
        checks += run_contact()
        simulated += 6.0
    wall = time.monotonic() - started
    rocking = ", held on the rocking base with the IMU (drifts without)" if args.rocking else ""
    simulated += 1.5 * max(args.rocking, 0.0)
    loop_text = (f", five-bar hold within {LOOP_HOLD_TOLERANCE:g} and tracking within "
                 f"{LOOP_TRACK_TOLERANCE:g} rad" if args.loop_track > 0 else "")
    identify_text = ", identification >= 10x better" if args.identify_periods > 0 else ""
    loop_text += ", the pushed arm settled on MuJoCo" if args.mujoco > 0 else ""
    loop_text += ", a push detected, isolated and held" if not args.no_contact else ""
    print("\n" + verdict(checks, f"drift and RMS below {TOLERANCE:g} rad, model within "
                                 f"1e-9 of Pinocchio{rocking}{identify_text}{loop_text} "
                                 f"({wall:.1f} s wall for "
                                 f"{args.hold + args.track + args.elastic + 1.0 + simulated:.1f}"
                                 " s simulated)"))
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
