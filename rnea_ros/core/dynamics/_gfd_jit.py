"""Numba kernels of :mod:`rnea_ros.core.dynamics.gfd` (the face: the equations, checks and
dispatch): :func:`gfd_pass`, one pass of ``tau``, ``tau_dot`` and ``tau_ddot`` over the
work array ``GW_*`` (:mod:`rnea_ros.core._layout`), and its entries :func:`gfd_call`
(control rate, no wrenches), :func:`gfd_general_call` and :func:`gfd_batch`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Motion,
    coulomb_sign,
    dot3,
    fcross,
    joint_motion,
    joint_transform,
    madd,
    mat3,
    mcross,
    mget,
    minertia,
    mput,
    mscale,
    put3,
    put9,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import jit, jit_entry, scratch
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_BAND,
    F_COULOMB,
    F_VISCOUS,
    GW_A,
    GW_COLS,
    GW_F,
    GW_FD,
    GW_FDD,
    GW_G,
    GW_GD,
    GW_GDD,
    GW_J,
    GW_K,
    GW_P,
    GW_R,
    GW_V,
    PRISMATIC,
    kind,
    parent,
)

Array = NDArray[np.float64]


@jit
def _wrench(fext: Array, i: int) -> Motion:
    """A ``[force, torque]`` row as a force ``(n, f)``."""
    return vec3(fext, i, 3), vec3(fext, i, 0)


@jit
def gfd_pass(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, qdddd: Array, g: Array,
             fext: Array, fext_dot: Array, fext_ddot: Array, use_fext: bool, second: bool,
             tau: Array, tau_dot: Array, tau_ddot: Array, work: Array) -> bool:
    """``tau``, ``tau_dot`` and, when ``second``, ``tau_ddot``; ``work`` is (n, 72)."""
    n = q.shape[0]
    zero = (0.0, 0.0, 0.0)
    nothing = (zero, zero)
    for i in range(n):
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, GW_R, R)
        put3(work, i, GW_P, p)
        par = parent(fp, i)
        if par < 0:
            Xv, A, J, K = nothing, nothing, nothing, nothing
            XG, XGd, XGdd = to_child(R, p, (zero, (-g[0], -g[1], -g[2]))), nothing, nothing
        else:
            Xv = to_child(R, p, mget(work, par, GW_V))
            A = to_child(R, p, mget(work, par, GW_A))
            J = to_child(R, p, mget(work, par, GW_J))
            K = to_child(R, p, mget(work, par, GW_K)) if second else nothing
            XG = to_child(R, p, mget(work, par, GW_G))
            XGd = to_child(R, p, mget(work, par, GW_GD))
            XGdd = to_child(R, p, mget(work, par, GW_GDD)) if second else nothing
        s1 = joint_motion(fp, i, qd[i])
        s2 = joint_motion(fp, i, qdd[i])
        s3 = joint_motion(fp, i, qddd[i])
        v = madd(Xv, s1)
        a = madd(madd(A, s2), mcross(v, s1))
        j = madd(madd(madd(J, mcross(A, s1)), s3), madd(mcross(a, s1), mcross(v, s2)))
        G = XG
        Gd = madd(XGd, mcross(G, s1))
        Iv, Ia, Ij = minertia(fp, i, v), minertia(fp, i, a), minertia(fp, i, j)
        f = madd(madd(Ia, minertia(fp, i, G)), fcross(v, Iv))
        fd = madd(madd(Ij, minertia(fp, i, Gd)), madd(fcross(a, Iv), fcross(v, Ia)))
        if use_fext:
            f = madd(f, mscale(_wrench(fext, i), -1.0))
            fd = madd(fd, mscale(_wrench(fext_dot, i), -1.0))
        mput(work, i, GW_V, v)
        mput(work, i, GW_A, a)
        mput(work, i, GW_J, j)
        mput(work, i, GW_G, G)
        mput(work, i, GW_GD, Gd)
        mput(work, i, GW_F, f)
        mput(work, i, GW_FD, fd)
        if second:
            s4 = joint_motion(fp, i, qdddd[i])
            k = madd(madd(K, mscale(mcross(J, s1), 2.0)),
                     madd(mcross(mcross(A, s1), s1), mcross(A, s2)))
            k = madd(madd(k, s4), madd(mcross(j, s1), madd(mscale(mcross(a, s2), 2.0),
                                                           mcross(v, s3))))
            Gdd = madd(madd(XGdd, mcross(Gd, s1)),
                       madd(mcross(G, s2), mcross(madd(Gd, mscale(mcross(G, s1), -1.0)), s1)))
            fdd = madd(minertia(fp, i, madd(k, Gdd)), fcross(j, Iv))
            fdd = madd(fdd, madd(mscale(fcross(a, Ia), 2.0), fcross(v, Ij)))
            if use_fext:
                fdd = madd(fdd, mscale(_wrench(fext_ddot, i), -1.0))
            mput(work, i, GW_K, k)
            mput(work, i, GW_GDD, Gdd)
            mput(work, i, GW_FDD, fdd)
    total = 0.0
    for i in range(n - 1, -1, -1):
        F, Fd = mget(work, i, GW_F), mget(work, i, GW_FD)
        Fdd = mget(work, i, GW_FDD) if second else nothing
        u = vec3(fp, i, F_AXIS)
        lin = kind(fp, i) == PRISMATIC
        t0 = dot3(u, F[1] if lin else F[0])
        t1 = dot3(u, Fd[1] if lin else Fd[0])
        Ia, Fv = fp[i, F_ARMATURE], fp[i, F_VISCOUS]
        tau[i] = (t0 + Ia * qdd[i] + Fv * qd[i]
                  + fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND]))
        tau_dot[i] = t1 + Ia * qddd[i] + Fv * qdd[i]
        total += tau[i] + tau_dot[i]
        if second:
            tau_ddot[i] = dot3(u, Fdd[1] if lin else Fdd[0]) + Ia * qdddd[i] + Fv * qddd[i]
            total += tau_ddot[i]
        par = parent(fp, i)
        if par >= 0:
            R, p = mat3(work, i, GW_R), vec3(work, i, GW_P)
            s1 = joint_motion(fp, i, qd[i])
            mput(work, par, GW_F, madd(mget(work, par, GW_F), to_parent(R, p, F)))
            mput(work, par, GW_FD, madd(mget(work, par, GW_FD),
                                        to_parent(R, p, madd(Fd, fcross(s1, F)))))
            if second:
                s2 = joint_motion(fp, i, qdd[i])
                inner = madd(madd(Fdd, mscale(fcross(s1, Fd), 2.0)),
                             madd(fcross(s1, fcross(s1, F)), fcross(s2, F)))
                mput(work, par, GW_FDD, madd(mget(work, par, GW_FDD), to_parent(R, p, inner)))
    return bool(np.isfinite(total))


@jit
def gfd_batch(fp: Array, Q: Array, QD: Array, QDD: Array, QDDD: Array, QDDDD: Array, g: Array,
              second: bool, TAU: Array, TAU_D: Array, TAU_DD: Array) -> bool:
    """:func:`gfd_pass` on every sample (rows of ``Q``...), no wrenches."""
    work = np.empty((Q.shape[1], GW_COLS))
    none = np.empty((0, 6))
    ok = True
    for s in range(Q.shape[0]):
        ok = gfd_pass(fp, Q[s], QD[s], QDD[s], QDDD[s], QDDDD[s] if second else QDDD[s], g,
                      none, none, none, False, second, TAU[s], TAU_D[s],
                      TAU_DD[s] if second else TAU_D[s], work) and ok
    return ok


@jit_entry
def gfd_call(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, g: Array, tau: Array,
             tau_dot: Array) -> bool:
    """The control-rate entry of ``(tau, tau_dot)``: no wrenches, lengths checked here."""
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or qddd.shape[0] != n:
        return False
    work = scratch(n, GW_COLS)
    none = work[:0]
    return gfd_pass(fp, q, qd, qdd, qddd, qddd, g, none, none, none, False, False, tau,
                    tau_dot, tau_dot, work)


@jit
def gfd_general_call(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, qdddd: Array,
                     g: Array, fext: Array, fext_dot: Array, fext_ddot: Array, use_fext: bool,
                     second: bool, tau: Array, tau_dot: Array, tau_ddot: Array) -> bool:
    """The general entry: wrenches and their derivatives, ``tau_ddot`` when ``second``."""
    work = np.empty((q.shape[0], GW_COLS))
    return gfd_pass(fp, q, qd, qdd, qddd, qdddd, g, fext, fext_dot, fext_ddot, use_fext,
                    second, tau, tau_dot, tau_ddot, work)


__all__ = ["gfd_batch", "gfd_call", "gfd_general_call", "gfd_pass"]
