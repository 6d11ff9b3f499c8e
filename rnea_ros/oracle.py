"""Pinocchio as the oracle (never the engine): the same URDF through Pinocchio's
own parser, and conversions between our joint order/coordinates and Pinocchio's.

Pinocchio represents a continuous joint by ``(cos q, sin q)`` and may order
joints differently; :class:`PinocchioOracle` maps by joint name. It copies the
model's armature and gravity; friction is ours alone (Pinocchio's RNEA has
none), so compare against ``model.without_friction()`` or add
:func:`~rnea_ros.core.rnea.friction_torques`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import ModelError
from rnea_ros.core.model import RobotModel
from rnea_ros.core.payload import Payload
from rnea_ros.core.tree import as_inertia

Array = NDArray[np.float64]


class PinocchioOracle:
    """Pinocchio model of ``urdf`` (path or XML string) matched to ``model``."""

    def __init__(self, urdf: str | Path, model: RobotModel) -> None:
        import pinocchio as pin  # optional dependency: only the oracle needs it

        self.pin = pin
        self.model = model
        text = str(urdf)
        if isinstance(urdf, Path) or not text.lstrip().startswith("<"):
            self.pm = pin.buildModelFromUrdf(text)
        else:
            self.pm = pin.buildModelFromXML(text)
        self.pd = self.pm.createData()
        if self.pm.nv != model.nv:
            raise ModelError(f"Pinocchio sees {self.pm.nv} joint velocities in '{model.name}', "
                             f"we see {model.nv}")
        self.jid = [self.pm.getJointId(name) for name in model.joint_names]
        self.idx_v = np.array([self.pm.joints[j].idx_v for j in self.jid])
        self.idx_q = np.array([self.pm.joints[j].idx_q for j in self.jid])
        self.nq_j = np.array([self.pm.joints[j].nq for j in self.jid])
        armature = np.zeros(self.pm.nv)
        armature[self.idx_v] = model.armature
        self.pm.armature = armature
        self.pm.gravity.linear = np.array(model.gravity)

    def add_payload(self, payload: Payload) -> None:
        """Add ``payload`` (see :mod:`rnea_ros.core.payload`) to the body carrying its link."""
        pin = self.pin
        frame = self.pm.frames[self.pm.getFrameId(payload.link)]
        inertia = as_inertia(payload.inertia, "payload")
        body = pin.Inertia(float(payload.mass), np.asarray(payload.com, dtype=np.float64), inertia)
        joint = frame.parentJoint
        self.pm.inertias[joint] = self.pm.inertias[joint] + frame.placement.act(body)

    def config(self, q: Array) -> Array:
        """Our ``q`` (one angle per continuous joint) -> Pinocchio's configuration."""
        out = np.zeros(self.pm.nq)
        for j, (iq, nq) in enumerate(zip(self.idx_q, self.nq_j, strict=True)):
            if nq == 2:
                out[iq], out[iq + 1] = np.cos(q[j]), np.sin(q[j])
            else:
                out[iq] = q[j]
        return out

    def tangent(self, x: Array) -> Array:
        """A vector in our joint order -> Pinocchio's tangent order."""
        out = np.zeros(self.pm.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x: Any) -> Array:
        """Pinocchio's tangent order -> ours (vectors; square matrices on both axes)."""
        a: Array = np.asarray(x, dtype=np.float64)
        out: Array = a[np.ix_(self.idx_v, self.idx_v)] if a.ndim == 2 else a[self.idx_v]
        return out

    def forces(self, fext: Array) -> list[Any]:
        """Our ``fext`` (n, 6) ``[force, torque]`` per body -> Pinocchio's per-joint forces."""
        pin = self.pin
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for j, jid in enumerate(self.jid):
            out[jid] = pin.Force(fext[j, :3], fext[j, 3:])
        return out

    def rnea(self, q: Array, qd: Array, qdd: Array, fext: Array | None = None) -> Array:
        """``pinocchio.rnea`` in our conventions (no friction)."""
        args: tuple[Any, ...] = (self.pm, self.pd, self.config(q), self.tangent(qd),
                                 self.tangent(qdd))
        if fext is not None:
            args = (*args, self.forces(fext))
        return self.ours(self.pin.rnea(*args))

    def joint_wrenches(self) -> Array:
        """``data.f`` after :meth:`rnea`: (n, 6) ``[force, moment]`` per joint, in our order."""
        return np.array([np.r_[self.pd.f[j].linear, self.pd.f[j].angular] for j in self.jid])

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
