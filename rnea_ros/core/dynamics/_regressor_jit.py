"""Numba kernels of :mod:`rnea_ros.core.dynamics.regressor` (the face: the parameter order,
checks and dispatch): :func:`regressor_pass`, the rows of ``tau = Y(q, qd, qdd) pi`` for one
sample from the body kinematics, and :func:`regressor_rows` over N samples.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    child_motion,
    cross,
    joint_transform,
    mat3,
    mm,
    mv,
    put3,
    put9,
    sign,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._layout import F_AXIS, PRISMATIC, kind, parent

Array = NDArray[np.float64]


# Work columns per body: local pose R (9), p (3); w, v, dw, a (body frame);
# base-frame pose Rw (9), pw (3).
_K_R, _K_P, _K_W, _K_V, _K_DW, _K_A, _K_RW, _K_PW = 0, 9, 12, 15, 18, 21, 24, 33


_K_COLS = 36


@jit
def _kinematics(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, kin: Array) -> None:
    """Forward pass: poses (local and in the base frame), ``w, v, dw, a`` per body."""
    zero = (0.0, 0.0, 0.0)
    for i in range(q.shape[0]):
        R, p = joint_transform(fp, i, q[i])
        par = parent(fp, i)
        if par < 0:
            w_p, v_p, dw_p, a_p = zero, zero, zero, (-g[0], -g[1], -g[2])
            Rw, pw = R, p
        else:
            w_p, v_p = vec3(kin, par, _K_W), vec3(kin, par, _K_V)
            dw_p, a_p = vec3(kin, par, _K_DW), vec3(kin, par, _K_A)
            R_p = mat3(kin, par, _K_RW)
            Rw, pw = mm(R_p, R), add3(vec3(kin, par, _K_PW), mv(R_p, p))
        w, v, dw, a = child_motion(fp, i, R, p, w_p, v_p, dw_p, a_p, qd[i], qdd[i])
        put9(kin, i, _K_R, R)
        put3(kin, i, _K_P, p)
        put3(kin, i, _K_W, w)
        put3(kin, i, _K_V, v)
        put3(kin, i, _K_DW, dw)
        put3(kin, i, _K_A, a)
        put9(kin, i, _K_RW, Rw)
        put3(kin, i, _K_PW, pw)


@jit
def _put_column(cols: Array, c: int, Rw: Mat, pw: Vec, n: Vec, f: Vec) -> None:
    """``cols[c] = (n_w, f_w)``: a body-frame force ``(n, f)`` at the base origin."""
    f_w = mv(Rw, f)
    n_w = add3(mv(Rw, n), cross(pw, f_w))
    cols[c, 0], cols[c, 1], cols[c, 2] = n_w
    cols[c, 3], cols[c, 4], cols[c, 5] = f_w


@jit
def _put_moment(cols: Array, c: int, Rw: Mat, n: Vec) -> None:
    """``cols[c, :3] = Rw n`` for a pure moment (the inertia columns: ``f = 0``)."""
    cols[c, 0], cols[c, 1], cols[c, 2] = mv(Rw, n)


@jit
def _body_columns(kin: Array, j: int, cols: Array) -> None:
    """``A_j`` in the base frame: ``cols[c]`` = ``(n, f)`` (6,) of parameter ``c``
    at the base origin (for the inertia columns ``c >= 4`` only the moment).

    Body-frame forces ``f = I a + v x* I v`` per unit parameter (``ww = w.w``):

    * mass: ``n = 0``, ``f = a + w x v``;
    * first moment ``h = e_k``: ``n = e_k x a + w v_k - v w_k``,
      ``f = dw x e_k - ww e_k + w w_k`` (from ``w x (h x v) - v x (h x w) =
      w (v.h) - v (w.h)`` and ``w x (h x w) = h ww - w (w.h)``);
    * inertia component ``E`` (unit symmetric): ``n = E dw + w x (E w)``, ``f = 0``.
    """
    w0, w1, w2 = vec3(kin, j, _K_W)
    v0, v1, v2 = vec3(kin, j, _K_V)
    d0, d1, d2 = vec3(kin, j, _K_DW)
    a0, a1, a2 = vec3(kin, j, _K_A)
    Rw, pw = mat3(kin, j, _K_RW), vec3(kin, j, _K_PW)
    w = (w0, w1, w2)
    ww = w0 * w0 + w1 * w1 + w2 * w2
    zero = (0.0, 0.0, 0.0)
    _put_column(cols, 0, Rw, pw, zero, add3((a0, a1, a2), cross(w, (v0, v1, v2))))
    _put_column(cols, 1, Rw, pw,
                (w0 * v0 - v0 * w0, -a2 + w1 * v0 - v1 * w0, a1 + w2 * v0 - v2 * w0),
                (-ww + w0 * w0, d2 + w1 * w0, -d1 + w2 * w0))
    _put_column(cols, 2, Rw, pw,
                (a2 + w0 * v1 - v0 * w1, w1 * v1 - v1 * w1, -a0 + w2 * v1 - v2 * w1),
                (-d2 + w0 * w1, -ww + w1 * w1, d0 + w2 * w1))
    _put_column(cols, 3, Rw, pw,
                (-a1 + w0 * v2 - v0 * w2, a0 + w1 * v2 - v1 * w2, w2 * v2 - v2 * w2),
                (d1 + w0 * w2, -d0 + w1 * w2, -ww + w2 * w2))
    # Inertia: E dw + w x (E w), E in the order Ixx, Ixy, Iyy, Ixz, Iyz, Izz.
    _put_moment(cols, 4, Rw, add3((d0, 0.0, 0.0), cross(w, (w0, 0.0, 0.0))))
    _put_moment(cols, 5, Rw, add3((d1, d0, 0.0), cross(w, (w1, w0, 0.0))))
    _put_moment(cols, 6, Rw, add3((0.0, d1, 0.0), cross(w, (0.0, w1, 0.0))))
    _put_moment(cols, 7, Rw, add3((d2, 0.0, d0), cross(w, (w2, 0.0, w0))))
    _put_moment(cols, 8, Rw, add3((0.0, d2, d1), cross(w, (0.0, w2, w1))))
    _put_moment(cols, 9, Rw, add3((0.0, 0.0, d2), cross(w, (0.0, 0.0, w2))))


@jit
def regressor_pass(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, drive: bool,
                   Y: Array, kin: Array, cols: Array, axes: Array,
                   chain: NDArray[np.bool_]) -> bool:
    """One regressor evaluation into ``Y`` (n, 10 n [+ 3 n]); whether it is finite.

    ``kin`` (n, 36), ``cols`` (10, 6), ``axes`` (n, 6), ``chain`` (n,) are work
    arrays. Every entry of ``Y`` is written once (no separate zeroing pass:
    the batch output is large and memory traffic is the cost).
    """
    n = q.shape[0]
    _kinematics(fp, q, qd, qdd, g, kin)
    for i in range(n):  # joint axes in the base frame, as spatial motions (u, p x u) or (0, u)
        u = mv(mat3(kin, i, _K_RW), vec3(fp, i, F_AXIS))
        if kind(fp, i) != PRISMATIC:
            m = cross(vec3(kin, i, _K_PW), u)
            axes[i, 0], axes[i, 1], axes[i, 2] = u
            axes[i, 3], axes[i, 4], axes[i, 5] = m
        else:
            axes[i, 0], axes[i, 1], axes[i, 2] = 0.0, 0.0, 0.0
            axes[i, 3], axes[i, 4], axes[i, 5] = u
    total = 0.0
    for j in range(n):
        _body_columns(kin, j, cols)
        for k in range(n):  # which joints carry body j: itself and its ancestors
            chain[k] = False
        k = j
        while k >= 0:
            chain[k] = True
            k = parent(fp, k)
        for k in range(n):  # one pass over row block (k, j): values or zeros
            base = 10 * j
            if not chain[k]:
                for c in range(10):
                    Y[k, base + c] = 0.0
                continue
            a0, a1, a2 = axes[k, 0], axes[k, 1], axes[k, 2]
            b0, b1, b2 = axes[k, 3], axes[k, 4], axes[k, 5]
            for c in range(4):  # m, h: moment and force
                y = (a0 * cols[c, 0] + a1 * cols[c, 1] + a2 * cols[c, 2]
                     + b0 * cols[c, 3] + b1 * cols[c, 4] + b2 * cols[c, 5])
                Y[k, base + c] = y
                total += y
            for c in range(4, 10):  # inertia: a pure moment (f = 0)
                y = a0 * cols[c, 0] + a1 * cols[c, 1] + a2 * cols[c, 2]
                Y[k, base + c] = y
                total += y
    if drive:
        for i in range(n):
            base = 10 * n + 3 * i
            for k in range(n):
                Y[k, base] = 0.0
                Y[k, base + 1] = 0.0
                Y[k, base + 2] = 0.0
            Y[i, base] = qdd[i]
            Y[i, base + 1] = qd[i]
            Y[i, base + 2] = sign(qd[i])
            total += qdd[i] + qd[i]
    return bool(np.isfinite(total))


@jit
def regressor_rows(fp: Array, Q: Array, QD: Array, QDD: Array, g: Array, drive: bool,
                   Y: Array) -> bool:
    n = Q.shape[1]
    kin = np.empty((n, _K_COLS))
    cols = np.empty((10, 6))
    axes = np.empty((n, 6))
    chain = np.empty(n, dtype=np.bool_)
    ok = True
    for k in range(Q.shape[0]):
        ok = regressor_pass(fp, Q[k], QD[k], QDD[k], g, drive, Y[k], kin, cols, axes,
                            chain) and ok
    return ok
