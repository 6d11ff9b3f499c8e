"""Numba kernels of :mod:`rnea_ros.control.rate_limit` (the face: :class:`SlewLimiter`,
:class:`TimeScaling`, their checks and docs): the slew limit (:func:`bounded_dt`,
:func:`slew`, :func:`slew_step`) and the predictive time scaling
(:class:`rnea_ros.control.rate_limit.TimeScaling`).

Two entry points, one call each:

* :func:`feasible_speed_kernel` -- every ``update_period``: the path derivatives at
  the ``m`` look-ahead points (:func:`rnea_ros.control.trajectory.point_derivatives`),
  per point the speed-homogeneous part ``(A, A_dot)`` of ``(tau, tau_dot)``
  (:func:`rnea_ros.core.dynamics.gfd.gfd_pass` without gravity and friction) and the
  gravity part ``(g(q), dg/dq q')`` (:func:`gravity_part`, on the poses that pass left),
  then the largest grid speed within the limits (:func:`grid_search`);
* :func:`scaling_step` -- every joint state: the bound on ``s_dddot`` at the current
  point (:func:`jerk_bounds`: ``tau_dot`` by ``gfd_pass`` and ``M(q) q'`` by
  :func:`mass_times` on its poses), the speed's triple integrator, and the scaled
  reference ``(q, qd, qdd)``.

They compute what the numpy code they replaced computed (three
``rnea_time_derivative_batch`` calls and ``(60, m, n)`` arrays; ``rnea_time_derivative`` and
``mass_matrix(q) @ q'`` per state), with the same arithmetic where it decides: the
grid test evaluates ``tau(S)`` and ``tau_dot(S)`` in the same order, and only
``g(q)``, ``dg/dq q'`` and ``M q'`` come from a different (shorter) pass, equal up to
rounding (the former difference ``RNEA(g) - RNEA(0)`` is exactly the gravity part:
RNEA's forces are affine in the base acceleration, Khalil 2010 after eq. 24). The
grid search scans the speeds from the fastest and stops at the first violation,
retrying the last violated ``(point, joint)`` first, instead of materialising the grid:
feasibility need not be monotone in the speed, so the first feasible grid speed is
found by that scan, not by bisection.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.trajectory import point_derivatives
from rnea_ros.core.kernels import (
    F_ARMATURE,
    F_AXIS,
    GW_COLS,
    GW_F,
    GW_FD,
    GW_G,
    GW_GD,
    GW_P,
    GW_R,
    PRISMATIC,
    Motion,
    dot3,
    fcross,
    gfd_pass,
    jit,
    jit_entry,
    joint_motion,
    kind,
    madd,
    mat3,
    mcross,
    mget,
    minertia,
    mput,
    parent,
    scratch,
    to_child,
    to_parent,
    vec3,
)

Array = NDArray[np.float64]

# Rows of a look-ahead point's block W[p] (8, n): the path derivatives, then the parts.
D_Q, D_Q1, D_Q2, D_Q3, W_A, W_A_DOT, W_G, W_G_DOT = range(8)
W_ROWS = 8
# Rows of the per-state buffer (10, n): path derivatives (D_Q..D_Q3), the scaled ones,
# tau, tau_dot and M q'.
B_QD, B_QDD, B_QDDD, B_TAU, B_RATE, B_MQ = 4, 5, 6, 7, 8, 9
B_ROWS = 10
# Rows of the limits (4, n) and of the speed grid (3, G).
L_COULOMB, L_VISCOUS, L_TAU, L_RATE = range(4)
NONE_BINDING, NOT_FINITE = -1, -2  # feasible_speed_kernel's first result besides an index


@jit
def _joint_component(fp: Array, i: int, F: Motion) -> float:
    """``S_i^T F`` for a force ``F = (n, f)``."""
    u = vec3(fp, i, F_AXIS)
    return dot3(u, F[1] if kind(fp, i) == PRISMATIC else F[0])


@jit
def gravity_part(fp: Array, qd: Array, g: Array, work: Array, tau: Array,
                 tau_dot: Array) -> None:
    """``tau = g(q)`` and ``tau_dot = dg/dq qd`` (n,) on the poses ``work[:, GW_R/GW_P]``
    of the :func:`~rnea_ros.core.dynamics.gfd.gfd_pass` just run at ``q``: the terms of
    that pass that carry the base acceleration ``-g``, alone (``G``, ``G_dot`` and the
    forces ``I G``, ``I G_dot``, moved back with the ``s1 x*`` term; gfd's eq. for
    ``F_dot_p``). Overwrites the pass's other work columns."""
    n = qd.shape[0]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):
        R, p = mat3(work, i, GW_R), vec3(work, i, GW_P)
        par = parent(fp, i)
        if par < 0:
            G = to_child(R, p, (zero, (-g[0], -g[1], -g[2])))
            XGd = (zero, zero)
        else:
            G = to_child(R, p, mget(work, par, GW_G))
            XGd = to_child(R, p, mget(work, par, GW_GD))
        Gd = madd(XGd, mcross(G, joint_motion(fp, i, qd[i])))
        mput(work, i, GW_G, G)
        mput(work, i, GW_GD, Gd)
        mput(work, i, GW_F, minertia(fp, i, G))
        mput(work, i, GW_FD, minertia(fp, i, Gd))
    for i in range(n - 1, -1, -1):
        F, Fd = mget(work, i, GW_F), mget(work, i, GW_FD)
        tau[i] = _joint_component(fp, i, F)
        tau_dot[i] = _joint_component(fp, i, Fd)
        par = parent(fp, i)
        if par >= 0:
            R, p = mat3(work, i, GW_R), vec3(work, i, GW_P)
            s1 = joint_motion(fp, i, qd[i])
            mput(work, par, GW_F, madd(mget(work, par, GW_F), to_parent(R, p, F)))
            mput(work, par, GW_FD, madd(mget(work, par, GW_FD),
                                        to_parent(R, p, madd(Fd, fcross(s1, F)))))


@jit
def mass_times(fp: Array, x: Array, work: Array, out: Array) -> None:
    """``out = M(q) x`` (n,), rotor inertia included, on the poses ``work[:, GW_R/GW_P]``
    of the :func:`~rnea_ros.core.dynamics.gfd.gfd_pass` just run at ``q``: RNEA with
    ``qd = 0``, ``qdd = x`` and no gravity (Khalil 2010 §3.3.1's column of ``M`` by the
    inverse model, for one vector). Overwrites the pass's other work columns."""
    n = x.shape[0]
    zero = (0.0, 0.0, 0.0)
    for i in range(n):
        R, p = mat3(work, i, GW_R), vec3(work, i, GW_P)
        par = parent(fp, i)
        A = (zero, zero) if par < 0 else to_child(R, p, mget(work, par, GW_G))
        a = madd(A, joint_motion(fp, i, x[i]))
        mput(work, i, GW_G, a)
        mput(work, i, GW_F, minertia(fp, i, a))
    for i in range(n - 1, -1, -1):
        F = mget(work, i, GW_F)
        out[i] = _joint_component(fp, i, F) + fp[i, F_ARMATURE] * x[i]
        par = parent(fp, i)
        if par >= 0:
            R, p = mat3(work, i, GW_R), vec3(work, i, GW_P)
            mput(work, par, GW_F, madd(mget(work, par, GW_F), to_parent(R, p, F)))


@jit
def lookahead_point(fp: Array, gravity: Array, limits: Array, times: Array, C: Array,
                    first: Array, t: float, W: Array, work: Array) -> bool:
    """Fill one look-ahead block ``W`` (8, n) at path time ``t``: the path derivatives
    ``q, q', q'', q'''``, ``(A, A_dot) = GFD(q, q', q'', q'''; g = 0)`` of the rigid model
    ``fp`` and the gravity part ``G = g(q) + Fs sign(q')``, ``G_dot = dg/dq q'``;
    ``gravity`` (2, 3) holds a zero vector and ``g``. Whether all are finite."""
    point_derivatives(times, C, first, t, 3, W[D_Q:D_Q3 + 1])
    empty = work[:0]
    ok = gfd_pass(fp, W[D_Q], W[D_Q1], W[D_Q2], W[D_Q3], W[D_Q3], gravity[0], empty, empty,
                  empty, False, False, W[W_A], W[W_A_DOT], W[W_A_DOT], work)
    gravity_part(fp, W[D_Q1], gravity[1], work, W[W_G], W[W_G_DOT])
    total = 0.0
    for j in range(W.shape[1]):
        q1 = W[D_Q1, j]
        sign = 1.0 if q1 > 0.0 else (-1.0 if q1 < 0.0 else 0.0)
        W[W_G, j] = W[W_G, j] + limits[L_COULOMB, j] * sign
        total += W[W_G, j] + W[W_G_DOT, j]
    return ok and bool(np.isfinite(total))


@jit
def _over(W: Array, limits: Array, grid: Array, k: int, p: int, j: int) -> tuple[bool, bool]:
    """Whether ``|tau|`` and ``|tau_dot|`` at grid speed ``k``, point ``p``, joint ``j`` exceed
    their (margin-scaled) limits: ``tau = A S^2 + Fv q' S + G``,
    ``tau_dot = A_dot S^3 + Fv q'' S^2 + G_dot S`` (module docstring of rate_limit)."""
    S, S2, S3 = grid[0, k], grid[1, k], grid[2, k]
    Fv = limits[L_VISCOUS, j]
    Wp = W[p]
    tau = Wp[W_A, j] * S2 + Fv * Wp[D_Q1, j] * S + Wp[W_G, j]
    rate = Wp[W_A_DOT, j] * S3 + Fv * Wp[D_Q2, j] * S2 + Wp[W_G_DOT, j] * S
    return abs(tau) > limits[L_TAU, j], abs(rate) > limits[L_RATE, j]


@jit
def _violated(W: Array, limits: Array, grid: Array, k: int, p: int, j: int) -> bool:
    over_tau, over_rate = _over(W, limits, grid, k, p, j)
    return over_tau or over_rate


@jit
def grid_search(W: Array, limits: Array, grid: Array) -> tuple[int, int, bool]:
    """``(k, joint, rate)``: ``k`` the first grid speed (fastest first) at which no
    look-ahead point exceeds a limit (:data:`NONE_BINDING` when the fastest passes;
    the slowest when none does), ``joint`` the first joint (by point, then joint)
    over a limit at the next faster speed and ``rate`` whether that joint's torque
    rate is over there at some point (else its torque)."""
    m, n, count = W.shape[0], W.shape[2], grid.shape[1]
    last_p, last_j = 0, 0  # the last violation found: tried first at the next speed
    first_ok = -1
    for k in range(count):
        if _violated(W, limits, grid, k, last_p, last_j):
            continue
        clear = True
        for p in range(m):
            for j in range(n):
                if _violated(W, limits, grid, k, p, j):
                    last_p, last_j, clear = p, j, False
                    break
            if not clear:
                break
        if clear:
            first_ok = k
            break
    if first_ok == 0:
        return NONE_BINDING, -1, False
    if first_ok < 0:
        first_ok = count - 1
    binding = max(first_ok - 1, 0)
    for p in range(m):
        for j in range(n):
            if _violated(W, limits, grid, binding, p, j):
                rate = False
                for p2 in range(m):
                    rate = rate or _over(W, limits, grid, binding, p2, j)[1]
                return first_ok, j, rate
    return first_ok, -1, False  # not reached: the binding speed is violated


@jit_entry
def feasible_speed_kernel(fp: Array, gravity: Array, limits: Array, grid: Array, times: Array,
                          C: Array, first: Array, s: float, offsets: Array, W: Array
                          ) -> tuple[int, int, bool]:
    """The look-ahead (``W`` (m, 8, n), :func:`lookahead_point` at ``s + offsets``) and
    its :func:`grid_search`; ``(NOT_FINITE, -1, False)`` when a value is not finite."""
    n = fp.shape[0]
    work = scratch(n, GW_COLS)
    ok = True
    for p in range(offsets.shape[0]):
        ok = lookahead_point(fp, gravity, limits, times, C, first, s + offsets[p], W[p],
                             work) and ok
    if not ok:
        return NOT_FINITE, -1, False
    return grid_search(W, limits, grid)


@jit
def jerk_bounds(fp: Array, g: Array, rate_max: Array, speed: float, acc: float, B: Array,
                work: Array) -> tuple[float, float]:
    """The interval of ``s_dddot`` keeping every ``|tau_dot|`` within ``rate_max`` at the
    path point whose derivatives are ``B[0:4]`` (rate_limit's module docstring:
    ``tau_dot = GFD(q, q' s_dot, q'' s_dot^2 + q' s_ddot, q''' s_dot^3 + 3 q'' s_dot s_ddot)
    + M(q) q' s_dddot``); ``B`` (10, n) also receives the scaled derivatives,
    ``tau``, ``tau_dot`` and ``M q'``."""
    n = B.shape[1]
    sd2, sd3 = speed * speed, speed ** 3.0
    for j in range(n):
        q1, q2, q3 = B[D_Q1, j], B[D_Q2, j], B[D_Q3, j]
        B[B_QD, j] = q1 * speed
        B[B_QDD, j] = q2 * sd2 + q1 * acc
        B[B_QDDD, j] = q3 * sd3 + 3.0 * q2 * speed * acc
    empty = work[:0]
    gfd_pass(fp, B[D_Q], B[B_QD], B[B_QDD], B[B_QDDD], B[B_QDDD], g, empty, empty, empty,
             False, False, B[B_TAU], B[B_RATE], B[B_RATE], work)
    mass_times(fp, B[D_Q1], work, B[B_MQ])
    lo, hi = -math.inf, math.inf
    for i in range(n):
        b = B[B_MQ, i]
        if abs(b) > 1e-9:
            a1 = (-rate_max[i] - B[B_RATE, i]) / b
            a2 = (rate_max[i] - B[B_RATE, i]) / b
            lo, hi = max(lo, min(a1, a2)), min(hi, max(a1, a2))
    return lo, hi


@jit_entry
def scaling_step(fp: Array, g: Array, rate_max: Array, times: Array, C: Array, first: Array,
                 s: float, speed: float, acc: float, target: float, dt: float,
                 max_jerk: float, max_acc: float, min_speed: float, B: Array, out: Array
                 ) -> tuple[float, float, float]:
    """One step of the speed along the path (``dt > 0``; ``dt = 0``: none), then the
    scaled reference ``out`` (3, n) = ``(q, qd, qdd)`` at the new ``s``; returns the new
    ``(s, speed, acceleration)``. The speed tracks ``target`` critically damped
    (``omega = 15``), its jerk clipped to ``max_jerk`` and, before the path's end, to
    :func:`jerk_bounds`; then ``|s_ddot| <= max_acc`` and ``min_speed <= s_dot <= 1``."""
    n = fp.shape[0]
    end = times[times.shape[0] - 1]
    if dt > 0.0:
        omega = 15.0
        jerk = omega * omega * (target - speed) - 2.0 * omega * acc
        jerk = min(max(jerk, -max_jerk), max_jerk)
        if s < end:
            point_derivatives(times, C, first, s, 3, B[D_Q:D_Q3 + 1])
            lo, hi = jerk_bounds(fp, g, rate_max, speed, acc, B, scratch(n, GW_COLS))
            jerk = min(max(jerk, lo), hi) if lo <= hi else 0.5 * (lo + hi)
        acc_new = min(max(acc + jerk * dt, -max_acc), max_acc)
        speed_new = speed + acc_new * dt
        if speed_new < min_speed or speed_new > 1.0:
            speed_new, acc_new = min(max(speed_new, min_speed), 1.0), 0.0
        speed, acc = speed_new, acc_new
        s += speed * dt
    point_derivatives(times, C, first, s, 2, B[D_Q:D_Q2 + 1])
    sd2 = speed * speed
    for j in range(n):
        q1 = B[D_Q1, j]
        out[0, j] = B[D_Q, j]
        out[1, j] = q1 * speed
        out[2, j] = B[D_Q2, j] * sd2 + q1 * acc
    return s, speed, acc


@jit
def bounded_dt(stamp_dt: float, receipt_dt: float) -> float:
    """The slew limiter's time step [s]: the stamp interval ``stamp_dt``, never more than
    the receipt interval ``receipt_dt`` on the receiver's clock (a sender's stamps cannot
    loosen the limit); NaN if either is (a held command)."""
    if receipt_dt < stamp_dt or np.isnan(receipt_dt):  # the smaller; NaN if either
        return receipt_dt
    return stamp_dt


@jit
def slew(previous: float, target: float, step: float) -> tuple[float, bool]:
    """``previous`` moved towards ``target`` by at most ``step``, and whether the bound
    acted (``|target - previous| > step``; not a float round-off of an unbound move)."""
    change = target - previous
    if change > step:
        return previous + step, True
    if change < -step:
        return previous - step, True
    return target, False


@jit
def slew_step(tau: Array, previous: Array, rate: Array, dt: float, out: Array) -> int:
    """``out = previous + clip(tau - previous, +-rate dt)``; returns how many were limited."""
    limited = 0
    for i in range(tau.shape[0]):
        out[i], bound = slew(previous[i], tau[i], rate[i] * dt)
        limited += bound
    return limited
