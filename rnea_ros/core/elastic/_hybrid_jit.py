"""Numba kernels of :mod:`rnea_ros.core.elastic.hybrid` (the face: the recursive elastic
forward dynamics and inverse dynamics, checks and dispatch): :func:`hybrid_pass` and its
6x6 helpers.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import coulomb_sign, cross, joint_transform, vec3
from rnea_ros.core._compile import jit
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_BAND,
    F_COULOMB,
    F_VISCOUS,
    PRISMATIC,
    kind,
    parent,
)
from rnea_ros.core.dynamics._aba_jit import body_inertia as _body_inertia
from rnea_ros.core.dynamics._aba_jit import plucker as _plucker
from rnea_ros.core.elastic.model import (
    E_D,
    E_INDEX,
    E_K,
    E_MOTOR,
    M_AXIS,
    M_BODY,
    M_ETA,
    M_IZ,
    M_JOINT,
    M_POS,
)

Array = NDArray[np.float64]


@jit
def _crm(v: Array, x: Array, out: Array) -> None:
    """``out = v x x`` (spatial motion cross product)."""
    w, u = v[:3], v[3:]
    a, b = x[:3], x[3:]
    out[0], out[1], out[2] = w[1] * a[2] - w[2] * a[1], w[2] * a[0] - w[0] * a[2], \
        w[0] * a[1] - w[1] * a[0]
    out[3] = w[1] * b[2] - w[2] * b[1] + u[1] * a[2] - u[2] * a[1]
    out[4] = w[2] * b[0] - w[0] * b[2] + u[2] * a[0] - u[0] * a[2]
    out[5] = w[0] * b[1] - w[1] * b[0] + u[0] * a[1] - u[1] * a[0]


@jit
def _crf(v: Array, f: Array, out: Array) -> None:
    """``out = v x* f`` (spatial force cross product)."""
    w, u = v[:3], v[3:]
    n, g = f[:3], f[3:]
    out[0] = w[1] * n[2] - w[2] * n[1] + u[1] * g[2] - u[2] * g[1]
    out[1] = w[2] * n[0] - w[0] * n[2] + u[2] * g[0] - u[0] * g[2]
    out[2] = w[0] * n[1] - w[1] * n[0] + u[0] * g[1] - u[1] * g[0]
    out[3], out[4], out[5] = w[1] * g[2] - w[2] * g[1], w[2] * g[0] - w[0] * g[2], \
        w[0] * g[1] - w[1] * g[0]


@jit
def _congruence_add(X: Array, I: Array, out: Array) -> None:
    """``out += X^T I X`` (6x6)."""
    IX = np.zeros((6, 6))
    for r in range(6):
        for col in range(6):
            for k in range(6):
                IX[r, col] += I[r, k] * X[k, col]
    for r in range(6):
        for col in range(6):
            acc = 0.0
            for k in range(6):
                acc += X[k, r] * IX[k, col]
            out[r, col] += acc


@jit
def _mv(A: Array, x: Array) -> Array:
    """``A x`` (6x6 times 6; explicit loops: numba's ``@`` needs scipy's BLAS)."""
    out = np.zeros(6)
    for r in range(6):
        for k in range(6):
            out[r] += A[r, k] * x[k]
    return out


@jit
def _dot(x: Array, y: Array) -> float:
    """``x . y`` of 6-vectors."""
    acc = 0.0
    for k in range(6):
        acc += x[k] * y[k]
    return acc


@jit
def _tv(X: Array, x: Array) -> Array:
    """``X^T x`` (6x6 times 6)."""
    out = np.zeros(6)
    for r in range(6):
        for k in range(6):
            out[r] += X[k, r] * x[k]
    return out


@jit
def hybrid_pass(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
                thetad: Array, known_q: Array, known_m: Array, tau: Array, tau_m: Array,
                g: Array, fext: Array, use_fext: bool, qdd: Array, thetadd: Array) -> bool:
    """One hybrid-dynamics evaluation (see the module docstring).

    ``known_q`` (n,) / ``known_m`` (n_e,) flag acceleration-known DOFs, whose
    ``qdd``/``thetadd`` are inputs; the others' are outputs. ``tau`` (n,) /
    ``tau_m`` (n_e,) are the generalized forces of the force-known DOFs (motor
    torques of rigid joints, motor torques of elastic joints) and receive those of
    the acceleration-known ones. Friction of the link joints is included.
    """
    n = q.shape[0]
    nm = mp.shape[0]
    X = np.empty((n, 6, 6))
    IA = np.empty((n, 6, 6))
    S = np.zeros((n, 6))
    v = np.zeros((n, 6))
    c = np.zeros((n, 6))
    pA = np.zeros((n, 6))
    W = np.zeros((n, 6))
    Dd = np.zeros(n)
    uu = np.zeros(n)
    Ir = np.zeros((nm, 6, 6))
    sr = np.zeros((nm, 6))
    vr = np.zeros((nm, 6))
    cr = np.zeros((nm, 6))
    pr = np.zeros((nm, 6))
    Ur = np.zeros((nm, 6))
    ur = np.zeros(nm)
    t6 = np.zeros(6)
    # Generalized forces of the link joints' force-known DOFs.
    Q = np.zeros(n)
    for i in range(n):
        k = int(ep[i, E_INDEX])
        fric = fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND]) + fp[i, F_VISCOUS] * qd[i]
        if k >= 0:
            Q[i] = ep[i, E_K] * (theta[k] - q[i]) + ep[i, E_D] * (thetad[k] - qd[i]) - fric
        else:
            Q[i] = tau[i] - fric
    # Pass 1: link velocities, bias accelerations c and bias forces pA.
    for i in range(n):
        R, p = joint_transform(fp, i, q[i])
        _plucker(R, p, X[i])
        par = parent(fp, i)
        u = vec3(fp, i, F_AXIS)
        off = 3 if kind(fp, i) == PRISMATIC else 0
        for r in range(3):
            S[i, off + r] = u[r]
        if par >= 0:
            v[i] = _mv(X[i], v[par])
        vJ = S[i] * qd[i]
        _crm(v[i], vJ, c[i])
        v[i] += vJ
        _body_inertia(fp, i, IA[i])
    # Rotors: velocity, bias terms; their spin inertia leaves the carrier's body.
    for m in range(nm):
        j = int(mp[m, M_JOINT])
        b = int(mp[m, M_BODY])
        eta, Iz = mp[m, M_ETA], mp[m, M_IZ]
        z = vec3(mp, m, M_AXIS)
        pz = cross(vec3(mp, m, M_POS), z)
        for r in range(3):
            sr[m, r] = eta * z[r]
            sr[m, 3 + r] = eta * pz[r]
            for s in range(3):
                Ir[m, r, s] = Iz * z[r] * z[s]
        k = int(ep[j, E_INDEX])
        psid = qd[j] if k < 0 else thetad[k]
        vJ = sr[m] * psid
        if b >= 0:
            _crm(v[b], vJ, cr[m])
            vr[m] = v[b] + vJ
            IA[b] -= Ir[m]
        else:
            vr[m] = vJ
        _crf(vr[m], _mv(Ir[m], vr[m]), pr[m])
    for i in range(n):  # bias forces of the links without their rotors' spin inertia
        _crf(v[i], _mv(IA[i], v[i]), pA[i])
        if use_fext:
            for r in range(3):
                pA[i, r] -= fext[i, 3 + r]
                pA[i, 3 + r] -= fext[i, r]
    # Leaf rotors (every rotor but a force-known rigid joint's) onto their carriers.
    for m in range(nm):
        j = int(mp[m, M_JOINT])
        b = int(mp[m, M_BODY])
        k = int(ep[j, E_INDEX])
        if k < 0 and known_q[j] == 0.0:
            if b != parent(fp, j):
                return False  # kinematic loop: not recursive (checked by the caller)
            continue
        Ur[m] = _mv(Ir[m], sr[m])
        if k >= 0 and known_m[k] == 0.0:  # articulated: force-known motor DOF
            D = _dot(sr[m], Ur[m])
            spring = ep[j, E_K] * (theta[k] - q[j]) + ep[j, E_D] * (thetad[k] - qd[j])
            ur[m] = tau_m[k] - spring - _dot(sr[m], pr[m]) - _dot(Ur[m], cr[m])
            if b >= 0:
                IA[b] += Ir[m] - np.outer(Ur[m], Ur[m]) / D
                pA[b] += pr[m] + _mv(Ir[m], cr[m]) + Ur[m] * ur[m] / D
        elif b >= 0:  # acceleration-known
            psidd = qdd[j] if k < 0 else thetadd[k]
            IA[b] += Ir[m]
            pA[b] += pr[m] + _mv(Ir[m], cr[m] + sr[m] * psidd)
    # Pass 2: articulated inertias and bias forces, leaves to root.
    for i in range(n - 1, -1, -1):
        par = parent(fp, i)
        mi = int(ep[i, E_MOTOR])
        compound = mi >= 0 and int(ep[i, E_INDEX]) < 0 and known_q[i] == 0.0
        if known_q[i] == 0.0:
            U = _mv(IA[i], S[i])
            Dd[i] = _dot(S[i], U) + fp[i, F_ARMATURE]
            uu[i] = Q[i] - _dot(S[i], pA[i]) - _dot(U, c[i])
            W[i] = _tv(X[i], U)
            if compound:
                Ur[mi] = _mv(Ir[mi], sr[mi])
                Dd[i] += _dot(sr[mi], Ur[mi])
                uu[i] -= _dot(sr[mi], pr[mi]) + _dot(Ur[mi], cr[mi])
                W[i] += Ur[mi]
            if par >= 0:
                _congruence_add(X[i], IA[i], IA[par])
                IA[par] -= np.outer(W[i], W[i]) / Dd[i]
                pA[par] += _tv(X[i], pA[i] + _mv(IA[i], c[i])) + W[i] * uu[i] / Dd[i]
                if compound:
                    IA[par] += Ir[mi]
                    pA[par] += pr[mi] + _mv(Ir[mi], cr[mi])
        elif par >= 0:
            _congruence_add(X[i], IA[i], IA[par])
            pA[par] += _tv(X[i], pA[i] + _mv(IA[i], c[i] + S[i] * qdd[i]))
    # Pass 3: accelerations, root to leaves; torques of the acceleration-known DOFs.
    a = np.zeros((n, 6))
    a0 = np.zeros(6)
    a0[3], a0[4], a0[5] = -g[0], -g[1], -g[2]
    total = 0.0
    for i in range(n):
        par = parent(fp, i)
        ap = a0 if par < 0 else a[par]
        if known_q[i] == 0.0:
            qdd[i] = (uu[i] - _dot(W[i], ap)) / Dd[i]
        a[i] = _mv(X[i], ap) + c[i] + S[i] * qdd[i]
        if known_q[i] != 0.0:
            t6[:] = _mv(IA[i], a[i]) + pA[i]
            fric = fp[i, F_COULOMB] * coulomb_sign(qd[i], fp[i, F_BAND]) + fp[i, F_VISCOUS] * qd[i]
            tau[i] = _dot(S[i], t6) + fp[i, F_ARMATURE] * qdd[i] + fric
        total += qdd[i]
    for m in range(nm):  # rotor accelerations / torques
        j = int(mp[m, M_JOINT])
        b = int(mp[m, M_BODY])
        k = int(ep[j, E_INDEX])
        ac = a0 if b < 0 else a[b]
        if k >= 0 and known_m[k] == 0.0:
            thetadd[k] = (ur[m] - _dot(Ur[m], ac)) / _dot(sr[m], Ur[m])
            total += thetadd[k]
        elif k >= 0 or known_q[j] != 0.0:
            psidd = qdd[j] if k < 0 else thetadd[k]
            t6[:] = _mv(Ir[m], ac + cr[m] + sr[m] * psidd) + pr[m]
            if k < 0:
                tau[j] += _dot(sr[m], t6)
            else:
                spring = ep[j, E_K] * (theta[k] - q[j]) + ep[j, E_D] * (thetad[k] - qd[j])
                tau_m[k] = _dot(sr[m], t6) + spring
    return bool(np.isfinite(total))
