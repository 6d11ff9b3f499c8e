"""Recursive Newton-Euler inverse dynamics (RNEA) and what derives from it.

``tau = ID(q, qd, qdd)`` for a fixed-base kinematic tree: Featherstone's RNEA
(Rigid Body Dynamics Algorithms, Table 5.1; Caron's pseudo-code in
``rnea-caron-blog``) in body coordinates, with

* gravity as a fictitious base acceleration ``a_0 = -g`` (Khalil 2010, after eq. 24);
* external wrenches applied *to* the bodies, subtracted from the body forces
  (Caron: ``f_i = I_i a_i + v_i x* I_i v_i - f_i^ext``; Khalil eq. 25 uses the
  opposite sign, the wrench of the link *on* the environment);
* rotor inertia and friction added to each joint torque (Khalil eq. 31:
  ``Gamma_j = ... + Ia_j qdd_j + Fs_j sign(qd_j) + Fv_j qd_j``);
* optionally the internal joint wrenches (Barman 2020, eq. 2.1-2.2: the force
  and moment transmitted through each joint, ``F_p``/``tau_p``).

Shapes: ``q`` (nq,), ``qd, qdd, tau`` (nv,) (``n`` each for 1-DoF joints),
``fext`` (nbodies, 6) as ``[force, torque]`` per body in the body frame at its
origin; batch forms take ``(N, nq)`` / ``(N, nv)``. Units: N m for revolute, N
for prismatic joints; a free-flyer's six entries are the wrench ``[force;
torque]`` on its body, in the body frame (Pinocchio's order). Models with
multi-DoF or mimic joints run the same kernels on their kernel tree
(:mod:`~rnea_ros.core.dynamics.rnea_expanded`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._algebra import (
    Base,
    add3,
    base_tuple,
    body_force,
    child_motion,
    cross,
    dot3,
    fixed_base,
    joint_transform,
    mat3,
    mv,
    put3,
    put9,
    sign,
    sub3,
    vec3,
)
from rnea_ros.core._compile import FastCall, inline, jit, jit_entry, jit_entry_fma, jit_fma, scratch
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    F_COULOMB,
    F_VISCOUS,
    PRISMATIC,
    RW_A,
    RW_COLS,
    RW_DW,
    RW_F,
    RW_N,
    RW_P,
    RW_R,
    RW_V,
    RW_W,
    kind,
    parent,
)
from rnea_ros.core.dynamics.batch_kernels import gravity_row, gravity_rows, rnea_rows
from rnea_ros.core.dynamics.moving_base import BaseMotion, base_state
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]

# Work array columns (per body).
_gravity_row = inline(gravity_row)
# The forward step inlined at IR level: as fast as the step written out in place.
_child_motion, _body_force = inline(child_motion), inline(body_force)


@jit
def rnea_pass(fp: Array, q: Array, qd: Array, qdd: Array, base: Base,
              fext: Array, use_fext: bool, drive: bool, tau: Array, work: Array) -> bool:
    """One RNEA evaluation into ``tau``; ``work`` (n, 30) holds per-body state.

    ``base`` is the base's motion ``(w0, v0, dw0, a0)`` in the base frame, gravity
    folded into ``a0`` (:func:`fixed_base`, :func:`~.moving_base.base_state`).

    ``drive`` adds armature and friction (Khalil eq. 31). After the call,
    ``work[i, 24:30]`` is the wrench ``(n, f)`` transmitted through joint ``i``
    onto body ``i``, in body ``i``'s frame. Returns whether ``tau`` is finite.
    """
    forward_pass(fp, q, qd, qdd, base, fext, use_fext, work)
    return backward_pass(fp, qd, qdd, drive, tau, work)


@jit
def forward_pass(fp: Array, q: Array, qd: Array, qdd: Array, base: Base,
                 fext: Array, use_fext: bool, work: Array) -> None:
    """RNEA's forward pass: poses, ``w, v, dw, a`` and body forces ``(n, f)`` into ``work``.

    The recursion starts from the base's motion ``base = (w0, v0, dw0, a0)``
    (Khalil 2010 §7.1: ``V_0`` and ``dV_0`` are its initial values; a fixed
    base has ``w0 = v0 = dw0 = 0`` and ``a0 = -g``).
    """
    n = q.shape[0]
    w0, v0, dw0, a0 = base
    for i in range(n):
        # Forward pass: velocities and accelerations (Caron's pseudo-code).
        R, p = joint_transform(fp, i, q[i])
        put9(work, i, RW_R, R)
        put3(work, i, RW_P, p)
        par = parent(fp, i)
        if par < 0:
            w_p, v_p, dw_p, a_p = w0, v0, dw0, a0
        else:
            w_p, v_p = vec3(work, par, RW_W), vec3(work, par, RW_V)
            dw_p, a_p = vec3(work, par, RW_DW), vec3(work, par, RW_A)
        w, v, dw, a = _child_motion(fp, i, R, p, w_p, v_p, dw_p, a_p, qd[i], qdd[i])
        # Body force f = I a + v x* I v - f_ext.
        nb, fb = _body_force(fp, i, w, v, dw, a)
        if use_fext:
            fb = sub3(fb, vec3(fext, i, 0))
            nb = sub3(nb, vec3(fext, i, 3))
        put3(work, i, RW_W, w)
        put3(work, i, RW_V, v)
        put3(work, i, RW_DW, dw)
        put3(work, i, RW_A, a)
        put3(work, i, RW_N, nb)
        put3(work, i, RW_F, fb)


@jit
def backward_pass(fp: Array, qd: Array, qdd: Array, drive: bool, tau: Array,
                  work: Array) -> bool:
    """RNEA's backward pass over the body forces in ``work``; whether ``tau`` is finite."""
    n = qd.shape[0]
    total = 0.0
    for i in range(n - 1, -1, -1):
        # Backward pass: project on the joint axis, pass the wrench to the parent.
        nb = vec3(work, i, RW_N)
        fb = vec3(work, i, RW_F)
        u = vec3(fp, i, F_AXIS)
        t = dot3(u, nb) if kind(fp, i) != PRISMATIC else dot3(u, fb)
        if drive:
            t += (fp[i, F_ARMATURE] * qdd[i] + fp[i, F_COULOMB] * sign(qd[i])
                  + fp[i, F_VISCOUS] * qd[i])
        tau[i] = t
        total += t
        par = parent(fp, i)
        if par >= 0:
            R = mat3(work, i, RW_R)
            Rf = mv(R, fb)
            Rn = add3(mv(R, nb), cross(vec3(work, i, RW_P), Rf))
            put3(work, par, RW_N, add3(vec3(work, par, RW_N), Rn))
            put3(work, par, RW_F, add3(vec3(work, par, RW_F), Rf))
    return bool(np.isfinite(total))


@jit_entry
def _rnea_call(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, tau: Array) -> bool:
    """The 1 kHz entry: drive terms, no external wrenches (six arguments to unbox).

    Also checks the vector lengths, so the Python side need not; False means
    a wrong length or a non-finite result.
    """
    n = fp.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or g.shape[0] != 3:
        return False
    work = scratch(n, RW_COLS)
    return rnea_pass(fp, q, qd, qdd, fixed_base(g), work[:0], False, True, tau, work)


@jit
def _rnea_general_call(fp: Array, q: Array, qd: Array, qdd: Array, base: Array,
                       fext: Array, use_fext: bool, drive: bool, tau: Array, wrenches: Array,
                       want_wrenches: bool) -> bool:
    """The general entry: ``base`` (12,) is ``[w0, v0, dw0, a0]`` (see :func:`rnea_pass`)."""
    n = q.shape[0]
    work = np.empty((n, RW_COLS))
    ok = rnea_pass(fp, q, qd, qdd, base_tuple(base), fext, use_fext, drive, tau, work)
    if want_wrenches:
        for i in range(n):
            for k in range(3):
                wrenches[i, k] = work[i, RW_F + k]
                wrenches[i, 3 + k] = work[i, RW_N + k]
    return ok


@jit_fma
def gravity_pass(fp: Array, q: Array, g: Array, tau: Array,
                 work: Array) -> bool:
    """``g(q)`` into ``tau``: :func:`rnea_pass` with ``qd = qdd = 0`` and no drive terms,
    by composite first moments (:func:`~.batch_kernels.gravity_row`); whether ``tau``
    is finite. ``q``, ``tau`` C-contiguous (n,), ``work`` (n, 30)."""
    n = q.shape[0]
    return bool(np.isfinite(_gravity_row(fp, q.reshape((1, n)), 0, g, tau.reshape((1, n)), work)))


@jit_entry_fma
def _gravity_call(fp: Array, q: Array, g: Array, tau: Array) -> bool:
    """The 1 kHz entry of :func:`gravity_pass`; False: wrong length or non-finite result."""
    n = fp.shape[0]
    if q.shape[0] != n or g.shape[0] != 3:
        return False
    work = scratch(n, RW_COLS)
    return bool(np.isfinite(_gravity_row(fp, q.reshape((1, n)), 0, g, tau.reshape((1, n)), work)))


_NO_WRENCH = np.zeros((0, 6))
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty  # global lookups are cheaper
_rnea_fast = FastCall(_rnea_call)
_rnea_general = FastCall(_rnea_general_call)
_gravity_fast = FastCall(_gravity_call)


def rnea(model: RobotModel, q: object, qd: object, qdd: object, *,
         gravity: object | None = None, fext: object | None = None,
         base_motion: BaseMotion | None = None) -> Array:
    """Joint torques ``tau`` (nv,) = ID(q, qd, qdd) with gravity, wrenches, armature, friction.

    ``q`` (nq,), ``qd, qdd`` (nv,); ``gravity`` (3,) overrides ``model.gravity``;
    ``fext`` (nbodies, 6) are the external wrenches ``[force, torque]`` applied to
    each body, in its frame;
    ``base_motion`` is the known motion of a moving base (Khalil 2010 §7.1,
    :class:`~.moving_base.BaseMotion`; gravity is then given in the world frame).
    """
    # The 1 kHz path, kept lean: the kernel checks the lengths; the entry point
    # needs C-contiguous float64 vectors, which _asc and the ndim test ensure.
    q, qd, qdd = _asc(q, _f64), _asc(qd, _f64), _asc(qdd, _f64)
    if not q.ndim == qd.ndim == qdd.ndim == 1:
        raise_bad_input(model, q=q, qd=qd, qdd=qdd)
    if model.expanded:
        return expanded.rnea(model, q, qd, qdd, gravity, fext, base_motion)
    tau = _empty(model.nv)
    if fext is None and gravity is None and base_motion is None:
        ok = _rnea_fast.call(model.kernel_floats, q, qd, qdd, model.gravity, tau)
    elif fext is None and base_motion is None:
        ok = _rnea_fast.call(model.kernel_floats, q, qd, qdd, gravity_vector(model, gravity), tau)
    else:
        if q.shape != model.vector_shape or not q.shape == qd.shape == qdd.shape:
            raise_bad_input(model, q=q, qd=qd, qdd=qdd)
        use_fext = fext is not None
        f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
        base = base_state(base_motion, gravity_vector(model, gravity))
        ok = _rnea_general.call(model.kernel_floats, q, qd, qdd, base, f, use_fext, True, tau,
                                _NO_WRENCH, False)
    if not ok:
        raise_bad_input(model, q=q, qd=qd, qdd=qdd)
    return tau


def rnea_with_wrenches(model: RobotModel, q: object, qd: object, qdd: object, *,
                       gravity: object | None = None, fext: object | None = None,
                       base_motion: BaseMotion | None = None) -> tuple[Array, Array]:
    """``(tau (nv,), joint_wrenches (nbodies, 6))``: torques and internal joint wrenches.

    ``joint_wrenches[b]`` is the wrench ``[force, moment]`` that body
    ``parent[b]`` exerts on body ``b`` through its joint, expressed in body
    ``b``'s frame at its origin (on the joint axis) -- Barman's proximal
    reaction ``F_p, tau_p`` (eq. 2.1-2.2). Its projection on the joint axis is
    the actuated part, the rest is carried by the joint's structure.
    """
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    qdd = joint_vector(model, qdd, "qdd")
    base = base_state(base_motion, gravity_vector(model, gravity))
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
    if model.expanded:
        return expanded.general(model, q, qd, qdd, base, f if use_fext else None, True, True)
    tau = np.empty(model.nv)
    wrenches = np.empty((model.nv, 6))
    if not _rnea_general.call(model.kernel_floats, q, qd, qdd, base, f, use_fext,
                              True, tau, wrenches, True):
        raise_non_finite(model, q=q, qd=qd, qdd=qdd)
    return tau, wrenches


def gravity_torques(model: RobotModel, q: object, *, gravity: object | None = None,
                    base_motion: BaseMotion | None = None) -> Array:
    """Generalized gravity ``g(q)`` (nv,): the torques that hold the robot still.

    With ``base_motion``, the torques that hold the joints still *relative to a
    moving base*: ``rnea(q, 0, 0)`` started from the base's motion (Khalil 2010
    §7.1), which adds the base's acceleration and rotation to gravity.
    """
    q = _asc(q, _f64)
    if q.ndim != 1:
        raise_bad_input(model, q=q)
    g = model.gravity if gravity is None else gravity_vector(model, gravity)
    if model.expanded:
        if base_motion is None:
            return expanded.gravity_torques(model, q, g)
        q = joint_vector(model, q, "q")
        zeros = np.zeros(model.nv)
        return expanded.general(model, q, zeros, zeros, base_state(base_motion, g), None,
                                False, False)[0]
    tau = _empty(model.nv)
    if base_motion is not None:
        if q.shape != model.vector_shape:
            raise_bad_input(model, q=q)
        zeros = np.zeros(model.nv)
        ok = _rnea_general.call(model.kernel_floats, q, zeros, zeros, base_state(base_motion, g),
                                _NO_WRENCH, False, False, tau, _NO_WRENCH, False)
    else:
        ok = _gravity_fast.call(model.kernel_floats, q, g, tau)
    if not ok:
        raise_bad_input(model, q=q)
    return tau


def nonlinear_effects(model: RobotModel, q: object, qd: object, *,
                      gravity: object | None = None,
                      base_motion: BaseMotion | None = None) -> Array:
    """``h(q, qd) = C(q, qd) qd + g(q)`` (nv,): rigid-body bias torques, no friction
    (on a moving base: also the base's motion, as :func:`rnea` with ``qdd = 0``)."""
    q = joint_vector(model, q, "q")
    qd = joint_vector(model, qd, "qd")
    base = base_state(base_motion, gravity_vector(model, gravity))
    zeros = np.zeros(model.nv)
    if model.expanded:
        return expanded.general(model, q, qd, zeros, base, None, False, False)[0]
    tau = np.empty(model.nv)
    if not _rnea_general.call(model.kernel_floats, q, qd, zeros, base, _NO_WRENCH,
                              False, False, tau, _NO_WRENCH, False):
        raise_non_finite(model, q=q, qd=qd)
    return tau


def friction_torques(model: RobotModel, qd: object) -> Array:
    """Joint friction ``Fs sign(qd) + Fv qd`` (nv,) (Khalil eq. 31)."""
    qd = joint_vector(model, qd, "qd")
    return np.asarray(model.coulomb * np.sign(qd) + model.viscous * qd, dtype=np.float64)


def rnea_batch(model: RobotModel, q: object, qd: object, qdd: object, *,
               gravity: object | None = None) -> Array:
    """:func:`rnea` over N samples: ``q`` (N, nq), ``qd, qdd`` (N, nv) give ``tau`` (N, nv)."""
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    QDD = joint_batch(model, qdd, "qdd", Q.shape[0])
    g = gravity_vector(model, gravity)
    if model.expanded:
        return expanded.rnea_batch(model, Q, QD, QDD, g, True)
    tau = np.empty_like(Q)
    if not rnea_rows(model.kernel_floats, Q, QD, QDD, g, True, tau):
        raise_non_finite(model, q=Q, qd=QD, qdd=QDD)
    return tau


def gravity_batch(model: RobotModel, q: object, *, gravity: object | None = None) -> Array:
    """:func:`gravity_torques` over N samples: ``q`` (N, nq) gives (N, nv)."""
    Q = joint_batch(model, q, "q")
    if model.expanded:
        return expanded.gravity_batch(model, Q, gravity_vector(model, gravity))
    tau = np.empty_like(Q)
    if not gravity_rows(model.kernel_floats, Q, gravity_vector(model, gravity), tau):
        raise_non_finite(model, q=Q)
    return tau


def nonlinear_effects_batch(model: RobotModel, q: object, qd: object, *,
                            gravity: object | None = None) -> Array:
    """:func:`nonlinear_effects` over N samples: ``q`` (N, nq), ``qd`` (N, nv) give (N, nv)."""
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    if model.expanded:
        return expanded.rnea_batch(model, Q, QD, np.zeros_like(QD),
                                   gravity_vector(model, gravity), False)
    tau = np.empty_like(Q)
    if not rnea_rows(model.kernel_floats, Q, QD, np.zeros_like(Q),
                     gravity_vector(model, gravity), False, tau):
        raise_non_finite(model, q=Q, qd=QD)
    return tau


# The kernel-tree path reuses rnea_pass above, so it is imported last (a cycle otherwise).
from rnea_ros.core.dynamics import rnea_expanded as expanded  # noqa: E402

__all__ = [
    "backward_pass",
    "forward_pass",
    "friction_torques",
    "gravity_batch",
    "gravity_torques",
    "nonlinear_effects",
    "nonlinear_effects_batch",
    "rnea",
    "rnea_batch",
    "rnea_pass",
    "rnea_with_wrenches",
]
