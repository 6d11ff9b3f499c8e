"""Closed-loop robots in ``rnea-bag``: the URDF is the spanning tree, a loop file
(``--loops FILE``, or ``<urdf stem>.loops.yaml`` next to ``--urdf``) closes it.

The analysis is over the **active** joints: the bag's joint states must carry them
(position, and velocity unless differentiated); per sample the passive joints are
solved from the active positions (Newton on the loop closure, warm-started from the
previous sample, so a recording stays in one assembly mode; the first sample starts from
the bag's passive positions when it has them, else from the loop file's reference), then
``tau_a = G^T ID_tree`` (:func:`~rnea_ros.core.coupling.loop_dynamics.loop_rnea_batch`),
``g_a = G^T g_tree`` and ``tau_a``'s time derivative (Savitzky-Golay, the window and order
of the positions', applied to the model torque: the core has no closed-loop tau-dot).
Passive positions recorded in the bag are compared with the solved ones (the report's
"Closed loops" section). A sample whose loops cannot close (or only at a singular
configuration) gives NaN torques and is counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_dynamics import loop_rnea_batch
from rnea_ros.core.coupling.loop_file import load_loops, loop_file_path
from rnea_ros.core.coupling.loop_kinematics import solve_loops
from rnea_ros.core.coupling.loops import ClosedLoopModel
from rnea_ros.core.errors import LoopClosureError, LoopError
from rnea_ros.core.model.joints import MimicJoint
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.tools.bag.differentiation import derivatives
from rnea_ros.tools.bag.errors import BagError

Array = NDArray[np.float64]


def bag_loops(model: RobotModel, loops: str | None, urdf: Path | None) -> ClosedLoopModel | None:
    """The closed-loop model for ``--loops``: a file; ``none``: no loops; not given: the
    loop file next to ``--urdf`` if there is one. :class:`BagError` (one line) for a file
    that cannot be read or does not fit the URDF."""
    if loops is not None and loops.lower() == "none":
        return None
    path = Path(loops) if loops is not None else \
        (loop_file_path(urdf) if urdf is not None else None)
    if path is None or (loops is None and not path.is_file()):
        return None
    try:
        return load_loops(model, path)
    except LoopError as exc:
        raise BagError(f"--loops: {exc}") from None


@dataclass(frozen=True)
class ActiveJoints:
    """A closed-loop robot as the report sees it: its active joints (``Joints``)."""

    loops: ClosedLoopModel
    name: str = field(init=False)
    joint_names: tuple[str, ...] = field(init=False)
    joint_types: tuple[str, ...] = field(init=False)
    effort_limit: Array = field(init=False)
    nv: int = field(init=False)
    mimic_joints: Mapping[str, MimicJoint] = field(init=False)  # none: loops refuse mimic

    def __post_init__(self) -> None:
        tree, index = self.loops.tree, self.loops.active_index
        set_ = object.__setattr__
        set_(self, "name", tree.name)
        set_(self, "joint_names", self.loops.active_names)
        set_(self, "joint_types", tuple(tree.joint_types[i] for i in index))
        set_(self, "effort_limit", tree.effort_limit[index].copy())
        set_(self, "nv", len(index))
        set_(self, "mimic_joints", {})

    def joint_index(self, name: str) -> int:
        return self.joint_names.index(name)


class LoopEvaluator:
    """Model torques of a closed-loop robot over chunks of active-joint samples."""

    def __init__(self, loops: ClosedLoopModel) -> None:
        self.loops = loops
        self.last: Array | None = None  # the previous sample's closed configuration
        self.not_closed = 0  # samples whose loops could not close (NaN torques)
        self.first_failure = ""
        n_passive = len(loops.passive_index)
        self.passive_checked = np.zeros(n_passive, dtype=np.int64)
        self.passive_max = np.zeros(n_passive)  # largest |recorded - solved| per passive joint
        self.passive_sum_sq = np.zeros(n_passive)

    def solve(self, q_active: Array, recorded: Array) -> Array:
        """Closed tree configurations (S, n) of samples ``q_active`` (S, N); NaN rows where
        the loops do not close. ``recorded`` (S, p): the bag's passive positions (NaN where
        absent), the first guess and the consistency check."""
        loops = self.loops
        Q = np.full((len(q_active), loops.n), np.nan)
        for k in range(len(q_active)):
            guess = self.last
            if guess is None:
                guess = loops.q_reference.copy()
                known = np.isfinite(recorded[k])
                guess[loops.passive_index[known]] = recorded[k][known]
                guess[loops.active_index] = q_active[k]
            try:
                Q[k] = self.last = solve_loops(loops, q_active[k], guess)
            except LoopClosureError as exc:
                self.not_closed += 1
                self.first_failure = self.first_failure or str(exc)
        return Q

    def check_passive(self, Q: Array, recorded: Array) -> None:
        """Accumulate ``|recorded - solved|`` of the passive joints (angles wrapped)."""
        solved = Q[:, self.loops.passive_index]
        delta = recorded - solved
        rotational = np.array([self.loops.tree.joint_types[i] != "prismatic"
                               for i in self.loops.passive_index])
        delta = np.where(rotational, (delta + np.pi) % (2 * np.pi) - np.pi, delta)
        ok = np.isfinite(delta)
        self.passive_checked += ok.sum(axis=0)
        magnitude = np.where(ok, np.abs(delta), 0.0)
        if len(magnitude):
            self.passive_max = np.maximum(self.passive_max, magnitude.max(axis=0))
        self.passive_sum_sq += (magnitude**2).sum(axis=0)

    def __call__(self, q: Array, qd: Array, qdd: Array, recorded: Array, dt: float,
                 window: int, order: int, sl: slice) -> tuple[Array, Array, Array, Array]:
        """``(tau, g, tau_dot, q_passive)`` of the samples ``sl`` of a chunk (every sample
        of the chunk is solved: tau_dot differentiates tau over it)."""
        Q = self.solve(q, recorded)
        self.check_passive(Q[sl], recorded[sl])
        good = np.isfinite(Q).all(axis=1)
        tau = np.full(q.shape, np.nan)
        g = np.full(q.shape, np.nan)
        if good.any():
            zero = np.zeros((int(good.sum()), q.shape[1]))
            tau[good] = loop_rnea_batch(self.loops, Q[good], qd[good], qdd[good])
            g[good] = loop_rnea_batch(self.loops, Q[good], zero, zero)
        tau_dot = derivatives(tau, dt, window, order)[0] if good.all() else \
            np.full(q.shape, np.nan)
        return tau[sl], g[sl], tau_dot[sl], Q[sl][:, self.loops.passive_index]

    def report_lines(self, source: str) -> list[str]:
        """The report's "Closed loops" section."""
        loops = self.loops
        lines = ["## Closed loops", "",
                 f"Loop file `{source}`: loops {', '.join(lp.name for lp in loops.loops)}; "
                 f"active joints (analysed) {', '.join(loops.active_names)}; passive joints "
                 f"{', '.join(loops.passive_names)} solved from them per sample "
                 f"(τ = Gᵀ τ_tree, Khalil 2010 eq. 55-57; τ̇ by Savitzky-Golay of τ). "
                 f"Samples whose loops did not close: {self.not_closed}"
                 + (f" (first: {self.first_failure})" if self.first_failure else "") + ".", ""]
        if self.passive_checked.any():
            lines += ["Recorded passive positions against the solved ones:", "",
                      "| passive joint | samples | max deviation | RMS deviation |",
                      "|---|---|---|---|"]
            for j, name in enumerate(loops.passive_names):
                count = int(self.passive_checked[j])
                rms = np.sqrt(self.passive_sum_sq[j] / count) if count else float("nan")
                lines.append(f"| {name} | {count} | {self.passive_max[j]:.4g} | {rms:.4g} |")
        else:
            lines.append("The bag records no passive joint positions (nothing to compare).")
        return lines
