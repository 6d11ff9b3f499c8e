"""A plan as a ``trajectory_msgs/JointTrajectory`` YAML file, and its plot.

The YAML has the message's fields (``joint_names``; ``points`` with
``positions``, ``velocities``, ``accelerations``, ``effort`` (the planned
torques) and ``time_from_start {sec, nanosec}``), sampled at a fixed step, and
a ``plan`` section with the duration, limits and the dense check. No ROS
import: :func:`read_trajectory` gives the arrays back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from rnea_ros.planning.optimize import Plan
from rnea_ros.tools.files import atomic_path, write_text

Array = NDArray[np.float64]


def points_message(names: Sequence[str], t: Array, q: Array, qd: Array, qdd: Array, tau: Array,
                   section: str, info: dict[str, Any]) -> dict[str, Any]:
    """A ``trajectory_msgs/JointTrajectory`` (a dict) of sampled points (``t`` (K,) [s],
    the rest (K, n); ``effort`` = the model torques), header stamp zero ("start now"),
    and ``info`` under ``section`` (what made it)."""
    points = []
    for k, tk in enumerate(t):
        sec = int(np.floor(tk))
        nanosec = min(round((tk - sec) * 1e9), 999_999_999)
        points.append({"positions": q[k].tolist(), "velocities": qd[k].tolist(),
                       "accelerations": qdd[k].tolist(), "effort": tau[k].tolist(),
                       "time_from_start": {"sec": sec, "nanosec": nanosec}})
    return {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""},
            "joint_names": list(names), "points": points, section: info}


def write_message(message: dict[str, Any], path: Path, program: str,
                  made_by: dict[str, Any] | None = None) -> None:
    """``message`` as YAML at ``path`` (parents created), headed by who wrote it and, when
    given, ``made_by`` (:func:`rnea_ros.tools.provenance.stamp`: version, command line,
    input digests) as its last key; written under a temporary name and renamed
    (:func:`rnea_ros.tools.files.write_text`)."""
    body = message if made_by is None else {**message, "made_by": made_by}
    write_text(path, f"# trajectory_msgs/JointTrajectory written by {program}\n"
               + yaml.safe_dump(body, sort_keys=False, default_flow_style=None))


def trajectory_message(plan: Plan, dt: float) -> dict[str, Any]:
    """The JointTrajectory message (a dict) of ``plan`` sampled every ``dt`` seconds."""
    t, q, qd, qdd = plan.sample(dt)
    tau = plan.dynamics(t)[0]
    lim = plan.limits
    check = plan.check
    return points_message(plan.model.joint_names, t, q, qd, qdd, tau, "plan", {
        "duration": plan.T, "step": dt, "weight": plan.weight,
        "solver": f"{plan.message} ({plan.iterations} iterations)",
        "limits": {k: [float(x) for x in getattr(lim, k)] for k in
                   ("lower", "upper", "velocity", "torque", "torque_rate", "force")},
        "dense_check": {"torque": check.torque, "torque_rate": check.torque_rate,
                        "velocity": check.velocity, "force": check.force}})


def write_trajectory(plan: Plan, path: Path, dt: float,
                     made_by: dict[str, Any] | None = None) -> None:
    write_message(trajectory_message(plan, dt), path, "rnea-plan", made_by)


def read_trajectory(path: Path) -> tuple[list[str], Array, Array, Array, Array]:
    """``(joint_names, times (K,), positions, velocities, accelerations (K, n))``."""
    msg = yaml.safe_load(Path(path).read_text())
    points = msg["points"]
    t = np.array([p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"]
                  for p in points])
    arrays = [np.array([p[key] for p in points], dtype=float)
              for key in ("positions", "velocities", "accelerations")]
    return list(msg["joint_names"]), t, arrays[0], arrays[1], arrays[2]


def plot_plan(plan: Plan, path: Path, samples: int = 600) -> None:
    """tau and tau_dot against their limits, and the internal force norms (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.linspace(0.0, plan.T, samples)
    tau, tau_dot, force = plan.dynamics(t)
    lim = plan.limits
    names = plan.model.joint_names
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    for ax, y, bound, label in ((axes[0], tau, lim.torque, "torque [N m | N]"),
                                (axes[1], tau_dot, lim.torque_rate, "torque rate [N m/s | N/s]"),
                                (axes[2], force, lim.force, "internal force |F| [N]")):
        for j, name in enumerate(names):
            line = ax.plot(t, y[:, j], label=name)[0]
            if np.isfinite(bound[j]):
                ax.axhline(bound[j], ls="--", lw=0.8, color=line.get_color())
                if ax is not axes[2]:
                    ax.axhline(-bound[j], ls="--", lw=0.8, color=line.get_color())
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(ncol=4, fontsize=8)
    axes[0].set_title(f"{plan.model.name}: T = {plan.T:.4g} s (dashed: limits)")
    axes[2].set_xlabel("t [s]")
    fig.tight_layout()
    try:
        with atomic_path(path, keep_suffix=True) as temporary:
            fig.savefig(temporary, dpi=110)
    finally:
        plt.close(fig)
