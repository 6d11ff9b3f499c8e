"""Forward dynamics ``qdd = FD(q, qd, tau)`` by the articulated-body algorithm (ABA).

The O(n) recursive form: Featherstone, Rigid Body Dynamics Algorithms,
Table 7.1; Khalil 2010 section 3.3.2 derives the same three recursions
(eq. 32-52: forward velocities and bias terms, backward articulated inertias
``J*`` and bias forces ``beta*``, forward accelerations). Spatial vectors are
6-vectors ``[angular; linear]`` in body coordinates. Rotor inertia enters the
joint-space denominator ``D_i = S_i^T U_i + Ia_i``; friction is subtracted from
the applied torque, so ``FD(q, qd, rnea(q, qd, qdd)) == qdd``.

The Coulomb term uses ``sign(qd)`` and is 0 at ``qd = 0``: stiction is not
modelled. Shapes: ``q`` (nq,), ``qd, tau`` (nv,), ``fext`` (nbodies, 6)
``[force, torque]`` applied to each body in its frame; batch forms (N, nq) /
(N, nv).

Multi-DoF joints: ABA on the kernel tree (:mod:`rnea_ros.core._expansion`),
whose sub-joint accelerations are ``a - corr(v)``: the result is
``a = a_kernel + corr(v)``, and the torque handed to a sub-joint is
``tau - Ia corr(v)`` so that its armature acts on ``a``. Mimic joints couple
coordinates in a way the recursion cannot articulate: :func:`aba` then solves
``M qdd = tau - b`` (:func:`~rnea_ros.core.dynamics.forward_dynamics.forward_dynamics`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._expansion import add_corr, expand_acceleration, expand_motion, expand_q
from rnea_ros.core._jit import (
    F_ARMATURE,
    F_AXIS,
    F_COULOMB,
    F_H,
    F_IO,
    F_MASS,
    F_VISCOUS,
    PRISMATIC,
    add3,
    cross,
    inertia_times,
    jit,
    joint_transform,
    kind,
    mtv,
    parent,
    scale3,
    sign,
    vec3,
)
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


@jit
def _plucker(R: tuple[float, ...], p: tuple[float, float, float], X: Array) -> None:
    """Fill ``X`` (6, 6), the motion transform parent -> child.

    ``X = [[E, 0], [-E [p]x, E]]`` with ``E = R^T``.
    """
    P = ((0.0, -p[2], p[1]), (p[2], 0.0, -p[0]), (-p[1], p[0], 0.0))  # [p]x
    for r in range(3):
        for c in range(3):
            E = R[3 * c + r]
            X[r, c] = E
            X[3 + r, 3 + c] = E
            X[r, 3 + c] = 0.0
            X[3 + r, c] = -(R[r] * P[0][c] + R[3 + r] * P[1][c] + R[6 + r] * P[2][c])


@jit
def _body_inertia(fp: Array, i: int, I6: Array) -> None:
    """Fill ``I6`` (6, 6) with body ``i``'s spatial inertia at its origin."""
    m = fp[i, F_MASS]
    hx, hy, hz = fp[i, F_H], fp[i, F_H + 1], fp[i, F_H + 2]
    xx, yy, zz, xy, xz, yz = fp[i, F_IO:F_IO + 6]
    Io = ((xx, xy, xz), (xy, yy, yz), (xz, yz, zz))
    H = ((0.0, -hz, hy), (hz, 0.0, -hx), (-hy, hx, 0.0))  # [h]x
    for r in range(3):
        for c in range(3):
            I6[r, c] = Io[r][c]
            I6[r, 3 + c] = H[r][c]
            I6[3 + r, c] = -H[r][c]
            I6[3 + r, 3 + c] = m if r == c else 0.0


@jit
def aba_pass(fp: Array, q: Array, qd: Array, tau: Array, g: Array,
             fext: Array, use_fext: bool, qdd: Array, X: Array, IA: Array, vecs: Array,
             Ia: Array) -> bool:
    """One ABA evaluation into ``qdd``. Scratch: ``X, IA, Ia`` (n, 6, 6) / (6, 6),
    ``vecs`` (n, 26): ``v`` 0:6, ``c`` 6:12, ``pA`` 12:18, ``U`` 18:24, ``D`` 24, ``u`` 25."""
    n = q.shape[0]
    for i in range(n):  # pass 1: velocities, bias accelerations and forces
        R, p = joint_transform(fp, i, q[i])
        _plucker(R, p, X[i])
        par = parent(fp, i)
        if par < 0:
            w_p, v_p = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        else:
            w_p, v_p = vec3(vecs, par, 0), vec3(vecs, par, 3)
        w = mtv(R, w_p)
        v = mtv(R, add3(v_p, cross(w_p, p)))
        u = vec3(fp, i, F_AXIS)
        s = scale3(u, qd[i])
        if kind(fp, i) == PRISMATIC:
            v = add3(v, s)
            c_w, c_v = (0.0, 0.0, 0.0), cross(w, s)
        else:
            w = add3(w, s)
            c_w, c_v = cross(w, s), cross(v, s)
        n2, f2 = inertia_times(fp, i, w, v)
        pn = add3(cross(w, n2), cross(v, f2))
        pf = cross(w, f2)
        for k in range(3):
            vecs[i, k], vecs[i, 3 + k] = w[k], v[k]
            vecs[i, 6 + k], vecs[i, 9 + k] = c_w[k], c_v[k]
            vecs[i, 12 + k] = pn[k] - (fext[i, 3 + k] if use_fext else 0.0)
            vecs[i, 15 + k] = pf[k] - (fext[i, k] if use_fext else 0.0)
        _body_inertia(fp, i, IA[i])
    for i in range(n - 1, -1, -1):  # pass 2: articulated inertias and bias forces
        off = 3 if kind(fp, i) == PRISMATIC else 0
        u = vec3(fp, i, F_AXIS)
        for r in range(6):  # U = IA S
            vecs[i, 18 + r] = (IA[i, r, off] * u[0] + IA[i, r, off + 1] * u[1]
                               + IA[i, r, off + 2] * u[2])
        D = vecs[i, 18 + off] * u[0] + vecs[i, 19 + off] * u[1] + vecs[i, 20 + off] * u[2]
        D += fp[i, F_ARMATURE]
        drive = tau[i] - fp[i, F_COULOMB] * sign(qd[i]) - fp[i, F_VISCOUS] * qd[i]
        uu = drive - (vecs[i, 12 + off] * u[0] + vecs[i, 13 + off] * u[1]
                      + vecs[i, 14 + off] * u[2])
        vecs[i, 24] = D
        vecs[i, 25] = uu
        par = parent(fp, i)
        if par < 0:
            continue
        for r in range(6):
            for c in range(6):
                Ia[r, c] = IA[i, r, c] - vecs[i, 18 + r] * vecs[i, 18 + c] / D
        pa = np.empty(6)
        for r in range(6):
            acc = vecs[i, 12 + r] + vecs[i, 18 + r] * uu / D
            for c in range(6):
                acc += Ia[r, c] * vecs[i, 6 + c]
            pa[r] = acc
        Xi = X[i]
        for r in range(6):  # IA_par += X^T Ia X, pA_par += X^T pa
            acc = 0.0
            for k in range(6):
                acc += Xi[k, r] * pa[k]
            vecs[par, 12 + r] += acc
            for c in range(6):
                acc = 0.0
                for k in range(6):
                    t = 0.0
                    for m in range(6):
                        t += Ia[k, m] * Xi[m, c]
                    acc += Xi[k, r] * t
                IA[par, r, c] += acc
    total = 0.0
    a = np.empty((n, 6))
    for i in range(n):  # pass 3: accelerations
        par = parent(fp, i)
        ap = np.zeros(6)
        if par < 0:
            ap[3], ap[4], ap[5] = -g[0], -g[1], -g[2]
        else:
            ap[:] = a[par]
        for r in range(6):
            acc = vecs[i, 6 + r]
            for c in range(6):
                acc += X[i, r, c] * ap[c]
            a[i, r] = acc
        off = 3 if kind(fp, i) == PRISMATIC else 0
        u = vec3(fp, i, F_AXIS)
        Ua = 0.0
        for r in range(6):
            Ua += vecs[i, 18 + r] * a[i, r]
        qdd[i] = (vecs[i, 25] - Ua) / vecs[i, 24]
        for k in range(3):
            a[i, off + k] += u[k] * qdd[i]
        total += qdd[i]
    return bool(np.isfinite(total))


@jit
def _aba_batch(fp: Array, Q: Array, QD: Array, TAU: Array, g: Array,
               fext: Array, use_fext: bool, QDD: Array) -> bool:
    n = Q.shape[1]
    X = np.empty((n, 6, 6))
    IA = np.empty((n, 6, 6))
    vecs = np.empty((n, 26))
    Ia = np.empty((6, 6))
    ok = True
    for k in range(Q.shape[0]):
        ok = aba_pass(fp, Q[k], QD[k], TAU[k], g, fext, use_fext, QDD[k], X, IA, vecs,
                      Ia) and ok
    return ok


@jit
def _aba_tree(fp: Array, km: Array, body_row: NDArray[np.int64], Q: Array, QD: Array, TAU: Array,
              g: Array, fext: Array, use_fext: bool, QDD: Array) -> bool:
    """:func:`aba_pass` on the kernel tree of a model without mimic joints."""
    nk = fp.shape[0]
    fpx = fp.copy()
    qk, vk, tk, ak, ck = np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk)
    zero = np.zeros(QD.shape[1])
    fk = np.zeros((nk, 6))
    if use_fext:
        for b in range(body_row.shape[0]):
            fk[int(body_row[b]), :] = fext[b, :]
    X, IA = np.empty((nk, 6, 6)), np.empty((nk, 6, 6))
    vecs, Ia = np.empty((nk, 26)), np.empty((6, 6))
    ok = True
    for s in range(Q.shape[0]):
        if not expand_q(fp, km, Q[s], fpx, qk):
            return False
        expand_motion(km, QD[s], vk)
        expand_motion(km, TAU[s], tk)
        expand_acceleration(km, QD[s], zero, ck)  # -corr(v) on the multi-DoF rows
        for k in range(nk):
            tk[k] += fp[k, F_ARMATURE] * ck[k]
        ok = aba_pass(fpx, qk, vk, tk, g, fk, use_fext, ak, X, IA, vecs, Ia) and ok
        add_corr(km, QD[s], ak, QDD[s])
    return ok


def aba(model: RobotModel, q: object, qd: object, tau: object, *,
        gravity: object | None = None, fext: object | None = None) -> Array:
    """Joint accelerations ``qdd`` (nv,) under torques ``tau`` (nv,), recursively in O(n)
    (through the mass matrix for a model with mimic joints)."""
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    tau = joint_vector(model, tau, "tau")
    if model.mimic_joints:
        return forward_dynamics(model, q, qd, tau, gravity=gravity, fext=fext)
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else np.zeros((0, 6))
    qdd = np.empty(model.nv)
    if model.expanded:
        if not _aba_tree(model.kernel_floats, model.kernel_map, model.kernel_last_row, q[None],
                         qd[None], tau[None], gravity_vector(model, gravity), f, use_fext,
                         qdd[None]):
            raise_non_finite(model, q=q, qd=qd, tau=tau)
        return qdd
    if not _aba_batch(model.kernel_floats, q[None], qd[None], tau[None],
                      gravity_vector(model, gravity), f, use_fext, qdd[None]):
        raise_non_finite(model, q=q, qd=qd, tau=tau)
    return qdd


def aba_batch(model: RobotModel, q: object, qd: object, tau: object, *,
              gravity: object | None = None) -> Array:
    """:func:`aba` over N samples: ``q`` (N, nq), ``qd, tau`` (N, nv) give ``qdd`` (N, nv)."""
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    TAU = joint_batch(model, tau, "tau", Q.shape[0])
    if model.mimic_joints:
        return forward_dynamics_batch(model, Q, QD, TAU, gravity=gravity)
    QDD = np.empty_like(QD)
    if model.expanded:
        if not _aba_tree(model.kernel_floats, model.kernel_map, model.kernel_last_row, Q, QD,
                         TAU, gravity_vector(model, gravity), np.zeros((0, 6)), False, QDD):
            raise_non_finite(model, q=Q, qd=QD, tau=TAU)
        return QDD
    if not _aba_batch(model.kernel_floats, Q, QD, TAU,
                      gravity_vector(model, gravity), np.zeros((0, 6)), False, QDD):
        raise_non_finite(model, q=Q, qd=QD, tau=TAU)
    return QDD
