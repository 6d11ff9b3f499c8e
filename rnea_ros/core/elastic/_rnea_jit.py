"""Numba kernels of :mod:`rnea_ros.core.elastic.rnea` (the face: hua-2024 Algorithm 1,
checks and dispatch): :func:`elastic_pass` (RNEA with the rotors' gyroscopic terms), its
entry :func:`elastic_call` and that entry's lean form :func:`elastic_lean` (borrowed
arrays, :mod:`rnea_ros.core._lean`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import add3, cross, dot3, fixed_base, put3, scale3, vec3
from rnea_ros.core._compile import jit, jit_entry, scratch
from rnea_ros.core._layout import RW_COLS, RW_DW, RW_F, RW_N, RW_W
from rnea_ros.core._lean import plain
from rnea_ros.core.dynamics._rnea_jit import backward_pass, forward_pass
from rnea_ros.core.elastic.model import (
    E_D,
    E_ELASTIC,
    E_INDEX,
    E_K,
    M_AXIS,
    M_BODY,
    M_ETA,
    M_IZ,
    M_JOINT,
)

Array = NDArray[np.float64]


@jit
def elastic_pass(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
                 thetad: Array, qdd: Array, thetadd: Array, g: Array, fext: Array,
                 use_fext: bool, tau: Array, tau_link: Array, work: Array) -> bool:
    """Algorithm 1 into ``tau`` and ``tau_link``; ``work`` (n, 30) as :func:`rnea_pass`'s."""
    n = q.shape[0]
    forward_pass(fp, q, qd, qdd, fixed_base(g), fext, use_fext, work)
    for j in range(n):
        tau[j] = 0.0
    for m in range(mp.shape[0]):  # rotor spin: eq. 23-25 on the carrier, eq. 27/29 terms
        j = int(mp[m, M_JOINT])
        c = int(mp[m, M_BODY])
        eta, Iz = mp[m, M_ETA], mp[m, M_IZ]
        z = vec3(mp, m, M_AXIS)
        k = int(ep[j, E_INDEX])
        psid, psidd = (qd[j], qdd[j]) if k < 0 else (thetad[k], thetadd[k])
        z_dw = 0.0
        if c >= 0:
            w_c = vec3(work, c, RW_W)
            z_dw = dot3(z, vec3(work, c, RW_DW))
            spin = add3(scale3(z, psidd), cross(w_c, scale3(z, psid)))
            put3(work, c, RW_N, add3(vec3(work, c, RW_N), scale3(spin, eta * Iz)))
        tau[j] = eta * Iz * (z_dw + eta * psidd)
    ok = backward_pass(fp, qd, qdd, True, tau_link, work)
    for j in range(n):
        k = int(ep[j, E_INDEX])
        if k < 0:
            tau[j] += tau_link[j]
        else:
            tau[j] += ep[j, E_K] * (theta[k] - q[j]) + ep[j, E_D] * (thetad[k] - qd[j])
    return ok and bool(np.isfinite(tau.sum()))


@jit_entry
def elastic_call(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
                 thetad: Array, qdd: Array, thetadd: Array, g: Array, fext: Array,
                 use_fext: bool, tau: Array, tau_link: Array, wrenches: Array) -> bool:
    n, ne = fp.shape[0], 0
    for i in range(n):
        ne += int(ep[i, E_ELASTIC])
    if (q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or theta.shape[0] != ne
            or thetad.shape[0] != ne or thetadd.shape[0] != ne or g.shape[0] != 3):
        return False  # the caller explains
    work = scratch(n, RW_COLS)
    ok = elastic_pass(fp, ep, mp, q, theta, qd, thetad, qdd, thetadd, g, fext, use_fext,
                      tau, tau_link, work)
    for i in range(wrenches.shape[0]):
        for k in range(3):
            wrenches[i, k] = work[i, RW_F + k]
            wrenches[i, 3 + k] = work[i, RW_N + k]
    return ok


@jit_entry
def elastic_lean(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
                 thetad: Array, qdd: Array, thetadd: Array, g: Array, none: Array, tau: Array,
                 tau_link: Array, wrenches: Array) -> bool:
    """:func:`elastic_call` on borrowed arrays, no external wrenches (``none`` is an empty
    (0, 6) array; the flag is computed from it, not a literal, so ``elastic_call`` keeps
    its one specialisation)."""
    return elastic_call(plain(fp), plain(ep), plain(mp), plain(q), plain(theta), plain(qd),
                        plain(thetad), plain(qdd), plain(thetadd), plain(g), plain(none),
                        none.shape[0] != 0, plain(tau), plain(tau_link), plain(wrenches))
