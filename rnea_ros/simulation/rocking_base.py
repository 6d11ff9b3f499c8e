"""Moving base and IMU of the simulator: :class:`RockingBase` (a prescribed rocking,
heaving platform) and :class:`ImuSensor` (what an IMU on a link reads, from
Pinocchio's free-flyer kinematics, not our code).

Moving base (``base=`` of :class:`rnea_ros.simulation.Simulator`): the base
follows the prescribed motion whatever the arm does (a ship, a platform), and the
joints obey ``M(q) qdd = tau - h(q, qd, base_motion(t))`` with our ``mass_matrix``
and ``nonlinear_effects(..., base_motion=)`` (Khalil 2010 §7.1; Pinocchio's ABA has
no prescribed-root form; a test checks the step's accelerations against
Pinocchio's free-flyer rows of M and h).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


def _rx(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _ry(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@dataclass(frozen=True)
class RockingBase:
    """A prescribed base motion: a rocking, heaving platform.

    ``roll(t) = roll_offset + roll_amplitude sin(2 pi roll_frequency t)`` [rad]
    about the base's x axis, ``pitch(t)`` likewise about y, ``R_wb = Ry(pitch)
    Rx(roll)`` (URDF/ROS roll-pitch-yaw, zero yaw); the base origin at
    ``(0, 0, heave_amplitude sin(2 pi heave_frequency t))`` [m] in the world.
    Starting with sines, the angular and linear accelerations are zero at t = 0.
    """

    roll_amplitude: float = 0.0
    roll_frequency: float = 0.0
    pitch_amplitude: float = 0.0
    pitch_frequency: float = 0.0
    heave_amplitude: float = 0.0
    heave_frequency: float = 0.0
    roll_offset: float = 0.0
    pitch_offset: float = 0.0
    _cache: list[Any] = field(default_factory=lambda: [None, None], init=False, repr=False,
                              compare=False)  # [t, motion(t)]

    def __post_init__(self) -> None:
        for name, value in ((f.name, getattr(self, f.name)) for f in fields(self) if f.init):
            if not math.isfinite(value):
                raise ParameterError(f"base motion: '{name}' must be finite, got {value}")
            if name.endswith("frequency") and value < 0.0:
                raise ParameterError(f"base motion: '{name}' must be >= 0 Hz, got {value}")

    @property
    def moving(self) -> bool:
        """Whether the base ever leaves the fixed, level pose."""
        return any((self.roll_amplitude, self.pitch_amplitude, self.heave_amplitude,
                    self.roll_offset, self.pitch_offset))

    @staticmethod
    def _sine(offset: float, amplitude: float, frequency: float, t: float
              ) -> tuple[float, float, float]:
        w = 2.0 * math.pi * frequency
        s, c = math.sin(w * t), math.cos(w * t)
        return offset + amplitude * s, amplitude * w * c, -amplitude * w * w * s

    def pose(self, t: float) -> tuple[Array, Array]:
        """``(R_wb (3, 3), p_w (3,))`` at time ``t`` [s]."""
        roll = self._sine(self.roll_offset, self.roll_amplitude, self.roll_frequency, t)[0]
        pitch = self._sine(self.pitch_offset, self.pitch_amplitude, self.pitch_frequency, t)[0]
        z = self._sine(0.0, self.heave_amplitude, self.heave_frequency, t)[0]
        return _ry(pitch) @ _rx(roll), np.array([0.0, 0.0, z])

    def motion(self, t: float) -> BaseMotion:
        """The :class:`BaseMotion` at ``t`` (base frame, classical linear acceleration);
        the last one is cached (a step and the IMU after it ask for the same ``t``)."""
        cache = self._cache
        if cache[0] != t:
            cache[:] = [t, self._motion(t)]
        motion: BaseMotion = cache[1]
        return motion

    def _motion(self, t: float) -> BaseMotion:
        phi, dphi, ddphi = self._sine(self.roll_offset, self.roll_amplitude,
                                      self.roll_frequency, t)
        th, dth, ddth = self._sine(self.pitch_offset, self.pitch_amplitude,
                                   self.pitch_frequency, t)
        _, dz, ddz = self._sine(0.0, self.heave_amplitude, self.heave_frequency, t)
        R = _ry(th) @ _rx(phi)
        # w_b = R^T (dth e_y + Ry dphi e_x) = dphi e_x + dth Rx^T e_y
        ey_b = np.array([0.0, math.cos(phi), -math.sin(phi)])
        w = np.array([dphi, 0.0, 0.0]) + dth * ey_b
        dw = np.array([ddphi, 0.0, 0.0]) + ddth * ey_b + \
            dth * dphi * np.array([0.0, -math.sin(phi), -math.cos(phi)])
        return BaseMotion(orientation=R, angular_velocity=w, angular_acceleration=dw,
                          linear_velocity=R.T @ np.array([0.0, 0.0, dz]),
                          linear_acceleration=R.T @ np.array([0.0, 0.0, ddz]))


class ImuSensor:
    """What an ideal IMU whose frame is link ``link`` reads, the robot at ``q, qd, qdd``
    on a base moving as ``motion`` at ``pose``: REP-145 fields in the sensor frame,
    ``(orientation [x, y, z, w] world <- sensor, angular velocity [rad/s], specific
    force [m/s^2] = R_ws^T (a_s - g))``. Pinocchio's free-flyer kinematics
    (``getFrameClassicalAcceleration``), independent of our code; ``gravity`` (3,)
    in the world frame."""

    def __init__(self, oracle: PinocchioOracle, link: str, gravity: Array) -> None:
        pin = oracle.pin
        self.oracle, self.pin = oracle, pin
        self.pm, self.pd, _, _, _ = oracle.free_flyer()
        if not self.pm.existFrame(link, pin.BODY):
            raise ParameterError(f"IMU link '{link}' is not a link of the URDF")
        self.frame = self.pm.getFrameId(link, pin.BODY)
        self.gravity = np.asarray(gravity, dtype=np.float64)

    def read(self, q: Array, qd: Array, qdd: Array, motion: BaseMotion, position: Array
             ) -> tuple[Array, Array, Array]:
        pin = self.pin
        qf, vf, af = self.oracle.moving_base_state(motion, q, qd, qdd)
        qf[:3] = position
        pin.forwardKinematics(self.pm, self.pd, qf, vf, af)
        pin.updateFramePlacement(self.pm, self.pd, self.frame)
        R_ws = self.pd.oMf[self.frame].rotation
        w = pin.getFrameVelocity(self.pm, self.pd, self.frame, pin.LOCAL).angular
        a = pin.getFrameClassicalAcceleration(self.pm, self.pd, self.frame, pin.LOCAL).linear
        quat = pin.Quaternion(R_ws).coeffs()
        return np.array(quat), np.array(w), np.array(a) - R_ws.T @ self.gravity
