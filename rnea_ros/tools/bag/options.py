"""What the user asked ``rnea-bag`` for (built by :mod:`~rnea_ros.tools.bag.cli`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Options:
    bag: Path
    out: Path
    urdf: Path | None = None
    states_topic: str = "/joint_states"
    commands_topic: str = "/effort_controller/commands"
    joints: list[str] | None = None
    time_base: str = "header"
    window: float = 0.05
    order: int = 4
    recorded_velocity: bool = True
    effort_rate_limits: list[float] = field(default_factory=lambda: [1000.0])
    chunk: int = 20000
    plot_points: int = 4000
    plots: bool = True
    progress: bool = True
