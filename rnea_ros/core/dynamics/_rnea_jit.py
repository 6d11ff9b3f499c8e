"""Numba kernels of :mod:`rnea_ros.core.dynamics.rnea` (the face: equations, checks,
dispatch): the per-call passes and entries, and the throughput kernels of the batch forms.

**Per call.** :func:`rnea_pass` = :func:`forward_pass` + :func:`backward_pass`
(Featherstone Table 5.1; Caron's pseudo-code) over the work array ``RW_*``
(:mod:`rnea_ros.core._layout`); :func:`gravity_pass` by composite first moments.
Entries (what the face calls through :class:`~rnea_ros.core._compile.FastCall`):
:func:`rnea_call` (1 kHz: drive terms, fixed base; :func:`rnea_drive_pass` runs
the throughput kernel :func:`rnea_row` on its one sample),
:func:`rnea_general_call` (moving base, external wrenches, joint wrenches:
:func:`rnea_pass`), :func:`gravity_call`.

**Throughput** (``rnea_batch``, ``gravity_batch``, ``nonlinear_effects_batch``, and
the gravity of ``gravity_torques``): the same RNEA written for throughput: one
kernel call walks all ``N`` samples, reads ``Q[k, i]`` in
place (no per-sample array views, whose reference counting cost more than a
joint's arithmetic), keeps one ``(n, 30)`` work array, and is compiled with
fused multiply-adds (:func:`~rnea_ros.core._compile.jit_fma`; results move by
rounding only, ~1e-16 relative) with its tuple helpers inlined. Revolute
joints about ``+-x/y/z`` add their velocity on one coordinate (``S qd = +-qd
e_k``) instead of a full 3-vector product; sin and cos come from
:func:`~rnea_ros.core._algebra.sincos`. Gravity uses composite first moments
(:func:`gravity_row`).

Shapes: ``q, qd, qdd, tau`` (n,); batch ``Q, QD, QDD, TAU`` (N, n), C-contiguous
float64; ``g`` (3,); ``fp`` the packed model (n, 30).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Base,
    Mat,
    Vec,
    add3,
    axis_rotation,
    base_tuple,
    body_force,
    child_motion,
    coulomb_sign,
    cross,
    dot3,
    inertia_times,
    joint_transform,
    mat3,
    mm,
    mtv,
    mv,
    put3,
    put9,
    rotate_about_coordinate_axis,
    scale3,
    sincos,
    sub3,
    vec3,
)
from rnea_ros.core._compile import inline, jit, jit_entry, jit_entry_fma, jit_fma, scratch
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_BAND,
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
    kind,
    parent,
)

Array = NDArray[np.float64]

# ---------------------------------------------------------------- throughput (batch) kernels

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
    c, s = (1.0, 0.0) if int(fp[i, F_KIND]) == PRISMATIC else _sincos(q)
    pose: tuple[Mat, Vec] = joint_transform_cs(fp, i, q, c, s)
    return pose


@inline
def joint_transform_cs(fp: Array, i: int, q: float, c: float, s: float) -> tuple[Mat, Vec]:
    """:func:`_joint_transform` given the angle's cosine ``c`` and sine ``s`` (a revolute
    joint; ``q`` unused) or the displacement ``q`` (a prismatic one; ``c, s`` unused)."""
    R0 = _get9(fp, i, F_R)
    p0 = _get3(fp, i, F_P)
    u = _get3(fp, i, F_AXIS)
    jk = int(fp[i, F_KIND])
    if jk == PRISMATIC:
        return R0, _add3(p0, _mv(R0, _scale3(u, q)))
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


@inline
def pose_span(fp: Array, Q: Array, k: int, work: Array, first: int, oq: int) -> None:
    """The joint transforms of :func:`rnea_span` (rows ``first..n-1``, joint ``i``'s
    position at ``Q[k, i + oq]``) into ``work``'s ``R, p`` columns; independent of
    each other, they overlap."""
    for i in range(first, fp.shape[0]):
        R, p = _joint_transform(fp, i, Q[k, i + oq])
        _set9(work, i, RW_R, R)
        _set3(work, i, RW_P, p)


@inline
def forward_span(fp: Array, QD: Array, QDD: Array, k: int, g: Array, work: Array,
                 first: int, forces: bool) -> None:
    """The forward pass of :func:`rnea_span` on the transforms already in ``work``:
    ``w, v, dw, a`` and, if ``forces`` (a constant: the branch is compiled away), the
    body forces ``n, f`` of rows ``first..n-1`` (the base at rest, accelerating by
    ``-g``)."""
    zero = (0.0, 0.0, 0.0)
    for i in range(first, fp.shape[0]):
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
        _set3(work, i, RW_W, w)
        _set3(work, i, RW_V, v)
        _set3(work, i, RW_DW, dw)
        _set3(work, i, RW_A, a)
        if forces:
            n1, f1 = _inertia_times(fp, i, dw, a)
            n2, f2 = _inertia_times(fp, i, w, v)
            _set3(work, i, RW_N, _add3(n1, _add3(_cross(w, n2), _cross(v, f2))))
            _set3(work, i, RW_F, _add3(f1, _cross(w, f2)))


@inline
def backward_span(fp: Array, QD: Array, QDD: Array, k: int, drive: bool, TAU: Array,
                  work: Array, first: int) -> float:
    """The backward pass of :func:`rnea_span` over the body forces in ``work``:
    ``TAU[k, first:]``, whose sum it returns; a parent row below ``first`` receives
    its children's wrenches."""
    total = 0.0
    for i in range(fp.shape[0] - 1, first - 1, -1):
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
            t += (fp[i, F_ARMATURE] * QDD[k, i] + fp[i, F_COULOMB] * coulomb_sign(qd, fp[i, F_BAND])
                  + fp[i, F_VISCOUS] * qd)
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


@inline
def rnea_posed(fp: Array, QD: Array, QDD: Array, k: int, g: Array, drive: bool,
               TAU: Array, work: Array, first: int) -> float:
    """:func:`rnea_span` after its poses: each row's ``R, p`` (``RW_R, RW_P``) already in
    ``work`` (e.g. from a closed form that has the joints' cosines and sines)."""
    forward_span(fp, QD, QDD, k, g, work, first, True)
    total: float = backward_span(fp, QD, QDD, k, drive, TAU, work, first)
    return total


@inline
def rnea_span(fp: Array, Q: Array, QD: Array, QDD: Array, k: int, g: Array, drive: bool,
              TAU: Array, work: Array, first: int, oq: int) -> float:
    """:func:`rnea_row` on rows ``first..n-1`` only, joint ``i``'s position at
    ``Q[k, i + oq]``: a parent row below ``first`` must already hold its motion
    ``w, v, dw, a`` and body force ``n, f`` in ``work``, and receives its children's
    wrenches (the free-flyer root of :mod:`~._rnea_expanded_jit`, ``first = 6``,
    ``oq = 1``); returns the sum of ``TAU[k, first:]``. Its three passes are
    :func:`pose_span`, :func:`forward_span` and :func:`backward_span` (the closed-loop
    row kernel of :mod:`~rnea_ros.core.coupling._loop_dynamics_jit` runs them apart)."""
    pose_span(fp, Q, k, work, first, oq)
    forward_span(fp, QD, QDD, k, g, work, first, True)
    total: float = backward_span(fp, QD, QDD, k, drive, TAU, work, first)
    return total


@jit_fma
def rnea_row(fp: Array, Q: Array, QD: Array, QDD: Array, k: int, g: Array, drive: bool,
             TAU: Array, work: Array) -> float:
    """RNEA on sample ``k``: ``TAU[k] = ID(Q[k], QD[k], QDD[k])``; returns ``sum(TAU[k])``
    (finite iff every torque is). ``work`` (n, 30) as :func:`~.rnea.rnea_pass`'s."""
    total: float = rnea_span(fp, Q, QD, QDD, k, g, drive, TAU, work, 0, 0)
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


# ---------------------------------------------------------------- per-call passes and entries
# The forward step inlined at IR level: as fast as the step written out in place.
_child_motion, _body_force = inline(child_motion), inline(body_force)


@jit
def rnea_pass(fp: Array, q: Array, qd: Array, qdd: Array, base: Base,
              fext: Array, use_fext: bool, drive: bool, tau: Array, work: Array) -> bool:
    """One RNEA evaluation into ``tau``; ``work`` (n, 30) holds per-body state.

    ``base`` is the base's motion ``(w0, v0, dw0, a0)`` in the base frame, gravity
    folded into ``a0`` (:func:`fixed_base`, :func:`~.moving_base.base_state`).

    ``drive`` adds armature and friction (Khalil eq. 31). After the call,
    ``work[i, 24:30]`` is the wrench ``(n, f)`` transmitted through joint ``i``
    onto body ``i``, in body ``i``'s frame. Returns whether ``tau`` is finite.
    """
    forward_pass(fp, q, qd, qdd, base, fext, use_fext, work)
    return backward_pass(fp, qd, qdd, drive, tau, work)


@jit
def forward_pass(fp: Array, q: Array, qd: Array, qdd: Array, base: Base,
                 fext: Array, use_fext: bool, work: Array) -> None:
    """RNEA's forward pass: poses, ``w, v, dw, a`` and body forces ``(n, f)`` into ``work``.

    The recursion starts from the base's motion ``base = (w0, v0, dw0, a0)``
    (Khalil 2010 §7.1: ``V_0`` and ``dV_0`` are its initial values; a fixed
    base has ``w0 = v0 = dw0 = 0`` and ``a0 = -g``).
    """
    n = q.shape[0]
    w0, v0, dw0, a0 = base
    for i in range(n):
        # Forward pass: velocities and accelerations (Caron's pseudo-code).
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, RW_R, R)
        put3(work, i, RW_P, p)
        par = parent(fp, i)
        if par < 0:
            w_p, v_p, dw_p, a_p = w0, v0, dw0, a0
        else:
            w_p, v_p = vec3(work, par, RW_W), vec3(work, par, RW_V)
            dw_p, a_p = vec3(work, par, RW_DW), vec3(work, par, RW_A)
        w, v, dw, a = _child_motion(fp, i, R, p, w_p, v_p, dw_p, a_p, qd[i], qdd[i])
        # Body force f = I a + v x* I v - f_ext.
        nb, fb = _body_force(fp, i, w, v, dw, a)
        if use_fext:
            fb = sub3(fb, vec3(fext, i, 0))
            nb = sub3(nb, vec3(fext, i, 3))
        put3(work, i, RW_W, w)
        put3(work, i, RW_V, v)
        put3(work, i, RW_DW, dw)
        put3(work, i, RW_A, a)
        put3(work, i, RW_N, nb)
        put3(work, i, RW_F, fb)


@jit
def backward_pass(fp: Array, qd: Array, qdd: Array, drive: bool, tau: Array,
                  work: Array) -> bool:
    """RNEA's backward pass over the body forces in ``work``; whether ``tau`` is finite."""
    n = qd.shape[0]
    total = 0.0
    for i in range(n - 1, -1, -1):
        # Backward pass: project on the joint axis, pass the wrench to the parent.
        nb = vec3(work, i, RW_N)
        fb = vec3(work, i, RW_F)
        u = vec3(fp, i, F_AXIS)
        t = dot3(u, nb) if kind(fp, i) != PRISMATIC else dot3(u, fb)
        if drive:
            t += (fp[i, F_ARMATURE] * qdd[i] + fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND])
                  + fp[i, F_VISCOUS] * qd[i])
        tau[i] = t
        total += t
        par = parent(fp, i)
        if par >= 0:
            R = mat3(work, i, RW_R)
            Rf = mv(R, fb)
            Rn = add3(mv(R, nb), cross(vec3(work, i, RW_P), Rf))
            put3(work, par, RW_N, add3(vec3(work, par, RW_N), Rn))
            put3(work, par, RW_F, add3(vec3(work, par, RW_F), Rf))
    return bool(np.isfinite(total))


@jit_fma
def rnea_drive_pass(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, tau: Array,
                    work: Array) -> bool:
    """``tau = ID(q, qd, qdd)`` with drive terms on a fixed base: the batch's
    :func:`rnea_row` on the one sample (FMA, axis-specialised joints: ~25 % less time
    than :func:`rnea_pass`, results equal to rounding); whether ``tau`` is finite.
    ``q, qd, qdd, tau`` C-contiguous (n,), ``work`` (n, 30). One compiled function, so
    that :func:`rnea_call` and the controller's fused inverse-dynamics command
    (``rnea_ros.control.command``) give bit-equal torques."""
    n = fp.shape[0]
    total = _rnea_row(fp, q.reshape((1, n)), qd.reshape((1, n)), qdd.reshape((1, n)), 0, g,
                      True, tau.reshape((1, n)), work)
    return bool(np.isfinite(total))


@jit_entry
def rnea_call(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, tau: Array) -> bool:
    """The 1 kHz entry: drive terms, no external wrenches (six arguments to unbox):
    :func:`rnea_drive_pass`.

    Also checks the vector lengths, so the Python side need not; False means
    a wrong length or a non-finite result.
    """
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or g.shape[0] != 3:
        return False
    work = scratch(n, RW_COLS)
    return rnea_drive_pass(fp, q, qd, qdd, g, tau, work)


@jit
def rnea_general_call(fp: Array, q: Array, qd: Array, qdd: Array, base: Array,
                       fext: Array, use_fext: bool, drive: bool, tau: Array, wrenches: Array,
                       want_wrenches: bool) -> bool:
    """The general entry: ``base`` (12,) is ``[w0, v0, dw0, a0]`` (see :func:`rnea_pass`)."""
    n = q.shape[0]
    work = np.empty((n, RW_COLS))
    ok = rnea_pass(fp, q, qd, qdd, base_tuple(base), fext, use_fext, drive, tau, work)
    if want_wrenches:
        for i in range(n):
            for k in range(3):
                wrenches[i, k] = work[i, RW_F + k]
                wrenches[i, 3 + k] = work[i, RW_N + k]
    return ok


@jit_fma
def gravity_pass(fp: Array, q: Array, g: Array, tau: Array,
                 work: Array) -> bool:
    """``g(q)`` into ``tau``: :func:`rnea_pass` with ``qd = qdd = 0`` and no drive terms,
    by composite first moments (:func:`gravity_row`); whether ``tau``
    is finite. ``q``, ``tau`` C-contiguous (n,), ``work`` (n, 30)."""
    n = q.shape[0]
    return bool(np.isfinite(_gravity_row(fp, q.reshape((1, n)), 0, g, tau.reshape((1, n)), work)))


@jit_entry_fma
def gravity_call(fp: Array, q: Array, g: Array, tau: Array) -> bool:
    """The 1 kHz entry of :func:`gravity_pass`; False: wrong length or non-finite result."""
    n = fp.shape[0]
    if q.shape[0] != n or g.shape[0] != 3:
        return False
    work = scratch(n, RW_COLS)
    return bool(np.isfinite(_gravity_row(fp, q.reshape((1, n)), 0, g, tau.reshape((1, n)), work)))


__all__ = [
    "backward_pass",
    "backward_span",
    "forward_pass",
    "forward_span",
    "gravity_call",
    "gravity_pass",
    "gravity_row",
    "gravity_rows",
    "pose_span",
    "rnea_call",
    "rnea_drive_pass",
    "rnea_general_call",
    "rnea_pass",
    "rnea_posed",
    "rnea_row",
    "rnea_rows",
    "rnea_span",
]
