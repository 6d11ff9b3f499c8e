"""Synthetic identification data: a "true" robot that differs from its URDF, and
exciting joint motions (finite Fourier series, Swevers et al. 1997) inside the
joint limits. The true torques come from Pinocchio's RNEA (independent of
our regressor) plus our friction model."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import PinocchioOracle


def true_robot(model: RobotModel, seed: int = 3) -> RobotModel:
    """Masses +-20 %, COMs shifted by up to 3 cm, armature and friction added."""
    rng = np.random.default_rng(seed)
    n = model.nv
    return model.replace(
        mass=model.mass * rng.uniform(0.8, 1.2, n),
        com=model.com + rng.uniform(-0.03, 0.03, (n, 3)),
        armature=rng.uniform(0.05, 0.3, n),
        coulomb=rng.uniform(0.3, 1.5, n),
        viscous=rng.uniform(0.1, 0.6, n),
    )


def fourier_motion(model: RobotModel, t: np.ndarray, seed: int = 0,
                   harmonics: int = 4, base_hz: float = 0.1, still: tuple[int, ...] = ()):
    """``(q, qd, qdd)`` (N, n): per joint a sum of ``harmonics`` sinusoids of
    ``base_hz`` multiples, centred in the joint range; joints in ``still`` stay put."""
    rng = np.random.default_rng(seed)
    n = model.nv
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -1.5)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, 1.5)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    q, qd, qdd = (np.tile(mid, (t.size, 1)), np.zeros((t.size, n)), np.zeros((t.size, n)))
    T = t[:, None]
    for k in range(1, harmonics + 1):
        w = 2 * np.pi * base_hz * k
        a = rng.uniform(-1, 1, n) * 0.35 * half / k
        b = rng.uniform(-1, 1, n) * 0.35 * half / k
        q = q + a * np.sin(w * T) + b * np.cos(w * T)
        qd = qd + w * (a * np.cos(w * T) - b * np.sin(w * T))
        qdd = qdd - w * w * (a * np.sin(w * T) + b * np.cos(w * T))
    for j in still:
        q[:, j], qd[:, j], qdd[:, j] = mid[j], 0.0, 0.0
    return q, qd, qdd


def true_torques(urdf, truth: RobotModel, q, qd, qdd, offsets=None, band: float = 0.0
                 ) -> np.ndarray:
    """Pinocchio's RNEA of the true inertias (set from ``truth``) + friction
    (Coulomb with the sign smoothed over ``|qd| < band``, viscous) + offsets."""
    import pinocchio as pin

    oracle = PinocchioOracle(urdf, truth)
    for j, jid in enumerate(oracle.jid):  # the true body inertias, about the body origin
        oracle.pm.inertias[jid] = pin.Inertia(float(truth.mass[j]), truth.com[j], truth.inertia[j])
    tau = np.array([oracle.rnea(a, b, c) for a, b, c in zip(q, qd, qdd, strict=True)])
    sign = np.sign(qd) if band == 0.0 else np.clip(qd / band, -1.0, 1.0)
    tau += truth.coulomb * sign + truth.viscous * qd
    if offsets is not None:
        tau += offsets
    return tau


def write_states_bag(path, names, t, q, effort, storage: str = "mcap",
                     velocity: np.ndarray | None = None) -> None:
    """A rosbag2 of ``sensor_msgs/JointState`` on ``/joint_states`` (header stamps ``t``)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    JointState = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    empty = np.zeros(0)
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        for k in range(t.size):
            stamp = float(t[k]) + 1.0
            sec = int(stamp)
            msg = JointState(header=Header(stamp=Time(sec=sec, nanosec=round((stamp - sec) * 1e9)),
                                           frame_id=""),
                             name=list(names), position=q[k],
                             velocity=velocity[k] if velocity is not None else empty,
                             effort=effort[k])
            writer.write(states, round(stamp * 1e9), ts.serialize_cdr(msg, JointState.__msgtype__))
