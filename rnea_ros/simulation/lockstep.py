"""Lockstep by stamped answers: which command steps the simulated plant (issue 35 §11).

In lockstep the simulator node advances one step per command and publishes the new
state. A plain command (``std_msgs/Float64MultiArray``, ros2_control's convention) says
nothing of the state it answers, so any command beyond one per state steps the plant
once more: the controller's watchdog acting after its process stalled longer than its
timeout (a loaded machine), a command repeated. From then on two states go round the
loop, each command applied to a state it was not computed for: the demo's elastic arm
tracked to 1.34e-3 rad instead of 9.38e-7 rad on one run in five beside two busy loops.

With ``lockstep_answers`` the plant steps only on the *answer* to its newest state: a
``sensor_msgs/JointState`` whose ``header.stamp`` is that state's stamp (the controller's
``~/efforts``, ``publish_effort_state``). A message stamped otherwise answers no state
still waiting (a watchdog's hold, stamped with the state it last answered; a second
answer to a state already stepped) and is ignored, counted. Simulated time then advances
exactly once per state, on any schedule.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnea_ros.core.errors import JointNameError, StateError, options
from rnea_ros.parameter_errors import ParameterError

Array = np.ndarray


class LockstepAnswers:
    """The stamp of the newest state waiting for its answer, and the answers' check.

    ``names``: the commanded joints in command order (the simulator's ``joints``);
    :meth:`take` returns an answer's efforts in that order."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.position = {name: k for k, name in enumerate(self.names)}
        self.waiting: int | None = None  # stamp [ns] of the state published last, unanswered
        self.newest: int | None = None  # stamp [ns] of the state published last
        self.ignored = 0  # messages that answered no waiting state
        self.foreign = 0  # of them, stamped after the newest state: another clock's time

    def published(self, stamp_ns: int) -> None:
        """A state stamped ``stamp_ns`` [ns] was published (again, on a resend)."""
        self.waiting = self.newest = stamp_ns

    def take(self, stamp_ns: int, names: Sequence[str], efforts: Sequence[float]) -> Array | None:
        """The efforts [N m or N] (command order, (len(names),)) when the message stamped
        ``stamp_ns`` answers the waiting state, which is then no longer waiting; None
        (counted in :attr:`ignored`) when it answers none. :class:`JointNameError` when
        its joints are not the commanded ones (checked first), :class:`StateError` when
        its efforts are not one finite value per joint (naming the joints). An answer
        stamped after the newest state (counted in :attr:`foreign` too) comes from a node
        whose clock is not the simulated time (a controller without ``use_sim_time``):
        nothing it sends can step the plant."""
        if self.waiting is None or stamp_ns != self.waiting:
            self.ignored += 1
            if self.newest is None or stamp_ns > self.newest:
                self.foreign += 1
            return None
        order = self._order(names)
        values = np.asarray(efforts, dtype=np.float64)
        if values.shape != (len(names),):
            raise StateError(f"answer with {values.size} efforts for {len(names)} joints "
                             "(one per joint)")
        bad = [name for name, x in zip(names, values, strict=True) if not np.isfinite(x)]
        if bad:
            raise StateError(f"answer with a non-finite effort for joints {options(bad)}")
        if order is not None:
            values = values[order]
        self.waiting = None
        return values

    def _order(self, names: Sequence[str]) -> Array | None:
        """Indices putting an answer for ``names`` in command order (None: it is in
        command order); :class:`JointNameError` unless ``names`` are the commanded
        joints, each once."""
        if tuple(names) == self.names:
            return None
        index = {name: k for k, name in enumerate(names)}
        wrong = [n for n in names if n not in self.position]
        missing = [n for n in self.names if n not in index]
        if wrong or missing or len(names) != len(self.names):
            why = "; ".join(part for part in (
                f"unknown {options(wrong)}" if wrong else "",
                f"missing {options(missing)}" if missing else "",
                "a joint named twice" if not (wrong or missing) else "") if part)
            raise JointNameError(f"answer for joints {options(list(names))} ({why}): not the "
                                 f"commanded joints; valid: {options(self.names)}")
        return np.array([index[n] for n in self.names])


def lockstep_answers(lockstep: bool, topic: str, names: Sequence[str]
                     ) -> LockstepAnswers | None:
    """The simulator node's ``lockstep_answers`` (``topic``) for its commanded joints
    ``names``: None when empty; :class:`ParameterError` without ``lockstep``."""
    if not topic:
        return None
    if not lockstep:
        raise ParameterError("parameter 'lockstep_answers': needs 'lockstep: true' (in real "
                             "time the plant steps on its own timer)")
    return LockstepAnswers(names)


def foreign_warning(stamp_ns: int, t: float) -> str:
    """What the node logs for an answer stamped ``stamp_ns`` [ns], after the newest
    state (simulated time ``t`` [s])."""
    return (f"ignored an answer stamped {stamp_ns * 1e-9:.3f} s, after the newest state "
            f"({t:.3f} s): the answering node's clock is not the simulated time "
            "('use_sim_time: true' on it)")


__all__ = ["LockstepAnswers", "foreign_warning", "lockstep_answers"]
