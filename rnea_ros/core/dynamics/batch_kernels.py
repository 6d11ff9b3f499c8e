"""Throughput kernels: RNEA and gravity over many samples (``rnea_batch``,
``gravity_batch``, ``nonlinear_effects_batch``) and the gravity of ``gravity_torques``.

Same RNEA as :mod:`rnea_ros.core.dynamics.rnea` (Featherstone's RNEA, Table
5.1; gravity as the fictitious base acceleration ``-g``), written for
throughput: one kernel call walks all ``N`` samples, reads ``Q[k, i]`` in
place (no per-sample array views, whose reference counting cost more than a
joint's arithmetic), keeps one ``(n, 30)`` work array, and is compiled with
fused multiply-adds (:func:`~rnea_ros.core._compile.jit_fma`; results move by
rounding only, ~1e-16 relative) with its tuple helpers inlined. Revolute
joints about ``+-x/y/z`` add their velocity on one coordinate (``S qd = +-qd
e_k``) instead of a full 3-vector product; sin and cos come from
:func:`~rnea_ros.core._algebra.sincos`. Gravity uses composite first moments
(:func:`gravity_row`).

Shapes: ``Q, QD, QDD, TAU`` (N, n), C-contiguous float64; ``g`` (3,).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    axis_rotation,
    cross,
    dot3,
    inertia_times,
    mm,
    mtv,
    mv,
    rotate_about_coordinate_axis,
    scale3,
    sign,
    sincos,
)
from rnea_ros.core._compile import inline, jit_fma
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_COULOMB,
    F_H,
    F_KIND,
    F_MASS,
    F_P,
    F_PARENT,
    F_R,
    F_VISCOUS,
    PRISMATIC,
    REVOLUTE,
    REVOLUTE_X,
    RW_A,
    RW_COLS,
    RW_DW,
    RW_F,
    RW_N,
    RW_P,
    RW_R,
    RW_V,
    RW_W,
)

Array = NDArray[np.float64]

# Work array columns (per body), as in rnea.py.

# Leaf tuple helpers inlined, so the kernels' FMA contraction reaches them.
_add3, _scale3, _dot3, _cross = (inline(f) for f in (add3, scale3, dot3, cross))
_mv, _mtv, _mm, _axis_rotation = inline(mv), inline(mtv), inline(mm), inline(axis_rotation)
_rotate_k, _sincos = inline(rotate_about_coordinate_axis), inline(sincos)
_inertia_times = inline(inertia_times)


@inline
def _get9(a: Array, i: int, k: int) -> Mat:
    return (a[i, k], a[i, k + 1], a[i, k + 2], a[i, k + 3], a[i, k + 4],
            a[i, k + 5], a[i, k + 6], a[i, k + 7], a[i, k + 8])


@inline
def _set9(a: Array, i: int, k: int, R: Mat) -> None:
    for j in range(9):
        a[i, k + j] = R[j]


@inline
def _get3(a: Array, i: int, k: int) -> tuple[float, float, float]:
    return (a[i, k], a[i, k + 1], a[i, k + 2])


@inline
def _set3(a: Array, i: int, k: int, x: tuple[float, float, float]) -> None:
    a[i, k] = x[0]
    a[i, k + 1] = x[1]
    a[i, k + 2] = x[2]


@inline
def _joint_transform(fp: Array, i: int, q: float) -> tuple[Mat, Vec]:
    """``joint_transform`` of ``_algebra`` with its :func:`~rnea_ros.core._algebra.sincos`."""
    R0 = _get9(fp, i, F_R)
    p0 = _get3(fp, i, F_P)
    u = _get3(fp, i, F_AXIS)
    jk = int(fp[i, F_KIND])
    if jk == PRISMATIC:
        return R0, _add3(p0, _mv(R0, _scale3(u, q)))
    c, s = _sincos(q)
    if jk == REVOLUTE:
        return _mm(R0, _axis_rotation(u, c, s)), p0
    k = jk - REVOLUTE_X
    return _rotate_k(R0, k, c, s * u[k]), p0


@inline
def _plus_axis(x: Vec, k: int, s: float) -> Vec:
    """``x + s e_k``."""
    if k == 0:
        return (x[0] + s, x[1], x[2])
    if k == 1:
        return (x[0], x[1] + s, x[2])
    return (x[0], x[1], x[2] + s)


@inline
def _cross_axis(x: Vec, k: int, s: float) -> Vec:
    """``x x (s e_k)``."""
    if k == 0:
        return (0.0, x[2] * s, -x[1] * s)
    if k == 1:
        return (-x[2] * s, 0.0, x[0] * s)
    return (x[1] * s, -x[0] * s, 0.0)


@jit_fma
def rnea_row(fp: Array, Q: Array, QD: Array, QDD: Array, k: int, g: Array, drive: bool,
             TAU: Array, work: Array) -> float:
    """RNEA on sample ``k``: ``TAU[k] = ID(Q[k], QD[k], QDD[k])``; returns ``sum(TAU[k])``
    (finite iff every torque is). ``work`` (n, 30) as :func:`~.rnea.rnea_pass`'s."""
    n = fp.shape[0]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):  # poses first: independent of each other, they overlap
        R, p = _joint_transform(fp, i, Q[k, i])
        _set9(work, i, RW_R, R)
        _set3(work, i, RW_P, p)
    for i in range(n):
        jk = int(fp[i, F_KIND])
        par = int(fp[i, F_PARENT])
        qd, qdd = QD[k, i], QDD[k, i]
        R, p = _get9(work, i, RW_R), _get3(work, i, RW_P)
        if par < 0:
            w, v, dw, a = zero, zero, zero, _mtv(R, (-g[0], -g[1], -g[2]))
        else:
            w_p, v_p = _get3(work, par, RW_W), _get3(work, par, RW_V)
            dw_p, a_p = _get3(work, par, RW_DW), _get3(work, par, RW_A)
            w = _mtv(R, w_p)
            v = _mtv(R, _add3(v_p, _cross(w_p, p)))
            dw = _mtv(R, dw_p)
            a = _mtv(R, _add3(a_p, _cross(dw_p, p)))
        u = _get3(fp, i, F_AXIS)
        if jk >= REVOLUTE_X:  # S = +-e_ax
            ax = jk - REVOLUTE_X
            sqd = u[ax] * qd
            w = _plus_axis(w, ax, sqd)
            dw = _add3(_plus_axis(dw, ax, u[ax] * qdd), _cross_axis(w, ax, sqd))
            a = _add3(a, _cross_axis(v, ax, sqd))
        elif jk == REVOLUTE:
            s = _scale3(u, qd)
            w = _add3(w, s)
            dw = _add3(dw, _add3(_scale3(u, qdd), _cross(w, s)))
            a = _add3(a, _cross(v, s))
        else:
            s = _scale3(u, qd)
            v = _add3(v, s)
            a = _add3(a, _add3(_scale3(u, qdd), _cross(w, s)))
        n1, f1 = _inertia_times(fp, i, dw, a)
        n2, f2 = _inertia_times(fp, i, w, v)
        _set3(work, i, RW_W, w)
        _set3(work, i, RW_V, v)
        _set3(work, i, RW_DW, dw)
        _set3(work, i, RW_A, a)
        _set3(work, i, RW_N, _add3(n1, _add3(_cross(w, n2), _cross(v, f2))))
        _set3(work, i, RW_F, _add3(f1, _cross(w, f2)))
    total = 0.0
    for i in range(n - 1, -1, -1):
        jk = int(fp[i, F_KIND])
        nb, fb = _get3(work, i, RW_N), _get3(work, i, RW_F)
        u = _get3(fp, i, F_AXIS)
        if jk >= REVOLUTE_X:
            ax = jk - REVOLUTE_X
            t = u[ax] * nb[ax]
        elif jk == REVOLUTE:
            t = _dot3(u, nb)
        else:
            t = _dot3(u, fb)
        if drive:
            qd = QD[k, i]
            t += fp[i, F_ARMATURE] * QDD[k, i] + fp[i, F_COULOMB] * sign(qd) + fp[i, F_VISCOUS] * qd
        TAU[k, i] = t
        total += t
        par = int(fp[i, F_PARENT])
        if par >= 0:
            R = _get9(work, i, RW_R)
            Rf = _mv(R, fb)
            Rn = _add3(_mv(R, nb), _cross(_get3(work, i, RW_P), Rf))
            _set3(work, par, RW_N, _add3(_get3(work, par, RW_N), Rn))
            _set3(work, par, RW_F, _add3(_get3(work, par, RW_F), Rf))
    return total


_rnea_row = inline(rnea_row)


@jit_fma
def rnea_rows(fp: Array, Q: Array, QD: Array, QDD: Array, g: Array, drive: bool,
              TAU: Array) -> bool:
    """:func:`rnea_row` on every row (inlined); whether every torque is finite."""
    work = np.empty((fp.shape[0], RW_COLS))
    total = 0.0
    for k in range(Q.shape[0]):
        total += _rnea_row(fp, Q, QD, QDD, k, g, drive, TAU, work)
    return bool(np.isfinite(total))


@jit_fma
def gravity_row(fp: Array, Q: Array, k: int, g: Array, TAU: Array, work: Array) -> float:
    """Generalized gravity on sample ``k``: ``TAU[k] = g(Q[k])``; returns ``sum(TAU[k])``.

    At rest RNEA's body force is ``(h x a, m a)`` with ``a = -g`` in the body
    frame, so the wrench through joint ``i`` is that of the subtree's composite
    mass ``m^C`` and first moment ``h^C = sum m_k c_k`` (frame ``i``):
    ``(h^C_i x a_i, m^C_i a_i)``, and ``tau_i = S_i . (h^C_i x a_i, m^C_i a_i)``.
    One forward pass rotates ``-g`` into each body, one backward pass gathers
    ``h^C_par += R_i h^C_i + m^C_i p_i`` (the force-transform of the parent
    frame; Featherstone's composite-body idea, RBDA section 6.2, on the first
    moments only). ``work`` (n, 30): ``R, p`` in columns 0-11, ``a`` in 21-23,
    ``h^C`` in 24-26, ``m^C`` in 27.
    """
    n = fp.shape[0]
    for i in range(n):
        R, p = _joint_transform(fp, i, Q[k, i])
        _set9(work, i, RW_R, R)
        _set3(work, i, RW_P, p)
        par = int(fp[i, F_PARENT])
        a_p = (-g[0], -g[1], -g[2]) if par < 0 else _get3(work, par, RW_A)
        _set3(work, i, RW_A, _mtv(R, a_p))
        _set3(work, i, RW_N, _get3(fp, i, F_H))
        work[i, RW_F] = fp[i, F_MASS]
    total = 0.0
    for i in range(n - 1, -1, -1):
        jk = int(fp[i, F_KIND])
        h, m, a = _get3(work, i, RW_N), work[i, RW_F], _get3(work, i, RW_A)
        u = _get3(fp, i, F_AXIS)
        if jk >= REVOLUTE_X:
            ax = jk - REVOLUTE_X
            t = u[ax] * _cross(h, a)[ax]
        elif jk == REVOLUTE:
            t = _dot3(u, _cross(h, a))
        else:
            t = m * _dot3(u, a)
        TAU[k, i] = t
        total += t
        par = int(fp[i, F_PARENT])
        if par >= 0:
            hp = _add3(_mv(_get9(work, i, RW_R), h), _scale3(_get3(work, i, RW_P), m))
            _set3(work, par, RW_N, _add3(_get3(work, par, RW_N), hp))
            work[par, RW_F] += m
    return total


_gravity_row = inline(gravity_row)


@jit_fma
def gravity_rows(fp: Array, Q: Array, g: Array, TAU: Array) -> bool:
    """:func:`gravity_row` on every row (inlined); whether every torque is finite."""
    work = np.empty((fp.shape[0], RW_COLS))
    total = 0.0
    for k in range(Q.shape[0]):
        total += _gravity_row(fp, Q, k, g, TAU, work)
    return bool(np.isfinite(total))
