"""Test helpers around the Pinocchio oracle: random states and the error measure."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.oracle import PinocchioOracle as PinOracle

__all__ = ["PinOracle", "pinocchio_rnea_derivatives", "random_states", "relative_error"]


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


def pinocchio_rnea_derivatives(o: PinOracle, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                               fext: np.ndarray | None = None
                               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pinocchio's ``computeRNEADerivatives`` ``(dtau/dq, dtau/dqd, M)`` in our conventions
    (with ``mimic="eliminate"``, the followers as independent joints folded back by
    ``G^T (.) G``: the chain rule done by hand on an independent engine)."""
    args = [o.pm, o.pd, o.config(q), o.tangent(qd), o.tangent(qdd)]
    if fext is not None:
        args.append(o.forces(fext))
    dq, dv, M = o.pin.computeRNEADerivatives(*args)
    M = np.triu(M) + np.triu(M, 1).T  # Pinocchio fills the upper triangle
    return o.ours(dq), o.ours(dv), o.ours(M)
