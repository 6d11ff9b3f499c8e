"""The interface every simulation engine offers the simulator node: :class:`Plant`.

Engines: :class:`~rnea_ros.simulation.rigid.Simulator` (rigid, Pinocchio's ABA; a
prescribed moving base), :class:`~rnea_ros.simulation.rigid.LoopSimulator` (closed
loops), :class:`~rnea_ros.simulation.elastic.ElasticSimulator` (elastic joints),
``mujoco_backend.MujocoSimulator`` (MuJoCo). The node steps a plant, publishes its
joint state and diagnostics, and asks its :class:`Capabilities` before a push, an
IMU or the viewer; it never tests an engine's class. A new engine subclasses
:class:`Plant` and overrides what it has.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]
Index = NDArray[np.int64]


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do beyond stepping: ``pushes`` (:meth:`Plant.apply_wrench`),
    ``world`` (contacts with a scene), ``imu`` (:meth:`Plant.imu_state`: a rigid
    model's ``q, qd, qdd``), ``viewer`` (:meth:`Plant.viewer_handles`), ``lockstep``
    (steps on demand, one per command: every engine)."""

    pushes: bool = False
    world: bool = False
    imu: bool = False
    viewer: bool = False
    lockstep: bool = True


class JointStateOut(NamedTuple):
    """A ``sensor_msgs/JointState``'s content: names, positions, velocities, efforts."""

    name: list[str]
    position: list[float]
    velocity: list[float]
    effort: list[float]


class Plant(ABC):
    """A simulation engine as the simulator node sees it.

    ``dt`` [s]: the step; ``t`` [s]: simulated time; ``diverged``: steps not taken
    (a non-finite or unstable result), ``instability``: why the last one was not
    (empty when unknown); ``start_penetrations``: robot/world contacts at the
    initial positions ``(robot geom, world geom, depth [m])``.
    """

    capabilities: ClassVar[Capabilities] = Capabilities()
    dt: float
    diverged: int = 0
    instability: str = ""
    start_penetrations: list[tuple[str, str, float]] = []  # noqa: RUF012 (read-only default)

    @property
    @abstractmethod
    def t(self) -> float:
        """Simulated time [s]."""

    @abstractmethod
    def reset(self, q: Array) -> None:
        """Start at positions ``q`` at rest, effort zero (engines take optional more)."""

    @abstractmethod
    def step(self, tau: Array) -> None:
        """Advance one ``dt`` under the generalized forces ``tau`` (held)."""

    @abstractmethod
    def joint_state(self, index: Index | None = None,
                    followers: bool = False) -> JointStateOut:
        """The published joint state: the coordinates ``index`` (all when None; closed
        loops: the active then the passive joints the node publishes), then the mimic
        followers when ``followers``."""

    def diagnostics(self) -> dict[str, str]:
        """Engine-specific ``/diagnostics`` values (key -> text)."""
        return {"diverged steps (not taken)": str(self.diverged)}

    def apply_wrench(self, link: str, force: Array, torque: Array, duration: float, *,
                     max_force: float, max_torque: float) -> None:
        """A push on ``link`` (engines with ``capabilities.pushes``)."""
        raise ParameterError(f"~/apply_wrench on '{link}': pushes need parameter 'engine' "
                             "= 'mujoco'")

    def imu_state(self) -> tuple[Array, Array, Array]:
        """``(q, qd, qdd)`` of the rigid model an IMU reads (``capabilities.imu``)."""
        raise ParameterError("parameter 'imu.enable': this engine has no rigid state for an "
                             "IMU (elastic robots run on a fixed base)")

    def imu_engine(self) -> Any:
        """The ``PinocchioOracle`` this plant integrates on (None: the IMU needs its own)."""
        return None

    def viewer_handles(self) -> tuple[Any, Any]:
        """MuJoCo's ``(MjModel, MjData)`` for the passive viewer (``capabilities.viewer``)."""
        raise ParameterError("parameter 'viewer': MuJoCo's viewer needs engine 'mujoco'")


def rigid_joint_state(names: list[str], q: Array, qd: Array, effort: Array,
                      index: Index | None, followers: tuple[list[str], Array, Array] | None
                      ) -> JointStateOut:
    """The joint state of a rigid plant (``Simulator``, ``MujocoSimulator``): the
    coordinates ``index`` (all when None), then the followers ``(names, q_f, qd_f)``
    with zero effort."""
    if index is not None:
        names = [names[i] for i in index]
        q, qd, effort = q[index], qd[index], effort[index]
    if followers is not None:
        f_names, q_f, qd_f = followers
        names = list(names) + f_names
        q, qd = np.r_[q, q_f], np.r_[qd, qd_f]
        effort = np.r_[effort, np.zeros(len(f_names))]
    return JointStateOut(list(names), q.tolist(), qd.tolist(), effort.tolist())


__all__ = ["Capabilities", "JointStateOut", "Plant", "rigid_joint_state"]
