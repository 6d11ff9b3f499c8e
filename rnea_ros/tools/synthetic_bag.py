"""Write rosbag2 (or ROS 1) files of a simulated robot with known dynamics (tests, bench, demos).

The joint motion is a sum of sinusoids; the recorded ``effort`` is the exact
inverse dynamics (with the model's friction) plus Gaussian noise of a given
deviation; the commanded effort is the exact torque plus an offset, published
half a millisecond after each state. Optional effort spikes inject limit
violations at known times. A closed-loop robot (``loops``): the motion is on its
active joints, the passive ones are solved (and recorded with ``passive=True``), the
efforts are the active joints' (the passive joints' recorded effort is 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_dynamics import loop_rnea_batch
from rnea_ros.core.coupling.loop_kinematics import loop_velocities, solve_loops_batch
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.rnea import rnea_batch
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


def write_bag(path: Path, model: RobotModel, *, duration: float = 5.0, rate: float = 1000.0,
              noise: float = 0.05, command_offset: float = 0.1, storage: str = "mcap",
              spikes: Sequence[tuple[float, float, int, float]] = (), seed: int = 0,
              nan_samples: Sequence[int] = (), robot_description: str | None = None,
              chunk: int = 50000, commands: bool = True,
              inverse_dynamics: Callable[[Array, Array, Array], Array] | None = None,
              loops: ClosedLoopModel | None = None, passive: bool = True
              ) -> dict[str, object]:
    """Write the bag; returns the ground truth (times, positions) for checks.

    ``storage``: ``"mcap"`` or ``"sqlite3"`` (rosbag2 directory ``path``), or
    ``"ros1"`` (a ROS 1 ``.bag`` file ``path``); ``commands=False`` records no
    command topic. ``spikes``: ``(start [s], duration [s], joint index,
    effort)`` overrides of the recorded effort; ``nan_samples``: sample indices
    whose position is NaN; ``inverse_dynamics(Q, QD, QDD)`` gives the true
    torques (N, n), by default our batch RNEA (tests pass Pinocchio's, to stay
    independent; closed loops: ``inverse_dynamics(Q_tree, QD_active, QDD_active)``, by
    default our ``loop_rnea_batch``). ``loops``: ``model`` is its tree; ``passive``
    records the passive joints too.
    """
    from rosbags.typesys import Stores, get_typestore

    ros1 = storage == "ros1"
    ts = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_KILTED)
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
    names = list(model.joint_names) if loops is None else \
        list(loops.active_names) + (list(loops.passive_names) if passive else [])
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
            for begin, length, joint, value in spikes:
                mask = (t[:, 0] >= begin) & (t[:, 0] < begin + length)
                effort[mask, joint] = value
            for k in range(len(t)):
                index = start + k
                stamp = float(t[k, 0]) + 1.0  # bag time starts at 1 s
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
