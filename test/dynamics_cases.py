"""Shared cases of the per-algorithm tests in test/core/dynamics (test_rnea.py,
test_aba.py, test_crba.py, test_coriolis.py):

* :func:`agreement_case`: a robot for the agreement with Pinocchio -- every sample
  URDF and 14 example-robot-data robots, 1000 random states each, compared at
  relative error <= :data:`TOL`. Each robot is loaded twice from the same URDF: by
  our parser and by Pinocchio's. Random armature is added to both; friction from
  the URDF ``<dynamics>`` is removed from ours, since Pinocchio's RNEA has none
  (the friction term is checked on its own, test_rnea.py).
* :func:`free_flyer_case`: a free-flyer robot against Pinocchio's
  ``JointModelFreeFlyer`` root -- Talos, Solo12, ANYmal C, HyQ, Go2
  (example-robot-data) and Talos with its mimic grippers, 1000 random states each
  (random unit quaternions, base twists and accelerations), relative error <= TOL.
  Both sides read the same URDF, each with its own parser; random armature (on
  every velocity coordinate, the base's too) and a tilted gravity are copied to
  Pinocchio by the oracle. Friction is removed (Pinocchio has none).
* :func:`tree_states` and :func:`close`: random states of the random trees of
  ``trees.random_tree`` and the error measure of the physics identities.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from multidof import random_states as multidof_states
from oracle import PinOracle, random_states

from rnea_ros.core.errors import InertiaWarning
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import EXAMPLE_ROBOTS, SAMPLE_ROBOTS, load_robot, robot_urdf

ROBOTS = list(SAMPLE_ROBOTS) + list(EXAMPLE_ROBOTS)
SAMPLES = 1000
TOL = 1e-9
FREE_FLYER_ROBOTS = ("talos", "solo12", "anymal_c", "hyq", "go2", "talos_full")


@dataclass
class Case:
    name: str
    model: RobotModel
    oracle: PinOracle
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray


def agreement_case(name: str) -> Case:
    """Robot ``name`` with random armature and a tilted gravity, and its oracle (some
    robots' inertias are non-physical: their InertiaWarning is not what is tested)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        path = robot_urdf(name)
        rng = np.random.default_rng(7)
        model = load_robot(name).without_friction()
        model = model.replace(armature=rng.uniform(0.0, 0.5, model.nv),
                              gravity=np.array([0.3, -0.2, -9.81]))
        q, qd, qdd = random_states(model, SAMPLES, seed=1)
        return Case(name, model, PinOracle(path, model), q, qd, qdd)


@dataclass
class FreeFlyerCase:
    name: str
    model: RobotModel
    oracle: PinOracle
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    pq: np.ndarray  # Pinocchio's configurations (the same: the layout is shared)


def free_flyer_case(name: str) -> FreeFlyerCase:
    """Robot ``name`` on a free-flyer root, 1000 random states and its oracle."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        rng = np.random.default_rng(3)
        model = load_robot(name, root_joint="free-flyer", mimic=name == "talos_full")
        model = model.without_friction().replace(armature=rng.uniform(0.0, 0.5, model.nv),
                                                 gravity=np.array([0.3, -0.2, -9.81]))
        q, v, a = multidof_states(model, SAMPLES, seed=5)
        # Pinocchio 4.1's mimic parser rejects Talos' grippers ("the parent joint of the mimic
        # joint is not in the kinematic tree"): there, the followers are eliminated by hand.
        oracle = PinOracle(robot_urdf(name), model, mimic="eliminate")
        return FreeFlyerCase(name, model, oracle, q, v, a, np.array([oracle.config(x) for x in q]))


def pin_each(case: FreeFlyerCase, fn, *arrays) -> np.ndarray:
    """Pinocchio's ``fn`` on every sample, in our velocity order (``G^T fn(G x)``)."""
    o = case.oracle
    return np.array([o.ours(fn(o.pm, o.pd, pq, *(o.tangent(x[k]) for x in arrays)))
                     for k, pq in enumerate(case.pq)])


def tree_states(model: RobotModel, seed: int, count: int = 20
                ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``count`` random ``(q, qd, qdd)`` of ``model`` (the identities' states)."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(count):
        yield (rng.uniform(-np.pi, np.pi, model.nv), rng.normal(0, 2, model.nv),
               rng.normal(0, 5, model.nv))


def close(a: object, b: object, rtol: float = 1e-10) -> bool:
    """``max |a - b| <= rtol max(max |b|, 1)``."""
    scale = max(np.abs(np.asarray(b)).max(), 1.0)
    return bool(np.abs(np.asarray(a) - np.asarray(b)).max() <= rtol * scale)
