"""The free-floating robot: inverse dynamics with an unactuated base (Khalil 2010 §7.2).

A free-floating robot (a humanoid or a quadruped in flight, a space robot, an
eel) is a *base body* with its own inertia plus a tree of joints on it.
Nothing holds the base: given the base's pose and twist, the joint positions,
velocities and accelerations and the external wrenches, the base acceleration
is not free to choose -- it is the one for which the base's Newton-Euler
equations hold with no wrench from the ground (Khalil eq. 83, first row).
Khalil's §7.2 computes it and the joint torques in three O(n) sweeps:

i) forward (eq. 89-90): body poses and twists ``V_j``; the acceleration terms
   that do not depend on the base acceleration, ``zeta_j = V_j x S_j qd_j + S_j qdd_j``
   (spatial form of eq. 89: ``dV_j = X_j dV_i + zeta_j``, eq. 93/98), and the
   wrench terms ``beta_j = f_ext,j - V_j x* I_j V_j`` (eq. 90, with our
   ``f_ext`` applied *to* the body, Khalil's ``f_e`` being the opposite);
ii) backward (eq. 94-96): composite inertias and bias wrenches of each subtree,
   ``I^c_i = I_i + sum_j X_j^T I^c_j X_j`` (eq. 95) and
   ``beta^c_i = beta_i + sum_j X_j^T (beta^c_j - I^c_j zeta_j)`` (eq. 96; the
   extracted text of eq. 96 shows ``- X^T beta^c`` and ``+ X^T I^c zeta``, a sign
   slip: substituting eq. 93 into eq. 92 gives the form above), down to the base,
   ``I^c_0`` being the whole robot locked at ``q`` (Khalil's ``A_11``, eq. 84);
   the base's wrench ``f_0 = I^c_0 dV_0 - beta^c_0`` is zero, so (eq. 97)
   ``dV_0 = (I^c_0)^-1 beta^c_0``;
iii) forward (eq. 98-100): ``dV_j = X_j dV_i + zeta_j``, ``f_j = I^c_j dV_j - beta^c_j``
   (eq. 99), ``tau_j = S_j^T f_j + Ia_j qdd_j + Fs_j sign(qd_j) + Fv_j qd_j`` (eq. 100).

Gravity is folded in as everywhere in this package: the sweeps run on the
fictitious accelerations ``dV - [0; R^T g]`` (Khalil after eq. 24), so eq. 97
gives ``dV_0 - g_0`` and the real base acceleration is that plus gravity.

Two entries, one kernel (``free_floating_pass`` of
:mod:`~rnea_ros.core.dynamics._floating_base_jit`, reached through ``free_floating_call``)
on the kernel tree, so the tree may hold any joint type and mimic followers (their
accelerations are given; a free-flyer root over 1-DoF joints without external wrenches
takes the same pass through its fused twin ``free_floating_free_call``, no tree copy):

* :func:`free_floating_dynamics` -- a model whose root joint is a free-flyer
  (``load_urdf(path, root_joint="free-flyer")``): the root body is the base, its
  inertia the model's; ``q[:7]``, ``v[:6]`` its pose and twist, and the sweeps
  start after the root's six kernel rows;
* :func:`free_floating_rnea` -- a fixed-base tree (its root link the base) plus the
  base's :class:`~rnea_ros.core.model.base_inertia.BodyInertia`, pose and twist.

Conventions (Pinocchio's free-flyer): the base pose ``[x y z qx qy qz qw]`` in the
world, the frame of gravity (a unit quaternion, else
:class:`~rnea_ros.core.errors.StateError`); the base twist ``[v; w]`` in the base
frame (local); ``base_acceleration`` (6,) ``[dv; dw]`` its time derivative, the
spatial acceleration in the base frame (Pinocchio's free-flyer ``ddq[:6]``; the
classical acceleration of the base origin is ``dv + w x v``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core.dynamics._floating_base_jit import (
    B_F,
    B_G,
    B_IO,
    B_M,
    B_N,
    B_V,
    B_W,
    free_floating_call,
    free_floating_free_call,
    free_floating_free_rows,
    free_floating_rows,
)
from rnea_ros.core.dynamics.moving_base import base_vectors
from rnea_ros.core.errors import ModelError, StateError
from rnea_ros.core.expansion import free_root
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    joint_vector,
    raise_non_finite,
)
from rnea_ros.core.model.base_inertia import BodyInertia
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


_free_floating = FastCall(free_floating_call)
_free_floating_free = FastCall(free_floating_free_call)
_NO_WRENCH = np.zeros((0, 6))
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty  # global lookups are cheaper
_new_tuple = tuple.__new__  # a NamedTuple's own __new__ is Python code (~0.3 us more)


# ------------------------------------------------------------------ the API
class FreeFloatingResult(NamedTuple):
    """``base_acceleration`` (6,) ``[dv; dw]`` (base frame, the derivative of the local
    twist; Pinocchio's free-flyer ``ddq[:6]``) and the joint torques ``tau`` (n,)."""

    base_acceleration: Array
    tau: Array


def free_floating_rnea(tree: RobotModel, base_inertia: BodyInertia, base_pose: object,
                       base_twist: object, q: object, v: object, a: object, *,
                       fext: object | None = None, base_fext: object | None = None,
                       gravity: object | None = None) -> FreeFloatingResult:
    """Base acceleration and joint torques of a free-floating robot given as a base body
    plus a fixed-base tree (Khalil 2010 §7.2).

    The tree's joints may be of any type, mimic followers too (the kernel tree). A
    model whose root joint is a free-flyer carries its base itself:
    :func:`free_floating_dynamics`.

    The torques include armature and friction (eq. 100), which do not enter the base
    acceleration. Raises :class:`StateError` for bad input and :class:`ModelError`
    when the whole robot's inertia is singular (e.g. no mass).

    Arguments as in Conventions: ``tree``, ``base_inertia``, ``base_pose``, ``base_fext``
    ([floating base and tree](core.md#floating-base-and-tree)); ``base_twist``, ``q``, ``v``, ``a``,
    ``fext`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    gravity : array_like of shape (3,), optional
        Gravity [m/s^2] in the world, overriding ``tree.gravity``.

    Returns
    -------
    FreeFloatingResult
        Base acceleration (6,) [m/s^2, rad/s^2] and joint torques (nv,) [N m, N].
    """
    _, R, twist = base_vectors(base_pose, base_twist)
    q = joint_vector(tree, q, "q")
    v = joint_vector(tree, v, "v")
    a = joint_vector(tree, a, "a")
    g = gravity_vector(tree, gravity)
    base = np.zeros((1, 25))
    row = base[0]
    row[B_M:B_IO + 6] = base_inertia.packed
    row[B_W:B_W + 3] = twist[3:]
    row[B_V:B_V + 3] = twist[:3]
    row[B_G:B_G + 3] = R.T @ g
    if base_fext is not None:
        wrench = np.asarray(base_fext, dtype=np.float64)
        if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
            raise StateError(f"base_fext must be a finite (6,) wrench [force, torque], "
                             f"got {base_fext!r}")
        row[B_N:B_N + 3] = wrench[3:]
        row[B_F:B_F + 3] = wrench[:3]
    return _solve(tree, 0, q, v, a, g, base, fext)


def free_floating_dynamics(model: RobotModel, q: object, v: object, qdd_joints: object, *,
                           fext: object | None = None, gravity: object | None = None
                           ) -> FreeFloatingResult:
    """Base acceleration and joint torques of a model whose root joint is a free-flyer
    (Khalil 2010 §7.2: eq. 97 for the base, eq. 98-100 for the joints).

    ``model``'s first joint is a free-flyer between the world and the root body
    (``load_urdf(path, root_joint="free-flyer")``), and that body is the floating
    base: its inertia is the model's, nothing else is needed. ``q`` (nq,) and ``v``
    (nv,) are the whole state in Pinocchio's layout (``q[:7] = [x y z qx qy qz qw]``
    the base in the world, ``v[:6] = [v; w]`` its twist in its own frame);
    ``qdd_joints`` (nv - 6,) the accelerations of the other coordinates, in the order
    of ``v[6:]`` (other joints may be of any type, mimic followers too). ``fext``
    (nbodies, 6): a wrench ``[force, torque]`` per body in its frame, the base's in
    row 0; ``gravity`` (3,) in the world overrides ``model.gravity``.

    Returns :class:`FreeFloatingResult`: ``base_acceleration`` (6,) ``[dv; dw]``, the
    ``ddq[:6]`` that :func:`~rnea_ros.core.dynamics.aba.aba` (and ``pin.aba``) give
    for the torques ``[0_6; tau]`` -- no wrench on the base (Khalil's §7.3 direct
    model, eq. 109) -- and ``tau`` (nv - 6,), the joint torques that produce
    ``qdd_joints`` then (armature and friction included, eq. 100). One O(n) pass,
    no mass matrix.

    Raises :class:`ModelError` when the root is not a free-flyer, when another body
    hangs from the world, or when the root joint has armature or friction (eq. 97 has
    no drive on the base); :class:`StateError` for bad input (a quaternion off the
    unit sphere names its joint).

    Arguments as in Conventions: ``model``, ``fext``, ``gravity``
    ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    q : array_like of shape (nq,)
        Whole configuration: ``q[:7] = [x y z qx qy qz qw]`` the base in the world [m], then
        the joints.
    v : array_like of shape (nv,)
        Whole velocity: ``v[:6] = [v; w]`` the base twist in its own frame [m/s, rad/s],
        then the joints.
    qdd_joints : array_like of shape (nv - 6,)
        Accelerations of the non-base coordinates, in the order of ``v[6:]``.

    Returns
    -------
    FreeFloatingResult
        ``base_acceleration`` (6,) [m/s^2, rad/s^2] and joint torques ``tau`` (nv - 6,) [N
        m, N].
    """
    r0, fused = _free_flyer_layout(model)
    # The per-call path, kept lean as rnea's: the kernel checks the lengths (code -2,
    # then _check_lengths names the input); the entry needs C-contiguous float64 vectors.
    q, v, qdd = _asc(q, _f64), _asc(v, _f64), _asc(qdd_joints, _f64)
    if not q.ndim == v.ndim == qdd.ndim == 1:
        _check_lengths(model, 6, q, v, qdd)
    g = model.gravity if gravity is None else gravity_vector(model, gravity)
    if fused and fext is None:  # a free-flyer over 1-DoF joints: the fused entry
        tau, acc = _empty(qdd.shape[0]), _empty(6)
        if _free_floating_free.call(model.kernel_floats, q, v, qdd, g, tau, acc) == 1:
            return _new_tuple(FreeFloatingResult, (acc, tau))
        # refused: the kernel-tree entry below names the cause
    return _solve(model, r0, q, v, qdd, g, _empty((1, 25)), fext)


def free_floating_dynamics_batch(model: RobotModel, q: object, v: object, qdd_joints: object,
                                 *, gravity: object | None = None) -> FreeFloatingResult:
    """:func:`free_floating_dynamics` over N samples in one compiled call (no external
    wrenches): ``q`` (N, nq), ``v`` (N, nv), ``qdd_joints`` (N, nv - 6) give
    ``base_acceleration`` (N, 6) and ``tau`` (N, nv - 6), sample by sample the per-call
    results (the same kernel, :func:`free_floating_rows` looping :func:`free_floating_call`;
    on a free-flyer root over 1-DoF joints, ``free_root``, its fused twin
    :func:`~._floating_base_jit.free_floating_free_rows`).

    Errors as :func:`free_floating_dynamics`'s, for the first sample that fails.

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    q : array_like of shape (N, nq)
        Whole configuration: ``q[:7] = [x y z qx qy qz qw]`` the base in the world [m], then
        the joints.
    v : array_like of shape (N, nv)
        Whole velocity: ``v[:6] = [v; w]`` the base twist in its own frame [m/s, rad/s],
        then the joints.
    qdd_joints : array_like of shape (N, nv - 6)
        Accelerations of the non-base coordinates, in the order of ``v[6:]``.

    Returns
    -------
    FreeFloatingResult
        ``base_acceleration`` (N, 6) and ``tau`` (N, nv - 6).
    """
    r0 = _free_flyer_rows(model)
    Q = joint_batch(model, q, "q")
    V = joint_batch(model, v, "v", Q.shape[0])
    A = np.ascontiguousarray(qdd_joints, dtype=np.float64)
    if A.shape != (Q.shape[0], model.nv - 6):
        raise StateError(f"qdd_joints has shape {A.shape}, expected ({Q.shape[0]}, "
                         f"{model.nv - 6}) (nv - 6: every coordinate but the free-flyer's) "
                         f"for model '{model.name}'")
    g = model.gravity if gravity is None else gravity_vector(model, gravity)
    tau, acc = np.empty_like(A), np.empty((Q.shape[0], 6))
    if _free_flyer_layout(model)[1]:
        bad = free_floating_free_rows(model.kernel_floats, Q, V, A, g, tau, acc)
    else:
        bad = free_floating_rows(model.kernel_floats, model.kernel_map, model.kernel_last_row,
                                 r0, Q, V, A, g, tau, acc)
    if bad >= 0:
        free_floating_dynamics(model, Q[bad], V[bad], A[bad], gravity=g)  # raises, naming it
        raise ModelError(f"model '{model.name}': free_floating_dynamics_batch failed at "
                         f"sample {bad}")  # pragma: no cover (the per-call run raises)
    return FreeFloatingResult(acc, tau)


def _solve(model: RobotModel, r0: int, q: Array, v: Array, a: Array, g: Array,
           base: Array, fext: object | None) -> FreeFloatingResult:
    """Run the kernel (:func:`free_floating_call`; ``a`` and the torques are the
    coordinates' after the root's when ``r0 > 0``) and explain a refusal."""
    off = 6 if r0 > 0 else 0  # the free-flyer root's six coordinates are not in a
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
    tau = _empty(a.shape[0])
    acc = _empty(6)
    code = _free_floating.call(model.kernel_floats, model.kernel_map, model.kernel_last_row,
                               r0, off, q, v, a, g, base, f, use_fext, tau, acc)
    if code != 1:
        if code == -2:
            _check_lengths(model, off, q, v, a)
        if code == -1:
            model.check_configuration(q)  # names the joint
        if not all(np.all(np.isfinite(x)) for x in (q, v, a)):
            raise_non_finite(model, q=q, v=v, a=np.r_[np.zeros(off), a])
        raise ModelError(f"model '{model.name}': the free-floating robot's composite inertia "
                         "is singular (no mass, or a result is not finite)")
    return _new_tuple(FreeFloatingResult, (acc, tau))  # FreeFloatingResult(acc, tau), faster


def _check_lengths(model: RobotModel, off: int, q: Array, v: Array, a: Array) -> None:
    """Raise the :class:`StateError` naming the input of the wrong shape: ``q`` (nq,),
    ``v`` (nv,), ``a`` (nv - off,) (``qdd_joints`` of a free-flyer model, ``off = 6``)."""
    joint_vector(model, q, "q")
    joint_vector(model, v, "v")
    if off == 0:
        joint_vector(model, a, "a")
    if a.shape != (model.nv - off,):
        raise StateError(f"qdd_joints has shape {a.shape}, expected ({model.nv - off},) "
                         f"(nv - 6: every coordinate but the free-flyer's) for model "
                         f"'{model.name}'")


def _free_flyer_rows(model: RobotModel) -> int:
    """The first kernel row after a free-flyer root's six (checked once per model)."""
    return _free_flyer_layout(model)[0]


def _free_flyer_layout(model: RobotModel) -> tuple[int, bool]:
    """:func:`_free_flyer_rows`, and whether the kernel tree is a free-flyer root over
    1-DoF joints (``free_root``: the fused entries apply). Checked once per model."""
    known: tuple[int, bool] | None = vars(model).get("_free_flyer_layout")  # cached on the
    if known is not None:  # immutable model (a WeakKeyDictionary's lookup: ~0.1 us more)
        return known
    where = f"free_floating_dynamics: model '{model.name}'"
    root = model.joint_names[0]
    if model.joint_types[0] != "free-flyer" or model.parent[model.joint_body[0]] >= 0:
        raise ModelError(f"{where} has root joint '{root}' ({model.joint_types[0]}), not a "
                         "free-flyer: load it with load_urdf(..., root_joint='free-flyer'), or "
                         "give the base separately to free_floating_rnea(tree, base_inertia, ...)")
    others = [model.body_names[b] for b in range(model.nbodies)
              if model.parent[b] < 0 and b != model.joint_body[0]]
    if others:
        raise ModelError(f"{where}: bodies {', '.join(repr(b) for b in others)} hang from the "
                         "fixed world besides the free-flyer's: the robot is not free floating")
    for key in ("armature", "coulomb", "viscous"):
        values = getattr(model, key)[:6]
        if np.any(values != 0.0):
            raise ModelError(f"{where}: root joint '{root}' has {key} {values.tolist()}; "
                             "Khalil's eq. 97 has no drive on the floating base (set it to 0)")
    known = (int(model.kernel_last_row[model.joint_body[0]]) + 1, free_root(model))
    vars(model)["_free_flyer_layout"] = known
    return known


__all__ = [
    "FreeFloatingResult",
    "free_floating_dynamics",
    "free_floating_dynamics_batch",
    "free_floating_rnea",
]
