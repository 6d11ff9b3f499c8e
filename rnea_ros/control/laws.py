"""Control laws as pipeline stages.

One control step is a :class:`Step` passed through a list of stages; each
reads the measured state and the reference and adds to (or limits) ``tau``.
The controller builds the list from its mode:

* ``gravity``: :class:`GravityCompensation` [+ :class:`FrictionCompensation`];
* ``inverse_dynamics``: :class:`Reference` -> :class:`InverseDynamicsPD`
  (``tau = ID(q_d, qd_d, qdd_d) + Kp (q_d - q) + Kd (qd_d - qd)``; the model's
  friction is part of ID when friction compensation is on).

* ``elastic``: :class:`Reference` (with jerk and snap) ->
  :class:`rnea_ros.control.elastic.ElasticStage` (motor torques of a robot with
  elastic joints).

Saturation happens after the stages, on the commanded joints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.control.rate_limit import TimeScaling
from rnea_ros.control.trajectory import JointTrajectory, continue_from
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import friction_torques, gravity_torques, rnea
from rnea_ros.core.model.robot_model import RobotModel

Array = NDArray[np.float64]


@dataclass
class Step:
    """One control step, model order: time [s], measured state, reference, torque."""

    model: RobotModel
    t: float
    q: Array
    qd: Array
    q_ref: Array | None = None
    qd_ref: Array | None = None
    qdd_ref: Array | None = None
    tau: Array = field(default_factory=lambda: np.zeros(0))
    model_torque: Array | None = None  # the rigid-body model part, for the oracle
    theta: Array | None = None  # elastic mode: motor positions/velocities (n_e,)
    thetad: Array | None = None
    qddd_ref: Array | None = None  # elastic mode: jerk and snap of the reference
    qdddd_ref: Array | None = None
    base_motion: BaseMotion | None = None  # a moving base (IMU); None: fixed


class Stage(Protocol):
    """A pipeline stage: updates ``step`` in place."""

    def __call__(self, step: Step) -> None: ...


class GravityCompensation:
    """``tau += g(q)`` (on a moving base: the torques holding the joints still relative
    to it, Khalil 2010 §7.1)."""

    def __call__(self, step: Step) -> None:
        g = gravity_torques(step.model, step.q, base_motion=step.base_motion)
        step.model_torque = g
        step.tau += g


class FrictionCompensation:
    """``tau += Fs clip(qd / b, -1, 1) + Fv qd`` at the measured velocity (``b``: the
    model's ``coulomb_band``, ``friction.coulomb_band``; 0: ``Fs sign(qd)``)."""

    def __call__(self, step: Step) -> None:
        step.tau += friction_torques(step.model, step.qd)


class Reference:
    """Samples the active trajectory at the step's time; without one, holds the
    position measured at its first sample since :meth:`release` (entering a mode:
    bumpless, the pose at the switch, not one measured long before). A new
    trajectory continues from the current reference (:func:`continue_from`), so
    the feedforward has no jump."""

    def __init__(self) -> None:
        self.trajectory: JointTrajectory | None = None
        self.last: tuple[Array, Array, Array] | None = None
        self.scaling: TimeScaling | None = None
        self.snap = False  # also sample the jerk and snap (the elastic feedforward needs them)

    def release(self) -> None:
        """Forget the trajectory and the held pose: the next sample holds the position
        measured then (the controller calls this on entering a mode, issue 22 §3)."""
        self.trajectory, self.last = None, None

    def replace(self, trajectory: JointTrajectory, start: float) -> None:
        """Switch to ``trajectory`` (absolute times), continuing from the reference at ``start``."""
        if self.last is not None:
            q, qd, qdd = self.last
            if self.scaling is not None:  # the same real-time motion in path time
                speed, acc = self.scaling.speed, self.scaling.acceleration
                qd, qdd = qd / speed, (qdd - qd / speed * acc) / speed**2
            trajectory = continue_from(trajectory, start, (q, qd, qdd))
        if self.scaling is not None:
            self.scaling.restart(start, start, trajectory)
        self.trajectory = trajectory

    def sample(self, t: float, q: Array) -> tuple[Array, Array, Array]:
        """The reference ``(q, qd, qdd)`` (n,) at time ``t`` [s]; ``q`` is the measured
        position, held while there is no trajectory (not for ``snap``)."""
        if self.trajectory is None:
            if self.last is None:
                self.last = (q.copy(), np.zeros_like(q), np.zeros_like(q))
        elif self.scaling is not None:
            self.last = self.scaling.advance(t, self.trajectory)
        else:
            self.last = self.trajectory.sample(t)
        return self.last

    def __call__(self, step: Step) -> None:
        if self.snap and self.trajectory is not None:
            q, qd, qdd, qddd, qdddd = self.trajectory.derivatives(np.array([step.t]), 4)[:, 0]
            self.last = (q, qd, qdd)
            step.q_ref, step.qd_ref, step.qdd_ref = q, qd, qdd
            step.qddd_ref, step.qdddd_ref = qddd, qdddd
            return
        q, qd, qdd = self.sample(step.t, step.q)
        step.q_ref, step.qd_ref, step.qdd_ref = q, qd, qdd
        if self.snap:
            step.qddd_ref, step.qdddd_ref = np.zeros_like(q), np.zeros_like(q)


class InverseDynamicsPD:
    """``tau += ID(q_d, qd_d, qdd_d) + Kp (q_d - q) + Kd (qd_d - qd)`` (ID on the moving
    base when ``step.base_motion`` is set: the reference is relative to the base).

    Twin: :func:`rnea_ros.control.command.inverse_dynamics_command` writes the same law
    fused into one compiled kernel (fixed base), which the controller runs instead of
    this stage when it can. ``test_fused_inverse_dynamics_equals_the_general_pipeline``
    (test/control/test_command.py) keeps the two equal: change both or neither."""

    def __init__(self, kp: Array, kd: Array) -> None:
        self.kp, self.kd = kp, kd

    def __call__(self, step: Step) -> None:
        assert step.q_ref is not None and step.qd_ref is not None and step.qdd_ref is not None
        ff = rnea(step.model, step.q_ref, step.qd_ref, step.qdd_ref, base_motion=step.base_motion)
        step.model_torque = ff
        step.tau += ff + self.kp * (step.q_ref - step.q) + self.kd * (step.qd_ref - step.qd)


def saturate(tau: Array, limits: Array) -> tuple[Array, int]:
    """Clip ``tau`` to ``[-limits, limits]``; returns the clipped copy and how many were clipped."""
    clipped = np.minimum(np.maximum(tau, -limits), limits)
    return clipped, int((clipped != tau).sum())
