"""Write rosbag2 (or ROS 1) files of a simulated robot with known dynamics (tests, bench, demos).

The joint motion is a sum of sinusoids; the recorded ``effort`` is the exact
inverse dynamics (with the model's friction) plus Gaussian noise of a given
deviation; the commanded effort is the exact torque plus an offset, published
half a millisecond after each state. Optional effort spikes inject limit
violations at known times. A closed-loop robot (``loops``): the motion is on its
active joints, the passive ones are solved (and recorded with ``passive=True``), the
efforts are the active joints' (the passive joints' recorded effort is 0).

:func:`record_contacts` records a robot pushed on known links at known times, on a
plant the caller brings (MuJoCo for the contact tests of ``rnea-bag``), with the true
external joint torques.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_dynamics import loop_rnea_batch
from rnea_ros.core.coupling.loop_kinematics import loop_velocities, solve_loops_batch
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.jacobian import frame_jacobian
from rnea_ros.core.dynamics.kinematics import body_poses
from rnea_ros.core.dynamics.rnea import rnea, rnea_batch
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def write_bag(path: Path, model: RobotModel, *, duration: float = 5.0, rate: float = 1000.0,
              noise: float = 0.05, command_offset: float = 0.1, storage: str = "mcap",
              spikes: Sequence[tuple[float, float, int, float]] = (),
              steps: Sequence[tuple[float, float, int, float]] = (), seed: int = 0,
              nan_samples: Sequence[int] = (), robot_description: str | None = None,
              chunk: int = 50000, commands: bool = True,
              inverse_dynamics: Callable[[Array, Array, Array], Array] | None = None,
              followers: bool = True, follower_error: float = 0.0,
              loops: ClosedLoopModel | None = None, passive: bool = True,
              clock: float = 1.0) -> dict[str, object]:
    """Write the bag; returns the ground truth (times, positions) for checks.

    ``storage``: ``"mcap"`` or ``"sqlite3"`` (rosbag2 directory ``path``), or
    ``"ros1"`` (a ROS 1 ``.bag`` file ``path``); ``commands=False`` records no
    command topic. ``spikes``: ``(start [s], duration [s], joint index,
    effort)`` overrides of the recorded effort; ``steps``: ``(start [s], rise time [s],
    joint index, height)`` ramps added to the recorded effort from ``start`` on (a load
    picked up: an effort-rate of ``height / rise``); ``nan_samples``: sample indices
    whose position is NaN; ``inverse_dynamics(Q, QD, QDD)`` gives the true
    torques (N, n), by default our batch RNEA (tests pass Pinocchio's, to stay
    independent; closed loops: ``inverse_dynamics(Q_tree, QD_active, QDD_active)``, by
    default our ``loop_rnea_batch``). A model with mimic joints: the states also carry
    the followers (``followers=True``), after the joints, at ``multiplier q_leader +
    offset + follower_error`` (a wrong value to test the check) with zero effort.
    ``loops``: ``model`` is its tree; ``passive`` records the passive joints too.
    ``clock``: the first stamp [s since the epoch] (a fleet's bags of different days).
    """
    from rosbags.typesys import Stores, get_typestore

    from rnea_ros.tools.bag.sources import typestore

    ros1 = storage == "ros1"
    ts = get_typestore(Stores.ROS1_NOETIC) if ros1 else typestore()  # ROS 2's, the types used
    JointState = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    Multi = ts.types["std_msgs/msg/Float64MultiArray"]
    Layout = ts.types["std_msgs/msg/MultiArrayLayout"]
    String = ts.types["std_msgs/msg/String"]
    rng = np.random.default_rng(seed)
    n = model.nv if loops is None else loops.n_active
    amp, omega, phase = rng.uniform(0.2, 0.6, n), rng.uniform(1.0, 4.0, n), rng.uniform(0, 6, n)
    lower, upper = ((model.lower_limit, model.upper_limit) if loops is None else
                    (model.lower_limit[loops.active_index], model.upper_limit[loops.active_index]))
    mid = np.where(np.isfinite(lower), 0.5 * (lower + upper), 0.0)
    if loops is not None:  # within the actives' limits (a closed loop's are tight)
        amp = np.where(np.isfinite(lower), np.minimum(amp, 0.8 * 0.5 * (upper - lower)), amp)
    count = round(duration * rate)
    coupled = list(model.mimic_joints.values()) if followers and loops is None else []
    lead = [model.joint_index(m.leader) for m in coupled]
    mult = np.array([m.multiplier for m in coupled])
    off = np.array([m.offset for m in coupled]) + follower_error
    if loops is None:
        names = list(model.joint_names) + (list(model.mimic_joints) if coupled else [])
    else:
        names = list(loops.active_names) + (list(loops.passive_names) if passive else [])
    q_tree = None if loops is None else loops.q_reference
    serialize = ts.serialize_ros1 if ros1 else ts.serialize_cdr
    with _writer(path, storage) as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        if commands:
            command_topic = writer.add_connection("/effort_controller/commands",
                                                  Multi.__msgtype__, typestore=ts)
        if robot_description is not None:
            desc = writer.add_connection("/robot_description", String.__msgtype__, typestore=ts)
            writer.write(desc, 0 if not ros1 else 10**9,
                         serialize(String(data=robot_description), String.__msgtype__))
        for start in range(0, count, chunk):
            t = (np.arange(start, min(start + chunk, count)) / rate)[:, None]
            arg = omega * t + phase
            q = mid + amp * np.sin(arg)
            qd = amp * omega * np.cos(arg)
            qdd = -amp * omega**2 * np.sin(arg)
            if loops is None:
                tau = (inverse_dynamics(q, qd, qdd) if inverse_dynamics is not None
                       else rnea_batch(model, q, qd, qdd))
            else:
                Q = solve_loops_batch(loops, q, q_tree)
                q_tree = Q[-1]
                tau = (inverse_dynamics(Q, qd, qdd) if inverse_dynamics is not None
                       else loop_rnea_batch(loops, Q, qd, qdd))
            effort = tau + rng.normal(0.0, noise, tau.shape)
            for begin, rise, joint, height in steps:
                effort[:, joint] += height * np.clip((t[:, 0] - begin) / rise, 0.0, 1.0)
            for begin, length, joint, value in spikes:
                mask = (t[:, 0] >= begin) & (t[:, 0] < begin + length)
                effort[mask, joint] = value
            if coupled:  # the followers, after the joints
                q = np.hstack([q, mult * q[:, lead] + off])
                qd = np.hstack([qd, mult * qd[:, lead]])
                effort = np.hstack([effort, np.zeros((len(t), len(coupled)))])
            for k in range(len(t)):
                index = start + k
                stamp = float(t[k, 0]) + clock  # bag time starts at 1 s by default
                sec = int(stamp)
                position, velocity, measured = q[k].copy(), qd[k], effort[k]
                if loops is not None and passive:
                    p = loops.passive_index
                    position = np.r_[position, Q[k, p]]
                    velocity = np.r_[velocity, loop_velocities(loops, Q[k], qd[k])[p]]
                    measured = np.r_[measured, np.zeros(p.size)]
                if index in nan_samples:
                    position[0] = np.nan
                time = Time(sec=sec, nanosec=round((stamp - sec) * 1e9))
                header = (Header(seq=index, stamp=time, frame_id="") if ros1
                          else Header(stamp=time, frame_id=""))
                msg = JointState(header=header, name=names, position=position,
                                 velocity=velocity, effort=measured)
                ns = round(stamp * 1e9)
                writer.write(states, ns, serialize(msg, JointState.__msgtype__))
                if commands:
                    command = Multi(layout=Layout(dim=[], data_offset=0),
                                    data=tau[k] + command_offset)
                    writer.write(command_topic, ns + 500_000,
                                 serialize(command, Multi.__msgtype__))
    return {"count": count, "noise": noise, "offset": command_offset}


def _writer(path: Path, storage: str) -> Any:
    """A rosbags writer: rosbag2 (``"mcap"``, ``"sqlite3"``) or ROS 1 (``"ros1"``)."""
    if storage == "ros1":
        from rosbags.rosbag1 import Writer as Writer1

        return Writer1(path)
    from rosbags.rosbag2 import StoragePlugin, Writer

    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    return Writer(path, version=9, storage_plugin=plugin)


def write_recording(path: Path, names: Sequence[str],
                    states: Sequence[tuple[float, Sequence[float], Sequence[float],
                                           Sequence[float]]],
                    commands: Sequence[tuple[float, Sequence[float]]]) -> None:
    """Recorded ``/joint_states`` (``(t, position, velocity, effort)`` tuples, ``t`` [s])
    and ``/effort_controller/commands`` (``(t, data)``, written 1 ns after ``t``) as a
    rosbag2 (MCAP) directory ``path`` (e.g. a closed loop run in-process,
    ``rnea_ros.nodes.identification_loop``)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from rnea_ros.tools.bag.sources import typestore

    ts = typestore()
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



# ------------------------------------------------------------------- contacts
@dataclass(frozen=True)
class ContactPush:
    """A push of ``force`` [N] on ``link`` from ``start`` [s] for ``duration`` [s], at the
    link's centre of mass, held in the world frame, in the direction of largest moment
    about the link's own joint axis (so that joint feels it: :func:`push_direction`)."""

    link: str
    start: float
    duration: float
    force: float


class Plant(Protocol):
    """What :func:`record_contacts` drives (``rnea_ros.simulation``'s MuJoCo engine):
    the state, a step with held joint torques, and an external wrench on a link."""

    @property
    def q(self) -> Array: ...

    @property
    def qd(self) -> Array: ...

    def reset(self, q: Array, qd: Array | None = None, t: float = 0.0) -> None: ...

    def step(self, tau: Array) -> None: ...

    def apply_wrench(self, link: str, force: Array, torque: Array,
                     duration: float) -> None: ...


def push_direction(model: RobotModel, q: Array, link: str) -> tuple[Array, Array]:
    """A unit force direction (world) with the largest moment about ``link``'s own joint
    axis when applied at its centre of mass, and the COM's offset from the link origin
    (world axes)."""
    body = model.body_names.index(link)
    R, _ = body_poses(model, q)
    axis = R[body] @ model.axis[body]
    offset = R[body] @ model.com[body]
    d = np.cross(axis, offset)
    return d / np.linalg.norm(d), offset


def sines(model: RobotModel, t: float, speed: float, phase: float = 0.0
          ) -> tuple[Array, Array, Array]:
    """``q, qd, qdd`` of a tracking reference: sines about the middle of each joint's
    range, peak speed ``speed`` x its velocity limit (amplitude at most 40 % of the
    range); ``phase`` [rad] shifts joint ``j`` by ``j * phase``."""
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    w = np.linspace(2.0, 3.3, model.nv)  # [rad/s]
    amp = np.minimum(speed * model.velocity_limit / w,
                     0.4 * (model.upper_limit - model.lower_limit))
    arg = w * t + phase * np.arange(model.nv)
    return mid + amp * np.sin(arg), amp * w * np.cos(arg), -amp * w * w * np.sin(arg)


def record_contacts(path: Path, model: RobotModel, plant: Plant, pushes: Sequence[ContactPush],
                    *, duration: float, dt: float = 1e-3, speed: float = 1.0,
                    phase: float = 0.0, velocities: bool = True, efforts: bool = True,
                    clock: float = 1.0) -> dict[str, Array]:
    """A lockstep run written as a rosbag2 (MCAP) directory ``path``: ``plant`` (an engine
    other than ours, e.g. MuJoCo) tracks :func:`sines` in computed-torque control with
    our RNEA (``kp`` 400/s², ``kd`` 40/s), ``pushes`` applied as the plant's external
    wrenches. Lockstep: the controller runs between plant steps, so the recording does
    not depend on scheduling. Recorded per step ``k`` (stamp ``clock + k dt`` [s]):
    ``/joint_states`` (position, velocity unless ``velocities=False``, effort = the
    torque applied over the step unless ``efforts=False``) and the same torque on
    ``/effort_controller/commands``.

    Returns the truth: ``t`` (N,) the stamps [s], ``q``, ``qd``, ``tau`` (N, nv), and
    ``tau_ext`` (N, nv), the external joint torques ``J^T F`` over each step (the force
    at the COM, ``J`` of the link origin in world axes: moment ``offset x F``)."""
    q0, qd0, _ = sines(model, 0.0, speed, phase)
    plant.reset(q0, qd0)
    n = round(duration / dt)
    t = np.arange(n) * dt
    out = {k: np.zeros((n, model.nv)) for k in ("q", "qd", "tau", "tau_ext")}
    forces: dict[int, Array] = {}
    for k in range(n):
        q, qd = np.array(plant.q, dtype=np.float64), np.array(plant.qd, dtype=np.float64)
        qr, qdr, qddr = sines(model, float(t[k]), speed, phase)
        tau = rnea(model, q, qd, qddr + 400.0 * (qr - q) + 40.0 * (qdr - qd))
        for i, push in enumerate(pushes):
            if push.start <= t[k] < push.start + push.duration:
                d, offset = push_direction(model, q, push.link)
                if i not in forces:
                    forces[i] = push.force * d
                    plant.apply_wrench(push.link, forces[i], np.zeros(3), push.duration)
                J = frame_jacobian(model, q, push.link, "LOCAL_WORLD_ALIGNED")
                out["tau_ext"][k] += J.T @ np.r_[forces[i], np.cross(offset, forces[i])]
        out["q"][k], out["qd"][k], out["tau"][k] = q, qd, tau
        plant.step(tau)
    stamps = np.asarray(t + clock, dtype=np.float64)
    empty: list[float] = []
    write_recording(path, model.joint_names,
                    [(float(s), out["q"][k], out["qd"][k] if velocities else empty,
                      out["tau"][k] if efforts else empty) for k, s in enumerate(stamps)],
                    [(float(s), out["tau"][k]) for k, s in enumerate(stamps)])
    return {"t": stamps, **out}


# ------------------------------------------------------------------------- PR2
# The 45 names of a real PR2's /joint_states (pr2_mechanism's joint state controller),
# by role against example-robot-data's pr2.urdf (see PR2_ROLES): 20 coordinates (the
# mimic model's joints), 6 mimic followers, 14 joints that URDF has as fixed ones and
# 5 transmission joints it does not have at all.
PR2_CASTERS = tuple(f"{c}_caster_{part}_joint" for c in ("fl", "fr", "bl", "br")
                    for part in ("rotation", "l_wheel", "r_wheel"))
PR2_ARM = ("upper_arm_roll", "shoulder_pan", "shoulder_lift", "forearm_roll", "elbow_flex",
           "wrist_flex", "wrist_roll")
PR2_GRIPPER = ("gripper_joint", "gripper_l_finger_joint", "gripper_r_finger_joint",
               "gripper_r_finger_tip_joint", "gripper_l_finger_tip_joint",
               "gripper_motor_screw_joint", "gripper_motor_slider_joint")
PR2_JOINT_STATES = (
    *PR2_CASTERS, "torso_lift_joint", "torso_lift_motor_screw_joint", "head_pan_joint",
    "head_tilt_joint", "laser_tilt_mount_joint",
    *(f"{side}_{j}_joint" for side in ("r", "l") for j in PR2_ARM),
    *(f"{side}_{j}" for side in ("r", "l") for j in PR2_GRIPPER))
PR2_ROLES = {
    **{j: "fixed" for j in PR2_CASTERS},
    "torso_lift_motor_screw_joint": "absent",
    **{f"{s}_gripper_joint": "fixed" for s in "rl"},
    **{f"{s}_gripper_{j}_joint": "follower" for s in "rl"
       for j in ("r_finger", "l_finger_tip", "r_finger_tip")},
    **{f"{s}_gripper_motor_{j}_joint": "absent" for s in "rl" for j in ("screw", "slider")},
}
# Transmission-side joints, illustrative: metres of torso lift per motor-screw radian,
# gripper gap [m] at the fingers' full opening, screw radians and slider metres per m of gap.
_TORSO_SCREW, _GAP_OPEN, _GAP_SCREW, _GAP_SLIDER = -3.1e-4, 0.09, 2300.0, 0.5


def write_pr2_bag(path: Path, model: RobotModel, *, duration: float = 2.0,
                  rate: float = 1000.0, noise: float = 0.05, seed: int = 0,
                  inverse_dynamics: Callable[[Array, Array, Array], Array] | None = None
                  ) -> dict[str, object]:
    """A ROS 1 ``.bag`` with what a real PR2 publishes on ``/joint_states``: the 45
    names of :data:`PR2_JOINT_STATES` (no command topic, no ``/robot_description``:
    ROS 1 kept it as a parameter).

    ``model``: example-robot-data's pr2.urdf with its mimic joints as followers
    (``load_urdf(path, mimic=True)``, 20 coordinates). The coordinates move as sums of
    sinusoids within their limits, the grippers open and close; the followers take
    ``multiplier q_leader + offset`` exactly (the URDF's coupling); the casters turn
    and roll; the transmission joints follow the torso and the gripper opening
    (illustrative ratios). Recorded effort: ``inverse_dynamics(Q, QD, QDD)`` of the
    coordinates (default our batch RNEA; tests pass Pinocchio's) plus noise, zero for
    every other name. Returns the ground truth: ``t``, ``q``, ``qd``, ``qdd`` (N, 20).
    """
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS1_NOETIC)
    JointState = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    rng = np.random.default_rng(seed)
    n, count = model.nv, round(duration * rate)
    t = np.arange(count)[:, None] / rate
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -0.5)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, 0.5)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    amp = np.minimum(rng.uniform(0.2, 0.4, n), 0.8 * half)
    omega, phase = rng.uniform(1.0, 3.0, n), rng.uniform(0.0, 6.0, n)
    q = mid + amp * np.sin(omega * t + phase)
    qd = amp * omega * np.cos(omega * t + phase)
    qdd = -amp * omega**2 * np.sin(omega * t + phase)
    tau = inverse_dynamics(q, qd, qdd) if inverse_dynamics is not None else \
        rnea_batch(model, q, qd, qdd)
    effort = tau + rng.normal(0.0, noise, tau.shape)
    index = {name: k for k, name in enumerate(PR2_JOINT_STATES)}
    Q, QD, E = (np.zeros((count, len(index))) for _ in range(3))
    for j, name in enumerate(model.joint_names):
        Q[:, index[name]], QD[:, index[name]] = q[:, j], qd[:, j]
        E[:, index[name]] = effort[:, j]
    for name, m in model.mimic_joints.items():
        if name in index:
            leader = model.joint_index(m.leader)
            Q[:, index[name]] = m.multiplier * q[:, leader] + m.offset
            QD[:, index[name]] = m.multiplier * qd[:, leader]
    for k, name in enumerate(PR2_CASTERS):
        w = 0.3 + 0.05 * k  # the base drives: casters swivel, wheels roll on
        if "rotation" in name:
            Q[:, index[name]], QD[:, index[name]] = 0.5 * np.sin(w * t[:, 0]), \
                0.5 * w * np.cos(w * t[:, 0])
        else:
            Q[:, index[name]], QD[:, index[name]] = 4.0 * w * t[:, 0], 4.0 * w
    torso = model.joint_index("torso_lift_joint")
    Q[:, index["torso_lift_motor_screw_joint"]] = q[:, torso] / _TORSO_SCREW
    QD[:, index["torso_lift_motor_screw_joint"]] = qd[:, torso] / _TORSO_SCREW
    for side in "rl":
        finger = model.joint_index(f"{side}_gripper_l_finger_joint")
        top = model.upper_limit[finger]
        gap = _GAP_OPEN * np.sin(q[:, finger]) / np.sin(top)
        gap_rate = _GAP_OPEN * np.cos(q[:, finger]) * qd[:, finger] / np.sin(top)
        for name, ratio in (("gripper_joint", 1.0), ("gripper_motor_screw_joint", _GAP_SCREW),
                            ("gripper_motor_slider_joint", _GAP_SLIDER)):
            Q[:, index[f"{side}_{name}"]] = ratio * gap
            QD[:, index[f"{side}_{name}"]] = ratio * gap_rate
    names = list(PR2_JOINT_STATES)
    with _writer(path, "ros1") as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        for k in range(count):
            stamp = float(t[k, 0]) + 1000.0  # the recording starts at 1000 s
            sec = int(stamp)
            time = Time(sec=sec, nanosec=round((stamp - sec) * 1e9))
            msg = JointState(header=Header(seq=k, stamp=time, frame_id=""), name=names,
                             position=Q[k], velocity=QD[k], effort=E[k])
            writer.write(states, round(stamp * 1e9), ts.serialize_ros1(msg,
                                                                       JointState.__msgtype__))
    return {"t": t[:, 0] + 1000.0, "q": q, "qd": qd, "qdd": qdd, "count": count}
