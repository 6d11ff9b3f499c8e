"""The free-floating robot: inverse dynamics with an unactuated base (Khalil 2010 §7.2).

A free-floating robot (a humanoid or a quadruped in flight, a space robot, an
eel) is a *base body* with its own inertia plus a tree of joints on it.
Nothing holds the base: given the base's pose and twist, the joint positions,
velocities and accelerations and the external wrenches, the base acceleration
is not free to choose -- it is the one for which the base's Newton-Euler
equations hold with no wrench from the ground (Khalil eq. 83, first row).
Khalil's §7.2 computes it and the joint torques in three O(n) sweeps:

i) forward (eq. 89-90): body poses and twists ``V_j``; the acceleration terms
   that do not depend on the base acceleration, ``zeta_j = V_j x S_j qd_j + S_j qdd_j``
   (spatial form of eq. 89: ``dV_j = X_j dV_i + zeta_j``, eq. 93/98), and the
   wrench terms ``beta_j = f_ext,j - V_j x* I_j V_j`` (eq. 90, with our
   ``f_ext`` applied *to* the body, Khalil's ``f_e`` being the opposite);
ii) backward (eq. 94-96): composite inertias and bias wrenches of each subtree,
   ``I^c_i = I_i + sum_j X_j^T I^c_j X_j`` (eq. 95) and
   ``beta^c_i = beta_i + sum_j X_j^T (beta^c_j - I^c_j zeta_j)`` (eq. 96; the
   extracted text of eq. 96 shows ``- X^T beta^c`` and ``+ X^T I^c zeta``, a sign
   slip: substituting eq. 93 into eq. 92 gives the form above), down to the base,
   ``I^c_0`` being the whole robot locked at ``q`` (Khalil's ``A_11``, eq. 84);
   the base's wrench ``f_0 = I^c_0 dV_0 - beta^c_0`` is zero, so (eq. 97)
   ``dV_0 = (I^c_0)^-1 beta^c_0``;
iii) forward (eq. 98-100): ``dV_j = X_j dV_i + zeta_j``, ``f_j = I^c_j dV_j - beta^c_j``
   (eq. 99), ``tau_j = S_j^T f_j + Ia_j qdd_j + Fs_j sign(qd_j) + Fv_j qd_j`` (eq. 100).

Gravity is folded in as everywhere in this package: the sweeps run on the
fictitious accelerations ``dV - [0; R^T g]`` (Khalil after eq. 24), so eq. 97
gives ``dV_0 - g_0`` and the real base acceleration is that plus gravity.

Conventions (Pinocchio's free-flyer, the layout agreed for multi-DoF joints):

* ``base_pose`` (7,) ``[x y z qx qy qz qw]``: the base frame in the world, the
  frame of ``tree.gravity`` (only the orientation matters to the dynamics); the
  quaternion must be of unit norm (:class:`~rnea_ros.core.errors.StateError`);
* ``base_twist`` (6,) ``[v; w]``: the base's linear velocity (of its origin)
  and angular velocity, in the base frame (local);
* the result's ``base_acceleration`` (6,) ``[dv; dw]`` is the time derivative of
  that local twist, i.e. the spatial acceleration in the base frame (Pinocchio's
  free-flyer ``ddq[:6]``); the classical acceleration of the base origin is
  ``dv + w x v``;
* the tree is a :class:`RobotModel` whose fixed base is the floating base (a URDF
  loaded as usual, its root link being the base); the base's own inertia, which a
  fixed-base model does not hold, is a :class:`BodyInertia`
  (:func:`urdf_base_inertia` reads it from the same URDF).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core._jit import (
    F_ARMATURE,
    F_AXIS,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_VISCOUS,
    PRISMATIC,
    FastCall,
    Mat,
    Vec,
    add3,
    cross,
    dot3,
    jit,
    joint_transform,
    kind,
    mat3,
    mtv,
    mv,
    parent,
    put3,
    put9,
    scale3,
    sign,
    sub3,
    vec3,
)
from rnea_ros.core.dynamics.crba import _composite_to_parent
from rnea_ros.core.dynamics.kinematics import body_poses, body_velocities
from rnea_ros.core.dynamics.momentum import Momentum, bodies_momentum
from rnea_ros.core.dynamics.moving_base import rotation_from
from rnea_ros.core.errors import ModelError, StateError, URDFError
from rnea_ros.core.inputs import body_wrenches, gravity_vector, joint_vector, raise_non_finite
from rnea_ros.core.model.configuration import quaternion_matrix
from rnea_ros.core.model.robot_model import RobotModel, check_inertia
from rnea_ros.core.model.urdf import _link, parse_urdf

Array = NDArray[np.float64]

# Work columns per body (row n: the base). The first 25 are crba's layout, so that
# crba's composite transform (eq. 95) applies as is.
_W_R, _W_P, _W_M, _W_H, _W_IO = 0, 9, 12, 13, 16  # pose; composite m, h, I_o (3x3)
_W_W, _W_V = 25, 28  # twist (w, v)
_W_ZW, _W_ZA = 31, 34  # zeta (eq. 89)
_W_BN, _W_BF = 37, 40  # beta^c (n, f) (eq. 90, 96)
_W_DW, _W_A = 43, 46  # acceleration (dw, a) (eq. 98)
_W_COLS = 49
# Base row of the kernel's ``base`` argument: m, h (3), I_o (xx yy zz xy xz yz),
# w0, v0, g0 (gravity in the base frame), base wrench (n, f): 25 floats.
_B_M, _B_H, _B_IO, _B_W, _B_V, _B_G, _B_N, _B_F = 0, 1, 4, 10, 13, 16, 19, 22


# ------------------------------------------------------------------ kernel
@jit
def _composite_times(work: Array, i: int, w: Vec, v: Vec) -> tuple[Vec, Vec]:
    """Composite inertia ``I^c_i`` (m, h, I_o in ``work``) times the motion ``(w, v)``:
    the force ``(I_o w + h x v, m v - h x w)``."""
    m = work[i, _W_M]
    h = vec3(work, i, _W_H)
    return add3(mv(mat3(work, i, _W_IO), w), cross(h, v)), sub3(scale3(v, m), cross(h, w))


@jit
def _rigid_solve(m: float, h: Vec, Io: Mat, n: Vec, f: Vec) -> tuple[bool, Vec, Vec]:
    """Solve ``I (dw, a) = (n, f)`` for a rigid-body inertia ``(m, h, I_o)``.

    With ``c = h / m`` and ``I_c = I_o - m (|c|^2 1 - c c^T)`` (about the COM):
    ``dw = I_c^-1 (n - c x f)``, ``a = f / m + c x dw``. False if not invertible.
    """
    if not m > 0.0:
        return False, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    c = scale3(h, 1.0 / m)
    cc = dot3(c, c)
    A = (Io[0] - m * (cc - c[0] * c[0]), Io[1] + m * c[0] * c[1], Io[2] + m * c[0] * c[2],
         Io[3] + m * c[1] * c[0], Io[4] - m * (cc - c[1] * c[1]), Io[5] + m * c[1] * c[2],
         Io[6] + m * c[2] * c[0], Io[7] + m * c[2] * c[1], Io[8] - m * (cc - c[2] * c[2]))
    # Inverse by cofactors (A symmetric positive definite for a physical body).
    c00 = A[4] * A[8] - A[5] * A[7]
    c01 = A[5] * A[6] - A[3] * A[8]
    c02 = A[3] * A[7] - A[4] * A[6]
    det = A[0] * c00 + A[1] * c01 + A[2] * c02
    scale = max(abs(A[0]), abs(A[4]), abs(A[8]))
    if not det > 1e-14 * scale * scale * scale:
        return False, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    inv = (c00, A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
           c01, A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
           c02, A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3])
    r = sub3(n, cross(c, f))
    dw = scale3(mv(inv, r), 1.0 / det)
    return True, dw, add3(scale3(f, 1.0 / m), cross(c, dw))


@jit
def free_floating_pass(fp: Array, base: Array, q: Array, qd: Array, qdd: Array,
                       fext: Array, use_fext: bool, drive: bool, tau: Array, a0: Array,
                       work: Array) -> bool:
    """Khalil 2010 §7.2 (eq. 89-100) into ``tau`` (n,) and ``a0`` (6,) ``(dw, a)``.

    ``base`` (1, 25) holds the base inertia, twist, gravity and wrench (``_B_*``);
    ``work`` is (n + 1, 49). Returns False when the robot's composite inertia is
    singular or a result is not finite.
    """
    n = q.shape[0]
    b = n  # the base's row
    # i) forward: twists, zeta (eq. 89), beta (eq. 90); composites start as the bodies.
    w0, v0 = vec3(base, 0, _B_W), vec3(base, 0, _B_V)
    put3(work, b, _W_W, w0)
    put3(work, b, _W_V, v0)
    m0 = base[0, _B_M]
    h0 = vec3(base, 0, _B_H)
    xx, yy, zz, xy, xz, yz = base[0, _B_IO:_B_IO + 6]
    work[b, _W_M] = m0
    put3(work, b, _W_H, h0)
    put9(work, b, _W_IO, (xx, xy, xz, xy, yy, yz, xz, yz, zz))
    n0, f0 = _composite_times(work, b, w0, v0)
    put3(work, b, _W_BN, sub3(vec3(base, 0, _B_N), add3(cross(w0, n0), cross(v0, f0))))
    put3(work, b, _W_BF, sub3(vec3(base, 0, _B_F), cross(w0, f0)))
    for i in range(n):
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, _W_R, R)
        put3(work, i, _W_P, p)
        par = parent(fp, i)
        if par < 0:
            par = b
        w_p, v_p = vec3(work, par, _W_W), vec3(work, par, _W_V)
        w = mtv(R, w_p)
        v = mtv(R, add3(v_p, cross(w_p, p)))
        u = vec3(fp, i, F_AXIS)
        s = scale3(u, qd[i])
        if kind(fp, i) != PRISMATIC:
            w = add3(w, s)
            zw = add3(scale3(u, qdd[i]), cross(w, s))
            za = cross(v, s)
        else:
            v = add3(v, s)
            zw = (0.0, 0.0, 0.0)
            za = add3(scale3(u, qdd[i]), cross(w, s))
        put3(work, i, _W_W, w)
        put3(work, i, _W_V, v)
        put3(work, i, _W_ZW, zw)
        put3(work, i, _W_ZA, za)
        work[i, _W_M] = fp[i, F_MASS]
        put3(work, i, _W_H, vec3(fp, i, F_H))
        xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
        put9(work, i, _W_IO, (xx, xy, xz, xy, yy, yz, xz, yz, zz))
        ni, fi = _composite_times(work, i, w, v)  # I v
        bn = sub3((0.0, 0.0, 0.0), add3(cross(w, ni), cross(v, fi)))  # -(v x* I v)
        bf = sub3((0.0, 0.0, 0.0), cross(w, fi))
        if use_fext:
            bf = add3(bf, vec3(fext, i, 0))
            bn = add3(bn, vec3(fext, i, 3))
        put3(work, i, _W_BN, bn)
        put3(work, i, _W_BF, bf)
    # ii) backward: beta^c (eq. 96) with the subtree's final I^c, then I^c (eq. 95).
    for i in range(n - 1, -1, -1):
        par = parent(fp, i)
        if par < 0:
            par = b
        zn, zf = _composite_times(work, i, vec3(work, i, _W_ZW), vec3(work, i, _W_ZA))
        dn = sub3(vec3(work, i, _W_BN), zn)
        df = sub3(vec3(work, i, _W_BF), zf)
        R = mat3(work, i, _W_R)
        Rf = mv(R, df)
        Rn = add3(mv(R, dn), cross(vec3(work, i, _W_P), Rf))
        put3(work, par, _W_BN, add3(vec3(work, par, _W_BN), Rn))
        put3(work, par, _W_BF, add3(vec3(work, par, _W_BF), Rf))
        _composite_to_parent(work, i, par)
    # Eq. 97: the base's (fictitious) acceleration from f_0 = 0.
    ok, dw0, acc0 = _rigid_solve(work[b, _W_M], vec3(work, b, _W_H), mat3(work, b, _W_IO),
                                 vec3(work, b, _W_BN), vec3(work, b, _W_BF))
    if not ok:
        return False
    put3(work, b, _W_DW, dw0)
    put3(work, b, _W_A, acc0)
    # iii) forward: accelerations (eq. 98), wrenches (eq. 99), torques (eq. 100).
    total = 0.0
    for i in range(n):
        par = parent(fp, i)
        if par < 0:
            par = b
        R = mat3(work, i, _W_R)
        p = vec3(work, i, _W_P)
        dw_p, a_p = vec3(work, par, _W_DW), vec3(work, par, _W_A)
        dw = add3(mtv(R, dw_p), vec3(work, i, _W_ZW))
        a = add3(mtv(R, add3(a_p, cross(dw_p, p))), vec3(work, i, _W_ZA))
        put3(work, i, _W_DW, dw)
        put3(work, i, _W_A, a)
        nf, ff = _composite_times(work, i, dw, a)
        nf = sub3(nf, vec3(work, i, _W_BN))
        ff = sub3(ff, vec3(work, i, _W_BF))
        u = vec3(fp, i, F_AXIS)
        t = dot3(u, ff) if kind(fp, i) == PRISMATIC else dot3(u, nf)
        if drive:
            t += (fp[i, F_ARMATURE] * qdd[i] + fp[i, F_COULOMB] * sign(qd[i])
                  + fp[i, F_VISCOUS] * qd[i])
        tau[i] = t
        total += t
    g0 = vec3(base, 0, _B_G)
    a_real = add3(acc0, g0)  # undo the fictitious -g
    for k in range(3):
        a0[k] = dw0[k]
        a0[3 + k] = a_real[k]
        total += a0[k] + a0[3 + k]
    return bool(np.isfinite(total))


@jit
def _free_floating_call(fp: Array, base: Array, q: Array, qd: Array, qdd: Array,
                        fext: Array, use_fext: bool, drive: bool, tau: Array,
                        a0: Array) -> bool:
    work = np.empty((q.shape[0] + 1, _W_COLS))
    return free_floating_pass(fp, base, q, qd, qdd, fext, use_fext, drive, tau, a0, work)


_free_floating = FastCall(_free_floating_call)
_NO_WRENCH = np.zeros((0, 6))


# ------------------------------------------------------------------ the API
@dataclass(frozen=True)
class BodyInertia:
    """A rigid body's inertia: ``mass`` [kg], ``com`` (3,) [m] and ``inertia`` (3, 3)
    about the COM [kg m^2], both in the body's frame. Checked physical
    (:func:`~rnea_ros.core.model.robot_model.check_inertia`, ``inertia_check`` mode)."""

    mass: float
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.zeros((3, 3)))
    inertia_check: str = "strict"
    packed: Array = field(init=False, repr=False)

    def __post_init__(self) -> None:
        com = np.array(self.com, dtype=np.float64, copy=True).reshape(-1)
        inertia = np.array(self.inertia, dtype=np.float64, copy=True)
        if com.shape != (3,) or inertia.shape != (3, 3):
            raise ModelError(f"body inertia: com must be (3,) and inertia (3, 3), got "
                             f"{com.shape} and {inertia.shape}")
        check_inertia("base body", float(self.mass), com, inertia, self.inertia_check)
        com.setflags(write=False)
        inertia.setflags(write=False)
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia", inertia)
        # For the kernel: [m, h = m c, I_o (xx yy zz xy xz yz)] (10,), about the origin.
        Io = spatial.inertia_about_origin(self.mass, com, inertia)
        packed = np.array([self.mass, *(self.mass * com), Io[0, 0], Io[1, 1], Io[2, 2],
                           Io[0, 1], Io[0, 2], Io[1, 2]])
        packed.setflags(write=False)
        object.__setattr__(self, "packed", packed)


class FreeFloatingResult(NamedTuple):
    """``base_acceleration`` (6,) ``[dv; dw]`` (base frame, the derivative of the local
    twist; Pinocchio's free-flyer ``ddq[:6]``) and the joint torques ``tau`` (n,)."""

    base_acceleration: Array
    tau: Array


def urdf_base_inertia(source: str | Path, *, inertia_check: str = "strict") -> BodyInertia:
    """The inertia of a URDF's root link and every link welded to it by fixed joints,
    in the root link's frame: the free-floating base that :func:`~rnea_ros.core.load_urdf`
    drops into the fixed base (``source``: a file path or the XML text)."""
    if isinstance(source, Path) or not str(source).lstrip().startswith("<"):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise URDFError(f"cannot read URDF file '{source}': {exc.strerror}") from None
        origin = str(source)
    else:
        text, origin = str(source), "robot_description"
    model = parse_urdf(text, origin=origin, inertia_check=inertia_check)
    total: tuple[float, Array, Array] = (0.0, np.zeros(3), np.zeros((3, 3)))
    for elem in ET.fromstring(text).findall("link"):
        link = _link(elem)
        frame = model.frames[link.name]
        if frame.body < 0:
            part = spatial.express_inertia(link.mass, link.com, link.inertia,
                                           frame.rotation, frame.translation)
            total = spatial.add_inertias(total, part)
    return BodyInertia(total[0], total[1], total[2], inertia_check=inertia_check)


def _base_vectors(base_pose: object, base_twist: object) -> tuple[Array, Array, Array]:
    """``(pose (7,), R (3, 3), twist (6,))``, checked (the quaternion is not normalised)."""
    pose = np.asarray(base_pose, dtype=np.float64)
    if pose.shape != (7,) or not np.isfinite(pose).all():
        raise StateError(f"base_pose must be a finite (7,) vector [x y z qx qy qz qw], "
                         f"got {base_pose!r}")
    twist = np.asarray(base_twist, dtype=np.float64)
    if twist.shape != (6,) or not np.isfinite(twist).all():
        raise StateError(f"base_twist must be a finite (6,) vector [v; w], got {base_twist!r}")
    quat = pose[3:]
    if abs(float(quat @ quat) - 1.0) > 2e-6:  # |norm - 1| > ~1e-6
        rotation_from("base_pose", quat)  # raises, naming the norm
    return pose, quaternion_matrix(quat), twist


def free_floating_rnea(tree: RobotModel, base_inertia: BodyInertia, base_pose: object,
                       base_twist: object, q: object, v: object, a: object, *,
                       fext: object | None = None, base_fext: object | None = None,
                       gravity: object | None = None) -> FreeFloatingResult:
    """Base acceleration and joint torques of a free-floating robot (Khalil 2010 §7.2).

    ``tree`` is the robot without its base inertia (its fixed base is the floating
    base), ``base_inertia`` the base body's; ``base_pose`` (7,) and ``base_twist`` (6,)
    as in the module docstring; ``q, v, a`` (n,) the joints' positions, velocities
    and accelerations. ``fext`` (n, 6) are wrenches ``[force, torque]`` applied to the
    tree's bodies (body frames), ``base_fext`` (6,) one applied to the base (base
    frame, at its origin); ``gravity`` (3,) in the world overrides ``tree.gravity``.

    The torques include armature and friction (eq. 100), which do not enter the base
    acceleration. Raises :class:`StateError` for bad input and :class:`ModelError`
    when the whole robot's inertia is singular (e.g. no mass).
    """
    _, R, twist = _base_vectors(base_pose, base_twist)
    q = joint_vector(tree, q, "q")
    v = joint_vector(tree, v, "v")
    a = joint_vector(tree, a, "a")
    g = gravity_vector(tree, gravity)
    base = np.zeros((1, 25))
    row = base[0]
    row[_B_M:_B_IO + 6] = base_inertia.packed
    row[_B_W:_B_W + 3] = twist[3:]
    row[_B_V:_B_V + 3] = twist[:3]
    row[_B_G:_B_G + 3] = R.T @ g
    if base_fext is not None:
        wrench = np.asarray(base_fext, dtype=np.float64)
        if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
            raise StateError(f"base_fext must be a finite (6,) wrench [force, torque], "
                             f"got {base_fext!r}")
        row[_B_N:_B_N + 3] = wrench[3:]
        row[_B_F:_B_F + 3] = wrench[:3]
    use_fext = fext is not None
    f = body_wrenches(tree, fext) if use_fext else _NO_WRENCH
    tau = np.empty(tree.nv)
    acc = np.empty(6)
    if not _free_floating.call(tree.kernel_floats, base, q, v, a, f, use_fext, True, tau, acc):
        if not all(np.all(np.isfinite(x)) for x in (q, v, a)):
            raise_non_finite(tree, q=q, v=v, a=a)
        raise ModelError(f"model '{tree.name}': the free-floating robot's composite inertia "
                         "is singular (no mass, or a result is not finite)")
    return FreeFloatingResult(np.concatenate([acc[3:], acc[:3]]), tau)


def free_floating_momentum(tree: RobotModel, base_inertia: BodyInertia, base_pose: object,
                           base_twist: object, q: object, v: object) -> Momentum:
    """Centre of mass, its velocity and the centroidal momentum ``[l; k]`` of the whole
    free-floating robot (base and tree), world frame (:mod:`~.momentum`)."""
    pose, R, twist = _base_vectors(base_pose, base_twist)
    p0 = pose[:3]
    Rt, pt = body_poses(tree, q)
    Vt = body_velocities(tree, q, v, base_twist=twist)
    return bodies_momentum(
        np.r_[base_inertia.mass, tree.mass], np.vstack([base_inertia.com, tree.com]),
        np.concatenate([base_inertia.inertia[None], tree.inertia]),
        np.concatenate([R[None], R @ Rt]), np.vstack([p0, pt @ R.T + p0]),
        np.vstack([twist, Vt]), f"free-floating '{tree.name}'")


__all__ = [
    "BodyInertia",
    "FreeFloatingResult",
    "free_floating_momentum",
    "free_floating_pass",
    "free_floating_rnea",
    "urdf_base_inertia",
]
