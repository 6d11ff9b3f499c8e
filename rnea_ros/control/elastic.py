"""Control laws for mixed rigid/elastic robots (pure Python, no ROS).

Both take the measured link and motor states and the desired link trajectory
(``q_d`` and its derivatives) and return the motor torques ``tau`` (n,) of
every joint (rigid: joint torque; elastic: motor torque on the link side, see
:mod:`rnea_ros.core.elastic.model` for the convention).

* :class:`HuaController`, hua-2024 section IV: the load-side law (eq. 37-39)
  gives the rigid joints' torques and, through eq. 43, the elastic joints'
  motor references ``theta_d``; the motor-side law (eq. 44-49) tracks them.
  The paper leaves open how ``thetad_d``, ``thetadd_d`` and ``sigma_qe_dot``
  are obtained, and its eq. 39/49 use the measured accelerations: here the
  references are differentiated by backward differences over the control
  period and the accelerations are the caller's estimates (a simulator's, or
  differences of measured velocities). ``C(q, qd)`` is the Christoffel
  Coriolis matrix of the unified bodies, applied in O(n) by
  :func:`rnea_ros.core.dynamics.coriolis.coriolis_product`; the
  rotors' spin couplings enter through Algorithm 1 at the measured velocities.
* :class:`FeedforwardPD`: the exact feedforward of
  :mod:`rnea_ros.core.elastic.feedforward` (motor trajectory and torques from
  ``q_d`` up to its snap) plus PD on the rigid joints' link positions and on
  the elastic joints' motor positions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.laws import Step
from rnea_ros.core.dynamics.coriolis import coriolis_product
from rnea_ros.core.elastic.feedforward import Feedforward
from rnea_ros.core.elastic.model import ElasticModel
from rnea_ros.core.elastic.rnea import elastic_rnea
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


class ElasticState(NamedTuple):
    """Measured state: link ``q, qd`` (n,), motor ``theta, thetad`` (n_e,)."""

    q: Array
    qd: Array
    theta: Array
    thetad: Array


def _gains(value: float | Array, size: int, name: str) -> Array:
    out: Array = np.array(np.broadcast_to(np.asarray(value, dtype=np.float64), (size,)))
    if not np.all(np.isfinite(out)) or np.any(out <= 0.0):
        raise ParameterError(f"{name} must be finite and > 0, got {out.tolist()}")
    return out


class HuaController:
    """hua-2024 section IV inverse-dynamics controller (eq. 37-49), period ``dt`` [s].

    ``lambda_q`` = ``K_Dq^-1 K_Pq`` [1/s] and ``kd_q`` [N m s/rad] per joint (n,);
    ``lambda_theta``, ``kd_theta`` per elastic joint (n_e,).
    """

    def __init__(self, model: ElasticModel, dt: float, *, lambda_q: float | Array,
                 kd_q: float | Array, lambda_theta: float | Array,
                 kd_theta: float | Array) -> None:
        self.model, self.dt = model, float(dt)
        n, ne = model.n, model.n_elastic
        self.lambda_q = _gains(lambda_q, n, "lambda_q")
        self.kd_q = _gains(kd_q, n, "kd_q")
        self.lambda_theta = _gains(lambda_theta, ne, "lambda_theta")
        self.kd_theta = _gains(kd_theta, ne, "kd_theta")
        self.reset()

    def reset(self) -> None:
        """Forget the differentiated references (call before a new run)."""
        self._theta_d: list[Array] = []
        self._sigma_qe: Array | None = None

    def _derivatives(self, theta_d: Array) -> tuple[Array, Array]:
        """Backward differences of ``theta_d``: (rate, acceleration), zero at the start."""
        hist = self._theta_d = [*self._theta_d[-2:], theta_d]
        zero = np.zeros_like(theta_d)
        rate = (hist[-1] - hist[-2]) / self.dt if len(hist) > 1 else zero
        acc = (hist[-1] - 2 * hist[-2] + hist[-3]) / self.dt**2 if len(hist) > 2 else zero
        return rate, acc

    def __call__(self, x: ElasticState, qdd: Array, thetadd: Array, q_d: Array, qd_d: Array,
                 qdd_d: Array) -> Array:
        """Motor torques (n,) from the state, acceleration estimates and the reference."""
        m = self.model
        e = m.elastic_joints
        # Load side, eq. 37-39.
        e_q, ed_q = q_d - x.q, qd_d - x.qd
        qd_r = qd_d + self.lambda_q * e_q
        qdd_r = qdd_d + self.lambda_q * ed_q
        sigma_q = ed_q + self.lambda_q * e_q
        load = elastic_rnea(m, x.q, x.theta, x.qd, x.thetad, qdd_r, thetadd)
        coriolis = coriolis_product(m.unified, x.q, x.qd, qd_r - x.qd)
        tau_qc = load.tau_link + coriolis + self.kd_q * sigma_q
        tau = load.tau - load.tau_link + tau_qc  # rigid joints: eq. 39 with their rotors
        if not m.n_elastic:
            return np.asarray(tau)
        # Motor references, eq. 43, and motor side, eq. 44-49.
        K = m.stiffness[e]
        theta_d = tau_qc[e] / K + x.q[e]
        thetad_d, thetadd_d = self._derivatives(theta_d)
        sigma_qe = sigma_q[e]
        sigma_qe_dot = np.zeros_like(sigma_qe) if self._sigma_qe is None else \
            (sigma_qe - self._sigma_qe) / self.dt
        self._sigma_qe = sigma_qe
        e_th, ed_th = theta_d - x.theta, thetad_d - x.thetad
        thetad_r = thetad_d + self.lambda_theta * e_th + sigma_qe
        thetadd_r = thetadd_d + self.lambda_theta * ed_th + sigma_qe_dot
        sigma_th = thetad_r - x.thetad
        motor = elastic_rnea(m, x.q, x.theta, x.qd, x.thetad, qdd, thetadd_r).tau[e]
        spring = m.spring_torque(x.q, x.theta, x.qd, x.thetad)
        tau[e] = motor - spring + K * (theta_d - x.q[e]) + self.kd_theta * sigma_th
        return np.asarray(tau)


class FeedforwardPD:
    """Exact feedforward plus PD: ``kp``/``kd`` (n,) act on the link position of a rigid
    joint and on the motor position (against ``theta_d``) of an elastic one."""

    def __init__(self, model: ElasticModel, *, kp: float | Array, kd: float | Array) -> None:
        self.model = model
        self.feedforward = Feedforward(model)
        self.kp = _gains(kp, model.n, "kp")
        self.kd = _gains(kd, model.n, "kd")

    def __call__(self, x: ElasticState, q_d: Array, qd_d: Array, qdd_d: Array, qddd_d: Array,
                 qdddd_d: Array) -> Array:
        m = self.model
        e = m.elastic_joints
        ref = self.feedforward(q_d, qd_d, qdd_d, qddd_d, qdddd_d)
        pos, vel = q_d - x.q, qd_d - x.qd
        pos[e] = ref.theta - x.theta
        vel[e] = ref.thetad - x.thetad
        return np.asarray(ref.tau + self.kp * pos + self.kd * vel)




Reference = Callable[[float], Sequence[Array]]


def sinusoid(amplitude: float | Array, omega: float, n: int) -> Reference:
    """``q_d(t) = amplitude sin(omega t)`` on ``n`` joints, with derivatives up to the snap."""
    a = np.broadcast_to(np.asarray(amplitude, dtype=np.float64), (n,))

    def reference(t: float) -> list[Array]:
        s, c = np.sin(omega * t), np.cos(omega * t)
        return [a * s, a * omega * c, -a * omega**2 * s, -a * omega**3 * c, a * omega**4 * s]
    return reference


class ElasticPlant(Protocol):
    """What :func:`closed_loop` needs of a plant (``simulation.ElasticSimulator``
    fits; control does not import simulation): period ``dt`` [s], time ``t`` [s],
    the model, ``state`` ``(q, theta, qd, thetad)``, ``step(tau)`` and the last
    step's ``accelerations`` ``(qdd, thetadd)``."""

    dt: float
    t: float
    model: ElasticModel

    @property
    def state(self) -> tuple[Array, Array, Array, Array]: ...

    @property
    def accelerations(self) -> tuple[Array, Array]: ...

    def step(self, tau: Array) -> object: ...


def closed_loop(law: HuaController | FeedforwardPD, sim: ElasticPlant,
                reference: Reference, seconds: float) -> tuple[Array, Array, Array]:
    """Run ``law`` on ``sim`` (zero-order hold at ``sim.dt``) from its current state.

    Returns ``(times (N,), link errors q_d - q (N, n), torques (N, n))``. The
    Hua controller gets the plant's accelerations of the previous period.
    """
    steps = round(seconds / sim.dt)
    times, errors, torques = np.empty(steps), np.empty((steps, sim.model.n)), \
        np.empty((steps, sim.model.n))
    qdd, thetadd = np.zeros(sim.model.n), np.zeros(sim.model.n_elastic)
    if isinstance(law, HuaController):
        law.reset()
    for k in range(steps):
        t = sim.t
        q, theta, qd, thetad = (x.copy() for x in sim.state)
        x = ElasticState(q, qd, theta, thetad)
        r = reference(t)
        if isinstance(law, HuaController):
            tau = law(x, qdd, thetadd, r[0], r[1], r[2])
        else:
            tau = law(x, *r)
        times[k], errors[k], torques[k] = t, r[0] - q, tau
        sim.step(tau)
        qdd, thetadd = sim.accelerations
    return times, errors, torques




class ElasticStage:
    """Controller pipeline stage of mode ``elastic`` (see :mod:`rnea_ros.control.laws`):
    ``law`` ``feedforward_pd`` (:class:`FeedforwardPD` with ``kp``, ``kd``) or ``hua``
    (:class:`HuaController`; accelerations by backward differences of the measured
    velocities over the state stamps)."""

    def __init__(self, model: ElasticModel, law: str, kp: Array, kd: Array,
                 gains: Sequence[Array]) -> None:
        self.model = model
        self.feedforward_pd = FeedforwardPD(model, kp=kp, kd=kd) if law == "feedforward_pd" \
            else None
        self.hua = None if self.feedforward_pd is not None else HuaController(
            model, 1e-3, lambda_q=gains[0], kd_q=gains[1], lambda_theta=gains[2],
            kd_theta=gains[3])
        self.previous: tuple[float, Array, Array] | None = None

    def reset(self) -> None:
        """Forget the previous state (the Hua law's differences)."""
        self.previous = None
        if self.hua is not None:
            self.hua.reset()

    def __call__(self, step: Step) -> None:
        assert step.q_ref is not None and step.qd_ref is not None and step.qdd_ref is not None
        assert step.theta is not None and step.thetad is not None
        x = ElasticState(step.q, step.qd, step.theta, step.thetad)
        if self.feedforward_pd is not None:
            assert step.qddd_ref is not None and step.qdddd_ref is not None
            tau = self.feedforward_pd(x, step.q_ref, step.qd_ref, step.qdd_ref, step.qddd_ref,
                                      step.qdddd_ref)
        else:
            assert self.hua is not None
            qdd, thetadd = np.zeros(self.model.n), np.zeros(self.model.n_elastic)
            if self.previous is not None and step.t > self.previous[0]:
                dt = step.t - self.previous[0]
                self.hua.dt = dt
                qdd = (step.qd - self.previous[1]) / dt
                thetadd = (step.thetad - self.previous[2]) / dt
            self.previous = (step.t, step.qd.copy(), step.thetad.copy())
            tau = self.hua(x, qdd, thetadd, step.q_ref, step.qd_ref, step.qdd_ref)
        step.model_torque = tau
        step.tau += tau


__all__ = ["ElasticStage", "ElasticState", "FeedforwardPD", "HuaController", "closed_loop",
           "sinusoid"]
