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
  universal joint on a translating platform: Delta); the kernels branch on each
  explicitly and raise ``ParallelRobotError`` on any other code.
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
    sub3,
    vec3,
)
from rnea_ros.core._compile import inline, jit_fma
from rnea_ros.core._layout import PRISMATIC, kind
from rnea_ros.core.errors import ParallelRobotError

Array = NDArray[np.float64]
_quaternion_matrix = inline(quaternion_matrix)  # with this module's FMA contraction

KIND_UPS = 0  # Gough-Stewart: 6-DoF platform, legs U-P(-S)
KIND_RUU = 1  # Delta: translating platform, legs R-U(-U)
UNKNOWN_KIND = ("parallel kernel: unknown robot kind code (valid: KIND_UPS, KIND_RUU of "
                "rnea_ros.core.coupling._parallel_legs)")

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
G_TA = 56  # two_angles_setup(G_UW1, G_UW2, G_UP): the universal joint's constants (12)
G_LIM = 68  # per joint: limit_test's cos mid, sin mid, cos half range, mode (3 x 4)
G_COLS = 80
LIM_NONE, LIM_ARC, LIM_VALUE, LIM_ANGLE = 0.0, 1.0, 2.0, 3.0  # limit test modes

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
@inline
def _angle_products(w: Vec, p: Vec, q: Vec) -> tuple[float, float]:
    """``(x, y)`` with ``theta = atan2(y, x)`` of :func:`angle_between`."""
    pp = sub3(p, scale3(w, dot3(w, p)))
    qq = sub3(q, scale3(w, dot3(w, q)))
    return dot3(pp, qq), dot3(w, cross(pp, qq))


@jit_fma
def angle_between(w: Vec, p: Vec, q: Vec) -> float:
    """Paden-Kahan subproblem 1: ``theta`` with ``Rot(w, theta) p = q`` (components normal to w)."""
    x, y = _angle_products(w, p, q)
    return math.atan2(y, x)


TA = tuple[float, float, float, float, float, float, float, float, float, float, float, float]
TA_COLS = 12  # two_angles_setup's constants
Frames = tuple[int, Vec, Vec, Vec, Vec, Vec, Vec, Vec, Vec, Vec]  # leg_frames' result


@jit_fma
def two_angles_setup(w1: Vec, w2: Vec, p: Vec) -> TA:
    """What :func:`two_angles_cs` needs of ``w1, w2, p`` alone (a leg's model constants):
    ``w1.w2``, ``1 / ((w1.w2)^2 - 1)``, ``1 / |w1 x w2|^2``, ``p.p``, ``w2.p``,
    ``w1 x w2``, ``p2 = p - w2 (w2.p)``, ``1 / |p2|^2`` (1 if ``p2 = 0``)."""
    c = dot3(w1, w2)
    w12 = cross(w1, w2)
    w2p = dot3(w2, p)
    p2 = sub3(p, scale3(w2, w2p))
    n2 = dot3(p2, p2)
    return (c, 1.0 / (c * c - 1.0), 1.0 / dot3(w12, w12), dot3(p, p), w2p, w12[0], w12[1],
            w12[2], p2[0], p2[1], p2[2], 1.0 / (n2 if n2 > 0.0 else 1.0))


@jit_fma
def two_angles_cs(w1: Vec, w2: Vec, p: Vec, K: TA, q: Vec
                  ) -> tuple[bool, float, float, float, float]:
    """Paden-Kahan subproblem 2: ``Rot(w1, t1) Rot(w2, t2) p = q``, ``|p| = |q|``, with
    ``K = two_angles_setup(w1, w2, p)``. Returns ``(ok, cos t1, sin t1, cos t2, sin t2)``
    (the angles are ``atan2(sin, cos)``: :func:`two_angles`).

    Of the two solutions, the one with the smaller ``max(|t1|, |t2|)`` (the
    branch through the joints' zero), chosen by the angles' cosines before the
    two ``atan2``. False when ``q`` is out of reach.
    """
    c, inv_den, inv_w12, pp, w2p = K[0], K[1], K[2], K[3], K[4]
    w12, p2, inv_n2 = (K[5], K[6], K[7]), (K[8], K[9], K[10]), K[11]
    w1q = dot3(w1, q)
    alpha = (c * w2p - w1q) * inv_den
    beta = (c * w1q - w2p) * inv_den
    g2 = (pp - alpha * alpha - beta * beta - 2.0 * alpha * beta * c) * inv_w12
    if g2 < -1e-12 * pp:
        return False, 1.0, 0.0, 1.0, 0.0
    g = math.sqrt(max(g2, 0.0))
    base = add3(scale3(w1, alpha), scale3(w2, beta))
    za = add3(base, scale3(w12, g))
    zb = sub3(base, scale3(w12, g))
    # cos t2 = z.p2 / |p2|^2 and cos t1 = z.q1 / |q1|^2 (p2, q1: p, q normal to w2, w1;
    # z's normal parts have the same lengths): keep the branch with the larger min cosine.
    q1 = sub3(q, scale3(w1, w1q))
    n1 = dot3(q1, q1)
    inv_n1 = 1.0 / (n1 if n1 > 0.0 else 1.0)
    ca = min(dot3(za, p2) * inv_n2, dot3(za, q1) * inv_n1)
    cb = min(dot3(zb, p2) * inv_n2, dot3(zb, q1) * inv_n1)
    z = zb if cb > ca else za
    # Each angle's cosine and sine: angle_between's two products (|u||v| cos, |u||v| sin
    # of the parts u, v normal to the axis) over |u||v| = |q1|^2, |p2|^2, both known: on
    # the solution, z's parts normal to w1 and w2 are as long as q1 and p2 (no square
    # root, no division; 1, 0 when the part is zero, the angle undetermined).
    x1, y1 = _angle_products(w1, z, q)
    x2, y2 = _angle_products(w2, p, z)
    c1, s1 = (x1 * inv_n1, y1 * inv_n1) if n1 > 0.0 else (1.0, 0.0)
    c2, s2 = (x2 * inv_n2, y2 * inv_n2) if dot3(p2, p2) > 0.0 else (1.0, 0.0)
    return True, c1, s1, c2, s2


@jit_fma
def two_angles(w1: Vec, w2: Vec, p: Vec, q: Vec) -> tuple[bool, float, float]:
    """:func:`two_angles_cs`'s success and angles."""
    ok, c1, s1, c2, s2 = two_angles_cs(w1, w2, p, two_angles_setup(w1, w2, p), q)
    return ok, math.atan2(s1, c1), math.atan2(s2, c2)


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
    ``x`` replaces ``A[:n, n]``. False if the matrix is (numerically) singular. Each pivot
    is inverted once (as LAPACK's ``dgetf2`` scales its column): ``n`` divisions, not
    ``n (n + 1) / 2 + n``; ``A`` is left with the pivots' inverses on its diagonal."""
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
        inv = 1.0 / A[k, k]
        A[k, k] = inv
        for r in range(k + 1, n):  # column k below the pivot is not read again
            f = A[r, k] * inv
            for c in range(k + 1, n + 1):
                A[r, c] -= f * A[k, c]
    for k in range(n - 1, -1, -1):
        s = A[k, n]
        for c in range(k + 1, n):
            s -= A[k, c] * A[c, n]
        A[k, n] = s * A[k, k]
    return True


# ---------------------------------------------------------------- legs
_two_angles_cs = inline(two_angles_cs)  # inlined into the leg kernels (and their FMA flags)


@inline
def _constants(gm: Array, i: int) -> TA:
    """Leg ``i``'s universal-joint constants (columns ``G_TA``: :func:`two_angles_setup`)."""
    k = G_TA
    return (gm[i, k], gm[i, k + 1], gm[i, k + 2], gm[i, k + 3], gm[i, k + 4], gm[i, k + 5],
            gm[i, k + 6], gm[i, k + 7], gm[i, k + 8], gm[i, k + 9], gm[i, k + 10], gm[i, k + 11])


@inline
def rotate_vector(w: Vec, c: float, s: float, v: Vec) -> Vec:
    """``Rot(w, theta) v`` for the angle of cosine ``c`` and sine ``s`` (Rodrigues, unit ``w``)."""
    return add3(add3(scale3(v, c), scale3(cross(w, v), s)), scale3(w, dot3(w, v) * (1.0 - c)))


@jit_fma
def leg_frames(kind_: int, gm: Array, i: int, B: Vec) -> Frames:
    """Inverse geometric model of leg ``i`` and its joints' frames, closed form: the three
    joint values placing the leg end at ``B`` (base frame), each joint's origin ``o_j``
    and axis ``z_j`` (base frame) there. Returns ``(reason, q, (cos q0, cos q1, cos q2),
    (sin q0, sin q1, sin q2), o0, o1, o2, z0, z1, z2)``, ``q`` the prismatic joints'
    values (0 for a revolute joint: no ``atan2`` in the hot path, the RNEA and the limit
    test take the cosine and sine; :func:`leg_values` gives the angles) and a prismatic
    joint's cosine and sine 1 and 0; reason ``OK`` or ``UNREACHABLE`` (limits are not
    checked here: :func:`within_limits`).

    UPS leg: ``B = A + P1 Rot(w1, q0) P2 Rot(a2, q1) (kappa + q2) e``: the stroke
    from the distance, the universal joint from the direction (subproblem 2). Its
    centre ``A`` is the origin of all three joints (the prismatic joint's own origin
    does not enter the Jacobian nor ``dJ/dt qd``: ``o2 = A``); axes ``z0 = P1 w1``,
    ``z1 = P1 Rot(w1, q0) w2``, ``z2 = (B - A) / |B - A|``.
    RUU leg (the classic Delta closed form): the elbow ``E(q0)`` on its circle at
    the forearm's length from ``B``, ``P cos q0 + Q sin q0 = R`` (cosine and sine
    of ``q0`` in closed form, one ``atan2`` for the angle), the knee branch
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
            return UNREACHABLE, zero, zero, zero, zero, zero, zero, zero, zero, zero
        u = scale3(d, 1.0 / rho)
        ok, c0, s0, c1, s1 = _two_angles_cs(w1, w2, up, _constants(gm, i), mtv(P1, u))
        if not ok:
            return UNREACHABLE, zero, zero, zero, zero, zero, zero, zero, zero, zero
        z1 = mv(P1, rotate_vector(w1, c0, s0, w2))
        return (OK, (0.0, 0.0, rho - gm[i, G_KAPPA]), (c0, c1, 1.0), (s0, s1, 0.0), A, A, A,
                mv(P1, w1), z1, u)
    if kind_ != KIND_RUU:
        raise ParallelRobotError(UNKNOWN_KIND)
    w = vec3(gm, i, G_W)
    rp = vec3(gm, i, G_RPERP)
    rq = cross(w, rp)
    la2 = dot3(rp, rp)
    lb = gm[i, G_LB]
    d = sub3(sub3(B, A), scale3(w, gm[i, G_H]))
    P = dot3(d, rp)
    Q = dot3(d, rq)
    R = 0.5 * (dot3(d, d) + la2 - lb * lb)
    rho2 = P * P + Q * Q
    if not R * R <= rho2:
        return UNREACHABLE, zero, zero, zero, zero, zero, zero, zero, zero, zero
    # q0 = phi +- delta (phi = atan2(Q, P), cos delta = R / rho): its cosine and sine
    # by the angle-sum formulas, S = rho sin delta; the knee picks the sign.
    S = math.sqrt(rho2 - R * R)
    hub = add3(A, scale3(w, gm[i, G_H]))
    c, s = (P * R - Q * S) / rho2, (Q * R + P * S) / rho2
    E = add3(hub, add3(scale3(rp, c), scale3(rq, s)))
    if dot3(w, cross(sub3(E, A), sub3(B, E))) * gm[i, G_KNEE] < 0.0:
        c, s = (P * R + Q * S) / rho2, (Q * R - P * S) / rho2
        E = add3(hub, add3(scale3(rp, c), scale3(rq, s)))
    F = mm(mm(P1, axis_rotation(vec3(gm, i, G_A1), c, s)), mat3(gm, i, G_P2))
    ok, c1, s1, c2, s2 = _two_angles_cs(w1, w2, up, _constants(gm, i),
                                        mtv(F, scale3(sub3(B, E), 1.0 / lb)))
    if not ok:
        return UNREACHABLE, zero, zero, zero, zero, zero, zero, zero, zero, zero
    return (OK, (0.0, 0.0, 0.0), (c, c1, c2), (s, s1, s2), A, E, E, w, mv(F, w1),
            mv(F, rotate_vector(w1, c1, s1, w2)))


@inline
def leg_values(kind_: int, q: Vec, c: Vec, s: Vec) -> Vec:
    """A leg's joint values from :func:`leg_frames`' ``q, cos, sin``: the revolute
    joints' angles ``atan2(sin, cos)`` in ``(-pi, pi]``, the UPS leg's stroke ``q[2]``."""
    if kind_ == KIND_UPS:
        q2 = q[2]
    elif kind_ == KIND_RUU:
        q2 = math.atan2(s[2], c[2])
    else:
        raise ParallelRobotError(UNKNOWN_KIND)
    return math.atan2(s[0], c[0]), math.atan2(s[1], c[1]), q2


@inline
def within_limits(gm: Array, i: int, j: int, q: float, c: float, s: float) -> bool:
    """Whether joint ``j`` of leg ``i`` (value ``q``, or angle of cosine ``c`` and sine
    ``s``) is within its limits, by the test of its ``G_LIM`` mode (:func:`limit_test`)."""
    k = G_LIM + 4 * j
    mode = gm[i, k + 3]
    if mode == LIM_NONE:
        return True
    if mode == LIM_ARC:  # cos(angle - mid) >= cos(half range)
        return bool(c * gm[i, k] + s * gm[i, k + 1] >= gm[i, k + 2])
    v = q if mode == LIM_VALUE else math.atan2(s, c)
    return bool(gm[i, G_LOWER + j] <= v <= gm[i, G_UPPER + j])


def limit_test(prismatic: bool, lower: float, upper: float) -> tuple[float, float, float, float]:
    """A joint's ``G_LIM`` columns: ``(cos mid, sin mid, cos half, mode)``. A revolute
    joint whose limits lie in ``[-pi, pi]`` is tested on the arc (no ``atan2``: the
    angle is ``atan2``'s principal value, so ``lower <= angle <= upper`` iff
    ``cos(angle - mid) >= cos(half)``); limits spanning ``[-pi, pi]`` need no test;
    other limits and a prismatic joint compare the value."""
    if prismatic:
        return 0.0, 0.0, 0.0, LIM_VALUE
    if lower <= -math.pi and upper >= math.pi:
        return 0.0, 0.0, 0.0, LIM_NONE
    if -math.pi <= lower <= upper <= math.pi:
        mid, half = 0.5 * (lower + upper), 0.5 * (upper - lower)
        return math.cos(mid), math.sin(mid), math.cos(half), LIM_ARC
    return 0.0, 0.0, 0.0, LIM_ANGLE


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
    origins, ``qdd = 0``. No transport when they share their origin (``r = 0``: a
    universal joint's two axes, a UPS leg's three joints)."""
    if r[0] != 0.0 or r[1] != 0.0 or r[2] != 0.0:
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
    reason, qs, cs, ss, _, _, _, _, _, _ = leg_frames(kind_, gm, i, (B[0], B[1], B[2]))
    q[0], q[1], q[2] = leg_values(kind_, qs, cs, ss)
    return reason
