"""The controller node's contact supervision (ROS-free): per joint state, the contact
monitor (:class:`~.monitor.ContactMonitor`), the contact events, and the reaction that
replaces the command while a contact is latched (docs/contacts.md, "In the controller
node").

Reactions (``contact.reaction``), model-order torques then mapped to the commanded
joints, saturated to ``effort_limits`` and slew-limited:

* ``none``: report only, the command is unchanged;
* ``hold``: ``tau = g(q) - D qd`` (gravity + joint damping ``D`` =
  ``contact.hold_damping`` at the current pose): the arm stops and stays where it is,
  yielding to the contact force like a damper. Per joint ``D_j`` is capped at
  ``M_jj(q) / (4 T)`` (``T`` the state period): a damper acting one period late on a
  joint of inertia ``M_jj`` is ``qd[k+1] = qd[k] - a qd[k-1]``, ``a = D T / M_jj``, whose
  poles ``z^2 - z + a = 0`` are real and stable up to ``a = 1/4`` and oscillate beyond
  (arm7's wrist, ``M_77`` = 0.005 kg m^2, chattered at +-0.5 N m, 0.055 rad/s, with
  ``D`` = 10 at 1 kHz and never stopped);
* ``float``: ``tau = g(q)``: the arm floats, pushed away freely by the contact.

Bumpless: the reaction starts from the last command published and every step moves by
at most ``effort_rate_limits * dt`` (``dt`` the state period, clamped to
``[0, contact.max_gap]``), so a contact never causes a step beyond the slew limit. The
reaction is latched until :meth:`ContactSupervisor.rearm` (the node's
``~/rearm_contact``), also when the contact has ended: a robot that hit something must
not resume its motion on its own.

Effort source (``contact.effort_source``): ``measured`` (``joint_states.effort``, by
joint name) or ``commanded`` (the node's own previous command: friction, drive errors
and torque tracking errors of the drives then appear in ``r``; raise the thresholds).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.control.contact.detection import Contact, DetectionSettings, contact_wrench
from rnea_ros.control.contact.monitor import ContactMonitor
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.errors import StateError
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]


def _per_joint(value: Sequence[float], n: int, name: str) -> Array:
    """``value`` as (n,): one value for all or one per joint velocity."""
    v = np.asarray(list(value), dtype=np.float64)
    if v.size == 1:
        return np.full(n, float(v[0]))
    if v.shape != (n,):
        raise ParameterError(f"parameter '{name}' needs 1 or {n} values, got {v.size}")
    return v


@dataclass
class ContactStep:
    """One state's outcome: ``contact`` the current contact or ``None``, ``started``
    True on the state a contact began, ``ended`` True on the state it ended,
    ``reacting`` True while the reaction replaces the command."""

    contact: Contact | None
    started: bool
    ended: bool
    reacting: bool


def refuse_layout(model: rc.RobotModel) -> None:
    """Raise :class:`ParameterError` for a model the node cannot monitor: its merged
    joint state holds one position and one velocity per joint name, so every joint must
    have ``nq = nv = 1`` (a multi-DoF or floating joint has ``nq != nv``, or several)."""
    for j, name in enumerate(model.joint_names):
        nq, nv = int(model.joint_nq[j]), int(model.joint_nv[j])
        if (nq, nv) != (1, 1):
            raise ParameterError(
                f"'contact.enable' is not supported on '{model.name}': joint '{name}' has "
                f"nq = {nq}, nv = {nv}; the controller's joint state carries one position "
                "and one velocity per joint name, so contact monitoring needs revolute, "
                "continuous or prismatic joints only (set contact.enable: false)")


class ContactSupervisor:
    """Contact monitoring and reaction for ``model`` (open chain, 1-DoF joints; any
    other layout raises :class:`ParameterError`, :func:`refuse_layout`).

    ``params``: the controller's :class:`~rnea_ros.parameters.ParameterSet` (``contact.*``,
    checked by the table: ``contact.reaction`` one of its choices);
    ``commanded`` (m,) the model coordinate of each commanded joint; ``effort_limits``,
    ``rate_limits`` (m,) [N m or N, N m/s or N/s] the controller's saturation and slew
    limits (``None``: no slew limit).
    """

    def __init__(self, model: rc.RobotModel, params: Any,
                 commanded: Sequence[int] | NDArray[np.int64], effort_limits: Array,
                 rate_limits: Array | None) -> None:
        c = params.contact
        refuse_layout(model)
        nv = model.nv
        settings = DetectionSettings(
            thresholds=_per_joint(c.thresholds, nv, "contact.thresholds"),
            velocity=_per_joint(c.velocity_gain, nv, "contact.velocity_gain"),
            acceleration=_per_joint(c.acceleration_gain, nv, "contact.acceleration_gain"),
            release=float(c.hysteresis), min_duration=float(c.min_duration))
        self.monitor = ContactMonitor(model, float(c.observer_gain), settings,
                                      max_gap=float(c.max_gap),
                                      coulomb_band=float(params.friction.coulomb_band))
        self.model = self.monitor.model
        self.reaction = str(c.reaction)
        self.measured = c.effort_source == "measured"
        self.damping = _per_joint(c.hold_damping, nv, "contact.hold_damping")
        self.max_gap = float(c.max_gap)
        self.commanded = np.asarray(commanded, dtype=np.int64)
        self.effort_limits = np.asarray(effort_limits, dtype=np.float64)
        self.rate_limits = None if rate_limits is None else np.asarray(rate_limits,
                                                                        dtype=np.float64)
        self.names = [self.model.joint_of_coordinate(j) for j in range(nv)]
        self._effort_maps: dict[tuple[str, ...], Array] = {}
        self._tau = np.zeros(nv)  # the observer's torque (model order)
        self._previous = np.zeros(len(self.commanded))  # the last command (m,)
        self._identity = bool(np.array_equal(self.commanded, np.arange(nv)))
        self._last_t = math.nan
        self._period = math.nan  # the last positive state period [s]
        self._points: dict[str, Array | None] = {}  # per link: the contact point or None
        self.latched: Contact | None = None
        self.contacts = 0  # contacts detected since start
        self.rejected = 0  # states the monitor refused (non-finite effort, ...)
        self.last_error = ""
        self._in = False

    def warm_up(self) -> None:
        """Compile every kernel :meth:`update` reaches (the node's warm-up)."""
        self.monitor.warm_up()
        q = rc.neutral(self.model)
        gravity_torques(self.model, q)
        rc.mass_matrix(self.model, q)
        last = str(self.model.body_names[-1])  # both wrench forms (wrench, force at a point)
        contact_wrench(self.model, q, last, np.zeros(self.model.nv), point=np.zeros(3))
        self.wrench(q, Contact(0.0, last, "", 0, 0.0))

    def effort(self, names: Sequence[str], effort: Sequence[float]) -> Array | None:
        """Model-order torques from a ``JointState``'s ``names``/``effort``; ``None``
        when a model joint is missing or the message has no efforts."""
        if len(effort) != len(names) or not len(effort):
            return None
        key = tuple(names)
        rows = self._effort_maps.get(key)
        if rows is None:
            index = {n: i for i, n in enumerate(names)}
            if any(n not in index for n in self.names):
                return None
            rows = np.array([index[n] for n in self.names], dtype=np.int64)
            self._effort_maps[key] = rows
        return np.asarray(effort, dtype=np.float64)[rows.astype(np.int64)]

    def state(self, q_merged: Array, qd_merged: Array) -> tuple[Array, Array]:
        """The model's ``q`` (nq,), ``qd`` (nv,) from the controller's merged joint state
        (:attr:`rnea_ros.control.controller.TorqueController.merged_state`: one value per
        joint name, model order first; elastic motors after): views, no copy."""
        m = self.model
        return q_merged[:m.nq], qd_merged[:m.nv]

    def update(self, t: float, q: Array, qd: Array, command: Array,
               measured: Array | None = None) -> ContactStep:
        """:meth:`react` then :meth:`observe`: one state at ``t`` [s], ``command`` (m,)
        the command computed for it, overwritten by the reaction while latched."""
        self.react(t, q, qd, command)
        return self.observe(t, q, qd, command, measured)

    def react(self, t: float, q: Array, qd: Array, command: Array) -> bool:
        """Before the command of the state at ``t`` [s] is published: while a reaction
        is latched, write it into ``command`` (m,); returns whether it did."""
        if self.latched is None:
            return False
        dt = t - self._last_t if math.isfinite(self._last_t) else 0.0
        if dt > 0.0:
            self._period = min(dt, self.max_gap)
        self._reaction_command(q, qd, command, min(max(dt, 0.0), self.max_gap))
        return True

    def observe(self, t: float, q: Array, qd: Array, command: Array,
                measured: Array | None = None) -> ContactStep:
        """After the command is out (off the receipt-to-publish path): the monitor on the
        state at ``t`` [s] (``q`` (nq,), ``qd`` (nv,)) with ``command`` (m,), the command
        published, held from ``t`` on (``commanded`` source) or ``measured`` (nv,)
        model-order torques (``measured`` source). A contact detected here latches the
        reaction: :meth:`react` applies it from the next state on (one state period)."""
        if math.isfinite(self._last_t) and t > self._last_t:
            self._period = min(t - self._last_t, self.max_gap)
        self._last_t = t
        if self.measured:
            tau = measured
            if tau is None:
                self.rejected += 1
                self.last_error = "contact.effort_source is 'measured' but joint_states " \
                                  "carries no effort for every joint"
        else:
            tau = self._tau
            if self._identity:
                tau[:] = command
            else:
                tau[:] = 0.0
                tau[self.commanded] = command
        inside = self._in
        if tau is not None:
            try:
                inside = self.monitor.update(t, q, qd, tau)
            except StateError as exc:
                self.rejected += 1
                self.last_error = str(exc)
        contact = self.monitor.contact() if inside else None
        started, ended = inside and not self._in, self._in and not inside
        self._in = inside
        if started:
            self.contacts += 1
            if self.reaction != "none" and self.latched is None:
                self.latched = contact
        self._previous[:] = command
        return ContactStep(contact, started, ended, self.latched is not None)

    def _reaction_command(self, q: Array, qd: Array, command: Array, dt: float) -> None:
        """The reaction's torque into ``command`` (m,), from the command published last,
        saturated and slew-limited (``dt`` [s])."""
        n = self.model.nv
        tau = gravity_torques(self.model, q)
        if self.reaction == "hold":
            tau = tau - self.hold_gains(q) * np.asarray(qd[:n])
        target = np.clip(tau[self.commanded], -self.effort_limits, self.effort_limits)
        previous = self._previous
        if self.rate_limits is not None:
            step = self.rate_limits * dt
            target = previous + np.clip(target - previous, -step, step)
        command[:] = target

    def hold_gains(self, q: Array) -> Array:
        """``hold``'s damping (nv,) [N m s/rad or N s/m]: ``contact.hold_damping`` capped
        per joint at ``M_jj(q) / (4 T)``, ``T`` the last state period (module docstring)."""
        if not math.isfinite(self._period):
            return self.damping
        inertia = np.diagonal(rc.mass_matrix(self.model, q))
        return np.minimum(self.damping, inertia / (4.0 * self._period))

    def rearm(self) -> str:
        """Clear the latched reaction and restart the observer; returns a message."""
        was = self.latched
        self.latched = None
        self._in = False
        self.monitor.reset()
        self._last_t = math.nan
        if was is None:
            return "contact monitor re-armed (no reaction was latched)"
        return f"contact monitor re-armed: reaction '{self.reaction}' on link '{was.link}' " \
               "cleared, the controller's command resumes"

    def wrench(self, q: Array, contact: Contact) -> Array:
        """The contact wrench (6,) [N, N m] at the contact's link (LOCAL_WORLD_ALIGNED
        axes, moment about the link origin): with six or more joint coordinates up to
        the link the least-squares wrench, with fewer a pure force at the link's centre
        of mass (:func:`contact_point`; the minimum-norm wrench would be mostly moment)."""
        link = contact.link
        if link not in self._points:
            self._points[link] = contact_point(self.model, link)
        return contact_wrench(self.model, q, link, self.monitor.r, point=self._points[link])

    def event_json(self, contact: Contact | None, state: str) -> str:
        """The ``~/contact`` message: a JSON object (state, link, joint, onset, peak,
        reaction, latched)."""
        body: dict[str, Any] = {"state": state, "reaction": self.reaction,
                                "latched": self.latched is not None}
        if contact is not None:
            body.update(link=contact.link, joint=contact.joint, onset=contact.since,
                        peak=contact.peak)
        return json.dumps(body)


def contact_point(model: rc.RobotModel, link: str) -> Array | None:
    """The point (3,) [m, link frame] a contact on ``link`` is assumed at: ``None`` (any
    wrench, identified) when six or more joint coordinates move the link, else its centre
    of mass (a pure force there: three unknowns that three or more coordinates see)."""
    body = model.body_names.index(link)
    owner = {int(model.joint_body[j]): j for j in range(model.njoints)}
    coordinates, b = 0, body
    while b >= 0:
        if b in owner:
            coordinates += int(model.joint_nv[owner[b]])
        b = int(model.parent[b])
    return None if coordinates >= 6 else np.asarray(model.com[body], dtype=np.float64)


__all__ = ["ContactStep", "ContactSupervisor", "contact_point", "refuse_layout"]
