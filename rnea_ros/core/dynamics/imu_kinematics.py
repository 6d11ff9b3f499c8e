"""Kinematics of an IMU on a robot: a link frame's motion relative to the base, and the
sensor's readings moved to the base frame (numpy; the estimator that uses them is
:class:`rnea_ros.control.imu.ImuEstimator`).

Frames: ``w`` the world (the IMU's orientation reference), ``b`` the robot's base
(its root link), ``s`` the sensor, which is the frame of a URDF link. What an IMU
measures (REP-145), in ``s``: the orientation ``R_ws``, the angular velocity ``w_s``
[rad/s] and the **specific force** ``f_s = R_ws^T (a_s - g)`` [m/s^2] (an IMU at rest
reads ``+9.81`` up). With the sensor's pose ``R_bs, r`` and its motion relative to the
base ``w_rel, v_rel, a_rel`` (:func:`frame_motion`, base coordinates)::

    R_wb = R_ws R_bs^T                                     (base_orientation)
    w_b  = R_bs w_s - w_rel                                (base_angular_velocity)
    f_b  = R_bs f_s - dw_b x r - w_b x (w_b x r)
           - 2 w_b x v_rel - a_rel                         (base_specific_force)

``f_b`` is the specific force at the base origin: the rigid-body acceleration transfer
(Featherstone 2008 §2.11, classical accelerations), exact for a sensor on the base or
on a link welded to it. RNEA on a moving base needs the base's classical acceleration
and gravity only through ``a0 = a_b - R_wb^T g``, which *is* ``f_b`` (Khalil 2010 §7.1;
:class:`~rnea_ros.core.dynamics.moving_base.BaseMotion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import joint_transform
from rnea_ros.core.model.configuration import quaternion_matrix
from rnea_ros.core.model.joints import JOINT_KINDS
from rnea_ros.core.model.robot_model import Frame, RobotModel
from rnea_ros.core.spatial import skew

Array = NDArray[np.float64]


@dataclass(frozen=True)
class FrameMotion:
    """Pose and motion of a link frame relative to the base, in base coordinates:
    rotation ``R`` (3, 3) base <- frame, origin ``p`` (3,) [m], angular velocity
    ``w`` [rad/s], origin velocity ``v`` [m/s], angular acceleration ``dw`` and
    classical origin acceleration ``a`` (with the given ``qdd``; 0: the
    velocity-product terms only) [rad/s^2, m/s^2]."""

    R: Array
    p: Array
    w: Array
    v: Array
    dw: Array
    a: Array


def _chain(model: RobotModel, body: int) -> list[int]:
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    return chain[::-1]


def frame_motion(model: RobotModel, q: Array, qd: Array, frame: Frame | str,
                 qdd: Array | None = None) -> FrameMotion:
    """:class:`FrameMotion` of link ``frame`` (a name or ``model.link_frame(name)``)
    at ``q, qd`` (n,) (and ``qdd``, default zero), the base at rest. Recursion along the
    chain from the root (Featherstone 2008 §2.11: classical accelerations),
    numpy, about 10 us a body.

    Arguments as in Conventions: ``model``, ``q``, ``qd`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    frame : Frame or str
        Link name or ``model.link_frame(name)``.
    qdd : array_like of shape (nv,), optional
        Joint accelerations [rad/s^2, m/s^2] (``None``: zero).

    Returns
    -------
    FrameMotion
        Pose, twist and classical acceleration of the frame.
    """
    if isinstance(frame, str):
        frame = model.link_frame(frame)
    R, p = np.eye(3), np.zeros(3)
    w, v, dw, a = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
    fp = model.kernel_floats
    for i in _chain(model, frame.body):
        Rl, pl = joint_transform(fp, i, float(q[i]))
        d = R @ np.array(pl)  # parent origin -> body origin, base coordinates
        R_i = R @ np.array(Rl).reshape(3, 3)
        z = R_i @ model.axis[i]  # joint axis in base coordinates
        a = a + np.cross(dw, d) + np.cross(w, np.cross(w, d))
        v = v + np.cross(w, d)
        qddi = 0.0 if qdd is None else float(qdd[i])
        if JOINT_KINDS[model.joint_types[i]].prismatic:
            a = a + 2.0 * np.cross(w, z * qd[i]) + z * qddi
            v = v + z * qd[i]
        else:
            dw = dw + np.cross(w, z * qd[i]) + z * qddi
            w = w + z * qd[i]
        R, p = R_i, p + d
    d = R @ frame.translation
    return FrameMotion(R @ frame.rotation, p + d, w, v + np.cross(w, d), dw,
                       a + np.cross(dw, d) + np.cross(w, np.cross(w, d)))


def rotation_exp(phi: Array) -> Array:
    """``exp([phi])`` (3, 3) of a rotation vector ``phi`` (3,) [rad], Rodrigues' formula
    (second order below 1e-8 rad)."""
    angle = float(np.linalg.norm(phi))
    K = skew(phi)
    if angle < 1e-8:
        out: Array = np.eye(3) + K + 0.5 * K @ K
        return out
    out = np.eye(3) + math.sin(angle) / angle * K + (1.0 - math.cos(angle)) / angle**2 * K @ K
    return out


def base_orientation(sensor: FrameMotion, quaternion: Array) -> Array:
    """``R_wb = R_ws R_bs^T`` (3, 3) from the sensor's orientation ``quaternion`` (4,)
    ``[x, y, z, w]`` world <- sensor (normalised here) and its pose ``sensor.R``."""
    quat = np.asarray(quaternion, dtype=np.float64)
    out: Array = quaternion_matrix(quat / np.linalg.norm(quat)) @ sensor.R.T
    return out


def base_angular_velocity(sensor: FrameMotion, w_s: Array) -> Array:
    """``w_b = R_bs w_s - w_rel`` (3,) [rad/s]: the base's angular velocity from the
    gyroscope's ``w_s`` (sensor frame), the link's own rotation removed."""
    out: Array = sensor.R @ w_s - sensor.w
    return out


def base_specific_force(sensor: FrameMotion, f_s: Array, w_b: Array, dw_b: Array) -> Array:
    """``f_b`` (3,) [m/s^2]: the specific force at the base origin, base frame, from the
    accelerometer's ``f_s`` (sensor frame), the base's angular velocity ``w_b`` and
    acceleration ``dw_b`` (the rigid-body transfer of the module docstring)."""
    r = sensor.p
    out: Array = sensor.R @ f_s - np.cross(dw_b, r) - np.cross(w_b, np.cross(w_b, r)) \
        - 2.0 * np.cross(w_b, sensor.v) - sensor.a
    return out


__all__ = ["FrameMotion", "base_angular_velocity", "base_orientation", "base_specific_force",
           "frame_motion", "rotation_exp"]
