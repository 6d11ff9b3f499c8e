"""Joint types: their configuration and velocity sizes and how the kernels see them.

Pinocchio's layout, so states move between the two without conversion:

============  ====  ====  =====================================  ==========================
type          nq    nv    q                                      v (body-local)
============  ====  ====  =====================================  ==========================
revolute      1     1     angle                                  angular rate
continuous    1     1     angle (one number, not cos/sin)        angular rate
prismatic     1     1     displacement                           linear rate
free-flyer    7     6     ``[x y z qx qy qz qw]``                ``[v; w]`` (linear, angular)
planar        4     3     ``[x y cos(th) sin(th)]``              ``[vx vy wz]``
spherical     4     3     ``[qx qy qz qw]``                      ``w``
============  ====  ====  =====================================  ==========================

The pose of a multi-DoF joint is ``(R(q), p(q))`` of the body frame in the joint
frame: free-flyer ``(R(quat), (x, y, z))``, planar ``(Rz(th), (x, y, 0))`` (the
joint frame's xy plane), spherical ``(R(quat), 0)``. Velocities are in the
body frame (Pinocchio's ``LOCAL``); accelerations are their time derivatives.

For the compiled kernels each multi-DoF joint becomes a chain of 1-DoF
*sub-joints* on coincident frames (:data:`SUB_JOINTS`; Khalil 2010 models a
spherical joint the same way, three concurrent revolute axes), one per velocity
coordinate and in the same order, so the kernel's sub-joint velocities are
exactly ``v``.
"""

from __future__ import annotations

from dataclasses import dataclass

ONE_DOF = ("revolute", "continuous", "prismatic")
MULTI_DOF = ("free-flyer", "planar", "spherical")
JOINT_TYPES = ONE_DOF + MULTI_DOF

JOINT_NQ = {"revolute": 1, "continuous": 1, "prismatic": 1,
            "free-flyer": 7, "planar": 4, "spherical": 4}
JOINT_NV = {"revolute": 1, "continuous": 1, "prismatic": 1,
            "free-flyer": 6, "planar": 3, "spherical": 3}

# Sub-joints of a multi-DoF joint, in velocity order: (prismatic?, axis index x/y/z),
# all expressed in the body frame.
SUB_JOINTS: dict[str, tuple[tuple[bool, int], ...]] = {
    "free-flyer": ((True, 0), (True, 1), (True, 2), (False, 0), (False, 1), (False, 2)),
    "planar": ((True, 0), (True, 1), (False, 2)),
    "spherical": ((False, 0), (False, 1), (False, 2)),
}

# Configuration entries that must form a unit vector (quaternion, or cos/sin), per type.
UNIT_PARTS = {"free-flyer": (3, 7), "planar": (2, 4), "spherical": (0, 4)}
UNIT_TOLERANCE = 1e-6  # | |quaternion| - 1 | allowed; never silently normalised


@dataclass(frozen=True)
class MimicJoint:
    """A follower joint (URDF ``<mimic>``): it owns no coordinate.

    It moves body ``body`` about/along its own ``axis`` (the model's per-body
    arrays) by ``q_f = multiplier * q_leader + offset``, so ``v_f = multiplier *
    v_leader`` and ``a_f = multiplier * a_leader``; the leader's generalized
    force gets ``multiplier`` times the follower's. ``type`` is a 1-DoF type;
    ``leader`` names a 1-DoF coordinate joint of the model (chains of mimics are
    resolved to their root leader when the model is built).
    """

    body: int
    type: str
    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


__all__ = ["JOINT_NQ", "JOINT_NV", "JOINT_TYPES", "MULTI_DOF", "ONE_DOF", "SUB_JOINTS",
           "UNIT_PARTS", "UNIT_TOLERANCE", "MimicJoint"]
