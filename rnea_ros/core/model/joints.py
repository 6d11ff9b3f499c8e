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

Each type is one :class:`JointKind` record in :data:`JOINT_KINDS`; the tables
``JOINT_NQ``, ``JOINT_NV``, ``SUB_JOINTS``, ``UNIT_PARTS``, ``ANCHOR_KINDS``,
``SUB_COUNT`` (and ``configuration.JOINT_SIZES``) are derived from it.

For the compiled kernels each multi-DoF joint becomes a chain of 1-DoF
*sub-joints* on coincident frames (:data:`SUB_JOINTS`; Khalil 2010 models a
spherical joint the same way, three concurrent revolute axes), one per velocity
coordinate and in the same order, so the kernel's sub-joint velocities are
exactly ``v``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rnea_ros.core._layout import FREE_FLYER, PLANAR, SPHERICAL
from rnea_ros.core.errors import ModelError

UNIT_TOLERANCE = 1e-6  # | |quaternion| - 1 | allowed; never silently normalised

# The Lie group a joint's configuration lives in (configuration.py holds one set of
# operations per group): "vector" (R^nq, q + v; nq = nv), "SO3" (unit quaternion),
# "SE2" ([x y cos sin]), "SE3" ([x y z quaternion]).
LIE_GROUPS = ("vector", "SO3", "SE2", "SE3")
# What the unit-norm part of q is called, per group that has one (error messages).
UNIT_NAMES = {"SO3": "quaternion [x, y, z, w]", "SE3": "quaternion [x, y, z, w]",
              "SE2": "(cos, sin) pair"}


@dataclass(frozen=True)
class JointKind:
    """Everything the package knows about one joint type, in one record.

    ``nq``, ``nv``: configuration and velocity sizes (Pinocchio's layout).
    ``subs``: a multi-DoF joint's 1-DoF sub-joints in velocity order, each
    ``(prismatic?, axis index 0/1/2 = x/y/z)`` in the body frame (empty for a
    1-DoF joint, which is its own kernel row). ``unit``: the ``q`` entries
    ``[lo, hi)`` of the joint's block that must form a unit vector (quaternion
    or ``cos, sin``), or ``None``. ``code``: the kernel map's anchor kind
    (:mod:`rnea_ros.core._layout`; ``-1`` for 1-DoF joints), which every
    compiled kernel branches on explicitly (``_expansion_jit.joint_pose``,
    ``joint_corr``, ``sub_count``); an unknown code raises there. ``group``: the
    Lie group of ``q`` (one of :data:`LIE_GROUPS`), which picks the
    configuration operations (``configuration.integrate`` etc.); a ``"vector"``
    joint has ``nq = nv`` and no unit part, the others a unit part.
    ``prismatic``: a 1-DoF joint whose coordinate is a displacement [m] (else an
    angle [rad]); a multi-DoF joint's coordinates say it in ``subs``.
    """

    name: str
    nq: int
    nv: int
    subs: tuple[tuple[bool, int], ...] = ()
    unit: tuple[int, int] | None = None
    code: int = -1
    group: str = "vector"
    prismatic: bool = False

    def __post_init__(self) -> None:
        if self.subs and len(self.subs) != self.nv:
            raise ModelError(f"joint kind '{self.name}': {len(self.subs)} sub-joints, nv = "
                             f"{self.nv}")
        if self.group not in LIE_GROUPS:
            raise ModelError(f"joint kind '{self.name}': group '{self.group}' is not one of "
                             f"{', '.join(LIE_GROUPS)}")
        vector = self.group == "vector"
        if vector != (self.unit is None) or (vector and self.nq != self.nv):
            raise ModelError(
                f"joint kind '{self.name}': a 'vector' joint has nq = nv and no unit part, "
                f"any other group a unit part (group '{self.group}', nq = {self.nq}, "
                f"nv = {self.nv}, unit = {self.unit})")
        if self.prismatic and self.subs:
            raise ModelError(f"joint kind '{self.name}': 'prismatic' is for 1-DoF joints; "
                             "a multi-DoF joint's sub-joints say it")

    @property
    def multi_dof(self) -> bool:
        """Whether the kernels see this joint as a chain of sub-joints."""
        return bool(self.subs)

    @property
    def linear(self) -> tuple[bool, ...]:
        """Per velocity coordinate: a displacement (True, [m]) or an angle (False)."""
        return tuple(p for p, _ in self.subs) if self.subs else (self.prismatic,)

    @property
    def unit_name(self) -> str:
        """What the unit-norm part of ``q`` is called ("" when there is none)."""
        return UNIT_NAMES.get(self.group, "")


_TRANSLATION = ((True, 0), (True, 1), (True, 2))
_ROTATION = ((False, 0), (False, 1), (False, 2))

# The one table of joint kinds; every other table below is derived from it.
JOINT_KINDS: dict[str, JointKind] = {k.name: k for k in (
    JointKind("revolute", 1, 1),
    JointKind("continuous", 1, 1),
    JointKind("prismatic", 1, 1, prismatic=True),
    JointKind("free-flyer", 7, 6, _TRANSLATION + _ROTATION, (3, 7), FREE_FLYER, "SE3"),
    JointKind("planar", 4, 3, ((True, 0), (True, 1), (False, 2)), (2, 4), PLANAR, "SE2"),
    JointKind("spherical", 4, 3, _ROTATION, (0, 4), SPHERICAL, "SO3"),
)}

ONE_DOF = tuple(k.name for k in JOINT_KINDS.values() if not k.multi_dof)
MULTI_DOF = tuple(k.name for k in JOINT_KINDS.values() if k.multi_dof)
JOINT_TYPES = ONE_DOF + MULTI_DOF

JOINT_NQ = {k.name: k.nq for k in JOINT_KINDS.values()}
JOINT_NV = {k.name: k.nv for k in JOINT_KINDS.values()}

# Sub-joints of a multi-DoF joint, in velocity order: (prismatic?, axis index x/y/z),
# all expressed in the body frame.
SUB_JOINTS: dict[str, tuple[tuple[bool, int], ...]] = {
    k.name: k.subs for k in JOINT_KINDS.values() if k.multi_dof}

# Configuration entries that must form a unit vector (quaternion, or cos/sin), per type.
UNIT_PARTS = {k.name: k.unit for k in JOINT_KINDS.values() if k.unit is not None}

# The kernel map's anchor kind per multi-DoF type, and its sub-joint count per code.
ANCHOR_KINDS = {k.name: k.code for k in JOINT_KINDS.values() if k.multi_dof}
SUB_COUNT = {k.code: k.nv for k in JOINT_KINDS.values() if k.multi_dof}


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


__all__ = ["ANCHOR_KINDS", "JOINT_KINDS", "JOINT_NQ", "JOINT_NV", "JOINT_TYPES", "LIE_GROUPS",
           "MULTI_DOF", "ONE_DOF", "SUB_COUNT", "SUB_JOINTS", "UNIT_NAMES", "UNIT_PARTS",
           "UNIT_TOLERANCE", "JointKind", "MimicJoint"]
