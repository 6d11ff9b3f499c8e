"""Pinocchio's constrained dynamics as the oracle of closed loops (cross-checks only:
tests and benchmarks), on the same URDF and the same cut joints.

Pinocchio (4.1) offers 3D point and 6D frame constraints only
(``pin.RigidConstraintModel`` with ``CONTACT_3D``/``CONTACT_6D``): our
``spherical`` cut is one 3D point, ``weld`` one 6D frame, ``revolute`` two 3D
points on its axis (six rows, five independent), or one point when the loop is
planar (its other rows vanish). Redundant rows need a proximal ``mu > 0``
(1e-8 here); Pinocchio's constraint force acts on joint 1 and is expressed in
the local frame of placement 1, our cut wrenches' convention. ``prismatic``
has no Pinocchio equivalent. Pinocchio has no friction: the oracle subtracts
ours from the applied torques.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.dynamics.kinematics import body_poses
from rnea_ros.core.dynamics.rnea import friction_torques
from rnea_ros.core.errors import ModelError
from rnea_ros.oracle import PinocchioOracle

Array = NDArray[np.float64]
AXIS_POINT = 0.1  # [m] second point on a revolute cut's axis


def planar_loop(model: ClosedLoopModel, l: int) -> bool:
    """Loop ``l`` moves in planes normal to its cut's ``z`` (every loop joint revolute
    about a parallel axis or prismatic normal to it), at the reference."""
    R, _ = body_poses(model.tree, model.q_reference)
    b, Rf, _ = model.cut_frame(l, 1)
    z = R[b] @ Rf[:, 2] if b >= 0 else Rf[:, 2]
    for name in model.loop_joints(l):
        j = model.tree.joint_index(name)
        along = abs(float((R[j] @ model.tree.axis[j]) @ z))
        if abs(along - (0.0 if model.tree.joint_types[j] == "prismatic" else 1.0)) > 1e-12:
            return False
    return True


def pinocchio_constraints(oracle: PinocchioOracle, model: ClosedLoopModel
                          ) -> tuple[list[Any], list[Any]]:
    """Pinocchio constraint models and datas for ``model``'s loops (initialised)."""
    pin = oracle.pin
    constraints = []
    for l, loop in enumerate(model.loops):
        if loop.type == "prismatic":
            raise ModelError(f"loop '{loop.name}': Pinocchio has no prismatic constraint")
        joints, placements = [], []
        for side in (1, 2):
            body, R, p = model.cut_frame(l, side)
            joints.append(oracle.jid[body] if body >= 0 else 0)
            placements.append((R, p))
        kind = pin.ContactType.CONTACT_6D if loop.type == "weld" else pin.ContactType.CONTACT_3D
        points = [0.0]
        if loop.type == "revolute" and not planar_loop(model, l):
            points.append(AXIS_POINT)
        for offset in points:
            se3 = [pin.SE3(R, p + offset * R[:, 2]) for R, p in placements]
            constraints.append(pin.RigidConstraintModel(
                kind, oracle.pm, joints[0], se3[0], joints[1], se3[1], pin.ReferenceFrame.LOCAL))
    datas = [c.createData() for c in constraints]
    pin.initConstraintDynamics(oracle.pm, oracle.pd, constraints, datas)
    return constraints, datas


class LoopOracle:
    """``pin.constraintDynamics`` on the URDF ``urdf`` with ``model``'s cut joints."""

    def __init__(self, urdf: str | Path, model: ClosedLoopModel) -> None:
        self.model = model
        self.tree = PinocchioOracle(urdf, model.tree)
        self.pin = self.tree.pin
        self.constraints, self.datas = pinocchio_constraints(self.tree, model)
        self.planar = [planar_loop(model, l) for l in range(len(model.loops))]
        self.settings = self.pin.ProximalSettings(1e-14, 1e-8, 200)

    def accelerations(self, q: Array, qd: Array, tau_active: Array) -> tuple[Array, Array]:
        """Tree accelerations (n,) and cut wrenches (B, 6) ``[f; n]`` on link 1 in frame 1
        under the active torques, passive torques zero (friction of every joint
        subtracted, as Pinocchio has none)."""
        m, o = self.model, self.tree
        tau = np.zeros(m.n)
        tau[m.active_index] = tau_active
        tau -= friction_torques(m.tree, qd)
        a = self.pin.constraintDynamics(o.pm, o.pd, o.config(q), o.tangent(qd), o.tangent(tau),
                                        self.constraints, self.datas, self.settings)
        forces = np.asarray(o.pd.lambda_c).copy()
        wrenches = np.zeros((len(m.loops), 6))
        k = 0
        for l, loop in enumerate(m.loops):
            if loop.type == "weld":
                wrenches[l] = forces[k:k + 6]
                k += 6
            elif loop.type == "spherical" or self.planar[l]:
                wrenches[l, :3] = forces[k:k + 3]
                k += 3
            elif loop.type == "revolute":  # two points on the axis: the resultant at the first
                fa, fb = forces[k:k + 3], forces[k + 3:k + 6]
                wrenches[l, :3] = fa + fb
                wrenches[l, 3:] = np.cross([0.0, 0.0, AXIS_POINT], fb)
                k += 6
            else:  # refused when the constraints were built (prismatic)
                raise ModelError(f"loop '{loop.name}': no Pinocchio constraint for cut type "
                                 f"'{loop.type}' (valid: weld, spherical, revolute)")
        return o.ours(a), wrenches

    def active_torques(self, q: Array, qd: Array, qdd_active: Array) -> Array:
        """Pinocchio's closed-loop inverse dynamics: the active torques (N,) under which
        :meth:`accelerations` gives the active accelerations ``qdd_active`` at the closed
        ``q`` with tree velocities ``qd`` (n,). The accelerations are affine in the
        torques: N + 1 forward solves give the map, one linear solve inverts it."""
        m = self.model

        def active(tau: Array) -> Array:
            return self.accelerations(q, qd, tau)[0][m.active_index]

        bias = active(np.zeros(m.n_active))
        B = np.column_stack([active(e) - bias for e in np.eye(m.n_active)])
        return np.asarray(np.linalg.solve(B, np.asarray(qdd_active) - bias), dtype=np.float64)


__all__ = ["LoopOracle", "pinocchio_constraints", "planar_loop"]
