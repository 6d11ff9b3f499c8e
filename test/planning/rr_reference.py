"""An independent minimum-time solver for Barman's planar RR (ch. IV, section 4.1), for tests.

Shares nothing with :mod:`rnea_ros.planning`: closed-form Lagrange dynamics of the
two-link arm (checked against the RNEA core in the test), direct multiple shooting
with one RK4 step per interval on a uniform time grid of N intervals, T free, solved
by casadi's IPOPT with exact (automatic-differentiation) derivatives.

* ``rate=None``: torques piecewise constant, ``|tau| <= bound`` (eq. 4.16-4.17);
* ``rate=L``: torques are states, their rates piecewise constant, ``|tau_dot| <= L``;
  ``end="rest"`` fixes ``tau(0) = tau(T) = 0`` (the arm starts and ends at rest with
  zero acceleration: on the horizontal plane the torque is then zero), ``"free"`` not.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

# table 4.2 (test/data/barman_two_link.yaml): l = 0.4 m, COM at mid-link, m = 0.5 kg,
# I_zz = 0.1 kg m^2 about the COM
L1, LC, MASS, IZZ = 0.4, 0.2, 0.5, 0.1


def dynamics(q, v, tau):  # type: ignore[no-untyped-def]
    """Planar RR, gravity normal to the plane: ``qdd = M(q)^-1 (tau - c(q, v))``."""
    c2, s2 = ca.cos(q[1]), ca.sin(q[1])
    m11 = 2 * IZZ + MASS * LC**2 + MASS * (L1**2 + LC**2 + 2 * L1 * LC * c2)
    m12 = IZZ + MASS * (LC**2 + L1 * LC * c2)
    m22 = IZZ + MASS * LC**2
    h = MASS * L1 * LC * s2
    c1 = -h * (2 * v[0] * v[1] + v[1] ** 2)
    c_2 = h * v[0] ** 2
    det = m11 * m22 - m12 * m12
    r1, r2 = tau[0] - c1, tau[1] - c_2
    return ca.vertcat((m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det)


def inverse_dynamics(q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``tau = M(q) a + c(q, v)`` (for checking :func:`dynamics` against the RNEA core)."""
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    m11 = 2 * IZZ + MASS * LC**2 + MASS * (L1**2 + LC**2 + 2 * L1 * LC * c2)
    m12 = IZZ + MASS * (LC**2 + L1 * LC * c2)
    m22 = IZZ + MASS * LC**2
    h = MASS * L1 * LC * s2
    return np.array([m11 * a[0] + m12 * a[1] - h * (2 * v[0] * v[1] + v[1] ** 2),
                     m12 * a[0] + m22 * a[1] + h * v[0] ** 2])


def min_time(start: list[float], goal: list[float], bound: float, rate: float | None = None,
             end: str = "rest", N: int = 300, T0: float = 0.5) -> float:
    """The minimum time T [s] of the RR from rest at ``start`` to rest at ``goal``."""
    opti = ca.Opti()
    T = opti.variable()
    X = opti.variable(4 if rate is None else 6, N + 1)  # q, v [, tau]
    U = opti.variable(2, N)                            # tau or tau_dot, piecewise constant
    dt = T / N

    def f(x, u):  # type: ignore[no-untyped-def]
        if rate is None:
            return ca.vertcat(x[2:4], dynamics(x[0:2], x[2:4], u))
        return ca.vertcat(x[2:4], dynamics(x[0:2], x[2:4], x[4:6]), u)

    for k in range(N):
        x, u = X[:, k], U[:, k]
        k1 = f(x, u)
        k2 = f(x + dt / 2 * k1, u)
        k3 = f(x + dt / 2 * k2, u)
        k4 = f(x + dt * k3, u)
        opti.subject_to(X[:, k + 1] == x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    opti.subject_to(X[0:4, 0] == ca.vertcat(*start, 0, 0))
    opti.subject_to(X[0:4, N] == ca.vertcat(*goal, 0, 0))
    if rate is None:
        opti.subject_to(opti.bounded(-bound, ca.vec(U), bound))
    else:
        opti.subject_to(opti.bounded(-rate, ca.vec(U), rate))
        opti.subject_to(opti.bounded(-bound, ca.vec(X[4:6, :]), bound))
        if end == "rest":
            opti.subject_to(X[4:6, 0] == 0)
            opti.subject_to(X[4:6, N] == 0)
    opti.subject_to(opti.bounded(0.05, T, 5.0))
    opti.minimize(T)
    s = np.linspace(0, 1, N + 1)
    smooth = s**3 * (10 - 15 * s + 6 * s**2)
    opti.set_initial(T, T0)
    for j in range(2):
        opti.set_initial(X[j, :], start[j] + smooth * (goal[j] - start[j]))
    opti.solver("ipopt", {"print_time": False, "expand": True}, {"print_level": 0, "sb": "yes",
                                                 "max_iter": 3000, "tol": 1e-10})
    sol = opti.solve()
    return float(sol.value(T))
