"""Compiled-path building blocks: the packed model layout and 3-vector helpers.

The kernels of :mod:`rnea_ros.core.dynamics.rnea`, :mod:`~rnea_ros.core.dynamics.crba` and
:mod:`~rnea_ros.core.dynamics.aba` are numba ``njit`` functions over one packed array
per model, ``fp`` (n, 30) float64, built once by :func:`pack_model`: one row
per joint/body, columns given by the ``F_*`` offsets below: placement rotation
(row-major) and translation, joint axis, mass ``m``, first moment ``h = m c``,
rotational inertia about the body origin ``I_o`` (xx, yy, zz, xy, xz, yz),
armature, Coulomb and viscous friction, then the parent index and the joint
kind (small integers stored exactly as floats, so a kernel takes a single
model argument: numba's per-argument unboxing is a large part of a call).
The kind is ``PRISMATIC``, ``REVOLUTE`` (any axis) or ``REVOLUTE_X/Y/Z`` for
an axis along ``+-x/y/z`` of the joint frame, whose rotation costs a third of
the general one (as Pinocchio's ``JointModelRX/RY/RZ``).

Small vectors are tuples, so the helpers return tuples and nothing is
allocated on the heap inside the recursions (Featherstone-style names:
``w`` angular velocity, ``v`` linear velocity of the body-fixed point at the
origin, ``dw``/``a`` their spatial-acceleration counterparts, ``n``/``f``
moment/force of a spatial force).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import cgutils, errors, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numpy.typing import NDArray

PRISMATIC = 0
REVOLUTE = 1
REVOLUTE_X = 2
REVOLUTE_Y = 3
REVOLUTE_Z = 4

F_R = 0  # placement rotation, 9 (row-major)
F_P = 9  # placement translation, 3
F_AXIS = 12  # joint axis, 3
F_MASS = 15  # mass, 1
F_H = 16  # first moment m*c, 3
F_IO = 19  # inertia about the body origin, 6: xx yy zz xy xz yz
F_ARMATURE = 25
F_COULOMB = 26
F_VISCOUS = 27
F_PARENT = 28  # parent body index, -1 for the base
F_KIND = 29  # joint kind
N_FLOATS = 30

Fn = TypeVar("Fn", bound=Callable[..., Any])



def _cache_available() -> bool:
    """Whether numba can keep this package's kernels on disk: not when
    ``RNEA_ROS_NO_JIT_CACHE=1``, nor when it finds no writable directory (a read-only
    install, a user without a writable home, no ``NUMBA_CACHE_DIR``) -- numba would then
    refuse to import the package; it compiles at every start instead, with a warning."""
    if os.environ.get("RNEA_ROS_NO_JIT_CACHE", "") == "1":
        return False
    from numba.core.caching import FunctionCache
    try:
        FunctionCache(_cache_available)  # type: ignore[no-untyped-call]  # numba picks, as @jit
    except RuntimeError:
        warnings.warn(
            "numba finds no writable directory for its cache (the package's __pycache__ "
            "and the user's ~/.cache are not writable): every start compiles the kernels "
            "again (seconds to a minute). Set NUMBA_CACHE_DIR to a writable directory.",
            RuntimeWarning, stacklevel=2)
        return False
    return True


# The on-disk cache makes start-up cheap after the first run; RNEA_ROS_NO_JIT_CACHE=1 disables it.
_CACHE = _cache_available()


def _plain_int(t: Any) -> Any:
    """An integer literal type as its plain integer type; any other type as it is."""
    if isinstance(t, types.IntegerLiteral):
        return types.unliteral(t)  # type: ignore[no-untyped-call]
    return t


def _by_type(dispatcher: Any) -> Any:
    """Have a compiled caller's call of ``dispatcher`` compile (or load) one specialisation
    per integer argument *type*, not one per constant.

    numba types a constant argument of a call between kernels as its literal value
    (``vec3(fp, i, F_AXIS)``: ``Literal[int](12)``) and compiles the callee once per
    value: ``vec3`` 21 times, ``put3`` 15 times for one node of the elastic robot, each a
    module of its own (~50 ms cold). LLVM inlines such helpers into their callers and
    folds the constants there either way. Boolean flags keep their literal
    specialisations (few, and numba prunes the branches they decide in kernels too large
    to inline). A callee whose body types only with a literal (a heterogeneous tuple
    indexed by an argument) falls back to the literal specialisation.
    """
    typed = dispatcher.get_call_template

    def get_call_template(args: Any, kws: Any) -> Any:
        plain = tuple(_plain_int(a) for a in args)
        plain_kws = {k: _plain_int(v) for k, v in kws.items()}
        if plain == tuple(args) and plain_kws == kws:
            return typed(args, kws)
        try:
            return typed(plain, plain_kws)
        except errors.TypingError:
            return typed(args, kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher


def jit(fn: Fn) -> Fn:
    """``numba.njit`` with the project's options (cached, no GIL, numpy error model)."""
    return cast(Fn, _by_type(numba.njit(cache=_CACHE, nogil=True, error_model="numpy")(fn)))


def jit_fma(fn: Fn) -> Fn:
    """:func:`jit` with fused multiply-add contraction (numba's ``contract`` fast-math flag only).

    Each ``a * b + c`` may become one FMA, rounded once: results move by a few
    ulp (~1e-16 relative), nothing else changes -- NaN and inf still propagate,
    so a kernel can still report a non-finite result. Helpers called from such
    a kernel keep their own flags unless inlined with :func:`inline`.
    """
    return cast(Fn, _by_type(numba.njit(cache=_CACHE, nogil=True, error_model="numpy",
                                        fastmath={"contract"})(fn)))


def jit_entry(fn: Fn) -> Fn:
    """:func:`jit` for a per-call entry point: the GIL is kept, since releasing and
    re-taking it costs ~35 ns, more than a microsecond call can gain by it."""
    return cast(Fn, _by_type(numba.njit(cache=_CACHE, error_model="numpy")(fn)))


def jit_entry_fma(fn: Fn) -> Fn:
    """:func:`jit_entry` with :func:`jit_fma`'s contraction, for entries whose
    kernels are FMA-compiled (contraction can reach the passes LLVM inlines)."""
    return cast(Fn, _by_type(numba.njit(cache=_CACHE, error_model="numpy",
                                        fastmath={"contract"})(fn)))


def inline(helper: Any) -> Any:
    """A copy of ``helper`` (jitted or plain) that numba inlines into its callers
    (IR level), so it is compiled with the caller's flags (e.g. :func:`jit_fma`'s)."""
    return numba.njit(inline="always")(getattr(helper, "py_func", helper))


def joint_kind(prismatic: bool, axis: NDArray[np.float64]) -> int:
    """Kernel joint kind for a joint with unit ``axis``."""
    if prismatic:
        return PRISMATIC
    for k, kind in enumerate((REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)):
        if abs(axis[k]) == 1.0 and np.count_nonzero(axis) == 1:  # exactly +-e_k
            return kind
    return REVOLUTE


def pack_model(
    parent: NDArray[np.int64], kind: NDArray[np.int64], R: NDArray[np.float64],
    p: NDArray[np.float64], axis: NDArray[np.float64], mass: NDArray[np.float64],
    com: NDArray[np.float64], inertia: NDArray[np.float64], armature: NDArray[np.float64],
    coulomb: NDArray[np.float64], viscous: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Pack a model into ``fp`` (see the module docstring)."""
    n = parent.shape[0]
    fp = np.zeros((n, N_FLOATS))
    fp[:, F_R:F_R + 9] = R.reshape(n, 9)
    fp[:, F_P:F_P + 3] = p
    fp[:, F_AXIS:F_AXIS + 3] = axis
    fp[:, F_MASS] = mass
    fp[:, F_H:F_H + 3] = mass[:, None] * com
    for i in range(n):
        c = com[i]
        Io = inertia[i] + mass[i] * (float(c @ c) * np.eye(3) - np.outer(c, c))
        fp[i, F_IO:F_IO + 6] = (Io[0, 0], Io[1, 1], Io[2, 2], Io[0, 1], Io[0, 2], Io[1, 2])
    fp[:, F_ARMATURE] = armature
    fp[:, F_COULOMB] = coulomb
    fp[:, F_VISCOUS] = viscous
    fp[:, F_PARENT] = parent
    fp[:, F_KIND] = kind
    return fp


Vec = tuple[float, float, float]
Mat = tuple[float, float, float, float, float, float, float, float, float]
Motion = tuple[Vec, Vec]  # a spatial motion or force as (angular, linear) / (moment, force)
Base = tuple[Vec, Vec, Vec, Vec]  # the base's (w0, v0, dw0, a0), gravity folded into a0
Array = NDArray[np.float64]


@jit
def parent(fp: NDArray[np.float64], i: int) -> int:
    """Parent body of body ``i`` (-1: the base)."""
    return int(fp[i, F_PARENT])


@jit
def kind(fp: NDArray[np.float64], i: int) -> int:
    """Joint kind of joint ``i``."""
    return int(fp[i, F_KIND])


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


STACK_ROWS = 32  # bodies that fit the per-call scratch on the stack
TREE_STACK_ROWS = 80  # kernel-tree rows that fit :func:`tree_scratch` (a free-flyer humanoid)


def _stack_intrinsic(capacity: int, ndim: int) -> Callable[[int, int], NDArray[np.float64]]:
    """An intrinsic ``(rows, cols)`` -> float64 array with ``ndim`` dimensions in the
    calling kernel's stack frame (``capacity * cols`` doubles reserved in its entry
    block); ``cols`` a literal (1 for a vector)."""

    @intrinsic
    def stack_array(typingctx: Any, rows: Any, cols: Any) -> Any:
        if not isinstance(cols, types.IntegerLiteral) or not isinstance(rows, types.Integer):
            return None
        ncols = cols.literal_value
        aryty = types.Array(types.float64, ndim, "C")

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = cgutils.alloca_once(  # type: ignore[no-untyped-call]
                builder, ir.DoubleType(), size=capacity * ncols)
            intp = context.get_value_type(types.intp)
            nrows = context.cast(builder, args[0], signature.args[0], types.intp)
            ary = make_array(aryty)(context, builder)  # type: ignore[no-untyped-call]
            shape = [nrows, ir.Constant(intp, ncols)] if ndim == 2 else [nrows]
            strides = ([ir.Constant(intp, 8 * ncols), ir.Constant(intp, 8)] if ndim == 2
                       else [ir.Constant(intp, 8)])
            populate_array(  # type: ignore[no-untyped-call]
                ary, data=data, shape=shape, strides=strides,
                itemsize=ir.Constant(intp, 8), meminfo=None)
            return ary._getvalue()

        return aryty(rows, cols), codegen

    return cast(Callable[[int, int], NDArray[np.float64]], stack_array)


_stack_matrix = _stack_intrinsic(STACK_ROWS, 2)
_tree_matrix = _stack_intrinsic(TREE_STACK_ROWS, 2)
_tree_vector = _stack_intrinsic(TREE_STACK_ROWS, 1)


@numba.njit(inline="always")  # inlined, so the stack is the calling kernel's
def scratch(rows: int, cols: int) -> NDArray[np.float64]:
    """Uninitialised ``(rows, cols)`` work array for a per-call entry point: on the
    calling kernel's stack when ``rows <= STACK_ROWS`` (no heap allocation, ~60 ns
    less), else ``np.empty``. Valid until that kernel returns: never return it or
    keep it. ``cols`` must be a compile-time constant (a module-level int).

    The kernel must write every entry before reading it (unwritten stack memory
    is undefined to the optimiser; ``np.empty``'s garbage is merely stale).
    """
    if rows <= STACK_ROWS:
        return _stack_matrix(rows, cols)
    return np.empty((rows, cols))


@numba.njit(inline="always")
def tree_scratch(rows: int, cols: int) -> NDArray[np.float64]:
    """:func:`scratch` for the kernel-tree entries (multi-DoF and mimic joints), on
    the stack up to ``TREE_STACK_ROWS`` rows."""
    if rows <= TREE_STACK_ROWS:
        return _tree_matrix(rows, cols)
    return np.empty((rows, cols))


@numba.njit(inline="always")
def tree_vector(rows: int) -> NDArray[np.float64]:
    """An uninitialised ``(rows,)`` vector, as :func:`tree_scratch`."""
    if rows <= TREE_STACK_ROWS:
        return _tree_vector(rows, 1)
    return np.empty(rows)


class FastCall:
    """Call a jitted kernel through its compiled entry point, skipping numba's
    per-call type dispatch (about 0.07 us per array argument).

    Use ``fast.call(*args)``. Only for wrappers that always pass the same
    argument types: float64 or int64 C-contiguous arrays of fixed dimensions
    and Python scalars of fixed type (the read-only flag may vary: it does not
    change the machine code). The first call goes through the dispatcher, which
    compiles (or loads from the cache) the specialisation; ``call`` then
    becomes its entry point.
    """

    def __init__(self, dispatcher: Any) -> None:
        self.dispatcher = dispatcher
        self.call: Callable[..., Any] = self._first_call

    def _first_call(self, *args: Any) -> Any:
        result = self.dispatcher(*args)
        types = tuple(numba.typeof(a) for a in args)  # type: ignore[no-untyped-call]
        self.call = self.dispatcher.overloads[types].entry_point
        return result
