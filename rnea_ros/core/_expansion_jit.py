"""Numba kernels of :mod:`rnea_ros.core.expansion` (the face: the kernel map, the
correction ``corr(v)`` and the fold-back, with their equations): placing the anchors
(:func:`joint_pose`, :func:`write_anchor`), expanding ``q, v, a`` to kernel coordinates
(:func:`expand_q`, :func:`expand_motion`, :func:`expand_state`, :func:`add_corr` with
:func:`joint_corr` / :func:`pair_cross`) and folding the torques back (:func:`gather`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Motion,
    Vec,
    add3,
    coulomb_sign,
    joint_motion,
    mat3,
    mcross,
    mm,
    mv,
    put3,
    put9,
    quaternion_matrix,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_BAND,
    F_COULOMB,
    F_P,
    F_R,
    F_VISCOUS,
    FREE_FLYER,
    INNER,
    K_IQ,
    K_IV,
    K_KIND,
    K_MULT,
    K_OFFSET,
    OWN,
    PLANAR,
    SPHERICAL,
)
from rnea_ros.core.errors import ModelError
from rnea_ros.core.model.joints import UNIT_TOLERANCE

Array = NDArray[np.float64]


@jit
def sub_count(kind: int) -> int:
    """Sub-joints (= ``nv``) of the multi-DoF joint whose anchor row has kernel kind
    ``kind`` (the joint-kind records' ``code``); an unknown code raises ``ModelError``."""
    if kind == FREE_FLYER:
        return 6
    if kind == PLANAR:
        return 3
    if kind == SPHERICAL:
        return 3
    raise ModelError("kernel map: unknown anchor kind code (valid: FREE_FLYER, PLANAR, "
                     "SPHERICAL of rnea_ros.core._layout)")


@jit
def joint_pose(kind: int, q: Array, iq: int) -> tuple[Mat, Vec, bool]:
    """Pose ``(R, p)`` of a multi-DoF joint's body in its joint frame, and whether its
    quaternion (or ``cos, sin`` pair) is a unit vector within ``UNIT_TOLERANCE``.
    One branch per anchor kind; an unknown code raises ``ModelError``."""
    if kind == PLANAR:  # q = [x y cos sin]
        c, s = q[iq + 2], q[iq + 3]
        norm = math.sqrt(c * c + s * s)
        R = (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
        return R, (q[iq], q[iq + 1], 0.0), abs(norm - 1.0) <= UNIT_TOLERANCE
    if kind == FREE_FLYER:  # q = [x y z qx qy qz qw]
        p = (q[iq], q[iq + 1], q[iq + 2])
        x, y, z, w = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
    elif kind == SPHERICAL:  # q = [qx qy qz qw]
        p = (0.0, 0.0, 0.0)
        x, y, z, w = q[iq], q[iq + 1], q[iq + 2], q[iq + 3]
    else:
        raise ModelError("kernel map: unknown anchor kind code in joint_pose (valid: "
                         "FREE_FLYER, PLANAR, SPHERICAL of rnea_ros.core._layout)")
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    return quaternion_matrix(x, y, z, w), p, abs(norm - 1.0) <= UNIT_TOLERANCE


@jit
def write_anchor(fp: Array, km: Array, q: Array, k: int, fpx: Array) -> bool:
    """``fpx[k]``'s placement = ``fp[k]``'s o the joint's pose at ``q``; False if the
    quaternion (cos/sin pair) is not a unit vector."""
    R, p, ok = joint_pose(int(km[k, K_KIND]), q, int(km[k, K_IQ]))
    R0 = mat3(fp, k, F_R)
    put9(fpx, k, F_R, mm(R0, R))
    put3(fpx, k, F_P, add3(vec3(fp, k, F_P), mv(R0, p)))
    return ok


@jit
def joint_corr(kind: int, v: Array, iv: int, out: Array, k: int) -> None:
    """``out[k:k + nv_j] = corr(v)`` of the multi-DoF joint whose velocity starts at
    ``v[iv]`` (closed forms of :func:`pair_cross` ``(v, v)``, in sub-joint order)."""
    if kind == FREE_FLYER:  # [nu x w; (wy wz, -wx wz, wx wy)]
        nx, ny, nz = v[iv], v[iv + 1], v[iv + 2]
        wx, wy, wz = v[iv + 3], v[iv + 4], v[iv + 5]
        out[k] = ny * wz - nz * wy
        out[k + 1] = nz * wx - nx * wz
        out[k + 2] = nx * wy - ny * wx
        out[k + 3] = wy * wz
        out[k + 4] = -wx * wz
        out[k + 5] = wx * wy
    elif kind == PLANAR:  # [vy wz, -vx wz, 0]
        wz = v[iv + 2]
        out[k] = v[iv + 1] * wz
        out[k + 1] = -v[iv] * wz
        out[k + 2] = 0.0
    elif kind == SPHERICAL:  # [wy wz, -wx wz, wx wy]
        wx, wy, wz = v[iv], v[iv + 1], v[iv + 2]
        out[k] = wy * wz
        out[k + 1] = -wx * wz
        out[k + 2] = wx * wy
    else:
        raise ModelError("kernel map: unknown anchor kind code in joint_corr (valid: "
                         "FREE_FLYER, PLANAR, SPHERICAL of rnea_ros.core._layout)")


@jit
def pair_cross(fp: Array, k0: int, count: int, x: Array, y: Array, out: Array) -> None:
    """``out[k0 + k] = S_k . sum_{i<j} (S_i x_i) x (S_j y_j)`` over the ``count``
    sub-joints starting at kernel row ``k0`` (``x``, ``y``, ``out`` kernel-row
    vectors). The ``S_k`` are orthonormal and span the sum, so these are its
    coordinates. ``corr(v) = pair_cross(v, v)``."""
    zero = (0.0, 0.0, 0.0)
    total: Motion = (zero, zero)
    for j in range(1, count):
        Sy = joint_motion(fp, k0 + j, y[k0 + j])
        for i in range(j):
            c = mcross(joint_motion(fp, k0 + i, x[k0 + i]), Sy)
            total = (add3(total[0], c[0]), add3(total[1], c[1]))
    for k in range(count):
        S = joint_motion(fp, k0 + k, 1.0)
        out[k0 + k] = (S[0][0] * total[0][0] + S[0][1] * total[0][1] + S[0][2] * total[0][2]
                       + S[1][0] * total[1][0] + S[1][1] * total[1][1]
                       + S[1][2] * total[1][2])


@jit
def expand_q(fp: Array, km: Array, q: Array, fpx: Array, qk: Array) -> bool:
    """Kernel positions ``qk`` (nk,) and anchor placements in ``fpx`` (a copy of
    ``fp``) at ``q``; False if a quaternion is not a unit vector."""
    ok = True
    for k in range(fp.shape[0]):
        kind = int(km[k, K_KIND])
        if kind == OWN:
            qk[k] = km[k, K_MULT] * q[int(km[k, K_IQ])] + km[k, K_OFFSET]
        else:
            qk[k] = 0.0
            if kind != INNER:
                ok = write_anchor(fp, km, q, k, fpx) and ok
    return ok


@jit
def expand_state(fp: Array, km: Array, q: Array, v: Array, a: Array, fpx: Array, qk: Array,
                 vk: Array, ak: Array) -> bool:
    """Kernel positions, anchors (as :func:`expand_q`), velocities ``vk = G v`` and
    accelerations ``ak = G a - corr(v)`` in one sweep over the rows (a multi-DoF
    joint's sub-rows follow its anchor, which writes their ``corr`` first)."""
    ok = True
    for k in range(fp.shape[0]):
        kind = int(km[k, K_KIND])
        iv = int(km[k, K_IV])
        if kind == OWN:
            m = km[k, K_MULT]
            qk[k] = m * q[int(km[k, K_IQ])] + km[k, K_OFFSET]
            vk[k] = m * v[iv]
            ak[k] = m * a[iv]
            continue
        if kind != INNER:
            ok = write_anchor(fp, km, q, k, fpx) and ok
            joint_corr(kind, v, iv, ak, k)  # corr on this row and the next sub-rows
        qk[k] = 0.0
        vk[k] = v[iv]
        ak[k] = a[iv] - ak[k]
    return ok


@jit
def expand_motion(km: Array, v: Array, vk: Array) -> None:
    """Kernel velocities (or accelerations without ``corr``) ``vk = G v``."""
    for k in range(km.shape[0]):
        vk[k] = km[k, K_MULT] * v[int(km[k, K_IV])]


@jit
def add_corr(km: Array, v: Array, ak: Array, a: Array) -> None:
    """``a = ak + corr(v)`` (nv,) from kernel accelerations ``ak`` (nk,), for a model
    without mimic joints (one kernel row per velocity coordinate): ABA's output."""
    nk = km.shape[0]
    for k in range(nk):
        kind = int(km[k, K_KIND])
        if kind != OWN and kind != INNER:  # an anchor: joint_corr names every kind
            iv = int(km[k, K_IV])
            joint_corr(kind, v, iv, a, iv)
    for k in range(nk):
        iv = int(km[k, K_IV])
        if int(km[k, K_KIND]) == OWN:
            a[iv] = ak[k]
        else:
            a[iv] += ak[k]


@jit
def gather(fp: Array, km: Array, tk: Array, v: Array, a: Array, drive: bool,
           tau: Array) -> float:
    """``tau = G^T tk`` (nv,), plus each coordinate's armature and friction at the
    user's ``v, a`` when ``drive`` (Khalil eq. 31); returns ``sum(tau)``."""
    tau[:] = 0.0
    total = 0.0
    for k in range(km.shape[0]):
        iv = int(km[k, K_IV])
        t = km[k, K_MULT] * tk[k]
        if drive:  # zero drive parameters on mimic followers
            vi = v[iv]
            t += fp[k, F_ARMATURE] * a[iv] + fp[k, F_VISCOUS] * vi
            coulomb = fp[k, F_COULOMB]
            if coulomb != 0.0:
                t += coulomb * coulomb_sign(vi, fp[k, F_BAND])
        tau[iv] += t
        total += t
    return total


__all__ = [
    "add_corr", "expand_motion", "expand_q", "expand_state", "gather", "joint_corr",
    "joint_pose", "pair_cross", "sub_count", "write_anchor",
]
