"""The plants our controllers are checked against (tests, the simulator node).

- :mod:`~rnea_ros.simulation.plant`: :class:`Plant`, the interface every engine below
  implements, and its :class:`Capabilities`;
- :mod:`~rnea_ros.simulation.rigid`: :class:`Simulator` (Pinocchio's ABA, mimic
  joints, hard stops, a prescribed moving base) and :class:`LoopSimulator`
  (closed loops: Pinocchio's constrained dynamics, Baumgarte stabilisation);
- :mod:`~rnea_ros.simulation.rocking_base`: :class:`RockingBase` (a rocking, heaving base)
  and :class:`ImuSensor` (what an IMU on a link reads);
- :mod:`~rnea_ros.simulation.elastic`: :class:`ElasticSimulator` (elastic joints,
  our recursive forward dynamics);
- :mod:`~rnea_ros.simulation.mujoco_backend`: ``MujocoSimulator`` (MuJoCo: soft
  contacts, a world, pushes; imports ``mujoco`` only when used);
- :mod:`~rnea_ros.simulation.factory`: the simulator node's parameters -> the plant;
- :mod:`~rnea_ros.simulation.lockstep`: :class:`LockstepAnswers` (which stamped answer
  steps a lockstep plant).

See docs/simulation.md.
"""

from rnea_ros.simulation.elastic import ElasticSimulator
from rnea_ros.simulation.lockstep import LockstepAnswers
from rnea_ros.simulation.plant import Capabilities, Plant
from rnea_ros.simulation.rigid import (
    INTEGRATORS,
    PROXIMAL_MU,
    LoopSimulator,
    Simulator,
    hard_stop,
)
from rnea_ros.simulation.rocking_base import ImuSensor, RockingBase

__all__ = ["INTEGRATORS", "PROXIMAL_MU", "Capabilities", "ElasticSimulator", "ImuSensor",
           "LockstepAnswers", "LoopSimulator", "Plant", "RockingBase", "Simulator", "hard_stop"]
