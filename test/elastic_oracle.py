"""Pinocchio oracle for mixed rigid/elastic robots: the *augmented* tree.

Each motor becomes a Pinocchio body of its own (mass and inertia
``diag(I_mx, I_mx, I_mz)``, axisymmetric), on a revolute joint about its axis,
child of the joint of the link carrying it. Its angle is ``phi = eta psi``
(``psi = theta_k`` or ``q_j``): a constant linear map ``x = G y`` from our
coordinates ``y = [q; theta]`` to Pinocchio's. Then, exactly (Lagrange with a
constant coupling), generalized forces are ``G^T tau_pin(x, G yd, G ydd)`` and
the mass matrix ``G^T M_pin G``; the spring adds ``K (theta - q)``. This
checks Algorithm 1 with none of its own assumptions (unified bodies, spin terms).
"""

from __future__ import annotations

import numpy as np
from oracle import PinOracle

from rnea_ros.core.elastic import ElasticModel, JointDrive, MotorSpec
from rnea_ros.core.model import RobotModel

__all__ = ["AugmentedOracle", "random_drives"]


def _frame_with_z(z: np.ndarray) -> np.ndarray:
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


class AugmentedOracle:
    def __init__(self, urdf, model: ElasticModel) -> None:
        self.model = model
        self.o = PinOracle(urdf, model.links)
        pin = self.o.pin
        pm = self.o.pm
        rotor_ids = []
        for m in range(model.motor_joint.size):
            body = int(model.motor_body[m])
            parent = 0 if body < 0 else self.o.jid[body]
            placement = pin.SE3(_frame_with_z(model.motor_axis[m]), model.motor_position[m])
            jid = pm.addJoint(parent, pin.JointModelRZ(), placement, f"rotor_{m}")
            Ixy, _, Iz = model.motor_inertia[m]
            pm.appendBodyToJoint(jid, pin.Inertia(float(model.motor_mass[m]), np.zeros(3),
                                                  np.diag([Ixy, Ixy, Iz])), pin.SE3.Identity())
            rotor_ids.append(jid)
        armature = np.zeros(pm.nv)
        armature[self.o.idx_v] = model.links.armature
        pm.armature = armature
        self.pd = pm.createData()
        self.o.pd = self.pd
        self.rotor_v = np.array([pm.joints[j].idx_v for j in rotor_ids], dtype=int)
        self.rotor_q = np.array([pm.joints[j].idx_q for j in rotor_ids], dtype=int)
        n, ne = model.n, model.n_elastic
        G = np.zeros((pm.nv, n + ne))
        G[self.o.idx_v, np.arange(n)] = 1.0
        for m, j in enumerate(model.motor_joint):
            k = int(np.searchsorted(model.elastic_joints, j))
            col = n + k if model.elastic[j] else j
            G[self.rotor_v[m], col] = model.gear_ratio[m]
        self.G = G

    def _config(self, q, theta):
        x = self.o.config(q)
        y = np.r_[q, theta]
        x[self.rotor_q] = (self.G @ y)[self.rotor_v]
        return x

    def generalized_forces(self, q, theta, qd, thetad, qdd, thetadd, fext=None):
        """``G^T tau_pin``: (n + n_e,) generalized forces of the rigid-body part."""
        pin = self.o.pin
        args = [self.o.pm, self.pd, self._config(q, theta), self.G @ np.r_[qd, thetad],
                self.G @ np.r_[qdd, thetadd]]
        if fext is not None:
            args.append(self.o.forces(fext))
        return self.G.T @ pin.rnea(*args)

    def motor_torques(self, q, theta, qd, thetad, qdd, thetadd, fext=None):
        """``(tau (n,), tau_link (n,))`` as :func:`elastic_rnea` returns them."""
        m = self.model
        Q = self.generalized_forces(q, theta, qd, thetad, qdd, thetadd, fext)
        n, e = m.n, m.elastic_joints
        tau, tau_link = Q[:n].copy(), Q[:n].copy()
        tau[e] = Q[n:] + m.spring_torque(q, theta, qd, thetad)
        return tau, tau_link

    def mass_matrix(self, q, theta):
        """``G^T M G`` column by column with ``pinocchio.rnea`` (its CRBA assumes each
        subtree contiguous in the tangent vector, which appended rotors break)."""
        pin, pm = self.o.pin, self.o.pm
        gravity = pm.gravity.linear.copy()
        pm.gravity.linear = np.zeros(3)
        x, zero = self._config(q, theta), np.zeros(pm.nv)
        M = np.column_stack([pin.rnea(pm, self.pd, x, zero, self.G[:, j])
                             for j in range(self.G.shape[1])])
        pm.gravity.linear = gravity
        return self.G.T @ M


def random_drives(links: RobotModel, rng: np.random.Generator, *, elastic: float = 0.5,
                  on_parent: bool = True) -> list[JointDrive]:
    """Random motors for every joint (some elastic): on the joint's parent link
    (``on_parent``) or on any link that precedes it, random axes, positions and gears."""
    link_of = {-1: links.root_link}
    for name, frame in links.frames.items():
        link_of.setdefault(frame.body, name)
    drives = []
    for i, joint in enumerate(links.joint_names):
        par = int(links.parent[i])
        if on_parent:
            body = par
        else:
            ancestors = [-1]
            b = par
            while b >= 0:
                ancestors.append(b)
                b = int(links.parent[b])
            body = int(rng.choice(ancestors))
        Ixy = rng.uniform(0.001, 0.01)
        Iz = Ixy * rng.uniform(0.2, 1.9)  # triangle inequality: Iz <= 2 Ixy
        motor = MotorSpec(link=link_of[body], inertia=(Ixy, Ixy, Iz),
                          gear_ratio=float(rng.choice([1.0, rng.uniform(2.0, 100.0)])),
                          axis=tuple(rng.normal(size=3)), position=tuple(rng.normal(0, 0.1, 3)),
                          mass=float(rng.uniform(0.1, 1.0)))
        is_elastic = bool(rng.random() < elastic)
        drives.append(JointDrive(joint, stiffness=rng.uniform(50, 5000) if is_elastic else None,
                                 damping=rng.uniform(0, 2) if is_elastic else 0.0, motor=motor))
    return drives
