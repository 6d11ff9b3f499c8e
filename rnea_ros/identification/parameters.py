"""The identification parameter set and its regressor.

``tau = W(q, qd, qdd) theta`` with ``theta`` (14 n,) = the core regressor's
``10 n`` inertial parameters (Pinocchio's order per body: ``m, mx, my, mz,
Ixx, Ixy, Iyy, Ixz, Iyz, Izz`` about the body origin), then four drive
parameters per joint: armature ``Ia`` (``qdd``), viscous ``Fv`` (``qd``),
Coulomb ``Fc`` (``sgn_band(qd)``) and an offset ``off`` (1): Khalil 2010
eq. 31 plus the offset of Gautier's friction model (Khalil & Dombre,
Modeling, Identification and Control of Robots, ch. 14). The Coulomb sign
is smoothed over a band ``|qd| < band`` (linear, ``sgn_band(x) = clip(x /
band, -1, 1)``; ``band = 0`` is the exact sign of the core's RNEA).

One body per joint: robots with multi-DoF or mimic joints (URDF ``<mimic>``) are
refused (:data:`IDENTIFICATION` names the feature in the error) before any data
is read.

Asymmetric Coulomb friction (``Fc+`` for ``qd > 0``, ``Fc-`` for ``qd < 0``)
is the same model in motion: ``Fc+ = Fc + off``, ``Fc- = Fc - off``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.regressor import (
    INERTIAL_NAMES,
    joint_torque_regressor_batch,
    parameter_vector,
)
from rnea_ros.core.dynamics.rnea import coulomb_signs
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

DRIVE_NAMES = ("Ia", "Fv", "Fc", "off")
PER_BODY = len(INERTIAL_NAMES)
PER_JOINT = len(DRIVE_NAMES)
# What RobotModel.require_one_dof names when a model has mimic or multi-DoF joints.
IDENTIFICATION = "identification (rnea-identify: one body and one regressor column block per joint)"


def count(model: RobotModel) -> int:
    """Number of identification parameters, ``14 n``."""
    return (PER_BODY + PER_JOINT) * model.nv


def names(model: RobotModel) -> list[str]:
    """Parameter names: ``'Ixx@link2'``, ``'Fc@joint3'``..."""
    out = [f"{p}@{body}" for body in model.body_names for p in INERTIAL_NAMES]
    return out + [f"{p}@{joint}" for joint in model.joint_names for p in DRIVE_NAMES]


def drive_index(model: RobotModel, joint: int, which: str) -> int:
    """Column of drive parameter ``which`` (one of ``DRIVE_NAMES``) of joint index ``joint``."""
    return PER_BODY * model.nv + PER_JOINT * joint + DRIVE_NAMES.index(which)


def from_model(model: RobotModel, offsets: Array | None = None) -> Array:
    """``theta`` (14 n,) of a model (its URDF inertias, armature, friction), offsets 0."""
    core = parameter_vector(model, drives=True)  # 10 n, then (Ia, Fv, Fs) per joint
    n = model.nv
    theta = np.zeros(count(model))
    theta[:PER_BODY * n] = core[:PER_BODY * n]
    drive = theta[PER_BODY * n:].reshape(n, PER_JOINT)
    drive[:, :3] = core[PER_BODY * n:].reshape(n, 3)
    if offsets is not None:
        drive[:, 3] = offsets
    return theta


def smoothed_sign(x: Array, band: float) -> Array:
    """``sgn_band(x)``: ``x / band`` clipped to ``[-1, 1]``; the sign itself when ``band = 0``:
    the core's law (:func:`rnea_ros.core.coulomb_signs`), which the controller's friction
    compensation (``friction.coulomb_band``) and the contact observer use too."""
    return coulomb_signs(x, band)


def regressor(model: RobotModel, q: Array, qd: Array, qdd: Array, band: float = 0.0,
              coulomb: Array | None = None) -> Array:
    """``W`` (N, n, 14 n) for samples ``q, qd, qdd`` (N, n); ``coulomb`` (N, n)
    replaces the Coulomb column ``sgn_band(qd)`` (e.g. by its filtered version)."""
    N, n = q.shape
    core = joint_torque_regressor_batch(model, q, qd, qdd, drives=False)
    W = np.zeros((N, n, count(model)))
    W[:, :, :PER_BODY * n] = core
    rows = np.arange(n)
    base = PER_BODY * n + PER_JOINT * rows
    W[:, rows, base] = qdd
    W[:, rows, base + 1] = qd
    W[:, rows, base + 2] = smoothed_sign(qd, band) if coulomb is None else coulomb
    W[:, rows, base + 3] = 1.0
    return W


def body_parameters(theta: Array, body: int) -> tuple[float, Array, Array]:
    """``(m, h = m c, I_o)`` of ``body`` from ``theta``: mass, first moment and the
    rotational inertia about the body origin (3, 3), in the body frame."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = theta[PER_BODY * body:PER_BODY * body + PER_BODY]
    return float(m), np.array([hx, hy, hz]), np.array([[xx, xy, xz], [xy, yy, yz],
                                                        [xz, yz, zz]])


def to_com(m: float, h: Array, Io: Array) -> tuple[Array, Array]:
    """``(c, I_c)``: centre of mass and inertia about it from ``(m, h, I_o)`` (``m > 0``)."""
    c = h / m
    return c, Io - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
