"""Tuple and spatial algebra of the compiled kernels.

Small vectors are tuples, so the helpers return tuples and nothing is
allocated on the heap inside the recursions (Featherstone-style names:
``w`` angular velocity, ``v`` linear velocity of the body-fixed point at the
origin, ``dw``/``a`` their spatial-acceleration counterparts, ``n``/``f``
moment/force of a spatial force). Helpers that read the packed model ``fp``
use its layout from :mod:`rnea_ros.core._layout`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit
from rnea_ros.core._layout import (
    F_AXIS,
    F_H,
    F_IO,
    F_MASS,
    F_P,
    F_R,
    PRISMATIC,
    REVOLUTE,
    REVOLUTE_X,
    kind,
)

Vec = tuple[float, float, float]
Mat = tuple[float, float, float, float, float, float, float, float, float]
Motion = tuple[Vec, Vec]  # a spatial motion or force as (angular, linear) / (moment, force)
Base = tuple[Vec, Vec, Vec, Vec]  # the base's (w0, v0, dw0, a0), gravity folded into a0
Array = NDArray[np.float64]


@jit
def vec3(a: NDArray[np.float64], i: int, k: int) -> Vec:
    """``a[i, k:k+3]`` as a tuple."""
    return (a[i, k], a[i, k + 1], a[i, k + 2])


@jit
def put3(a: NDArray[np.float64], i: int, k: int, x: Vec) -> None:
    """``a[i, k:k+3] = x``."""
    a[i, k] = x[0]
    a[i, k + 1] = x[1]
    a[i, k + 2] = x[2]


@jit
def add3(x: Vec, y: Vec) -> Vec:
    return (x[0] + y[0], x[1] + y[1], x[2] + y[2])


@jit
def sub3(x: Vec, y: Vec) -> Vec:
    return (x[0] - y[0], x[1] - y[1], x[2] - y[2])


@jit
def scale3(x: Vec, s: float) -> Vec:
    return (x[0] * s, x[1] * s, x[2] * s)


@jit
def dot3(x: Vec, y: Vec) -> float:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


@jit
def cross(x: Vec, y: Vec) -> Vec:
    return (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0])


@jit
def mat3(a: NDArray[np.float64], i: int, k: int) -> Mat:
    """``a[i, k:k+9]`` (a row-major 3x3 matrix) as a tuple."""
    return (a[i, k], a[i, k + 1], a[i, k + 2], a[i, k + 3], a[i, k + 4],
            a[i, k + 5], a[i, k + 6], a[i, k + 7], a[i, k + 8])


@jit
def put9(a: NDArray[np.float64], i: int, k: int, R: Mat) -> None:
    """``a[i, k:k+9] = R``."""
    for j in range(9):
        a[i, k + j] = R[j]


@jit
def mv(R: Mat, x: Vec) -> Vec:
    """``R @ x``."""
    return (R[0] * x[0] + R[1] * x[1] + R[2] * x[2],
            R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
            R[6] * x[0] + R[7] * x[1] + R[8] * x[2])


@jit
def mtv(R: Mat, x: Vec) -> Vec:
    """``R.T @ x``."""
    return (R[0] * x[0] + R[3] * x[1] + R[6] * x[2],
            R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
            R[2] * x[0] + R[5] * x[1] + R[8] * x[2])


@jit
def mm(A: Mat, B: Mat) -> Mat:
    """``A @ B``."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
            A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
            A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@jit
def mt(R: Mat) -> Mat:
    """``R^T``."""
    return (R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8])


@jit
def rotate_symmetric(R: Mat, S: Mat) -> Mat:
    """``R S R^T`` for a symmetric ``S`` (both row-major 3x3): ``R S`` (27 products),
    then the upper triangle of ``(R S) R^T`` (18), mirrored."""
    M = mm(R, S)
    a00 = M[0] * R[0] + M[1] * R[1] + M[2] * R[2]
    a01 = M[0] * R[3] + M[1] * R[4] + M[2] * R[5]
    a02 = M[0] * R[6] + M[1] * R[7] + M[2] * R[8]
    a11 = M[3] * R[3] + M[4] * R[4] + M[5] * R[5]
    a12 = M[3] * R[6] + M[4] * R[7] + M[5] * R[8]
    a22 = M[6] * R[6] + M[7] * R[7] + M[8] * R[8]
    return (a00, a01, a02, a01, a11, a12, a02, a12, a22)


@jit
def axis_rotation(u: Vec, c: float, s: float) -> Mat:
    """Rotation about unit vector ``u`` by the angle of cosine ``c`` and sine ``s`` (Rodrigues)."""
    t = 1.0 - c
    x, y, z = u
    return (t * x * x + c, t * x * y - s * z, t * x * z + s * y,
            t * x * y + s * z, t * y * y + c, t * y * z - s * x,
            t * x * z - s * y, t * y * z + s * x, t * z * z + c)


@jit
def rotate_about_coordinate_axis(R0: Mat, k: int, c: float, s: float) -> Mat:
    """``R0 @ Rot(e_k, angle)`` for a coordinate axis ``k`` (0, 1, 2), in 12 products."""
    if k == 2:  # columns x' = c x + s y, y' = -s x + c y
        return (c * R0[0] + s * R0[1], c * R0[1] - s * R0[0], R0[2],
                c * R0[3] + s * R0[4], c * R0[4] - s * R0[3], R0[5],
                c * R0[6] + s * R0[7], c * R0[7] - s * R0[6], R0[8])
    if k == 1:  # z' = c z + s x, x' = c x - s z
        return (c * R0[0] - s * R0[2], R0[1], c * R0[2] + s * R0[0],
                c * R0[3] - s * R0[5], R0[4], c * R0[5] + s * R0[3],
                c * R0[6] - s * R0[8], R0[7], c * R0[8] + s * R0[6])
    # k == 0: y' = c y + s z, z' = c z - s y
    return (R0[0], c * R0[1] + s * R0[2], c * R0[2] - s * R0[1],
            R0[3], c * R0[4] + s * R0[5], c * R0[5] - s * R0[4],
            R0[6], c * R0[7] + s * R0[8], c * R0[8] - s * R0[7])


# sin and cos on [-pi/4, pi/4]: FreeBSD msun's k_sin.c / k_cos.c minimax polynomials
# (error < 1 ulp); pi/2 in three parts for the reduction (e_rem_pio2.c: 33 + 33 + 53 bits).
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1, _PIO2_2 = 1.57079632673412561417e+00, 6.07710050630396597660e-11
_PIO2_3 = 2.02226624871116645580e-21
SINCOS_RANGE = 1.0e5  # |x| beyond it, inf and nan: libm


@jit
def sincos(x: float) -> tuple[float, float]:
    """``(cos x, sin x)`` to within ~1e-16 of libm's, in one inlinable body.

    ``x = n pi/2 + r``, ``|r| <= pi/4`` (Cody-Waite: exact products for
    ``|x| <= SINCOS_RANGE``), then FreeBSD's polynomials in ``r`` and the
    quadrant ``n mod 4`` chosen without branches (random angles would
    mispredict them). Inlined in a kernel it costs less than libm's two calls.
    """
    if not abs(x) <= SINCOS_RANGE:
        return math.cos(x), math.sin(x)
    fn = math.floor(x * _INV_PIO2 + 0.5)
    r = ((x - fn * _PIO2_1) - fn * _PIO2_2) - fn * _PIO2_3
    z = r * r
    w = z * z
    sr = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    s = r + z * r * (_S1 + z * sr)
    cr = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    c1 = 1.0 - hz
    c = c1 + (((1.0 - c1) - hz) + z * cr)
    n = int(fn)
    odd = (n & 1) == 1
    return ((s if odd else c) * float(1 - ((n + 1) & 2)),
            (c if odd else s) * float(1 - (n & 2)))


@jit
def joint_transform(fp: NDArray[np.float64], i: int, q: float
                    ) -> tuple[Mat, Vec]:
    """Pose ``(R, p)`` of body ``i`` in its parent's frame at joint position ``q``
    (``np.cos``/``np.sin``: also for a complex ``q``, the complex step of
    :mod:`rnea_ros.core.dynamics._derivatives_jit`)."""
    R0 = mat3(fp, i, F_R)
    p0 = vec3(fp, i, F_P)
    u = vec3(fp, i, F_AXIS)
    jk = kind(fp, i)
    if jk == PRISMATIC:
        return R0, add3(p0, mv(R0, scale3(u, q)))
    c = np.cos(q)
    s = np.sin(q)
    if jk == REVOLUTE:
        return mm(R0, axis_rotation(u, c, s)), p0
    k = jk - REVOLUTE_X
    return rotate_about_coordinate_axis(R0, k, c, s * u[k]), p0  # u[k] = +-1


@jit
def inertia_times(fp: NDArray[np.float64], i: int, w: Vec, v: Vec) -> tuple[Vec, Vec]:
    """Spatial inertia of body ``i`` (at its origin) times the motion ``(w, v)``.

    Returns the force ``(n, f)``: ``n = I_o w + h x v``, ``f = m v - h x w``.
    """
    m = fp[i, F_MASS]
    h = vec3(fp, i, F_H)
    k = F_IO
    Iw = (fp[i, k] * w[0] + fp[i, k + 3] * w[1] + fp[i, k + 4] * w[2],
          fp[i, k + 3] * w[0] + fp[i, k + 1] * w[1] + fp[i, k + 5] * w[2],
          fp[i, k + 4] * w[0] + fp[i, k + 5] * w[1] + fp[i, k + 2] * w[2])
    return add3(Iw, cross(h, v)), sub3(scale3(v, m), cross(h, w))


@jit
def child_motion(fp: NDArray[np.float64], i: int, R: Mat, p: Vec, w_p: Vec, v_p: Vec,
                 dw_p: Vec, a_p: Vec, qd: float, qdd: float) -> tuple[Vec, Vec, Vec, Vec]:
    """RNEA's forward step (Featherstone Table 5.1; Caron's pseudo-code): body ``i``'s
    ``(w, v, dw, a)`` from its parent's, through the pose ``(R, p)`` of body ``i`` in
    the parent's frame, plus the joint's ``S qd`` and ``S qdd + v x S qd``."""
    w = mtv(R, w_p)
    v = mtv(R, add3(v_p, cross(w_p, p)))
    dw = mtv(R, dw_p)
    a = mtv(R, add3(a_p, cross(dw_p, p)))
    u = vec3(fp, i, F_AXIS)
    s = scale3(u, qd)  # S qd
    if kind(fp, i) != PRISMATIC:
        w = add3(w, s)
        dw = add3(dw, add3(scale3(u, qdd), cross(w, s)))
        a = add3(a, cross(v, s))
    else:
        v = add3(v, s)
        a = add3(a, add3(scale3(u, qdd), cross(w, s)))
    return w, v, dw, a


@jit
def body_force(fp: NDArray[np.float64], i: int, w: Vec, v: Vec, dw: Vec, a: Vec
               ) -> tuple[Vec, Vec]:
    """Body ``i``'s Newton-Euler force ``(n, f) = I a + v x* I v`` at its origin."""
    n1, f1 = inertia_times(fp, i, dw, a)
    n2, f2 = inertia_times(fp, i, w, v)
    return add3(n1, add3(cross(w, n2), cross(v, f2))), add3(f1, cross(w, f2))


# ---- spatial algebra on (angular, linear) tuple pairs (gfd, coriolis products)


@jit
def mget(work: Array, i: int, k: int) -> Motion:
    """``work[i, k:k+6]`` as a motion/force ``(angular, linear)``."""
    return vec3(work, i, k), vec3(work, i, k + 3)


@jit
def mput(work: Array, i: int, k: int, m: Motion) -> None:
    """``work[i, k:k+6] = m``."""
    put3(work, i, k, m[0])
    put3(work, i, k + 3, m[1])


@jit
def madd(x: Motion, y: Motion) -> Motion:
    """``x + y`` (6-vectors as tuple pairs)."""
    return add3(x[0], y[0]), add3(x[1], y[1])


@jit
def mscale(x: Motion, s: float) -> Motion:
    """``s x``."""
    return scale3(x[0], s), scale3(x[1], s)


@jit
def mcross(m: Motion, x: Motion) -> Motion:
    """Motion cross product ``m x x``."""
    return cross(m[0], x[0]), add3(cross(m[0], x[1]), cross(m[1], x[0]))


@jit
def fcross(m: Motion, f: Motion) -> Motion:
    """Force cross product ``m x* f`` for a force ``(n, f)``."""
    return add3(cross(m[0], f[0]), cross(m[1], f[1])), cross(m[0], f[1])


@jit
def to_child(R: Mat, p: Vec, m: Motion) -> Motion:
    """``X m``: a parent-frame motion in the child frame."""
    return mtv(R, m[0]), mtv(R, add3(m[1], cross(m[0], p)))


@jit
def to_parent(R: Mat, p: Vec, f: Motion) -> Motion:
    """``X^T f``: a child-frame force ``(n, f)`` in the parent frame."""
    Rf = mv(R, f[1])
    return add3(mv(R, f[0]), cross(p, Rf)), Rf


@jit
def minertia(fp: Array, i: int, m: Motion) -> Motion:
    """Spatial inertia of body ``i`` times the motion ``m``: a force ``(n, f)``."""
    return inertia_times(fp, i, m[0], m[1])


@jit
def joint_motion(fp: Array, i: int, x: float) -> Motion:
    """``S_i x``."""
    u = scale3(vec3(fp, i, F_AXIS), x)
    zero = (0.0, 0.0, 0.0)
    return (zero, u) if kind(fp, i) == PRISMATIC else (u, zero)


@jit
def fixed_base(g: Array) -> Base:
    """The motion ``(w0, v0, dw0, a0)`` of a fixed base: at rest, ``a0 = -g``
    (gravity as a fictitious base acceleration, Khalil 2010 after eq. 24)."""
    zero = (0.0, 0.0, 0.0)
    return zero, zero, zero, (-g[0], -g[1], -g[2])


@jit
def base_tuple(b: Array) -> Base:
    """``b`` (12,) = ``[w0, v0, dw0, a0]`` as a :data:`Base` tuple."""
    return ((b[0], b[1], b[2]), (b[3], b[4], b[5]), (b[6], b[7], b[8]),
            (b[9], b[10], b[11]))


@jit
def sign(x: float) -> float:
    """Sign of ``x`` (0 at 0)."""
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


@jit
def coulomb_sign(qd: float, band: float) -> float:
    """The Coulomb friction law's sign: ``clip(qd / band, -1, 1)``, a linear zone of
    half-width ``band`` [rad/s or m/s] around zero velocity (so velocity noise at rest
    does not flip ``+-Fs``), or the exact ``sign(qd)`` (Khalil eq. 31) for ``band <= 0``.
    The one friction law of the kernels, the controller's compensation, the contact
    observer and ``rnea-identify --band`` (:func:`coulomb_signs`)."""
    if band <= 0.0:
        return sign(qd)
    s = qd / band
    if s > 1.0:
        return 1.0
    if s < -1.0:
        return -1.0
    return s


def coulomb_signs(qd: object, band: float) -> NDArray[np.float64]:
    """The Coulomb law's sign ``clip(qd / band, -1, 1)`` of every element of ``qd``
    (``band <= 0``: ``sign(qd)``), as the kernels compute it per joint.

    Parameters
    ----------
    qd : array_like, any shape
        Joint velocities [rad/s or m/s].
    band : float
        Half-width of the linear zone [rad/s or m/s] (``RobotModel.coulomb_band``,
        ``friction.coulomb_band``); 0: the exact sign (Khalil eq. 31).

    Returns
    -------
    ndarray, the shape of ``qd``
        Values in ``[-1, 1]``; multiply by ``Fs`` for the Coulomb torque [N m, N].
    """
    v = np.asarray(qd, dtype=np.float64)
    if band <= 0.0:
        return np.sign(v)
    return np.clip(v / band, -1.0, 1.0)


@jit
def quaternion_matrix(x: float, y: float, z: float, w: float) -> Mat:
    """Rotation (row-major 3x3 tuple) of the unit quaternion ``(x, y, z, w)``
    (Eigen's formula; the package's one: numpy callers take
    ``np.array(quaternion_matrix(...)).reshape(3, 3)``)."""
    tx, ty, tz = 2.0 * x, 2.0 * y, 2.0 * z
    twx, twy, twz = tx * w, ty * w, tz * w
    txx, txy, txz = tx * x, ty * x, tz * x
    tyy, tyz, tzz = ty * y, tz * y, tz * z
    return (1.0 - (tyy + tzz), txy - twz, txz + twy,
            txy + twz, 1.0 - (txx + tzz), tyz - twx,
            txz - twy, tyz + twx, 1.0 - (txx + tyy))
