"""Numba kernel of :mod:`rnea_ros.core.dynamics.jacobian` (the face: frames, conventions,
checks): :func:`jacobian_pass`, the (6, nv) Jacobian of a point and frame on one
body, in one forward pass over the body's ancestors on the kernel tree.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    cross,
    joint_transform,
    mat3,
    mm,
    mtv,
    mv,
    sub3,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._expansion_jit import expand_q
from rnea_ros.core._layout import F_AXIS, K_IV, K_MULT, PRISMATIC, kind, parent

Array = NDArray[np.float64]

LOCAL, WORLD, LOCAL_WORLD_ALIGNED = 0, 1, 2


@jit
def _pose(fp: Array, qk: Array, row: int, R_out: Array, p_out: Array) -> None:
    """World (base) poses of ``row`` and its ancestors into ``R_out`` (n, 9), ``p_out`` (n, 3)
    (rows are in pre-order, so each ancestor is computed before its descendants)."""
    chain = np.empty(fp.shape[0], dtype=np.int64)
    count = 0
    i = row
    while i >= 0:
        chain[count] = i
        count += 1
        i = parent(fp, i)
    for c in range(count - 1, -1, -1):
        i = chain[c]
        R, pos = joint_transform(fp, i, qk[i])
        par = parent(fp, i)
        if par >= 0:
            Rp: Mat = mat3(R_out, par, 0)
            pp: Vec = vec3(p_out, par, 0)
            R, pos = mm(Rp, R), add3(pp, mv(Rp, pos))
        for k in range(9):
            R_out[i, k] = R[k]
        for k in range(3):
            p_out[i, k] = pos[k]


@jit
def jacobian_pass(fp: Array, km: Array, expanded: bool, q: Array, row: int, R_frame: Array,
                  t_frame: Array, reference: int, J: Array) -> bool:
    """``J`` (6, nv) ``[linear; angular]`` of the frame ``(R_frame, t_frame)`` (placement in
    kernel row ``row``'s body frame) in ``reference`` (LOCAL, WORLD, LOCAL_WORLD_ALIGNED).
    False if a quaternion (cos/sin pair) of ``q`` is not a unit vector."""
    n = fp.shape[0]
    J[:, :] = 0.0
    if row < 0:
        return True
    fpx, qk, ok = fp.copy(), q.copy(), True
    if expanded:
        qk = np.empty(n)
        ok = expand_q(fp, km, q, fpx, qk)
    R_w, p_w = np.empty((n, 9)), np.empty((n, 3))
    _pose(fpx, qk, row, R_w, p_w)
    Rb: Mat = mat3(R_w, row, 0)
    Rf = mm(Rb, mat3(R_frame, 0, 0))
    origin = add3(vec3(p_w, row, 0), mv(Rb, vec3(t_frame, 0, 0)))
    point = (0.0, 0.0, 0.0) if reference == WORLD else origin
    i = row
    while i >= 0:
        u = mv(mat3(R_w, i, 0), vec3(fpx, i, F_AXIS))
        if kind(fpx, i) == PRISMATIC:
            lin, ang = u, (0.0, 0.0, 0.0)
        else:
            lin, ang = cross(u, sub3(point, vec3(p_w, i, 0))), u
        if reference == LOCAL:
            lin, ang = mtv(Rf, lin), mtv(Rf, ang)
        iv, mult = i, 1.0
        if expanded:
            iv, mult = int(km[i, K_IV]), km[i, K_MULT]
        for k in range(3):
            J[k, iv] += mult * lin[k]
            J[3 + k, iv] += mult * ang[k]
        i = parent(fpx, i)
    return ok and bool(np.all(np.isfinite(J)))


__all__ = ["LOCAL", "LOCAL_WORLD_ALIGNED", "WORLD", "jacobian_pass"]
