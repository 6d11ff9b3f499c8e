"""Generalized-force derivatives: ``tau_dot`` (needs the jerk) and ``tau_ddot``
(needs the snap) by recursive Newton-Euler, in one pass with ``tau``.

Guarino Lo Bianco & Fantini (2009) differentiate the Luh-Walker-Paul RNEA in
modified-DH frames: forward recursion of angular/linear velocity,
acceleration and **jerk** (eq. 3-9), backward recursion of forces, moments and
their derivatives (eq. 10-19), projection with the ``omega x n`` term (eq.
20-21). We do the same in spatial algebra, in body coordinates, for trees and
any joint axis, and one order further.

Differentiating the body-coordinate vectors of Featherstone's RNEA with
``d/dt X_i = -(S_i qd_i) x X_i`` and writing ``s1..s4 = S q^(1..4)``,
``A = X a_p``, ``J = X j_p``, ``K = X k_p`` (true accelerations, so that the
body-coordinate derivative of ``v`` is ``a``, of ``a`` is ``j``...)::

    v = X v_p + s1
    a = A + s2 + v x s1
    j = J + A x s1 + s3 + a x s1 + v x s2                              (jerk)
    k = K + 2 J x s1 + (A x s1) x s1 + A x s2 + s4 + j x s1 + 2 a x s2 + v x s3

Gravity, the fictitious base acceleration ``-g``, is carried separately in
body coordinates with its own derivatives (it is constant in the world, so
only the rotation of the frames changes it)::

    G = X G_p,   G_dot = X G_dot_p + G x s1,
    G_ddot = X G_ddot_p + G_dot x s1 + G x s2 + (G_dot - G x s1) x s1
    f      = I (a + G) + v x* I v - f_e
    f_dot  = I (j + G_dot) + a x* I v + v x* I a - f_e_dot
    f_ddot = I (k + G_ddot) + j x* I v + 2 a x* I a + v x* I j - f_e_ddot

and backwards, with ``F`` the force transmitted through joint ``i``::

    F_p      += X^T F
    F_dot_p  += X^T (F_dot + s1 x* F)                     (the paper's omega x n term)
    F_ddot_p += X^T (F_ddot + 2 s1 x* F_dot + s1 x* (s1 x* F) + s2 x* F)
    tau^(m) = S^T F^(m) + Ia q^(m+2) + Fv q^(m+1)          (m = 0, 1, 2)

Rotor inertia and viscous friction are included (their derivatives are the
last two terms); Coulomb friction ``Fs sign(qd)`` has zero derivative wherever
``qd != 0`` and is left out of the derivatives. Shapes: joint vectors (n,),
wrenches and their derivatives (n, 6) ``[force, torque]`` per body in its
frame; batch forms (N, n).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Motion,
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
    sign,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import FastCall, jit, jit_entry, scratch
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
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
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

# Work columns per body: pose, motion v, a, j, k, gravity G, G_dot, G_ddot, and force
# F, F_dot, F_ddot (6 each).


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
        tau[i] = t0 + Ia * qdd[i] + Fv * qd[i] + fp[i, F_COULOMB] * sign(qd[i])
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
def _gfd_batch(fp: Array, Q: Array, QD: Array, QDD: Array, QDDD: Array, QDDDD: Array, g: Array,
               second: bool, TAU: Array, TAU_D: Array, TAU_DD: Array) -> bool:
    work = np.empty((Q.shape[1], GW_COLS))
    none = np.empty((0, 6))
    ok = True
    for s in range(Q.shape[0]):
        ok = gfd_pass(fp, Q[s], QD[s], QDD[s], QDDD[s], QDDDD[s] if second else QDDD[s], g,
                      none, none, none, False, second, TAU[s], TAU_D[s],
                      TAU_DD[s] if second else TAU_D[s], work) and ok
    return ok


def _wrench_or_empty(model: RobotModel, x: object | None, name: str) -> Array:
    return body_wrenches(model, x, name) if x is not None else np.zeros((model.nv, 6))


@jit_entry
def _gfd_fast(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, g: Array, tau: Array,
              tau_dot: Array) -> bool:
    """The control-rate entry of ``(tau, tau_dot)``: no wrenches, lengths checked here."""
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or qddd.shape[0] != n:
        return False
    work = scratch(n, GW_COLS)
    none = work[:0]
    return gfd_pass(fp, q, qd, qdd, qddd, qddd, g, none, none, none, False, False, tau,
                    tau_dot, tau_dot, work)


_gfd_fast_call = FastCall(_gfd_fast)
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty


def rnea_derivative(model: RobotModel, q: object, qd: object, qdd: object, qddd: object, *,
                    gravity: object | None = None, fext: object | None = None,
                    fext_dot: object | None = None) -> tuple[Array, Array]:
    """``(tau, tau_dot)`` (n,) from positions to jerks; ``fext``/``fext_dot`` (n, 6)."""
    if fext is None and fext_dot is None:  # lean path, as rnea()'s
        q, qd, qdd, qddd = _asc(q, _f64), _asc(qd, _f64), _asc(qdd, _f64), _asc(qddd, _f64)
        if q.ndim == qd.ndim == qdd.ndim == qddd.ndim == 1:
            tau, tau_dot = _empty(model.nv), _empty(model.nv)
            g = model.gravity if gravity is None else gravity_vector(model, gravity)
            if _gfd_fast_call.call(model.kernel_floats, q, qd, qdd, qddd, g, tau, tau_dot):
                return tau, tau_dot
        model.require_one_dof("rnea_derivative")  # (their kernel rows never match q, qd)
        raise_bad_input(model, q=q, qd=qd, qdd=qdd, qddd=qddd)
    tau, tau_dot, _ = _evaluate(model, q, qd, qdd, qddd, None, gravity, fext, fext_dot, None)
    return tau, tau_dot


def rnea_second_derivative(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
                           qdddd: object, *, gravity: object | None = None,
                           fext: object | None = None, fext_dot: object | None = None,
                           fext_ddot: object | None = None) -> tuple[Array, Array, Array]:
    """``(tau, tau_dot, tau_ddot)`` (n,) from positions to snaps (4th derivatives)."""
    return _evaluate(model, q, qd, qdd, qddd, qdddd, gravity, fext, fext_dot, fext_ddot)


def _evaluate(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
              qdddd: object | None, gravity: object | None, fext: object | None,
              fext_dot: object | None, fext_ddot: object | None) -> tuple[Array, Array, Array]:
    model.require_one_dof("rnea_derivative/rnea_second_derivative")
    second = qdddd is not None
    args = {"q": joint_vector(model, q, "q"), "qd": joint_vector(model, qd, "qd"),
            "qdd": joint_vector(model, qdd, "qdd"), "qddd": joint_vector(model, qddd, "qddd")}
    if second:
        args["qdddd"] = joint_vector(model, qdddd, "qdddd")
    use_fext = any(x is not None for x in (fext, fext_dot, fext_ddot))
    fe, fe_dot, fe_ddot = (_wrench_or_empty(model, x, name) for x, name in
                           ((fext, "fext"), (fext_dot, "fext_dot"), (fext_ddot, "fext_ddot")))
    tau, tau_dot, tau_ddot = (np.empty(model.nv) for _ in range(3))
    if not _gfd_call(model.kernel_floats, args["q"], args["qd"], args["qdd"], args["qddd"],
                     args.get("qdddd", args["qddd"]), gravity_vector(model, gravity),
                     fe, fe_dot, fe_ddot, use_fext, second, tau, tau_dot, tau_ddot):
        raise_non_finite(model, **args)
    return tau, tau_dot, tau_ddot


@jit
def _gfd_call(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, qdddd: Array, g: Array,
              fext: Array, fext_dot: Array, fext_ddot: Array, use_fext: bool, second: bool,
              tau: Array, tau_dot: Array, tau_ddot: Array) -> bool:
    work = np.empty((q.shape[0], GW_COLS))
    return gfd_pass(fp, q, qd, qdd, qddd, qdddd, g, fext, fext_dot, fext_ddot, use_fext,
                    second, tau, tau_dot, tau_ddot, work)


def rnea_derivative_batch(model: RobotModel, q: object, qd: object, qdd: object, qddd: object,
                          *, gravity: object | None = None) -> tuple[Array, Array]:
    """:func:`rnea_derivative` over N samples: (N, n) inputs give two (N, n) arrays."""
    model.require_one_dof("rnea_derivative_batch")
    Q = joint_batch(model, q, "q")
    QD, QDD, QDDD = (joint_batch(model, x, name, Q.shape[0])
                     for x, name in ((qd, "qd"), (qdd, "qdd"), (qddd, "qddd")))
    TAU, TAU_D = np.empty_like(Q), np.empty_like(Q)
    if not _gfd_batch(model.kernel_floats, Q, QD, QDD, QDDD, QDDD,
                      gravity_vector(model, gravity), False, TAU, TAU_D, TAU_D):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD, qddd=QDDD)
    return TAU, TAU_D


def rnea_second_derivative_batch(model: RobotModel, q: object, qd: object, qdd: object,
                                 qddd: object, qdddd: object, *,
                                 gravity: object | None = None) -> tuple[Array, Array, Array]:
    """:func:`rnea_second_derivative` over N samples: (N, n) inputs give three (N, n)."""
    model.require_one_dof("rnea_second_derivative_batch")
    Q = joint_batch(model, q, "q")
    QD, QDD, QDDD, QDDDD = (joint_batch(model, x, name, Q.shape[0]) for x, name in
                            ((qd, "qd"), (qdd, "qdd"), (qddd, "qddd"), (qdddd, "qdddd")))
    TAU, TAU_D, TAU_DD = np.empty_like(Q), np.empty_like(Q), np.empty_like(Q)
    if not _gfd_batch(model.kernel_floats, Q, QD, QDD, QDDD, QDDDD,
                      gravity_vector(model, gravity), True, TAU, TAU_D, TAU_DD):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD, qddd=QDDD, qdddd=QDDDD)
    return TAU, TAU_D, TAU_DD
