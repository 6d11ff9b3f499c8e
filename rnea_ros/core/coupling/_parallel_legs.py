"""Compiled kernels of the legs of a parallel robot (Khalil 2010 §5): the packed
data layout, the legs' closed-form inverse geometric models, their forward
kinematics, Jacobians ``J_i`` (eq. 63) and ``dJ_i/dt qd_i``, and the small
algebra they need (Paden-Kahan subproblems, a quaternion, a dense solve).
The platform kernels that use them are in :mod:`._parallel_jit`.

Data (built by :mod:`rnea_ros.core.coupling.parallel_model`):

* ``fp`` (3m, 30): the legs without the platform as one packed model (leg ``i``
  in rows ``3i..3i+2``, each a chain from the base: ``RobotModel.kernel_floats``);
* ``gm`` (m, G_COLS): per-leg geometry, columns ``G_*`` below;
* ``pl`` (1, PL_COLS): the platform's inertia about its origin in its frame and,
  for a translating platform, its constant orientation;
* ``kind``: :data:`KIND_UPS` (legs universal-prismatic, spherical joint on a
  6-DoF platform: Gough-Stewart) or :data:`KIND_RUU` (legs revolute-universal,
  universal joint on a translating platform: Delta).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Mat,
    Vec,
    add3,
    axis_rotation,
    cross,
    dot3,
    mat3,
    mm,
    mtv,
    mv,
    quaternion_matrix,
    scale3,
    sincos,
    sub3,
    vec3,
)
from rnea_ros.core._compile import inline, jit_fma
from rnea_ros.core._layout import PRISMATIC, kind

Array = NDArray[np.float64]
_quaternion_matrix = inline(quaternion_matrix)  # with this module's FMA contraction
_sincos = inline(sincos)

KIND_UPS = 0  # Gough-Stewart: 6-DoF platform, legs U-P(-S)
KIND_RUU = 1  # Delta: translating platform, legs R-U(-U)

# Per-leg geometry columns.
G_A = 0  # first joint's origin, base frame (3)
G_P1 = 3  # first joint's placement rotation (9)
G_UW1 = 12  # universal joint: first axis, in the frame it is placed in (3)
G_UW2 = 15  # second axis, moved into the same frame (3)
G_UP = 18  # the vector the universal joint turns (leg or forearm direction), same frame (3)
G_KAPPA = 21  # UPS: distance from the universal joint's centre to the leg end at zero stroke
G_W = 22  # RUU: arm axis, base frame (3)
G_RPERP = 25  # RUU: elbow offset normal to the axis at arm angle 0, base frame (3)
G_H = 28  # RUU: elbow offset along the axis
G_LB = 29  # RUU: forearm length (elbow to leg end)
G_KNEE = 30  # RUU: knee sign, +-1 (which of the two arm angles)
G_P2 = 31  # RUU: elbow joint's placement rotation (9)
G_A1 = 40  # RUU: arm axis in its joint frame (3)
G_ATTACH = 43  # leg end on the platform, platform frame (3)
G_END = 46  # leg end, in the leg's last body frame (3)
G_ACTIVE = 49  # index of the active joint in the leg
G_LOWER = 50  # joint lower limits (3)
G_UPPER = 53  # joint upper limits (3)
G_COLS = 56

PL_MASS = 0
PL_H = 1  # first moment m c, platform frame (3)
PL_IO = 4  # rotational inertia about the platform origin, platform frame (9)
PL_R0 = 13  # constant orientation of a translating platform (9)
PL_COLS = 22

# Status: reason * STATUS_LEG + leg index.
OK = 0
UNREACHABLE = 1
LIMIT = 2
LEG_SINGULAR = 3
PLATFORM_SINGULAR = 4
BAD_QUATERNION = 5
NOT_FINITE = 6
STATUS_LEG = 256


# ------------------------------------------------------------------ small algebra
@jit_fma
def angle_between(w: Vec, p: Vec, q: Vec) -> float:
    """Paden-Kahan subproblem 1: ``theta`` with ``Rot(w, theta) p = q`` (components normal to w)."""
    pp = sub3(p, scale3(w, dot3(w, p)))
    qq = sub3(q, scale3(w, dot3(w, q)))
    return math.atan2(dot3(w, cross(pp, qq)), dot3(pp, qq))


@jit_fma
def two_angles(w1: Vec, w2: Vec, p: Vec, q: Vec) -> tuple[bool, float, float]:
    """Paden-Kahan subproblem 2: ``Rot(w1, t1) Rot(w2, t2) p = q``, ``|p| = |q|``.

    Of the two solutions, the one with the smaller ``max(|t1|, |t2|)`` (the
    branch through the joints' zero), chosen by the angles' cosines before the
    two ``atan2``. False when ``q`` is out of reach.
    """
    c = dot3(w1, w2)
    den = c * c - 1.0
    alpha = (c * dot3(w2, p) - dot3(w1, q)) / den
    beta = (c * dot3(w1, q) - dot3(w2, p)) / den
    w12 = cross(w1, w2)
    g2 = (dot3(p, p) - alpha * alpha - beta * beta - 2.0 * alpha * beta * c) / dot3(w12, w12)
    if g2 < -1e-12 * dot3(p, p):
        return False, 0.0, 0.0
    g = math.sqrt(max(g2, 0.0))
    base = add3(scale3(w1, alpha), scale3(w2, beta))
    za = add3(base, scale3(w12, g))
    zb = sub3(base, scale3(w12, g))
    # cos t2 = z.p2 / |p2|^2 and cos t1 = z.q1 / |q1|^2 (p2, q1: p, q normal to w2, w1;
    # z's normal parts have the same lengths): keep the branch with the larger min cosine.
    p2 = sub3(p, scale3(w2, dot3(w2, p)))
    q1 = sub3(q, scale3(w1, dot3(w1, q)))
    n2, n1 = dot3(p2, p2), dot3(q1, q1)
    n2, n1 = (n2 if n2 > 0.0 else 1.0), (n1 if n1 > 0.0 else 1.0)
    ca = min(dot3(za, p2) / n2, dot3(za, q1) / n1)
    cb = min(dot3(zb, p2) / n2, dot3(zb, q1) / n1)
    z = zb if cb > ca else za
    return True, angle_between(w1, z, q), angle_between(w2, p, z)


@jit_fma
def unit_quaternion_matrix(qx: float, qy: float, qz: float, qw: float) -> tuple[bool, Mat]:
    """Rotation of the quaternion ``(qx, qy, qz, qw)`` normalised
    (:func:`~rnea_ros.core._algebra.quaternion_matrix`); False if its norm is not 1."""
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    ok = abs(n - 1.0) <= 1e-6
    if n > 0.0:
        qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    return ok, _quaternion_matrix(qx, qy, qz, qw)


@jit_fma
def solve_in_place(A: Array, n: int) -> bool:
    """Solve ``A[:n, :n] x = A[:n, n]`` by Gaussian elimination with partial pivoting;
    ``x`` replaces ``A[:n, n]``. False if the matrix is (numerically) singular."""
    scale = 0.0
    for r in range(n):
        for c in range(n):
            scale = max(scale, abs(A[r, c]))
    tol = 1e-12 * scale
    for k in range(n):
        piv = k
        for r in range(k + 1, n):
            if abs(A[r, k]) > abs(A[piv, k]):
                piv = r
        if not abs(A[piv, k]) > tol:
            return False
        if piv != k:
            for c in range(k, n + 1):
                A[k, c], A[piv, c] = A[piv, c], A[k, c]
        for r in range(k + 1, n):
            f = A[r, k] / A[k, k]
            for c in range(k, n + 1):
                A[r, c] -= f * A[k, c]
    for k in range(n - 1, -1, -1):
        s = A[k, n]
        for c in range(k + 1, n):
            s -= A[k, c] * A[c, n]
        A[k, n] = s / A[k, k]
    return True


# ---------------------------------------------------------------- legs
_two_angles = inline(two_angles)  # inlined into the leg kernels (and their FMA flags)


@inline
def rotate_vector(w: Vec, c: float, s: float, v: Vec) -> Vec:
    """``Rot(w, theta) v`` for the angle of cosine ``c`` and sine ``s`` (Rodrigues, unit ``w``)."""
    return add3(add3(scale3(v, c), scale3(cross(w, v), s)), scale3(w, dot3(w, v) * (1.0 - c)))


@jit_fma
def leg_frames(kind_: int, gm: Array, i: int, B: Vec
               ) -> tuple[int, float, float, float, Vec, Vec, Vec, Vec, Vec, Vec]:
    """Inverse geometric model of leg ``i`` and its joints' frames, closed form: the three
    joint values placing the leg end at ``B`` (base frame), each joint's origin ``o_j``
    and axis ``z_j`` (base frame) there. Returns ``(reason, q0, q1, q2, o0, o1, o2,
    z0, z1, z2)``, reason ``OK`` or ``UNREACHABLE`` (limits are not checked here).

    UPS leg: ``B = A + P1 Rot(w1, q0) P2 Rot(a2, q1) (kappa + q2) e``: the stroke
    from the distance, the universal joint from the direction (subproblem 2). Its
    centre ``A`` is the origin of all three joints (the prismatic joint's own origin
    does not enter the Jacobian nor ``dJ/dt qd``: ``o2 = A``); axes ``z0 = P1 w1``,
    ``z1 = P1 Rot(w1, q0) w2``, ``z2 = (B - A) / |B - A|``.
    RUU leg (the classic Delta closed form): the elbow ``E(q0)`` on its circle at
    the forearm's length from ``B``, ``P cos q0 + Q sin q0 = R``, the knee branch
    by the sign of ``w . ((E - A) x (B - E))``; then the elbow's universal joint
    from the forearm's direction. Origins ``A, E, E``; axes ``w``, ``F a2``,
    ``F Rot(a2, q1) w2`` with ``F = P1 Rot(a1, q0) P2`` the elbow's frame.
    """
    A = vec3(gm, i, G_A)
    P1 = mat3(gm, i, G_P1)
    w1, w2, up = vec3(gm, i, G_UW1), vec3(gm, i, G_UW2), vec3(gm, i, G_UP)
    zero = (0.0, 0.0, 0.0)
    if kind_ == KIND_UPS:
        d = sub3(B, A)
        rho = math.sqrt(dot3(d, d))
        if not rho > 0.0:
            return UNREACHABLE, 0.0, 0.0, 0.0, zero, zero, zero, zero, zero, zero
        u = scale3(d, 1.0 / rho)
        ok, t0, t1 = _two_angles(w1, w2, up, mtv(P1, u))
        if not ok:
            return UNREACHABLE, 0.0, 0.0, 0.0, zero, zero, zero, zero, zero, zero
        c0, s0 = _sincos(t0)
        z1 = mv(P1, rotate_vector(w1, c0, s0, w2))
        return OK, t0, t1, rho - gm[i, G_KAPPA], A, A, A, mv(P1, w1), z1, u
    w = vec3(gm, i, G_W)
    rp = vec3(gm, i, G_RPERP)
    rq = cross(w, rp)
    la2 = dot3(rp, rp)
    lb = gm[i, G_LB]
    d = sub3(sub3(B, A), scale3(w, gm[i, G_H]))
    P = dot3(d, rp)
    Q = dot3(d, rq)
    R = 0.5 * (dot3(d, d) + la2 - lb * lb)
    rho = math.sqrt(P * P + Q * Q)
    if not abs(R) <= rho:
        return UNREACHABLE, 0.0, 0.0, 0.0, zero, zero, zero, zero, zero, zero
    phi = math.atan2(Q, P)
    delta = math.acos(R / rho)
    t0 = phi + delta
    hub = add3(A, scale3(w, gm[i, G_H]))
    c, s = _sincos(t0)
    E = add3(hub, add3(scale3(rp, c), scale3(rq, s)))
    if dot3(w, cross(sub3(E, A), sub3(B, E))) * gm[i, G_KNEE] < 0.0:
        t0 = phi - delta
        c, s = _sincos(t0)
        E = add3(hub, add3(scale3(rp, c), scale3(rq, s)))
    t0 = math.atan2(s, c)
    F = mm(mm(P1, axis_rotation(vec3(gm, i, G_A1), c, s)), mat3(gm, i, G_P2))
    ok, t1, t2 = _two_angles(w1, w2, up, mtv(F, scale3(sub3(B, E), 1.0 / lb)))
    if not ok:
        return UNREACHABLE, 0.0, 0.0, 0.0, zero, zero, zero, zero, zero, zero
    c1, s1 = _sincos(t1)
    return OK, t0, t1, t2, A, E, E, w, mv(F, w1), mv(F, rotate_vector(w1, c1, s1, w2))


@jit_fma
def jacobian_column(fp: Array, k: int, o: Vec, z: Vec, B: Vec) -> Vec:
    """Column of the leg Jacobian ``J_i`` (eq. 63) of joint row ``k``: velocity of the
    leg end per unit rate."""
    if kind(fp, k) == PRISMATIC:
        return z
    return cross(z, sub3(B, o))


@jit_fma
def _chain_step(fp: Array, k: int, r: Vec, z: Vec, qd: float,
                w: Vec, v: Vec, al: Vec, acc: Vec) -> tuple[Vec, Vec, Vec, Vec]:
    """Angular velocity, origin velocity, angular and classical linear acceleration of
    the body of joint row ``k`` (base frame) from its parent's, ``r`` between their
    origins, ``qdd = 0``."""
    v = add3(v, cross(w, r))
    acc = add3(acc, add3(cross(al, r), cross(w, cross(w, r))))
    s = scale3(z, qd)
    if kind(fp, k) == PRISMATIC:
        return w, add3(v, s), al, add3(acc, scale3(cross(w, s), 2.0))
    return add3(w, s), v, add3(al, cross(w, s)), acc


@jit_fma
def leg_bias(fp: Array, o: int, o0: Vec, o1: Vec, o2: Vec, z0: Vec, z1: Vec, z2: Vec,
             B: Vec, qd0: float, qd1: float, qd2: float) -> Vec:
    """``dJ_i/dt qd_i``: the leg end's acceleration at zero joint accelerations."""
    zero = (0.0, 0.0, 0.0)
    w, v, al, acc = _chain_step(fp, o, zero, z0, qd0, zero, zero, zero, zero)
    w, v, al, acc = _chain_step(fp, o + 1, sub3(o1, o0), z1, qd1, w, v, al, acc)
    w, v, al, acc = _chain_step(fp, o + 2, sub3(o2, o1), z2, qd2, w, v, al, acc)
    r = sub3(B, o2)
    return add3(acc, add3(cross(al, r), cross(w, cross(w, r))))


@jit_fma
def leg_geometry_call(kind_: int, gm: Array, i: int, B: Array, q: Array) -> int:
    """:func:`leg_frames`' joint values for Python (error messages)."""
    reason, q[0], q[1], q[2], _, _, _, _, _, _ = leg_frames(kind_, gm, i, (B[0], B[1], B[2]))
    return reason
