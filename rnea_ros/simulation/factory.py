"""The simulator node's logic without ROS: which plant its parameters describe, its
initial state and the IMU's noise (the node only binds topics and timers).

``values`` is the node's parameter dictionary (names as in
``rnea_ros/nodes/simulator.py``'s table). :func:`make_simulator` picks the engine:
``engine: pinocchio`` -- :class:`~rnea_ros.simulation.Simulator` (Pinocchio's ABA, a
moving base), :class:`~rnea_ros.simulation.LoopSimulator` (closed loops) or
:class:`~rnea_ros.simulation.ElasticSimulator` (``elastic_file``); ``engine: mujoco``
-- :class:`~rnea_ros.simulation.mujoco_backend.MujocoSimulator` (contacts, a
``world``, pushes; rigid robots, mimic joints and closed loops on a fixed base).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_kinematics import loop_residual, solve_loops
from rnea_ros.core.coupling.loops import CLOSURE_TOLERANCE, ClosedLoopModel
from rnea_ros.core.dynamics.imu_kinematics import rotation_exp
from rnea_ros.core.elastic.model import elastic_model
from rnea_ros.core.errors import LoopClosureError, options
from rnea_ros.core.model.configuration import quaternion_matrix
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.samples import resolve_path
from rnea_ros.simulation.elastic import ElasticSimulator
from rnea_ros.simulation.mujoco_backend import MujocoSimulator
from rnea_ros.simulation.plant import Plant
from rnea_ros.simulation.rigid import LoopSimulator, Simulator
from rnea_ros.simulation.rocking_base import RockingBase
from rnea_ros.values import per_joint

Array = NDArray[np.float64]
ENGINES = ("pinocchio", "mujoco")
AnySimulator = Plant  # every engine is a Plant (simulation/plant.py)
BASE_MOTION = ("roll_amplitude", "roll_frequency", "pitch_amplitude", "pitch_frequency",
               "heave_amplitude", "heave_frequency", "roll_offset", "pitch_offset")


def make_base(values: Mapping[str, Any]) -> RockingBase:
    """The ``base_motion.*`` parameters as a :class:`RockingBase`."""
    return RockingBase(**{n: float(values[f"base_motion.{n}"]) for n in BASE_MOTION})


def initial_positions(values: Mapping[str, Any], model: RobotModel,
                      loops: ClosedLoopModel | None) -> Array:
    """``initial_positions`` as a tree configuration (nv,); closed loops: active
    positions (one value, or one per active joint) with the passive joints solved, or
    every tree joint (then it must close the loops)."""
    if loops is None:
        return per_joint(values, "initial_positions", model.nv, -math.inf)
    given = np.asarray(values["initial_positions"], dtype=np.float64).ravel()
    if given.size == model.nv and model.nv != loops.n_active:
        error = float(np.abs(loop_residual(loops, given)).max())
        if not error <= CLOSURE_TOLERANCE:
            raise ParameterError(
                f"parameter 'initial_positions' (every tree joint) does not close the loops "
                f"of '{model.name}' (constraint error {error:.3g} m or rad): give the "
                f"{loops.n_active} active positions ({options(loops.active_names)}), the "
                "passive ones are solved")
        return given
    active = per_joint(values, "initial_positions", loops.n_active, -math.inf)
    try:
        return solve_loops(loops, active)
    except LoopClosureError as exc:
        raise ParameterError(f"parameter 'initial_positions': {exc}") from None


def drive_friction(values: Mapping[str, Any], name: str, model: RobotModel,
                   loops: ClosedLoopModel | None) -> Array:
    """Parameter ``name`` (``damping`` [N m s/rad, N s/m] or ``friction`` [N m, N]) per
    tree joint (nv,): one value for every joint, one per tree joint, or, with closed
    loops, one per active joint (the loop file's order) with the passive joints free
    (the drives are on the active joints; a real passive joint's friction is small).
    Every value is >= 0: a negative one would feed energy into the plant."""
    given = values[name]
    size = len(given) if isinstance(given, (list, tuple, np.ndarray)) else 1
    if loops is None or loops.n_active == model.nv or size in (1, model.nv):
        return per_joint(values, name, model.nv)
    if size != loops.n_active:
        raise ParameterError(
            f"parameter '{name}' has {size} values; give 1, {loops.n_active} (the active "
            f"joints {options(loops.active_names)}) or {model.nv} (every tree joint)")
    out = np.zeros(model.nv)
    out[loops.active_index] = per_joint(values, name, loops.n_active)
    return out


def payload_of(values: Mapping[str, Any], model: RobotModel) -> Payload | None:
    """The ``payload.*`` parameters (validated against ``model``), or None."""
    if not values["payload.link"]:
        return None
    payload = Payload(values["payload.link"], float(values["payload.mass"]),
                      tuple(values["payload.com"]), tuple(values["payload.inertia"]))
    with_payload(model, payload)  # validates
    return payload


def equilibrium_start(values: Mapping[str, Any]) -> bool:
    """Whether ``initial_motor_positions`` puts the elastic joints' motors at their
    equilibrium under gravity (:meth:`ElasticSimulator.equilibrium_motors`); the value
    ``equilibrium`` needs ``elastic_file`` (:class:`ParameterError` otherwise)."""
    start = str(values.get("initial_motor_positions", "links"))
    if start == "equilibrium" and not values["elastic_file"]:
        raise ParameterError("parameter 'initial_motor_positions' is 'equilibrium': only with "
                             "'elastic_file' (a robot with elastic joints and motors)")
    return start == "equilibrium"


def startup_line(values: Mapping[str, Any], model: RobotModel, sim: AnySimulator) -> str:
    """The simulator node's start-up log line: robot, engine, world, plant, rate, clock."""
    world = str(values.get("world", "") or "") or "none"
    plant = type(sim).__name__
    timing = "lockstep" if values.get("lockstep") else "real time"
    return (f"simulating '{model.name}' ({model.nv} joints) on engine "
            f"'{values.get('engine', 'pinocchio')}' ({plant}), world '{world}', "
            f"{values['integrator']} at {float(values['rate']):g} Hz, {timing}")


def make_simulator(values: Mapping[str, Any], model: RobotModel, loops: ClosedLoopModel | None,
                   urdf: str, base: RockingBase) -> AnySimulator:
    """The plant ``values`` describe (see the module); :class:`ParameterError` naming the
    parameter for a combination no engine supports."""
    engine = str(values.get("engine", "pinocchio"))
    if engine not in ENGINES:
        raise ParameterError(f"parameter 'engine' is '{engine}'; valid: {options(ENGINES)}")
    payload = payload_of(values, model)
    equilibrium_start(values)  # an elastic-only value without 'elastic_file' is an error
    dt = 1.0 / float(values["rate"])
    damping = drive_friction(values, "damping", model, loops)
    friction = drive_friction(values, "friction", model, loops)
    world = str(values.get("world", "") or "")
    if engine == "mujoco":
        unsupported = [name for name, used in (("elastic_file", bool(values["elastic_file"])),
                                               ("base_motion.*", base.moving)) if used]
        if unsupported:
            raise ParameterError(f"parameter 'engine' is 'mujoco': {options(unsupported)} "
                                 "only with engine 'pinocchio'")
        return MujocoSimulator(urdf, model, dt=dt, integrator=values["integrator"],
                               damping=damping, friction=friction, payload=payload,
                               loops=loops, world=world or None,
                               contacts=bool(values.get("contacts", True)))
    if world:
        raise ParameterError(f"parameter 'world' ('{world}') needs engine 'mujoco' (the "
                             "Pinocchio backend has no contact)")
    if values["elastic_file"]:  # our forward dynamics: Pinocchio has no geared rotors
        links = model.replace(viscous=per_joint(values, "damping", model.nv),
                              coulomb=per_joint(values, "friction", model.nv))
        if payload is not None:
            links = with_payload(links, payload)
        if base.moving:
            raise ParameterError("parameters 'base_motion.*': a moving base is not "
                                 "supported with 'elastic_file'")
        elastic = elastic_model(links, resolve_path(str(values["elastic_file"])))
        return ElasticSimulator(elastic, dt=dt, equilibrium_start=equilibrium_start(values))
    if loops is not None:  # Pinocchio's constrained dynamics
        if base.moving:
            raise ParameterError("parameters 'base_motion.*': a moving base is not "
                                 "supported with a loop file")
        return LoopSimulator(
            urdf, loops, dt=dt, integrator=values["integrator"], damping=damping,
            friction=friction, payload=payload,
            baumgarte=(float(values["loops.baumgarte_kp"]), float(values["loops.baumgarte_kd"])))
    return Simulator(urdf, model, dt=dt, integrator=values["integrator"], damping=damping,
                     friction=friction, payload=payload, base=base)


RIGID = (Simulator, MujocoSimulator)  # engines with a rigid state q, qd, qdd


def carry_state(old: AnySimulator, new: AnySimulator) -> None:
    """Give ``new`` (a rebuilt plant: a payload change) the state and effort of ``old``."""
    if isinstance(new, ElasticSimulator) and isinstance(old, ElasticSimulator):
        new.x, new.t0 = old.x.copy(), old.t
    elif isinstance(new, RIGID) and isinstance(old, RIGID):
        new.reset(old.q, old.qd, old.t)
        new.qdd = old.qdd
    else:
        raise ParameterError(f"cannot carry the state of a {type(old).__name__} to a "
                             f"{type(new).__name__}")
    new.effort = old.effort


class ImuNoise:
    """White noise on an IMU's readings: standard deviations ``sigma = (orientation
    [rad], angular velocity [rad/s], specific force [m/s^2])``, seeded."""

    def __init__(self, sigma: Array, seed: int) -> None:
        self.sigma = np.asarray(sigma, dtype=np.float64)
        if self.sigma.shape != (3,) or not np.all(np.isfinite(self.sigma)) or \
                np.any(self.sigma < 0.0):
            raise ParameterError("parameters 'imu.noise.*' must be finite and >= 0")
        self.rng = np.random.default_rng(int(seed))

    def apply(self, quat: Array, w: Array, f: Array, to_quaternion: Callable[[Array], Array]
              ) -> tuple[Array, Array, Array]:
        """Noisy ``(quaternion [x, y, z, w], angular velocity (3,), specific force (3,))``:
        the orientation turned by a small rotation about a random axis in the sensor
        frame (``to_quaternion``: rotation matrix -> ``[x, y, z, w]``)."""
        sigma, rng = self.sigma, self.rng
        if not sigma.any():
            return quat, w, f
        if sigma[0] > 0.0:
            R = (quaternion_matrix(np.asarray(quat, dtype=np.float64))
                 @ rotation_exp(rng.normal(0.0, sigma[0], 3)))
            quat = to_quaternion(R)
        return quat, w + rng.normal(0.0, sigma[1], 3), f + rng.normal(0.0, sigma[2], 3)
