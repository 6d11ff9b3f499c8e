"""Pinocchio as the oracle: the same URDF through Pinocchio's own parser, and
conversions between our joint order/coordinates and Pinocchio's.

It is never the engine of our controllers or tools (they run the core); it is
the cross-check of the tests, the demo and the live check, and the engine of
the rigid simulator (:class:`rnea_ros.simulation.rigid.Simulator`: Pinocchio's
ABA integrates the plant our controller commands, so the loop closes on an
independent implementation).

Pinocchio represents a continuous joint by ``(cos q, sin q)`` and may order
joints differently; :class:`PinocchioOracle` maps by joint name. It copies the
model's armature and gravity; friction is ours alone (Pinocchio's RNEA has
none), so compare against ``model.without_friction()`` or add
:func:`~rnea_ros.core.dynamics.rnea.friction_torques`. Multi-DoF joints share
Pinocchio's layout (copied slice by slice); a model whose first joint is
``root_joint`` gets Pinocchio's ``JointModelFreeFlyer``/``JointModelPlanar``
root. Mimic joints: Pinocchio's ``mimic=True`` parser (``mimic="pinocchio"``),
or (``mimic="eliminate"``, for URDFs that parser rejects) its default parser with
the followers as independent joints, eliminated by the constant map
``v_tree = G v``: ``tau = G^T tau_tree``, ``M = G^T M_tree G`` (exact for a
constant linear coupling). Closed loops and parallel
robots (``pin.constraintDynamics`` with our cut joints): :mod:`rnea_ros.loop_oracle`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import ModelError
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.tree import as_inertia

Array = NDArray[np.float64]


class PinocchioOracle:
    """Pinocchio model of ``urdf`` (path or XML string) matched to ``model``."""

    def __init__(self, urdf: str | Path, model: RobotModel, *, mimic: str = "pinocchio") -> None:
        import pinocchio as pin  # optional dependency: only the oracle needs it

        self.pin = pin
        self.model = model
        self.urdf = urdf
        self.payloads: list[Payload] = []
        self._free_flyer: tuple[Any, Any, Array, Array, Array] | None = None
        root: list[Any] = []
        if model.joint_names[0] == "root_joint" and model.joint_types[0] in ("free-flyer",
                                                                           "planar"):
            root = [pin.JointModelFreeFlyer() if model.joint_types[0] == "free-flyer"
                    else pin.JointModelPlanar()]
        if mimic not in ("pinocchio", "eliminate"):
            raise ModelError(f"mimic='{mimic}' is not 'pinocchio' or 'eliminate'")
        self.eliminate = mimic == "eliminate" and bool(model.mimic_joints)
        pin_mimic = bool(model.mimic_joints) and not self.eliminate
        self._pin_mimic = pin_mimic
        self.pm = self._build(*root)
        self.pd = self.pm.createData()
        if self.eliminate:
            self._eliminated(model)
            return
        if self.pm.nv != model.nv:
            raise ModelError(f"Pinocchio sees {self.pm.nv} joint velocities in '{model.name}', "
                             f"we see {model.nv}")
        self.jid = [self.pm.getJointId(name) for name in model.joint_names]
        self.idx_v = np.concatenate([np.arange(self.pm.joints[j].idx_v,
                                               self.pm.joints[j].idx_v + self.pm.joints[j].nv)
                                     for j in self.jid]).astype(np.int64)
        self.idx_q = np.array([self.pm.joints[j].idx_q for j in self.jid])
        self.nq_j = np.array([self.pm.joints[j].nq for j in self.jid])
        movers = {int(b): name for name, b in zip(model.joint_names, model.joint_body,
                                                  strict=True)}
        movers.update({m.body: name for name, m in model.mimic_joints.items()})
        self.body_jid = [self.pm.getJointId(movers[b]) for b in range(model.nbodies)]
        armature = np.zeros(self.pm.nv)
        armature[self.idx_v] = model.armature
        self.pm.armature = armature
        self.pm.gravity.linear = np.array(model.gravity)

    def _build(self, root: Any = None) -> Any:
        pin, text = self.pin, str(self.urdf)
        args = () if root is None else (root,)
        if isinstance(self.urdf, Path) or not text.lstrip().startswith("<"):
            return pin.buildModelFromUrdf(text, *args, mimic=self._pin_mimic)
        return pin.buildModelFromXML(text, *args, mimic=self._pin_mimic)

    def _eliminated(self, model: RobotModel) -> None:
        """The mapping when followers are Pinocchio joints of their own (``G``)."""
        pm = self.pm
        self.jid = [pm.getJointId(name) for name in model.joint_names]
        self.idx_q = np.array([pm.joints[j].idx_q for j in self.jid])
        self.nq_j = np.array([pm.joints[j].nq for j in self.jid])
        self.G = np.zeros((pm.nv, model.nv))
        self.idx_v = np.concatenate([np.arange(pm.joints[j].idx_v, pm.joints[j].idx_v
                                               + pm.joints[j].nv) for j in self.jid])
        self.G[self.idx_v, np.arange(model.nv)] = 1.0
        self.followers = []
        for name, m in model.mimic_joints.items():
            joint = pm.joints[pm.getJointId(name)]
            leader = model.joint_names.index(m.leader)
            self.G[joint.idx_v, model.idx_v[leader]] = m.multiplier
            self.followers.append((joint.idx_q, int(model.idx_q[leader]), m.multiplier,
                                   m.offset))
        movers = {int(b): name for name, b in zip(model.joint_names, model.joint_body,
                                                  strict=True)}
        movers.update({m.body: name for name, m in model.mimic_joints.items()})
        self.body_jid = [pm.getJointId(movers[b]) for b in range(model.nbodies)]
        armature = np.zeros(pm.nv)
        armature[self.idx_v] = model.armature
        pm.armature = armature
        pm.gravity.linear = np.array(model.gravity)

    def add_payload(self, payload: Payload) -> None:
        """Add ``payload`` (:mod:`rnea_ros.core.model.payload`) to the body carrying its link."""
        self._add_payload(self.pm, payload)
        self.payloads.append(payload)
        self._free_flyer = None

    def _add_payload(self, pm: Any, payload: Payload) -> None:
        pin = self.pin
        frame = pm.frames[pm.getFrameId(payload.link)]
        inertia = as_inertia(payload.inertia, "payload")
        body = pin.Inertia(float(payload.mass), np.asarray(payload.com, dtype=np.float64), inertia)
        joint = frame.parentJoint
        pm.inertias[joint] = pm.inertias[joint] + frame.placement.act(body)

    def free_flyer(self) -> tuple[Any, Any, Array, Array, Array]:
        """The same robot under a free-flyer root (built once): model, data, and our
        joints' ``idx_q``, ``nq``, ``idx_v`` in it."""
        if self._free_flyer is None:
            pin = self.pin
            pm = self._build(pin.JointModelFreeFlyer())
            for payload in self.payloads:
                self._add_payload(pm, payload)
            joints = [pm.joints[pm.getJointId(name)] for name in self.model.joint_names]
            idx_v = np.array([j.idx_v for j in joints])
            armature = np.zeros(pm.nv)
            armature[idx_v] = self.model.armature
            pm.armature = armature
            pm.gravity.linear = np.array(self.model.gravity)
            self._free_flyer = (pm, pm.createData(), np.array([j.idx_q for j in joints]),
                                np.array([j.nq for j in joints]), idx_v)
        return self._free_flyer

    def moving_base_state(self, motion: BaseMotion, q: Array, qd: Array, qdd: Array
                          ) -> tuple[Array, Array, Array]:
        """Free-flyer ``(q, v, a)`` for our joint state on a base following ``motion``
        (base at the origin; Pinocchio's local free-flyer velocity, spatial acceleration
        ``a - w x v``)."""
        pm, _, idx_q, nq, idx_v = self.free_flyer()
        qf = np.zeros(pm.nq)
        qf[3:7] = self.pin.Quaternion(np.asarray(motion.orientation)).coeffs()
        for j, (iq, n) in enumerate(zip(idx_q, nq, strict=True)):
            if n == 2:
                qf[iq], qf[iq + 1] = np.cos(q[j]), np.sin(q[j])
            else:
                qf[iq] = q[j]
        vf, af = np.zeros(pm.nv), np.zeros(pm.nv)
        w, v = motion.angular_velocity, motion.linear_velocity
        vf[:3], vf[3:6], vf[idx_v] = v, w, qd
        af[:3] = motion.linear_acceleration - (w[1] * v[2] - w[2] * v[1], w[2] * v[0] -
                                               w[0] * v[2], w[0] * v[1] - w[1] * v[0])
        af[3:6], af[idx_v] = motion.angular_acceleration, qdd
        return qf, vf, af

    def moving_base_rnea(self, motion: BaseMotion, q: Array, qd: Array, qdd: Array) -> Array:
        """Joint torques of ``pinocchio.rnea`` under a free-flyer root following
        ``motion`` (Khalil 2010 §7.1 by another engine; no friction)."""
        pm, pd, _, _, idx_v = self.free_flyer()
        tau = self.pin.rnea(pm, pd, *self.moving_base_state(motion, q, qd, qdd))
        out: Array = np.asarray(tau)[idx_v]
        return out

    def config(self, q: Array) -> Array:
        """Our ``q`` (one angle per continuous joint) -> Pinocchio's configuration."""
        out = np.zeros(self.pm.nq)
        ours_q, ours_nq = self.model.idx_q, self.model.joint_nq
        for j, (iq, nq) in enumerate(zip(self.idx_q, self.nq_j, strict=True)):
            k = int(ours_q[j])
            if nq == 2 and ours_nq[j] == 1:  # continuous: one angle -> (cos, sin)
                out[iq], out[iq + 1] = np.cos(q[k]), np.sin(q[k])
            else:
                out[iq:iq + nq] = q[k:k + nq]
        if self.eliminate:
            for iq_f, iq_l, mult, offset in self.followers:
                out[iq_f] = mult * q[iq_l] + offset
        return out

    def tangent(self, x: Array) -> Array:
        """A velocity or acceleration in our order -> Pinocchio's tangent (``G x``)."""
        if self.eliminate:
            return np.asarray(self.G @ x, dtype=np.float64)
        out = np.zeros(self.pm.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x: Any) -> Array:
        """Pinocchio's generalized forces (vectors) or square matrices -> ours
        (``G^T x``, ``G^T X G``)."""
        a: Array = np.asarray(x, dtype=np.float64)
        if self.eliminate:
            G = self.G
            return np.asarray(G.T @ a @ G if a.ndim == 2 else G.T @ a, dtype=np.float64)
        out: Array = a[np.ix_(self.idx_v, self.idx_v)] if a.ndim == 2 else a[self.idx_v]
        return out

    def forces(self, fext: Array) -> list[Any]:
        """Our ``fext`` (nbodies, 6) ``[force, torque]`` per body -> Pinocchio's per-joint
        forces."""
        pin = self.pin
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for b, jid in enumerate(self.body_jid):
            out[jid] = pin.Force(fext[b, :3], fext[b, 3:])
        return out

    def rnea(self, q: Array, qd: Array, qdd: Array, fext: Array | None = None) -> Array:
        """``pinocchio.rnea`` in our conventions (no friction)."""
        args: tuple[Any, ...] = (self.pm, self.pd, self.config(q), self.tangent(qd),
                                 self.tangent(qdd))
        if fext is not None:
            args = (*args, self.forces(fext))
        return self.ours(self.pin.rnea(*args))

    def link_acceleration(self, q: Array, qd: Array, qdd: Array, link: str) -> Array:
        """``[dv/dt, dw/dt]`` (6,) of link ``link``'s origin, base frame, at the tree state
        ``(q, qd, qdd)`` (our joint order; classical acceleration: ``dv/dt`` is the rate
        of the origin's velocity), by ``forwardKinematics``."""
        pin = self.pin
        pin.forwardKinematics(self.pm, self.pd, self.config(q), self.tangent(qd),
                              self.tangent(qdd))
        acc = pin.getFrameClassicalAcceleration(self.pm, self.pd, self.pm.getFrameId(link),
                                                pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        out: Array = np.r_[acc.linear, acc.angular]
        return out

    def joint_wrenches(self) -> Array:
        """``data.f`` after :meth:`rnea`: (nbodies, 6) ``[force, moment]`` per body's joint,
        in our order."""
        return np.array([np.r_[self.pd.f[j].linear, self.pd.f[j].angular]
                         for j in self.body_jid])

    def gravity(self, q: Array) -> Array:
        """``pinocchio.computeGeneralizedGravity``."""
        return self.ours(self.pin.computeGeneralizedGravity(self.pm, self.pd, self.config(q)))

    def nonlinear_effects(self, q: Array, qd: Array) -> Array:
        """``pinocchio.nonLinearEffects``."""
        return self.ours(self.pin.nonLinearEffects(self.pm, self.pd, self.config(q),
                                                   self.tangent(qd)))

    def mass_matrix(self, q: Array) -> Array:
        """``pinocchio.crba``, symmetrised."""
        M = self.pin.crba(self.pm, self.pd, self.config(q))
        return self.ours(np.triu(M) + np.triu(M, 1).T)

    def coriolis(self, q: Array, qd: Array) -> Array:
        """``pinocchio.computeCoriolisMatrix``."""
        return self.ours(self.pin.computeCoriolisMatrix(self.pm, self.pd, self.config(q),
                                                        self.tangent(qd)))

    def aba(self, q: Array, qd: Array, tau: Array, fext: Array | None = None) -> Array:
        """``pinocchio.aba`` in our conventions (no friction)."""
        args: tuple[Any, ...] = (self.pm, self.pd, self.config(q), self.tangent(qd),
                                 self.tangent(tau))
        if fext is not None:
            args = (*args, self.forces(fext))
        return self.ours(self.pin.aba(*args))


def _frame_with_z(z: Array) -> Array:
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


class AugmentedOracle:
    """Pinocchio oracle of a mixed rigid/elastic robot: the *augmented* tree.

    Each motor becomes a Pinocchio body of its own (mass and inertia
    ``diag(I_mx, I_mx, I_mz)``: axisymmetric), on a revolute joint about its
    axis, child of the joint of the link carrying it. Its angle is
    ``phi = eta psi`` (``psi = theta_k`` or ``q_j``): a constant linear map
    ``x = G y`` from our coordinates ``y = [q; theta]`` to Pinocchio's. Then,
    exactly (Lagrange with a constant coupling), the generalized forces are
    ``G^T tau_pin(x, G yd, G ydd)`` and the mass matrix ``G^T M_pin G``; the
    spring adds ``K (theta - q)``. None of hua-2024's own constructions (unified
    bodies, spin terms) is used.
    """

    def __init__(self, urdf: str | Path, model: ElasticModel) -> None:
        self.model = model
        self.o = PinocchioOracle(urdf, model.links)
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

    def _config(self, q: Array, theta: Array) -> Array:
        x = self.o.config(q)
        y = np.r_[q, theta]
        x[self.rotor_q] = (self.G @ y)[self.rotor_v]
        return x

    def generalized_forces(self, q: Array, theta: Array, qd: Array, thetad: Array, qdd: Array,
                           thetadd: Array, fext: Array | None = None) -> Array:
        """``G^T tau_pin``: (n + n_e,) generalized forces of the rigid-body part."""
        pin = self.o.pin
        args = [self.o.pm, self.pd, self._config(q, theta), self.G @ np.r_[qd, thetad],
                self.G @ np.r_[qdd, thetadd]]
        if fext is not None:
            args.append(self.o.forces(fext))
        return np.asarray(self.G.T @ pin.rnea(*args), dtype=np.float64)

    def motor_torques(self, q: Array, theta: Array, qd: Array, thetad: Array, qdd: Array,
                      thetadd: Array, fext: Array | None = None) -> tuple[Array, Array]:
        """``(tau (n,), tau_link (n,))`` as :func:`elastic_rnea` returns them."""
        m = self.model
        Q = self.generalized_forces(q, theta, qd, thetad, qdd, thetadd, fext)
        n, e = m.n, m.elastic_joints
        tau, tau_link = Q[:n].copy(), Q[:n].copy()
        tau[e] = Q[n:] + m.spring_torque(q, theta, qd, thetad)
        return tau, tau_link

    def mass_matrix(self, q: Array, theta: Array) -> Array:
        """``G^T M G`` column by column with ``pinocchio.rnea`` (its CRBA assumes each
        subtree contiguous in the tangent vector, which appended rotors break)."""
        pin, pm = self.o.pin, self.o.pm
        gravity = pm.gravity.linear.copy()
        pm.gravity.linear = np.zeros(3)
        x, zero = self._config(q, theta), np.zeros(pm.nv)
        M = np.column_stack([pin.rnea(pm, self.pd, x, zero, self.G[:, j])
                             for j in range(self.G.shape[1])])
        pm.gravity.linear = gravity
        return np.asarray(self.G.T @ M, dtype=np.float64)
