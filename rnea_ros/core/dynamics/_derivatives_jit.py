"""Kernels of :mod:`rnea_ros.core.dynamics.derivatives`: the analytic RNEA sensitivities.

Everything is written in the **world (base) frame**, where a composite of
bodies is a plain sum and the derivative of any quantity carried by the
subtree of joint ``k`` is a closed-form cross product with ``S_k``; this is the
route of Carpentier & Mansard (2018, "Analytical derivatives of rigid body
dynamics algorithms"), derived here for our conventions. Barman (2020, ch. III)
propagates the same sensitivities body by body in local frames (forward
steps 1-8, eq. 3.1-3.71; backward step 9, eq. 3.72-3.91, which are the
sensitivities ``F_jp,i``, ``tau_jp,i`` of the internal joint wrenches; step 10,
eq. 3.92-3.95, projects them on the joint axes). Both give the same numbers;
the world-frame form needs per (joint, ancestor) pair only a few 6-vector dot
products instead of a local-frame transform per pair.

Notation (spatial motion ``(angular, linear)``, force ``(moment, force)``,
``x`` / ``x*`` the motion / force cross products, ``.`` the motion-force
pairing, ``k <= i``: ``k`` is ``i`` or an ancestor of ``i``)::

    S_i                                   joint motion subspace (world)
    v_i = v_l + S_i qd_i                  l = parent of i; v_base = 0
    psi_i = v_l x S_i                     (= dS_i/dt)
    a_i = a_l + S_i qdd_i + psi_i qd_i    a_base = (0, -g)
    alpha_i = a_l x S_i + v_l x psi_i
    f_i = I_i a_i + v_i x* I_i v_i - f_ext_i
    B_i = v_i x* I_i - I_i (v_i x)        (symmetric 6x6)

and the subtree sums ``IC_i = sum I_j``, ``hC_i = sum I_j v_j``, ``BC_i = sum B_j``,
``F_i = sum f_j`` (``F_i`` is the wrench joint ``i`` transmits). For every
descendant ``j`` of ``k`` (moving the subtree of ``k`` rigidly about ``S_k``)::

    d v_j/d q_k  = S_k x (v_j - v_l(k)),      d v_j/d qd_k = S_k
    d a_j/d q_k  = S_k x (a_j - a_l(k)) - (S_k x v_l(k)) x (v_j - v_l(k))
    d a_j/d qd_k = 2 psi_k + S_k x v_j
    d f_j/d q_k  = S_k x* f_j + I_j alpha_k + psi_k x* I_j v_j + B_j psi_k
    d f_j/d qd_k = 2 I_j psi_k + S_k x* I_j v_j + B_j S_k

Summing over the subtree of ``i`` and projecting (``tau_i = S_i . F_i``, the
``dS_i/dq_k`` term cancels the ``S_k x* F_i`` term for ``k <= i``)::

    P_i = IC_i S_i,   Q_i = BC_i S_i - S_i x* hC_i
    k <= i:  d tau_i/d q_k  = alpha_k . P_i + psi_k . Q_i
             d tau_i/d qd_k = 2 psi_k . P_i + S_k . Q_i
             M_ik           = S_k . P_i
    i < k:   d tau_i/d q_k  = S_i . Phi_k,  Phi_k = S_k x* F_k + IC_k alpha_k
                                                   + psi_k x* hC_k + BC_k psi_k
             d tau_i/d qd_k = S_i . Gam_k,  Gam_k = 2 IC_k psi_k + S_k x* hC_k + BC_k S_k

The internal joint wrench in body ``i``'s frame, ``W_i = X_i* F_i``, has
``d W_i/d q_k = X_i* (IC_i alpha_k + psi_k x* hC_i + BC_i psi_k)`` for
``k <= i`` (the frame turns with ``F_i``, so ``S_k x* F_i`` drops out) and
``X_i* Phi_k`` for a descendant ``k``; likewise for ``qd`` and ``qdd`` with
``Gam`` and ``P``.

The kernels are generic in the scalar type: run on complex arrays they
differentiate themselves by complex step (used for the time derivative of
the sensitivities, :func:`rnea_ros.core.dynamics.derivatives.rnea_time_derivative_sensitivities`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Motion,
    Vec,
    add3,
    coulomb_sign,
    cross,
    dot3,
    fcross,
    joint_transform,
    madd,
    mat3,
    mcross,
    mget,
    mm,
    mput,
    mscale,
    mtv,
    mv,
    put3,
    put9,
    scale3,
    sub3,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import jit
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_BAND,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_VISCOUS,
    GW_COLS,
    PRISMATIC,
    REVOLUTE_X,
    kind,
    parent,
)
from rnea_ros.core.dynamics._gfd_jit import gfd_pass

Array = NDArray[np.float64]
CArray = NDArray[np.complex128]
Arr = NDArray[Any]  # float64, or complex128 for the complex step
Sym = tuple[float, float, float, float, float, float]  # xx yy zz xy xz yz

# Work columns per body (world frame); row n is the base.
_R, _P, _S, _PSI, _ALPHA, _V, _A = 0, 9, 12, 18, 24, 30, 36
_M, _H, _IO, _HC, _F, _B, _C = 42, 43, 46, 52, 58, 64, 70
W_COLS = 73


# ---- small helpers (tuples, generic in the scalar type)


@jit
def dot6(m: Motion, f: Motion) -> float:
    """The pairing ``m . f`` of a motion and a force."""
    return dot3(m[0], f[0]) + dot3(m[1], f[1])


@jit
def sym_times(I6: Sym, w: Vec) -> Vec:
    """A symmetric 3x3 matrix ``(xx, yy, zz, xy, xz, yz)`` times ``w``."""
    return (I6[0] * w[0] + I6[3] * w[1] + I6[4] * w[2],
            I6[3] * w[0] + I6[1] * w[1] + I6[5] * w[2],
            I6[4] * w[0] + I6[5] * w[1] + I6[2] * w[2])


@jit
def sym_get(work: Array, i: int, k: int) -> Sym:
    return (work[i, k], work[i, k + 1], work[i, k + 2],
            work[i, k + 3], work[i, k + 4], work[i, k + 5])


@jit
def sym_add_into(work: Array, i: int, k: int, x: Sym) -> None:
    for r in range(6):
        work[i, k + r] += x[r]


@jit
def inertia_apply(m: float, h: Vec, I6: Sym, x: Motion) -> Motion:
    """Spatial inertia ``(m, h = m c, I_o)`` about the frame origin times the motion ``x``."""
    return add3(sym_times(I6, x[0]), cross(h, x[1])), sub3(scale3(x[1], m), cross(h, x[0]))


@jit
def b_apply(B6: Sym, c: Vec, x: Motion) -> Motion:
    """``B x`` for ``B = [[B11, [c]x], [-[c]x, 0]]`` (the symmetric ``v x* I - I v x``)."""
    return add3(sym_times(B6, x[0]), cross(c, x[1])), cross(x[0], c)


@jit
def world_inertia(fp: Array, i: int, R: Mat, p: Vec) -> tuple[float, Vec, Sym]:
    """Body ``i``'s inertia ``(m, h, I_o)`` about the world origin, body pose ``(R, p)``.

    ``I_O = R I_o R^T + 2 (p.Rh) 1 - Rh p^T - p Rh^T + m (|p|^2 1 - p p^T)``.
    """
    m = fp[i, F_MASS]
    hr = mv(R, vec3(fp, i, F_H))
    k = F_IO
    xx, yy, zz = fp[i, k], fp[i, k + 1], fp[i, k + 2]
    xy, xz, yz = fp[i, k + 3], fp[i, k + 4], fp[i, k + 5]
    # A = R I_o (rows), then A R^T
    a0 = R[0] * xx + R[1] * xy + R[2] * xz
    a1 = R[0] * xy + R[1] * yy + R[2] * yz
    a2 = R[0] * xz + R[1] * yz + R[2] * zz
    a3 = R[3] * xx + R[4] * xy + R[5] * xz
    a4 = R[3] * xy + R[4] * yy + R[5] * yz
    a5 = R[3] * xz + R[4] * yz + R[5] * zz
    a6 = R[6] * xx + R[7] * xy + R[8] * xz
    a7 = R[6] * xy + R[7] * yy + R[8] * yz
    a8 = R[6] * xz + R[7] * yz + R[8] * zz
    d = 2.0 * dot3(p, hr) + m * dot3(p, p)
    ph0 = 2.0 * p[0] * hr[0] + m * p[0] * p[0]
    ph1 = 2.0 * p[1] * hr[1] + m * p[1] * p[1]
    ph2 = 2.0 * p[2] * hr[2] + m * p[2] * p[2]
    I6 = (a0 * R[0] + a1 * R[1] + a2 * R[2] + d - ph0,
          a3 * R[3] + a4 * R[4] + a5 * R[5] + d - ph1,
          a6 * R[6] + a7 * R[7] + a8 * R[8] + d - ph2,
          a0 * R[3] + a1 * R[4] + a2 * R[5] - hr[0] * p[1] - p[0] * hr[1] - m * p[0] * p[1],
          a0 * R[6] + a1 * R[7] + a2 * R[8] - hr[0] * p[2] - p[0] * hr[2] - m * p[0] * p[2],
          a3 * R[6] + a4 * R[7] + a5 * R[8] - hr[1] * p[2] - p[1] * hr[2] - m * p[1] * p[2])
    return m, add3(hr, scale3(p, m)), I6


@jit
def b_matrix(m: float, h: Vec, I6: Sym, v: Motion) -> tuple[Sym, Vec]:
    """``B = v x* I - I (v x)`` of one body: its block ``B11`` and ``c = w x h + m u``.

    With ``v = (w, u)``, ``W = [w]x``, ``U = [u]x``, ``H = [h]x``:
    ``B11 = W I_o - I_o W - U H - H U = A + A^T - h u^T - u h^T + 2 (u.h) 1``, ``A = W I_o``.
    """
    w, u = v
    A0 = cross(w, (I6[0], I6[3], I6[4]))  # columns of A = W I_o
    A1 = cross(w, (I6[3], I6[1], I6[5]))
    A2 = cross(w, (I6[4], I6[5], I6[2]))
    uh = 2.0 * dot3(u, h)
    B6 = (2.0 * A0[0] - 2.0 * h[0] * u[0] + uh,
          2.0 * A1[1] - 2.0 * h[1] * u[1] + uh,
          2.0 * A2[2] - 2.0 * h[2] * u[2] + uh,
          A1[0] + A0[1] - h[0] * u[1] - u[0] * h[1],
          A2[0] + A0[2] - h[0] * u[2] - u[0] * h[2],
          A2[1] + A1[2] - h[1] * u[2] - u[1] * h[2])
    return B6, add3(cross(w, h), scale3(u, m))


@jit
def force_to_body(R: Mat, p: Vec, f: Motion) -> Motion:
    """A world force ``(n, f)`` in the body frame of pose ``(R, p)``, as ``(force, moment)``."""
    return mtv(R, f[1]), mtv(R, sub3(f[0], cross(p, f[1])))


@jit
def _store_wrench_column(D: Array, i: int, k: int, x: Motion) -> None:
    """``D[i, :, k] = [force; moment]`` of a ``(force, moment)`` pair."""
    for r in range(3):
        D[i, r, k] = x[0][r]
        D[i, 3 + r, k] = x[1][r]


# ---- the pass


@jit
def derivatives_pass(fp: Array, q: Arr, qd: Arr, qdd: Arr, g: Array, fext: Arr,
                     use_fext: bool, drive: bool, tau: Arr, dq: Arr, dv: Arr, M: Arr,
                     want_wrenches: bool, W: Arr, dWq: Arr, dWv: Arr, dWa: Arr,
                     work: Arr) -> bool:
    """``tau`` (n,), ``dtau/dq``, ``dtau/dqd``, ``M`` (n, n) into the given arrays.

    ``dq, dv, M`` (and ``dWq, dWv, dWa`` (n, 6, n)) must be zero on entry: only
    (joint, ancestor) pairs are written. ``work`` is (n + 1, 73), row n the base.
    ``drive`` adds armature (to ``M``), viscous friction (to ``dv``) and
    armature/friction torques (to ``tau``). With ``want_wrenches``, ``W`` (n, 6)
    gets the joint wrenches ``[force, moment]`` in body frames and ``dW*`` their
    derivatives. Returns whether the result is finite.
    """
    n = q.shape[0]
    # Base row: identity pose, at rest, accelerating at -g.
    for c in range(W_COLS):
        work[n, c] = 0.0
    work[n, _R] = work[n, _R + 4] = work[n, _R + 8] = 1.0
    work[n, _A + 3], work[n, _A + 4], work[n, _A + 5] = -g[0], -g[1], -g[2]
    for i in range(n):
        par = parent(fp, i)
        lam = par if par >= 0 else n
        Rl, pl = joint_transform(fp, i, q[i])
        R_par = mat3(work, lam, _R)
        R = mm(R_par, Rl)
        p = add3(vec3(work, lam, _P), mv(R_par, pl))
        jk = kind(fp, i)
        if jk >= REVOLUTE_X:  # axis +-e_k: z is +-column k of R
            c = jk - REVOLUTE_X
            z = scale3((R[c], R[3 + c], R[6 + c]), fp[i, F_AXIS + c])
        else:
            z = mv(R, vec3(fp, i, F_AXIS))
        if jk == PRISMATIC:
            S = (scale3(z, 0.0), z)
        else:
            S = (z, cross(p, z))
        v_l, a_l = mget(work, lam, _V), mget(work, lam, _A)
        v = madd(v_l, mscale(S, qd[i]))
        psi = mcross(v_l, S)
        a = madd(a_l, madd(mscale(S, qdd[i]), mscale(psi, qd[i])))
        alpha = madd(mcross(a_l, S), mcross(v_l, psi))
        m, h, I6 = world_inertia(fp, i, R, p)
        hv = inertia_apply(m, h, I6, v)
        f = madd(inertia_apply(m, h, I6, a), fcross(v, hv))
        if use_fext:
            fb = (vec3(fext, i, 3), vec3(fext, i, 0))  # (torque, force) in the body frame
            f = madd(f, mscale(to_parent(R, p, fb), -1.0))
        B6, cb = b_matrix(m, h, I6, v)
        put9(work, i, _R, R)
        put3(work, i, _P, p)
        mput(work, i, _S, S)
        mput(work, i, _PSI, psi)
        mput(work, i, _ALPHA, alpha)
        mput(work, i, _V, v)
        mput(work, i, _A, a)
        work[i, _M] = m
        put3(work, i, _H, h)
        for r in range(6):
            work[i, _IO + r] = I6[r]
            work[i, _B + r] = B6[r]
        mput(work, i, _HC, hv)
        mput(work, i, _F, f)
        put3(work, i, _C, cb)
    total = 0.0
    for i in range(n - 1, -1, -1):
        S = mget(work, i, _S)
        m, h, I6 = work[i, _M], vec3(work, i, _H), sym_get(work, i, _IO)
        hC, F = mget(work, i, _HC), mget(work, i, _F)
        B6, cb = sym_get(work, i, _B), vec3(work, i, _C)
        psi, alpha = mget(work, i, _PSI), mget(work, i, _ALPHA)
        P = inertia_apply(m, h, I6, S)
        BS, SxH = b_apply(B6, cb, S), fcross(S, hC)
        Q = madd(BS, mscale(SxH, -1.0))
        Phi = madd(madd(fcross(S, F), inertia_apply(m, h, I6, alpha)),
                   madd(fcross(psi, hC), b_apply(B6, cb, psi)))
        Gam = madd(mscale(inertia_apply(m, h, I6, psi), 2.0), madd(SxH, BS))
        t = dot6(S, F)
        if drive:
            qdd_i, qd_i = qdd[i], qd[i]
            t += (fp[i, F_ARMATURE] * qdd_i + fp[i, F_VISCOUS] * qd_i
                  + fp[i, F_COULOMB] * coulomb_sign(qd_i.real, fp[i, F_BAND]))
        tau[i] = t
        # Finiteness from the per-body factors of every pair product (no sum in the pair loop).
        total += (t + dot6(S, madd(madd(P, Q), madd(Phi, Gam)))).real
        k = i
        while k >= 0:
            Sk, psik, alphak = mget(work, k, _S), mget(work, k, _PSI), mget(work, k, _ALPHA)
            dq[i, k] = dot6(alphak, P) + dot6(psik, Q)
            dv[i, k] = 2.0 * dot6(psik, P) + dot6(Sk, Q)
            Mik = dot6(Sk, P)
            M[i, k] = Mik
            if k != i:
                dq[k, i] = dot6(Sk, Phi)
                dv[k, i] = dot6(Sk, Gam)
                M[k, i] = Mik
            k = parent(fp, k)
        if drive:
            M[i, i] += fp[i, F_ARMATURE]
            dv[i, i] += fp[i, F_VISCOUS]
        if want_wrenches:
            _wrench_columns(fp, work, i, m, h, I6, B6, cb, hC, F, Phi, Gam, P, W, dWq, dWv, dWa)
        par = parent(fp, i)
        if par >= 0:
            work[par, _M] += m
            put3(work, par, _H, add3(vec3(work, par, _H), h))
            sym_add_into(work, par, _IO, I6)
            sym_add_into(work, par, _B, B6)
            put3(work, par, _C, add3(vec3(work, par, _C), cb))
            mput(work, par, _HC, madd(mget(work, par, _HC), hC))
            mput(work, par, _F, madd(mget(work, par, _F), F))
    return bool(np.isfinite(total))


@jit
def _wrench_columns(fp: Array, work: Array, i: int, m: float, h: Vec, I6: Sym, B6: Sym, cb: Vec,
                    hC: Motion, F: Motion, Phi: Motion, Gam: Motion, P: Motion, W: Array,
                    dWq: Array, dWv: Array, dWa: Array) -> None:
    """Joint ``i``'s wrench ``W_i`` (body frame) and its derivatives: columns of ``i``'s
    ancestors (from the composite of ``i``) and column ``i`` of ``i``'s ancestors' rows."""
    R, p = mat3(work, i, _R), vec3(work, i, _P)
    Wi = force_to_body(R, p, F)
    for r in range(3):
        W[i, r] = Wi[0][r]
        W[i, 3 + r] = Wi[1][r]
    k = i
    while k >= 0:
        Sk, psik, alphak = mget(work, k, _S), mget(work, k, _PSI), mget(work, k, _ALPHA)
        Dq = madd(madd(inertia_apply(m, h, I6, alphak), fcross(psik, hC)), b_apply(B6, cb, psik))
        Dv = madd(madd(mscale(inertia_apply(m, h, I6, psik), 2.0), fcross(Sk, hC)),
                  b_apply(B6, cb, Sk))
        Da = inertia_apply(m, h, I6, Sk)
        _store_wrench_column(dWq, i, k, force_to_body(R, p, Dq))
        _store_wrench_column(dWv, i, k, force_to_body(R, p, Dv))
        _store_wrench_column(dWa, i, k, force_to_body(R, p, Da))
        if k != i:  # joint i moves the subtree of i, inside the subtree of ancestor k
            Rk, pk = mat3(work, k, _R), vec3(work, k, _P)
            _store_wrench_column(dWq, k, i, force_to_body(Rk, pk, Phi))
            _store_wrench_column(dWv, k, i, force_to_body(Rk, pk, Gam))
            _store_wrench_column(dWa, k, i, force_to_body(Rk, pk, P))
        k = parent(fp, k)


# ---- tau_dot sensitivities: gfd's tau_dot and a complex step of derivatives_pass


@jit
def tau_dot_sensitivities_pass(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array,
                               g: Array, fext: Array, fext_dot: Array, use_fext: bool, h: float,
                               tau_dot: Array, out: Array, xc: CArray, fc: CArray,
                               Dc: CArray, work_c: CArray, work_g: Array, scratch: Array
                               ) -> bool:
    """``tau_dot`` (n,) and ``out`` (4, n, n) = d tau_dot / d(q, qd, qdd, qddd).

    ``tau_dot`` from :func:`rnea_ros.core.dynamics.gfd.gfd_pass`. The kernel
    :func:`derivatives_pass` (rigid part, no drive terms) runs once at
    ``(q, qd, qdd) + i h (qd, qdd, qddd)``, ``fext + i h fext_dot``: its real
    part is ``(tau_q, tau_qd, M)``, its imaginary part ``h d/dt`` of them. Then
    ``out = (d/dt tau_q, d/dt tau_qd + tau_q, d/dt M + tau_qd + Fv, M + Ia)``.
    Workspaces: ``xc`` (4, n) and ``Dc`` (3, n, n) complex, ``fc`` (n or 0, 6)
    complex, ``work_c`` (n + 1, 73) complex, ``work_g`` (n, 72), ``scratch`` (3, n).
    """
    n = q.shape[0]
    ok = gfd_pass(fp, q, qd, qdd, qddd, qddd, g, fext, fext_dot, fext_dot, use_fext, False,
                  scratch[0], tau_dot, scratch[1], work_g)
    for i in range(n):
        xc[0, i] = q[i] + 1j * h * qd[i]
        xc[1, i] = qd[i] + 1j * h * qdd[i]
        xc[2, i] = qdd[i] + 1j * h * qddd[i]
    if use_fext:
        for i in range(n):
            for r in range(6):
                fc[i, r] = fext[i, r] + 1j * h * fext_dot[i, r]
    for c in range(3):
        for i in range(n):
            for k in range(n):
                Dc[c, i, k] = 0.0
    none2 = np.empty((0, 6), dtype=np.complex128)
    none3 = np.empty((0, 6, 0), dtype=np.complex128)
    ok = derivatives_pass(fp, xc[0], xc[1], xc[2], g, fc, use_fext, False, xc[3], Dc[0], Dc[1],
                          Dc[2], False, none2, none3, none3, none3, work_c) and ok
    for i in range(n):
        for k in range(n):
            out[0, i, k] = Dc[0, i, k].imag / h
            out[1, i, k] = Dc[1, i, k].imag / h + Dc[0, i, k].real
            out[2, i, k] = Dc[2, i, k].imag / h + Dc[1, i, k].real
            out[3, i, k] = Dc[2, i, k].real
        out[2, i, i] += fp[i, F_VISCOUS]
        out[3, i, i] += fp[i, F_ARMATURE]
    return ok


# ---- entries of the face (rnea_ros.core.dynamics.derivatives)
COMPLEX_STEP = 1e-20  # the sensitivities' complex step


@jit
def derivatives_call(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, out: Array) -> bool:
    """The per-call entry (no wrenches, drive terms): ``out`` (3, n, n), uninitialised,
    gets ``dq, dv, M``. Checks the lengths; False: wrong length or non-finite result."""
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or g.shape[0] != 3:
        return False
    if out.shape[0] != 3 or out.shape[1] != n or out.shape[2] != n:
        return False
    for c in range(3):
        for i in range(n):
            for k in range(n):
                out[c, i, k] = 0.0
    work = np.empty((n + 1, W_COLS))
    tau = np.empty(n)
    none2 = np.empty((0, 6))  # C-contiguous like the other entries': one compiled signature
    none3 = np.empty((0, 6, 0))
    return derivatives_pass(fp, q, qd, qdd, g, none2, False, True, tau, out[0], out[1], out[2],
                            False, none2, none3, none3, none3, work)


@jit
def derivatives_general_call(fp: Array, q: Arr, qd: Arr, qdd: Arr, g: Array,
                             fext: Arr, use_fext: bool, drive: bool, tau: Arr,
                             dq: Arr, dv: Arr, M: Arr, want_wrenches: bool,
                             W: Arr, dWq: Arr, dWv: Arr, dWa: Arr) -> bool:
    """Any-input entry, float64 or complex128 (complex step) state and outputs."""
    work = np.empty((q.shape[0] + 1, W_COLS), dtype=q.dtype)
    return derivatives_pass(fp, q, qd, qdd, g, fext, use_fext, drive, tau, dq, dv, M,
                            want_wrenches, W, dWq, dWv, dWa, work)


@jit
def derivatives_rows(fp: Array, Q: Array, QD: Array, QDD: Array, g: Array, fext: Array,
                     use_fext: bool, DQ: Array, DV: Array, MM: Array, want_wrenches: bool,
                     W: Array, DWQ: Array, DWV: Array, DWA: Array) -> bool:
    """Loop over samples with one work array; outputs zero on entry. ``fext`` is
    (1, n or 0, 6), shared by every sample, or (N, n, 6), one per sample."""
    n = Q.shape[1]
    work = np.empty((n + 1, W_COLS))
    tau = np.empty(n)
    ok = True
    for s in range(Q.shape[0]):
        f = fext[s if fext.shape[0] > 1 else 0]
        if want_wrenches:
            ok = derivatives_pass(fp, Q[s], QD[s], QDD[s], g, f, use_fext, True, tau, DQ[s],
                                  DV[s], MM[s], True, W[s], DWQ[s], DWV[s], DWA[s], work) and ok
        else:
            ok = derivatives_pass(fp, Q[s], QD[s], QDD[s], g, f, use_fext, True, tau, DQ[s],
                                  DV[s], MM[s], False, W[0], DWQ[0], DWV[0], DWA[0], work) and ok
    return ok


@jit
def sensitivities_call(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, g: Array,
                       fext: Array, fext_dot: Array, use_fext: bool, tau_dot: Array,
                       out: Array) -> bool:
    n = q.shape[0]
    return tau_dot_sensitivities_pass(
        fp, q, qd, qdd, qddd, g, fext, fext_dot, use_fext, COMPLEX_STEP, tau_dot, out,
        np.empty((4, n), dtype=np.complex128), np.empty((fext.shape[0], 6), dtype=np.complex128),
        np.empty((3, n, n), dtype=np.complex128), np.empty((n + 1, W_COLS), dtype=np.complex128),
        np.empty((n, GW_COLS)), np.empty((3, n)))


@jit
def sensitivities_rows(fp: Array, Q: Array, QD: Array, QDD: Array, QDDD: Array, g: Array,
                       TAU_DOT: Array, OUT: Array) -> bool:
    n = Q.shape[1]
    xc, fc = np.empty((4, n), dtype=np.complex128), np.empty((0, 6), dtype=np.complex128)
    Dc, work_c = np.empty((3, n, n), dtype=np.complex128), np.empty((n + 1, W_COLS),
                                                                   dtype=np.complex128)
    work_g, scratch, none = np.empty((n, GW_COLS)), np.empty((3, n)), np.empty((0, 6))
    ok = True
    for s in range(Q.shape[0]):
        ok = tau_dot_sensitivities_pass(fp, Q[s], QD[s], QDD[s], QDDD[s], g, none, none, False,
                                        COMPLEX_STEP, TAU_DOT[s], OUT[s], xc, fc, Dc, work_c,
                                        work_g, scratch) and ok
    return ok
