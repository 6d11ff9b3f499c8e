"""Forward dynamics ``qdd = FD(q, qd, tau)`` by the articulated-body algorithm (ABA).

The O(n) recursive form: Featherstone, Rigid Body Dynamics Algorithms,
Table 7.1; Khalil 2010 section 3.3.2 derives the same three recursions
(eq. 32-52: forward velocities and bias terms, backward articulated inertias
``J*`` and bias forces ``beta*``, forward accelerations). Spatial vectors are
6-vectors ``[angular; linear]`` in body coordinates. Rotor inertia enters the
joint-space denominator ``D_i = S_i^T U_i + Ia_i``; friction is subtracted from
the applied torque, so ``FD(q, qd, rnea(q, qd, qdd)) == qdd``.

The Coulomb term uses ``sign(qd)`` and is 0 at ``qd = 0``: stiction is not
modelled. Shapes: ``q`` (nq,), ``qd, tau`` (nv,), ``fext`` (nbodies, 6)
``[force, torque]`` applied to each body in its frame; batch forms (N, nq) /
(N, nv).

Multi-DoF joints: ABA on the kernel tree (:mod:`rnea_ros.core.expansion`),
whose sub-joint accelerations are ``a - corr(v)``: the result is
``a = a_kernel + corr(v)``, and the torque handed to a sub-joint is
``tau - Ia corr(v)`` so that its armature acts on ``a``. Mimic joints couple
coordinates in a way the recursion cannot articulate: :func:`aba` then solves
``M qdd = tau - b`` (:func:`~rnea_ros.core.dynamics.forward_dynamics.forward_dynamics`).

Kernels: :mod:`~rnea_ros.core.dynamics._aba_jit` (entries ``aba_call``,
``aba_tree_call`` behind the two ``FastCall`` objects below, ``aba_rows``, ``aba_tree_rows``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core._lean import F64_1D, F64_1D_RO, F64_2D, F64_2D_RO, I64_1D_RO, LeanCall
from rnea_ros.core.dynamics._aba_jit import (
    aba_call,
    aba_rows,
    aba_tree_call,
    aba_tree_rows,
)
from rnea_ros.core.dynamics._lean_jit import aba_lean, aba_tree_lean
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.inputs import (
    body_wrenches,
    gravity_vector,
    joint_batch,
    raise_bad_input,
    raise_non_finite,
)
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


_aba_fast = FastCall(aba_call)
_aba_tree_fast = FastCall(aba_tree_call)
_NO_WRENCH = np.zeros((0, 6))
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty
_V, _G, _M, _W = F64_1D, F64_1D_RO, F64_2D_RO, F64_2D  # as rnea.py's
_lean_aba = LeanCall(aba_lean, (_M, _V, _V, _V, _G, _W, _V))
_lean_aba_tree = LeanCall(aba_tree_lean, (_M, _M, I64_1D_RO, _V, _V, _V, _G, _W, _V))


def aba(model: RobotModel, q: object, qd: object, tau: object, *,
        gravity: object | None = None, fext: object | None = None) -> Array:
    """Joint accelerations ``qdd`` (nv,) under torques ``tau`` (nv,), recursively in O(n)
    (through the mass matrix for a model with mimic joints); ``q`` (nq,).

    Arguments as in Conventions: ``model``, ``q``, ``qd``, ``tau``, ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Returns
    -------
    qdd : ndarray of shape (nv,)
        Joint accelerations [rad/s^2, m/s^2].

    Examples
    --------
    >>> import numpy as np
    >>> import rnea_ros.core as rc
    >>> model = rc.load_urdf("urdf/arm7.urdf")
    >>> q, qd = np.full(model.nq, 0.3), np.full(model.nv, 0.1)
    >>> tau = rc.rnea(model, q, qd, np.ones(model.nv))
    >>> bool(np.allclose(rc.aba(model, q, qd, tau), 1.0))
    True
    """
    if fext is None and not model.mimic_joints:
        # The lean path (see rnea.rnea): C-contiguous float64 vectors, else TypeError
        # and the checked path below; the kernel checks the lengths.
        g = model.gravity if gravity is None else gravity_vector(model, gravity)
        qdd = _empty(model.nv)
        try:
            if model.expanded:
                ok = _lean_aba_tree.call(model.kernel_floats, model.kernel_map,
                                         model.kernel_last_row, q, qd, tau, g, _NO_WRENCH,
                                         qdd) == 1
            else:
                ok = _lean_aba.call(model.kernel_floats, q, qd, tau, g, _NO_WRENCH, qdd)
        except TypeError:
            pass
        else:
            if not ok:
                raise_bad_input(model, q=_asc(q), qd=_asc(qd), tau=_asc(tau))
            return qdd
    q, qd, tau = _asc(q, _f64), _asc(qd, _f64), _asc(tau, _f64)
    if not q.ndim == qd.ndim == tau.ndim == 1:
        raise_bad_input(model, q=q, qd=qd, tau=tau)
    if model.mimic_joints:
        return forward_dynamics(model, q, qd, tau, gravity=gravity, fext=fext)
    g = model.gravity if gravity is None else gravity_vector(model, gravity)
    use_fext = fext is not None
    f = body_wrenches(model, fext) if use_fext else _NO_WRENCH
    qdd = _empty(model.nv)
    if model.expanded:
        ok = _aba_tree_fast.call(model.kernel_floats, model.kernel_map, model.kernel_last_row,
                                 q, qd, tau, g, f, use_fext, qdd) == 1
    else:
        ok = _aba_fast.call(model.kernel_floats, q, qd, tau, g, f, use_fext, qdd)
    if not ok:
        raise_bad_input(model, q=q, qd=qd, tau=tau)
    return qdd


def aba_batch(model: RobotModel, q: object, qd: object, tau: object, *,
              gravity: object | None = None) -> Array:
    """:func:`aba` over N samples: ``q`` (N, nq), ``qd, tau`` (N, nv) give ``qdd`` (N, nv).

    Arguments as in Conventions: ``model``, ``gravity`` ([rigid robots](core.md#rigid-robots));
    ``q``, ``qd``, ``tau`` ([batches of samples](core.md#batches-of-samples)).

    Returns
    -------
    qdd : ndarray of shape (N, nv)
        Joint accelerations [rad/s^2, m/s^2], a row per sample.
    """
    Q = joint_batch(model, q, "q")
    QD = joint_batch(model, qd, "qd", Q.shape[0])
    TAU = joint_batch(model, tau, "tau", Q.shape[0])
    if model.mimic_joints:
        return forward_dynamics_batch(model, Q, QD, TAU, gravity=gravity)
    QDD = np.empty_like(QD)
    if model.expanded:
        if not aba_tree_rows(model.kernel_floats, model.kernel_map, model.kernel_last_row, Q, QD,
                             TAU, gravity_vector(model, gravity), np.zeros((0, 6)), False, QDD):
            raise_non_finite(model, q=Q, qd=QD, tau=TAU)
        return QDD
    if not aba_rows(model.kernel_floats, Q, QD, TAU,
                    gravity_vector(model, gravity), np.zeros((0, 6)), False, QDD):
        raise_non_finite(model, q=Q, qd=QD, tau=TAU)
    return QDD
