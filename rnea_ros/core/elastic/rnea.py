"""Inverse dynamics of mixed rigid/elastic robots: hua-2024 Algorithm 1 ("ReNEAL").

From link and motor positions, velocities and accelerations
``(q, theta), (qd, thetad), (qdd, thetadd)`` to the motor torques ``tau`` and the
interaction wrenches ``f_b, tau_b`` between the unified rigid bodies.

In body coordinates (Featherstone's RNEA of :mod:`rnea_ros.core.dynamics.rnea` on the
unified bodies, :attr:`ElasticModel.unified`), with for every motor ``m`` of
joint ``j`` on carrier ``c``, ``psi = q_j`` (rigid joint) or ``theta_k``
(``k``-th elastic joint), ``z`` its axis, ``eta`` its gear ratio:

* forward recursion, eq. 2-5 and 10-17: ``w, dw, a`` of every body;
* rotor spin acting on the carrier, the ``psi``-terms of Euler's equation
  (eq. 21-25): ``n_c += I_mz eta (psidd z + psid w_c x z)``;
* backward recursion, eq. 18-26: the wrench ``(f_b, tau_b)`` transmitted through
  each joint and its projection ``tau_link = S^T f_b`` (plus joint friction);
* generalized torques, eq. 27 (rigid) and 29 (elastic), with
  ``z . dw_m = z . dw_c + eta psidd`` (eq. 8-9)::

      rigid     tau_j = tau_link_j + eta I_mz (z . dw_c + eta qdd_j)
      elastic   tau_j = K_k (theta_k - q_j) + D_k (thetad_k - qd_j)
                        + eta I_mz (z . dw_c + eta thetadd_k)

For a motion the robot can make, ``tau_link`` of an elastic joint equals its
spring torque (eq. 28); for any other input the difference is what the spring
would have to add. Shapes: ``q, qd, qdd`` (n,), ``theta, thetad, thetadd`` (n_e,)
in the order of :attr:`ElasticModel.elastic_names`; ``fext`` (n, 6) wrenches
``[force, torque]`` applied to each body in its frame (hua's ``f_e``, eq. 20, 26).

Kernels: :mod:`~rnea_ros.core.elastic._rnea_jit` (``elastic_pass``; the entry
``elastic_call`` behind the ``FastCall`` below, and its lean form ``elastic_lean``
behind the ``LeanCall``, as :func:`~rnea_ros.core.dynamics.rnea.rnea`'s).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import FastCall
from rnea_ros.core._lean import F64_1D, F64_1D_RO, F64_2D, F64_2D_RO, LeanCall
from rnea_ros.core.elastic._rnea_jit import elastic_call, elastic_lean
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.errors import StateError
from rnea_ros.core.inputs import body_wrenches, gravity_vector, joint_vector

Array = NDArray[np.float64]


class ElasticTorques(NamedTuple):
    """Result of :func:`elastic_rnea`: motor torques ``tau`` (n,), link-side joint
    torques ``tau_link`` (n,) and the joint wrenches ``wrenches`` (n, 6)
    ``[f_b, tau_b]`` body ``parent[i]`` exerts on body ``i``, in body ``i``'s frame."""

    tau: Array
    tau_link: Array
    wrenches: Array


_fast = FastCall(elastic_call)
_NO_WRENCH = np.zeros((0, 6))
_asc, _f64, _empty = np.ascontiguousarray, np.float64, np.empty
# The signature the FastCall entry has (the model's arrays and g read-only), so the lean
# entry reuses its compiled code.
_V, _M = F64_1D, F64_2D_RO
_lean = LeanCall(elastic_lean, (_M, _M, _M, _V, _V, _V, _V, _V, _V, F64_1D_RO, F64_2D, _V, _V,
                                F64_2D))


def motor_vector(model: ElasticModel, x: object, name: str) -> Array:
    """``x`` as a float64 array of shape ``(n_e,)``, else :class:`StateError`."""
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (model.n_elastic,):
        raise StateError(f"{name} has shape {a.shape}, expected ({model.n_elastic},): one per "
                         f"elastic joint of '{model.name}' ({', '.join(model.elastic_names)})")
    return a


def elastic_vectors(model: ElasticModel, **arrays: object) -> dict[str, Array]:
    """Each argument checked, in the order given: a name starting with ``theta`` as a
    motor vector (n_e,), any other as a link vector (n,) -- :class:`StateError` naming
    the first of the wrong shape."""
    return {name: motor_vector(model, x, name) if name.startswith("theta")
            else joint_vector(model.links, x, name) for name, x in arrays.items()}


def check_finite(model: ElasticModel, **inputs: Array) -> None:
    """Raise :class:`StateError` naming the first non-finite link or motor coordinate."""
    for name, a in inputs.items():
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            names = model.motor_names if name.startswith("theta") else model.links.joint_names
            raise StateError(f"{name} of '{names[bad[0]]}' is {a[bad[0]]}: not finite")
    raise StateError(f"model '{model.name}': result is not finite for finite inputs")


def elastic_rnea(model: ElasticModel, q: object, theta: object, qd: object, thetad: object,
                 qdd: object, thetadd: object, *, gravity: object | None = None,
                 fext: object | None = None, wrenches: bool = False) -> ElasticTorques:
    """Motor torques of a mixed rigid/elastic robot (hua-2024 Algorithm 1).

    ``wrenches=True`` also returns the joint wrenches (else an empty (0, 6) array).

    Arguments as in Conventions: ``model``, ``q``, ``theta``, ``qd``, ``thetad``, ``qdd``,
    ``thetadd`` ([elastic robots](core.md#elastic-robots)); ``gravity``, ``fext``
    ([rigid robots](core.md#rigid-robots)).

    Parameters
    ----------
    wrenches : bool, default False
        Also return the joint wrenches (else an empty (0, 6) array).

    Returns
    -------
    ElasticTorques
        Motor torques (n,) [N m, N] and, with ``wrenches``, the joint wrenches (nbodies, 6).
    """
    links = model.links
    g = links.gravity if gravity is None else gravity_vector(links, gravity)
    n = model.n
    tau, tau_link = _empty(n), _empty(n)
    out = _empty((n if wrenches else 0, 6))
    if fext is None:
        # The 1 kHz path, as rnea()'s: the lean entry's unboxer accepts C-contiguous
        # float64 vectors (TypeError otherwise: the checked path below), the kernel
        # checks the lengths (False: a wrong length or a non-finite result).
        try:
            ok = _lean.call(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
                            q, theta, qd, thetad, qdd, thetadd, g, _NO_WRENCH, tau, tau_link,
                            out)
        except TypeError:
            pass
        else:
            if not ok:
                _raise_bad_input(model, _asc(q), _asc(theta), _asc(qd), _asc(thetad),
                                 _asc(qdd), _asc(thetadd))
            return ElasticTorques(tau, tau_link, out)
    # Any other input: made C-contiguous float64 (the entry point needs it), then the
    # kernel checks the lengths (plain locals and one chained ndim test: a dict and
    # any() cost ~0.3 us).
    q, theta, qd = _asc(q, _f64), _asc(theta, _f64), _asc(qd, _f64)
    thetad, qdd, thetadd = _asc(thetad, _f64), _asc(qdd, _f64), _asc(thetadd, _f64)
    f, use_fext = (_NO_WRENCH, False) if fext is None else (body_wrenches(links, fext), True)
    if not (q.ndim == theta.ndim == qd.ndim == thetad.ndim == qdd.ndim == thetadd.ndim == 1
            and _fast.call(model.unified.kernel_floats, model.joint_floats, model.motor_floats,
                           q, theta, qd, thetad, qdd, thetadd, g, f, use_fext, tau, tau_link,
                           out)):
        _raise_bad_input(model, q, theta, qd, thetad, qdd, thetadd)
    return ElasticTorques(tau, tau_link, out)


def _raise_bad_input(model: ElasticModel, q: Array, theta: Array, qd: Array, thetad: Array,
                     qdd: Array, thetadd: Array) -> None:
    """The :class:`StateError` explaining why the kernel refused these inputs: the first of
    the wrong shape, else the first non-finite coordinate."""
    args = {"q": q, "theta": theta, "qd": qd, "thetad": thetad, "qdd": qdd, "thetadd": thetadd}
    for name in ("q", "qd", "qdd"):
        joint_vector(model.links, args[name], name)
    for name in ("theta", "thetad", "thetadd"):
        motor_vector(model, args[name], name)
    check_finite(model, **args)


__all__ = ["ElasticTorques", "check_finite", "elastic_rnea", "elastic_vectors", "motor_vector"]
