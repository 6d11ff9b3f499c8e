"""Numba kernels of :mod:`rnea_ros.core.elastic.fd` (the face: the block system of the
mixed rigid/elastic dynamics, checks and dispatch): :func:`applied_rows` (the applied
generalized forces) and :func:`assemble` (the blocks ``M, S, B`` and the bias).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit
from rnea_ros.core._layout import RW_COLS
from rnea_ros.core.elastic._rnea_jit import elastic_pass
from rnea_ros.core.elastic.model import E_D, E_INDEX, E_K

Array = NDArray[np.float64]


@jit
def applied_rows(ep: Array, q: Array, theta: Array, qd: Array, thetad: Array, tau: Array,
                 tau_link: Array, springs: bool, out: Array) -> None:
    """Eq. 32-35: the rows of ``[q; theta]`` from one Algorithm-1 evaluation."""
    n = q.shape[0]
    for i in range(n):
        k = int(ep[i, E_INDEX])
        if k < 0:
            out[i] = tau[i]
        else:
            out[i] = tau_link[i]
            spring = ep[i, E_K] * (theta[k] - q[i]) + ep[i, E_D] * (thetad[k] - qd[i])
            out[n + k] = tau[i] - (0.0 if springs else spring)


@jit
def assemble(fp: Array, ep: Array, mp: Array, q: Array, theta: Array, qd: Array,
             thetad: Array, g: Array, fext: Array, use_fext: bool, A: Array,
             zeta: Array) -> bool:
    """The block matrix ``A`` (columns from unit accelerations, no gravity) and the bias
    ``zeta`` of the mixed rigid/elastic system; whether every evaluation was finite."""
    n, ne = q.shape[0], theta.shape[0]
    work = np.empty((n, RW_COLS))
    tau, tau_link = np.empty(n), np.empty(n)
    zn, ze = np.zeros(n), np.zeros(ne)
    ok = elastic_pass(fp, ep, mp, q, theta, qd, thetad, zn, ze, g, fext, use_fext,
                      tau, tau_link, work)
    applied_rows(ep, q, theta, qd, thetad, tau, tau_link, True, zeta)
    g0 = np.zeros(3)
    col = np.empty(n + ne)
    for j in range(n + ne):
        qdd, thetadd = np.zeros(n), np.zeros(ne)
        if j < n:
            qdd[j] = 1.0
        else:
            thetadd[j - n] = 1.0
        ok = elastic_pass(fp, ep, mp, q, theta, zn, ze, qdd, thetadd, g0, fext, False,
                          tau, tau_link, work) and ok
        applied_rows(ep, q, theta, zn, ze, tau, tau_link, False, col)
        A[:, j] = col
    return ok
