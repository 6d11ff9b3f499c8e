"""Pinocchio as the oracle: the same URDF through Pinocchio's own parser, and
conversions between our joint order/coordinates and Pinocchio's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

from rnea_ros.core.model import RobotModel


class PinOracle:
    """Pinocchio model of ``urdf`` with our ``model``'s armature and gravity."""

    def __init__(self, urdf: Path, model: RobotModel) -> None:
        self.model = model
        self.pm = pin.buildModelFromUrdf(str(urdf))
        self.pd = self.pm.createData()
        assert self.pm.nv == model.nv, (self.pm.nv, model.nv)
        self.jid = [self.pm.getJointId(name) for name in model.joint_names]
        self.idx_v = np.array([self.pm.joints[j].idx_v for j in self.jid])
        self.idx_q = np.array([self.pm.joints[j].idx_q for j in self.jid])
        self.nq_j = np.array([self.pm.joints[j].nq for j in self.jid])
        armature = np.zeros(self.pm.nv)
        armature[self.idx_v] = model.armature
        self.pm.armature = armature
        self.pm.gravity.linear = np.array(model.gravity)

    def config(self, q: np.ndarray) -> np.ndarray:
        """Our q (one angle per continuous joint) -> Pinocchio's configuration."""
        out = np.zeros(self.pm.nq)
        for j, (iq, nq) in enumerate(zip(self.idx_q, self.nq_j, strict=True)):
            if nq == 2:
                out[iq], out[iq + 1] = np.cos(q[j]), np.sin(q[j])
            else:
                out[iq] = q[j]
        return out

    def vel(self, x: np.ndarray) -> np.ndarray:
        """Our joint order -> Pinocchio's tangent order."""
        out = np.zeros(self.pm.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x: np.ndarray) -> np.ndarray:
        """Pinocchio's tangent order -> ours (vectors; matrices on both axes)."""
        x = np.asarray(x)
        if x.ndim == 2:
            return x[np.ix_(self.idx_v, self.idx_v)]
        return x[self.idx_v]

    def forces(self, fext: np.ndarray) -> list:
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for j, jid in enumerate(self.jid):
            out[jid] = pin.Force(fext[j, :3], fext[j, 3:])
        return out

    def rnea(self, q, qd, qdd, fext=None):
        args = (self.pm, self.pd, self.config(q), self.vel(qd), self.vel(qdd))
        if fext is not None:
            args = (*args, self.forces(fext))
        return self.ours(pin.rnea(*args))

    def joint_wrenches(self) -> np.ndarray:
        """``data.f`` after :meth:`rnea`, as (n, 6) ``[force, moment]`` in our order."""
        return np.array([np.r_[self.pd.f[j].linear, self.pd.f[j].angular] for j in self.jid])

    def gravity(self, q):
        return self.ours(pin.computeGeneralizedGravity(self.pm, self.pd, self.config(q)))

    def nle(self, q, qd):
        return self.ours(pin.nonLinearEffects(self.pm, self.pd, self.config(q), self.vel(qd)))

    def mass_matrix(self, q):
        M = pin.crba(self.pm, self.pd, self.config(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.ours(M)

    def coriolis(self, q, qd):
        return self.ours(pin.computeCoriolisMatrix(self.pm, self.pd, self.config(q), self.vel(qd)))

    def aba(self, q, qd, tau, fext=None):
        args = (self.pm, self.pd, self.config(q), self.vel(qd), self.vel(tau))
        if fext is not None:
            args = (*args, self.forces(fext))
        return self.ours(pin.aba(*args))


def random_states(model: RobotModel, count: int, seed: int = 0):
    """``(q, qd, qdd)`` arrays (count, n): q within finite limits (else +-pi)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower_limit), model.lower_limit, -np.pi)
    hi = np.where(np.isfinite(model.upper_limit), model.upper_limit, np.pi)
    q = lo + (hi - lo) * rng.random((count, model.nv))
    qd = rng.normal(0.0, 2.0, (count, model.nv))
    qdd = rng.normal(0.0, 5.0, (count, model.nv))
    return q, qd, qdd


def relative_error(ours: np.ndarray, reference: np.ndarray) -> float:
    """max |ours - reference| / max |reference| over the whole batch."""
    scale = max(float(np.abs(reference).max()), 1e-12)
    return float(np.abs(np.asarray(ours) - np.asarray(reference)).max()) / scale
