"""The plants our controllers are checked against (tests, the simulator node).

- :mod:`~rnea_ros.simulation.rigid`: :class:`Simulator` (Pinocchio's ABA, mimic
  joints, hard stops, a prescribed moving base) and :class:`LoopSimulator`
  (closed loops: Pinocchio's constrained dynamics, Baumgarte stabilisation);
- :mod:`~rnea_ros.simulation.base`: :class:`RockingBase` (a rocking, heaving base)
  and :class:`ImuSensor` (what an IMU on a link reads);
- :mod:`~rnea_ros.simulation.elastic`: :class:`ElasticSimulator` (elastic joints,
  our recursive forward dynamics);
- :mod:`~rnea_ros.simulation.mujoco_backend`: ``MujocoSimulator`` (MuJoCo: soft
  contacts, a world, pushes; imports ``mujoco`` only when used);
- :mod:`~rnea_ros.simulation.factory`: the simulator node's parameters -> the plant.

See docs/simulation.md.
"""

from rnea_ros.simulation.base import ImuSensor, RockingBase
from rnea_ros.simulation.elastic import ElasticSimulator
from rnea_ros.simulation.rigid import (
    INTEGRATORS,
    PROXIMAL_MU,
    LoopSimulator,
    Simulator,
    hard_stop,
)

__all__ = ["INTEGRATORS", "PROXIMAL_MU", "ElasticSimulator", "ImuSensor", "LoopSimulator",
           "RockingBase", "Simulator", "hard_stop"]
