"""Embedded simulator node, for machines without Gazebo (and for our tests).

Integrates the robot with Pinocchio's ABA (not our code, see
:mod:`rnea_ros.simulation`), subscribes the effort topic of gz_ros2_control's
forward command controller (``effort_controller/commands``,
``std_msgs/Float64MultiArray`` in ``joints`` order) and publishes
``joint_states`` (position, velocity, applied effort; stamped with the
simulated time; commands of the wrong length or non-finite are rejected,
efforts clamped to the URDF limits, both counted on ``/diagnostics``) and,
when ``publish_clock`` is set, ``/clock`` (global) so that ``use_sim_time`` works.
With ``elastic_file`` it simulates a robot with elastic joints
(:class:`rnea_ros.simulation.ElasticSimulator`): link and motor states, the
motors published as ``<joint>_motor``. Mimic joints (URDF ``<mimic>``): the
independent coordinates are simulated and commanded (``joints`` may not name a
follower); ``joint_states`` also carries the followers, positions and
velocities from the coupling and zero effort, as a robot's driver would
(``publish_mimic_joints: false`` leaves them out). With a loop file
(``loops_file``, default ``<urdf stem>.loops.yaml`` next to ``urdf_path``) it
simulates a closed-loop robot (:class:`rnea_ros.simulation.LoopSimulator`:
Pinocchio's constrained dynamics with Baumgarte stabilisation): the commands are
the active joints' efforts, the joint states the active joints (and the passive
ones with ``publish_passive``). Topic names are relative
(``<namespace>/joint_states``) except ``/clock`` and ``/diagnostics``.

Moving base (``base_motion.*``): the base rocks (roll and pitch sinusoids, static
tilts) and heaves as prescribed (:class:`rnea_ros.simulation.RockingBase`); the
joints follow the moving-base dynamics. ``imu.enable`` publishes ``imu``
(``sensor_msgs/Imu``, before each ``joint_states``, same stamp) as an IMU whose
frame is the link ``imu.link`` would read it: orientation world <- sensor,
angular velocity and specific force (``+9.81`` up at rest) in the sensor frame,
with optional white noise (``imu.noise.*``, standard deviations; covariances
their squares on the diagonal, REP-145: zeros -- a noise-free sensor -- read as
"unknown"; ``imu.orientation: false`` marks the orientation as not provided,
element 0 at -1, like a 6-axis IMU).

Engines (``engine``): ``pinocchio`` (default: the above) or ``mujoco``
(:class:`rnea_ros.simulation.mujoco_backend.MujocoSimulator`: the same URDF through
MuJoCo's URDF compiler, soft contacts, mimic and loop closures as equality
constraints; rigid, mimic and closed-loop robots on a fixed base, the IMU too). Same
topics, parameters, diagnostics, ``/clock``, watchdog and limit checks. With MuJoCo:
``world`` (an MJCF file, or a name in ``config/worlds/``) is merged into the scene,
``contacts: false`` turns contact off, ``viewer: true`` opens MuJoCo's passive viewer,
and ``~/apply_wrench`` (``geometry_msgs/WrenchStamped``) pushes the link named in
``header.frame_id``: force and torque in the world frame at the link's centre of mass,
for ``wrench_duration`` seconds of simulated time (each message replaces the push on its
link; an unknown link, a non-finite wrench, a force beyond ``wrench_max_force`` or a
torque beyond ``wrench_max_torque``, or another engine: one warning line, counted on
``/diagnostics``). MuJoCo's own instability (it flags a bad acceleration and resets
itself) or a blown-up step is not taken: the state is held at rest, pushes cancelled,
the commanded effort kept (module :mod:`rnea_ros.simulation.mujoco_backend`); one
error line, ``/diagnostics`` ERROR with the cause. A world that intersects the robot at
start: one warning line naming the geoms. With ``robot_description_source: topic`` the
model comes from the ``robot_description`` topic (:mod:`rnea_ros.nodes.description`).
The logic (which plant, initial state, IMU noise) lives in
:mod:`rnea_ros.simulation.factory`; parameters in ``rnea_ros/params/simulator.yaml``.

``lockstep: false`` (default): a timer steps the simulation at ``rate`` in
real time with the last command (zero effort once ``command_timeout`` has
passed without one, on the robot's time: the steps taken since the last
command: a WARN on ``/diagnostics``, counted, logged when it begins and when
commands resume); with ``wait_for_command`` the robot stays still, like a robot with
its brakes on, until the first command arrives.
``lockstep: true``: each received command advances the simulation by one step
and publishes the new state, so a controller that answers every state closes
the loop at full speed and deterministically (with ``lockstep_answers`` only the
answer stamped with the newest state's stamp does: :mod:`rnea_ros.simulation.lockstep`,
so a watchdog's command steps nothing); the state is (re)sent when no
command came for 0.5 s of the node's own running (ten firings of a 50 ms timer),
which also starts the loop.

Both count time in what the node did, not on the wall clock, which also counts
the time this process was stalled (a loaded machine, a garbage collection): the
robot, simulated, is frozen meanwhile, not left without commands, and the
controller's answer may already be queued. A wall clock made the first tick
after a stall of more than ``command_timeout`` apply zero effort (a kick that a
held, frictionless arm keeps as a drift), and the first lockstep firing after
0.5 s resend a state whose answer was queued: two states then went round the
loop, each command stepping it.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from rnea_ros.control.config import load_loop_model, load_model, urdf_source
from rnea_ros.control.diagnostics import (
    DIAGNOSTICS_WINDOW,
    SlidingWindow,
    TimeoutEpisodes,
    status_name,
)
from rnea_ros.core.errors import JointNameError, RneaError, options
from rnea_ros.mimic import check_actuated
from rnea_ros.nodes.common import note_robot, run, steady_timer
from rnea_ros.nodes.description import wait_for_description
from rnea_ros.nodes.parameters import declare, watch
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import ParameterSpec, load_table, parameter_set
from rnea_ros.simulation import ImuSensor
from rnea_ros.simulation.factory import (
    ImuNoise,
    carry_state,
    initial_positions,
    make_base,
    make_simulator,
    startup_line,
)
from rnea_ros.simulation.lockstep import foreign_warning, lockstep_answers
from rnea_ros.simulation.plant import Plant

NODE_NAME = "rnea_simulator"
# Lockstep: the state is resent after RESEND_AFTER of firings of a RESEND_PERIOD timer
# without a command (or a state) [s].
RESEND_PERIOD, RESEND_AFTER = 0.05, 0.5
VIEWER_PERIOD = 1.0 / 30.0  # MuJoCo's viewer refresh [s]
# lockstep_answers: the messages kept while this node is held up; the watchdog's commands
# (one per ~20 ms after its timeout) must not push its state's answer out of the queue.
ANSWERS_DEPTH = 1000

# rnea_ros/params/simulator.yaml (rnea_ros.parameters): types, defaults, ranges, units.
SIMULATOR_PARAMETERS: dict[str, ParameterSpec] = load_table("simulator")


class SimulatorNode(Node):
    """rclpy adapter around :class:`rnea_ros.simulation.Simulator`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(NODE_NAME, **kwargs)
        values = declare(self, SIMULATOR_PARAMETERS)
        # robot_description_source: topic -- started by the first description that builds
        self.description = wait_for_description(self, values, SIMULATOR_PARAMETERS,
                                                self.start)
        if self.description is None:
            self.start(values)

    def start(self, values: dict[str, Any]) -> None:
        """Build the plant of parameter values ``values`` (its model first: an error before
        the first topic leaves nothing created), then its topics and timers."""
        # The parameters by the table's dotted names, typed and checked (config.rate,
        # config.imu.link); v: the same by dotted name, what the simulation's builders take.
        config = self.config = parameter_set(SIMULATOR_PARAMETERS, values)
        v = config.dotted()
        model = load_model(v).replace(gravity=np.array(config.gravity, dtype=np.float64))
        note_robot(model.name)  # (its kernels compile next, on a cold cache)
        self.loops = load_loop_model(v, model)
        valid = model.joint_names if self.loops is None else self.loops.active_names
        names = [j for j in config.joints if j] or list(valid)
        check_actuated(model, names, "joints")
        wrong = [j for j in names if j not in valid]
        if wrong:
            what = ("passive (no actuator) or unknown" if self.loops is not None
                    else "not in the model")
            raise ParameterError(f"parameter 'joints': {options(wrong)} {what}; valid: "
                                 f"{options(valid)}")
        self.command_index = np.array([model.joint_index(j) for j in names])
        self.values = v
        self.urdf = urdf_source(v)
        self.links = model
        self.n = model.nv
        self.base = make_base(v)
        self.sim = make_simulator(v, model, self.loops, self.urdf, self.base)
        self.sim.reset(initial_positions(v, model, self.loops))
        self.warn_penetrations()
        self.reported_diverged = 0  # diverged steps already logged
        self.published = (np.arange(model.nv) if self.loops is None else np.concatenate(
            [self.loops.active_index, self.loops.passive_index if config.publish_passive
             else np.zeros(0, dtype=np.int64)]))
        self.imu: ImuSensor | None = None
        self.imu_pub = None
        if config.imu.enable:
            if not self.sim.capabilities.imu or self.loops is not None:
                raise ParameterError("parameter 'imu.enable': not supported with "
                                     "'elastic_file' or a loop file (elastic and "
                                     "closed-loop robots run on a fixed base)")
            link = config.imu.link or model.root_link
            try:
                model.link_frame(link)
            except JointNameError as exc:
                raise ParameterError(f"parameter 'imu.link': {exc}") from None
            self.imu = ImuSensor(self.imu_oracle(self.sim), link, model.gravity)
            self.imu_frame_id = config.imu.frame_id or link
            self.imu_noise = ImuNoise(np.array([config.imu.noise.orientation,
                                                config.imu.noise.angular_velocity,
                                                config.imu.noise.linear_acceleration]),
                                      config.imu.seed)
            self.imu_msg = Imu()
            self.imu_msg.header.frame_id = self.imu_frame_id
            var = self.imu_noise.sigma**2
            self.imu_msg.orientation_covariance = \
                np.diag([var[0]] * 3).ravel() if config.imu.orientation else \
                np.array([-1.0] + [0.0] * 8)
            self.imu_msg.angular_velocity_covariance = np.diag([var[1]] * 3).ravel()
            self.imu_msg.linear_acceleration_covariance = np.diag([var[2]] * 3).ravel()
            self.imu_orientation = config.imu.orientation
            self.imu_pub = self.create_publisher(Imu, "imu", 10)
        self.tau = np.zeros(model.nv)
        self.last_command_wall = -np.inf
        self.command_timeout = config.command_timeout
        self.steps_since_command = 0  # real time: the drive's timeout, on the robot's time
        self.silent_firings = 0  # lockstep: resend timer firings without a command or state
        self.wait_for_command = config.wait_for_command
        self.rejected = 0
        self.clamped = 0
        self.timeouts = TimeoutEpisodes()  # real time: commands that stopped coming
        self.window = SlidingWindow(DIAGNOSTICS_WINDOW, now=time.monotonic())
        self.effort_limit = model.effort_limit[self.command_index]  # inf when absent
        self.lockstep = config.lockstep
        self.publish_followers = config.publish_mimic_joints and bool(model.mimic_joints)
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.clock_pub = self.create_publisher(Clock, "/clock", 10) if config.publish_clock \
            else None
        # The subscription whose messages step the plant (lockstep) or drive it.
        self.answers = lockstep_answers(config.lockstep, config.lockstep_answers, names)
        self.command_sub = (
            self.create_subscription(JointState, config.lockstep_answers, self.on_answer,
                                     ANSWERS_DEPTH)
            if self.answers is not None else
            self.create_subscription(Float64MultiArray, "effort_controller/commands",
                                     self.on_command, 10))
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.sim.diagnostics()  # what the diagnostics callback reaches (a loop's closure
        # residual kernel) compiled now, not in its first call: any engine, no class test
        steady_timer(self, 1.0, self.publish_diagnostics)
        self.last_publish_wall = -np.inf
        self.wrench_duration = config.wrench_duration  # (>= 0: the table)
        self.pushes = 0
        self.rejected_wrenches = 0
        self.wrench_sub = self.create_subscription(WrenchStamped, "~/apply_wrench",
                                                   self.on_wrench, 10)
        self.viewer: Any = None
        if config.viewer:
            self.viewer_restart()
            steady_timer(self, VIEWER_PERIOD, self.viewer_sync)
        if self.lockstep:
            steady_timer(self, RESEND_PERIOD, self.resend)
        else:
            steady_timer(self, self.sim.dt, self.on_tick)
        watch(self, SIMULATOR_PARAMETERS, self.on_set_parameters)
        self.get_logger().info(startup_line(v, model, self.sim))

    def on_wrench(self, msg: WrenchStamped) -> None:
        """A push (engine mujoco): ``msg.wrench`` [N, N m] in the world frame at the centre
        of mass of link ``msg.header.frame_id``, for ``wrench_duration`` of simulated time;
        bad ones (another engine, an unknown link, non-finite) rejected with one line."""
        f, t = msg.wrench.force, msg.wrench.torque
        link = msg.header.frame_id
        try:
            self.sim.apply_wrench(link, np.array([f.x, f.y, f.z]), np.array([t.x, t.y, t.z]),
                                  self.wrench_duration,
                                  max_force=self.config.wrench_max_force,
                                  max_torque=self.config.wrench_max_torque)
        except RneaError as exc:
            self.rejected_wrenches += 1
            self.get_logger().warning(f"rejected wrench: {exc.args[0] if exc.args else exc}",
                                      throttle_duration_sec=1.0)
            return
        self.pushes += 1

    def warn_penetrations(self) -> None:
        """One warning line if the robot starts inside the world (engine mujoco): MuJoCo's
        contacts would throw it out in the first steps."""
        if not self.sim.start_penetrations:
            return
        pairs = "; ".join(f"'{robot}' in '{world}' by {1e3 * depth:.1f} mm" for robot, world,
                          depth in self.sim.start_penetrations)
        self.get_logger().warning(
            f"world '{self.config.world}' intersects the robot at its initial positions "
            f"({len(self.sim.start_penetrations)} contacts: {pairs}): the contacts will push "
            "the robot out; move the world or the initial positions")

    def check_diverged(self) -> None:
        """After a step: one error line when the engine refused a step (MuJoCo's
        instability; throttled while it goes on)."""
        diverged = self.sim.diverged
        if diverged == self.reported_diverged:
            return
        self.reported_diverged = diverged
        why = self.sim.instability or "the state was not finite"
        self.get_logger().error(
            f"integration unstable, step not taken ({diverged} so far; {why}): state held "
            "at rest, pushes cancelled, the commanded effort kept",
            throttle_duration_sec=10.0)

    def viewer_restart(self) -> None:
        """(Re)open MuJoCo's passive viewer on the current plant (``viewer: true``); one
        error line (and no viewer) without a display or on another engine."""
        if not self.config.viewer:
            return
        if self.viewer is not None:
            self.viewer.close()
            self.viewer = None
        if not self.sim.capabilities.viewer:
            self.get_logger().error("parameter 'viewer': MuJoCo's viewer needs engine 'mujoco'")
            return
        if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or
                                                     os.environ.get("WAYLAND_DISPLAY")):
            # (MuJoCo's GLFW would end the process: "could not initialize GLFW")
            self.get_logger().error("parameter 'viewer': no display (DISPLAY is not set): "
                                    "running without MuJoCo's viewer")
            return
        try:
            import mujoco.viewer

            self.viewer = mujoco.viewer.launch_passive(*self.sim.viewer_handles())
        except Exception as exc:  # no display, no OpenGL: the simulation runs on
            self.get_logger().error(f"parameter 'viewer': MuJoCo's viewer did not open: {exc}")

    def viewer_sync(self) -> None:
        if self.viewer is not None and self.viewer.is_running():
            self.viewer.sync()

    def imu_oracle(self, sim: Plant) -> PinocchioOracle:
        """The Pinocchio model the IMU reads from (the plant's own, else one for it alone:
        the MuJoCo backend)."""
        engine: PinocchioOracle | None = sim.imu_engine()
        return engine if engine is not None else PinocchioOracle(self.urdf, self.links)

    def on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        """Runtime payload changes (an object picked up); other parameters are read-only."""
        values = dict(self.values)
        values.update({p.name: p.value for p in params})
        try:
            config = parameter_set(SIMULATOR_PARAMETERS, values)
            sim = make_simulator(config.dotted(), self.links, self.loops, self.urdf, self.base)
        except (RneaError, ValueError, TypeError) as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        carry_state(self.sim, sim)
        if self.imu is not None and sim.imu_engine() is not None:  # the sensor on the new engine
            self.imu = ImuSensor(sim.imu_engine(), self.imu_frame_link(), self.links.gravity)
        self.sim, self.values, self.config = sim, values, config
        self.viewer_restart()
        return SetParametersResult(successful=True)

    def on_answer(self, msg: JointState) -> None:
        """``lockstep_answers``: a stamped answer steps the plant when it answers the
        newest state; other stamps are ignored (counted), bad ones rejected."""
        answers, stamp = self.answers, msg.header.stamp  # (subscribed only with them)
        if answers is None:
            return
        foreign, stamp_ns = answers.foreign, stamp.sec * 1_000_000_000 + stamp.nanosec
        try:
            efforts = answers.take(stamp_ns, msg.name, msg.effort)
        except RneaError as exc:
            self.reject_command(str(exc))
            return
        if efforts is not None:
            self.apply_command(efforts)
        elif answers.foreign > foreign:
            self.get_logger().warning(foreign_warning(stamp_ns, self.sim.t),
                                      throttle_duration_sec=5.0)

    def on_command(self, msg: Float64MultiArray) -> None:
        data = np.asarray(msg.data, dtype=np.float64)
        if data.shape != self.command_index.shape or not np.all(np.isfinite(data)):
            self.reject_command(f"effort command of {data.size} values (expected "
                                f"{self.command_index.size} finite)")
            return
        self.apply_command(data)

    def reject_command(self, why: str) -> None:
        self.rejected += 1
        self.get_logger().warning(f"rejected {why}", throttle_duration_sec=1.0)

    def apply_command(self, data: np.ndarray) -> None:
        """Finite efforts in command order: clamped, applied (lockstep: one step)."""
        # Like a drive: the effort is clamped to the URDF limits (counted).
        clamped = np.clip(data, -self.effort_limit, self.effort_limit)
        self.clamped += int(np.count_nonzero(clamped != data))
        self.tau = np.zeros(self.n)
        self.tau[self.command_index] = clamped
        self.last_command_wall = time.monotonic()
        self.steps_since_command = 0
        if self.timeouts.active:
            self.log_commands_resumed()
        if self.lockstep:
            self.sim.step(self.tau)
            self.check_diverged()
            self.publish_state()

    def on_tick(self) -> None:
        if self.wait_for_command and self.last_command_wall == -np.inf:
            self.publish_state()  # brakes on until a controller answers
            return
        self.steps_since_command += 1
        timed_out = self.steps_since_command * self.sim.dt > self.command_timeout
        if timed_out:
            self.tau = np.zeros(self.n)
        if self.timeouts.step(timed_out):
            self.get_logger().warning(
                f"no effort command for {self.command_timeout:g} s (command_timeout, on the "
                f"robot's time): applying zero effort (timeout {self.timeouts.count})",
                throttle_duration_sec=1.0)
        self.sim.step(self.tau)
        self.check_diverged()
        self.publish_state()

    def log_commands_resumed(self) -> None:
        steps = self.timeouts.command()
        self.get_logger().info(f"effort commands resumed after {steps * self.sim.dt:.3f} s "
                               f"({steps} steps) of zero effort (command timeout)",
                               throttle_duration_sec=1.0)

    def resend(self) -> None:
        self.silent_firings += 1  # (publish_state resets it; a command publishes)
        if self.silent_firings * RESEND_PERIOD > RESEND_AFTER:
            self.publish_state()

    def imu_frame_link(self) -> str:
        return self.config.imu.link or self.links.root_link

    def publish_imu(self, sec: int, nanosec: int) -> None:
        """What the IMU reads at the current state (the last step's joint accelerations)."""
        sim, imu = self.sim, self.imu
        assert imu is not None and self.imu_pub is not None  # (imu.enable)
        t = sim.t
        _, p = self.base.pose(t)
        quat, w, f = imu.read(*sim.imu_state(), self.base.motion(t), p)
        quat, w, f = self.imu_noise.apply(quat, w, f,
                                          lambda R: imu.pin.Quaternion(R).coeffs())
        msg = self.imu_msg
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        o = msg.orientation
        if self.imu_orientation:
            o.x, o.y, o.z, o.w = (float(x) for x in quat)
        else:
            o.x, o.y, o.z, o.w = 0.0, 0.0, 0.0, 0.0
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = \
            (float(x) for x in w)
        a = msg.linear_acceleration
        a.x, a.y, a.z = (float(x) for x in f)
        self.imu_pub.publish(msg)

    def publish_state(self) -> None:
        sec = int(self.sim.t)
        nanosec = round((self.sim.t - sec) * 1e9)
        if nanosec >= 1_000_000_000:
            sec, nanosec = sec + 1, nanosec - 1_000_000_000
        if self.imu is not None:  # first: a controller then has the base's motion for the state
            self.publish_imu(sec, nanosec)
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
        # closed loops: the active joints, then the passive ones; else the coordinates,
        # then the followers (publish_mimic_joints); elastic: links then motors
        index = self.published if self.loops is not None else None
        msg.name, msg.position, msg.velocity, msg.effort = self.sim.joint_state(
            index, self.publish_followers and self.loops is None)
        if self.answers is not None:  # (before: its answer may come back at once)
            self.answers.published(sec * 1_000_000_000 + nanosec)
        self.state_pub.publish(msg)
        self.last_publish_wall = time.monotonic()
        self.silent_firings = 0
        if self.clock_pub is not None:
            clock = Clock()
            clock.clock = msg.header.stamp
            self.clock_pub.publish(clock)


    def publish_diagnostics(self) -> None:
        window = f"last {DIAGNOSTICS_WINDOW:g} s"
        timeouts = self.timeouts
        recent = self.window.update(time.monotonic(), {"rejected": self.rejected,
                                                       "timeouts": timeouts.count})
        values = {"simulated time [s]": f"{self.sim.t:.3f}", "rejected commands":
                  str(self.rejected), f"rejected commands ({window})": str(recent["rejected"]),
                  "clamped efforts": str(self.clamped),
                  "command timeouts": str(timeouts.count),
                  f"command timeouts ({window})": str(recent["timeouts"]),
                  "steps with zero effort (command timeout)": str(timeouts.steps)}
        diverged = self.sim.diverged
        values["engine"] = self.config.engine
        if self.answers is not None:  # lockstep_answers: what stepped nothing, and why not
            values["lockstep answers ignored (no waiting state)"] = str(self.answers.ignored)
            values["lockstep answers from another clock"] = str(self.answers.foreign)
        values.update(self.sim.diagnostics())
        if self.sim.capabilities.pushes:
            values.update({"pushes": str(self.pushes),
                           "rejected wrenches": str(self.rejected_wrenches)})
        if diverged:
            level, message = DiagnosticStatus.ERROR, "integration diverged: state held at rest"
            why = self.sim.instability
            if why:
                message = (f"integration unstable ({diverged} step(s) not taken; last at "
                           f"{why}): state held at rest, pushes cancelled")
        elif timeouts.active:
            level, message = DiagnosticStatus.WARN, (
                f"command timeout: no effort command for more than {self.command_timeout:g} "
                "s, applying zero effort")
        elif recent["timeouts"]:
            level, message = DiagnosticStatus.WARN, \
                f"command timeouts ({recent['timeouts']} in the {window})"
        elif recent["rejected"]:
            level, message = DiagnosticStatus.WARN, \
                f"rejecting some commands ({recent['rejected']} in the {window})"
        else:
            level, message = DiagnosticStatus.OK, "ok"
        status = DiagnosticStatus(level=level, name=status_name(self.get_fully_qualified_name()),
                                  message=message, hardware_id=self.links.name,
                                  values=[KeyValue(key=k, value=v) for k, v in values.items()])
        self.diagnostics_pub.publish(DiagnosticArray(status=[status]))


def main(args: list[str] | None = None) -> int:
    """``ros2 run rnea_ros simulator``."""
    return run(NODE_NAME, SimulatorNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
