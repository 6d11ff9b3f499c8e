"""The dynamics core: models and algorithms, numpy + numba, no ROS.

One flat namespace, like Pinocchio's ``pin.rnea``::

    import rnea_ros.core as rc

    model = rc.load_urdf("urdf/arm7.urdf")
    tau = rc.rnea(model, q, qd, qdd)

Layout (one concept per folder, one algorithm per module): ``model/`` (the
model and its builders), ``dynamics/`` (rigid-body algorithms), ``elastic/``
(mixed rigid/elastic joints), ``coupling/`` (closed loops: ``rc.load_loops``,
``rc.solve_loops``, ``rc.loop_rnea``...; parallel robots: ``rc.GoughStewart``...);
at this level only what everything shares: ``spatial`` (3D/spatial algebra), the
compiled layer (``_compile``: compile policy; ``_layout``: every shared array layout;
``_algebra``: tuple and spatial helpers; ``kernels``: its public API for code outside
core), ``expansion`` (user coordinates <-> kernel tree), ``inputs`` (argument checks),
``errors``.
"""

from rnea_ros.core import errors as _errors
from rnea_ros.core.coupling.loop_build import build_loops
from rnea_ros.core.coupling.loop_dynamics import (
    loop_forward_dynamics,
    loop_forward_dynamics_batch,
    loop_gravity,
    loop_mass_matrix,
    loop_nonlinear_effects,
    loop_rnea,
    loop_rnea_batch,
    loop_rnea_with_wrenches,
)
from rnea_ros.core.coupling.loop_file import LoopFile, load_loops, read_loop_file
from rnea_ros.core.coupling.loop_kinematics import (
    loop_accelerations,
    loop_bias_acceleration,
    loop_constraint_jacobian,
    loop_jacobian,
    loop_residual,
    loop_velocities,
    solve_loops,
    solve_loops_batch,
)
from rnea_ros.core.coupling.loop_mdh import from_mdh_loops
from rnea_ros.core.coupling.loops import ClosedLoopModel, Loop
from rnea_ros.core.coupling.parallel import (
    platform_forward_dynamics,
    platform_forward_dynamics_batch,
    platform_inverse_dynamics,
    platform_inverse_dynamics_batch,
)
from rnea_ros.core.coupling.parallel_kinematics import (
    platform_active_motion,
    platform_forward_geometry,
    platform_inverse_geometry,
    platform_inverse_jacobian,
    platform_tree_state,
)
from rnea_ros.core.coupling.parallel_model import DeltaRobot, GoughStewart, ParallelRobot
from rnea_ros.core.coupling.parallel_structure import ParallelLeg
from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.coriolis import coriolis_matrix, coriolis_product
from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.derivatives import (
    joint_wrench_derivatives,
    joint_wrench_derivatives_batch,
    rnea_derivatives,
    rnea_derivatives_batch,
    rnea_time_derivative_sensitivities,
    rnea_time_derivative_sensitivities_batch,
)
from rnea_ros.core.dynamics.floating_base import (
    FreeFloatingResult,
    free_floating_dynamics,
    free_floating_dynamics_batch,
    free_floating_rnea,
)
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.dynamics.gfd import (
    rnea_second_time_derivative,
    rnea_second_time_derivative_batch,
    rnea_time_derivative,
    rnea_time_derivative_batch,
)
from rnea_ros.core.dynamics.imu_kinematics import FrameMotion, frame_motion
from rnea_ros.core.dynamics.jacobian import frame_jacobian
from rnea_ros.core.dynamics.kinematics import (
    body_poses,
    body_velocities,
    kinetic_energy,
    link_pose,
    potential_energy,
)
from rnea_ros.core.dynamics.momentum import (
    Momentum,
    center_of_mass,
    center_of_mass_velocity,
    centroidal_momentum,
    free_floating_momentum,
    momentum,
)
from rnea_ros.core.dynamics.momentum_bias import (
    momentum_and_bias,
    momentum_and_bias_batch,
    momentum_bias,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.regressor import (
    joint_torque_regressor,
    joint_torque_regressor_batch,
)
from rnea_ros.core.dynamics.regressor import parameter_names as regressor_parameter_names
from rnea_ros.core.dynamics.regressor import parameter_vector as regressor_parameters
from rnea_ros.core.dynamics.rnea import (
    coulomb_signs,
    friction_torques,
    gravity_batch,
    gravity_torques,
    nonlinear_effects,
    nonlinear_effects_batch,
    rnea,
    rnea_batch,
    rnea_with_wrenches,
)
from rnea_ros.core.elastic.fd import dynamics as elastic_dynamics
from rnea_ros.core.elastic.fd import forward_dynamics as elastic_forward_dynamics
from rnea_ros.core.elastic.feedforward import Feedforward, MotorReference
from rnea_ros.core.elastic.hybrid import (
    elastic_inverse_dynamics,
)
from rnea_ros.core.elastic.hybrid import (
    forward_dynamics_recursive as elastic_forward_dynamics_recursive,
)
from rnea_ros.core.elastic.model import ElasticModel, JointDrive, MotorSpec, elastic_model
from rnea_ros.core.elastic.rnea import ElasticTorques, elastic_rnea
from rnea_ros.core.errors import (
    DHError,
    InertiaError,
    InertiaWarning,
    JointNameError,
    LoopBudgetError,
    LoopClosureError,
    LoopError,
    ModelError,
    ModelParameterError,
    ParallelRobotError,
    RneaError,
    StateError,
    URDFError,
)
from rnea_ros.core.model.base_inertia import BodyInertia, urdf_base_inertia
from rnea_ros.core.model.configuration import (
    check_configuration,
    difference,
    integrate,
    neutral,
    random_configuration,
)
from rnea_ros.core.model.dh import DHLink, from_dh
from rnea_ros.core.model.drives import apply_drive_parameters, load_drive_file
from rnea_ros.core.model.joints import MimicJoint
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY, Frame, RobotModel
from rnea_ros.core.model.urdf import load_urdf, parse_urdf

__all__ = [
    "STANDARD_GRAVITY",
    "BaseMotion",
    "BodyInertia",
    "ClosedLoopModel",
    "DHError",
    "DHLink",
    "DeltaRobot",
    "ElasticModel",
    "ElasticTorques",
    "Feedforward",
    "Frame",
    "FrameMotion",
    "FreeFloatingResult",
    "GoughStewart",
    "InertiaError",
    "InertiaWarning",
    "JointDrive",
    "JointNameError",
    "Loop",
    "LoopBudgetError",
    "LoopClosureError",
    "LoopError",
    "LoopFile",
    "MDHLink",
    "MimicJoint",
    "ModelError",
    "ModelParameterError",
    "Momentum",
    "MotorReference",
    "MotorSpec",
    "ParallelLeg",
    "ParallelRobot",
    "ParallelRobotError",
    "Payload",
    "RneaError",
    "RobotModel",
    "StateError",
    "URDFError",
    "aba",
    "aba_batch",
    "apply_drive_parameters",
    "body_poses",
    "body_velocities",
    "build_loops",
    "center_of_mass",
    "center_of_mass_velocity",
    "centroidal_momentum",
    "check_configuration",
    "coriolis_matrix",
    "coriolis_product",
    "coulomb_signs",
    "difference",
    "elastic_dynamics",
    "elastic_forward_dynamics",
    "elastic_forward_dynamics_recursive",
    "elastic_inverse_dynamics",
    "elastic_model",
    "elastic_rnea",
    "forward_dynamics",
    "forward_dynamics_batch",
    "frame_jacobian",
    "frame_motion",
    "free_floating_dynamics",
    "free_floating_dynamics_batch",
    "free_floating_momentum",
    "free_floating_rnea",
    "friction_torques",
    "from_dh",
    "from_mdh",
    "from_mdh_loops",
    "gravity_batch",
    "gravity_torques",
    "integrate",
    "joint_torque_regressor",
    "joint_torque_regressor_batch",
    "joint_wrench_derivatives",
    "joint_wrench_derivatives_batch",
    "kinetic_energy",
    "link_pose",
    "load_drive_file",
    "load_loops",
    "load_urdf",
    "loop_accelerations",
    "loop_bias_acceleration",
    "loop_constraint_jacobian",
    "loop_forward_dynamics",
    "loop_forward_dynamics_batch",
    "loop_gravity",
    "loop_jacobian",
    "loop_mass_matrix",
    "loop_nonlinear_effects",
    "loop_residual",
    "loop_rnea",
    "loop_rnea_batch",
    "loop_rnea_with_wrenches",
    "loop_velocities",
    "mass_matrix",
    "mass_matrix_batch",
    "momentum",
    "momentum_and_bias",
    "momentum_and_bias_batch",
    "momentum_bias",
    "neutral",
    "nonlinear_effects",
    "nonlinear_effects_batch",
    "parse_urdf",
    "platform_active_motion",
    "platform_forward_dynamics",
    "platform_forward_dynamics_batch",
    "platform_forward_geometry",
    "platform_inverse_dynamics",
    "platform_inverse_dynamics_batch",
    "platform_inverse_geometry",
    "platform_inverse_jacobian",
    "platform_tree_state",
    "potential_energy",
    "random_configuration",
    "read_loop_file",
    "regressor_parameter_names",
    "regressor_parameters",
    "rnea",
    "rnea_batch",
    "rnea_derivatives",
    "rnea_derivatives_batch",
    "rnea_second_time_derivative",
    "rnea_second_time_derivative_batch",
    "rnea_time_derivative",
    "rnea_time_derivative_batch",
    "rnea_time_derivative_sensitivities",
    "rnea_time_derivative_sensitivities_batch",
    "rnea_with_wrenches",
    "solve_loops",
    "solve_loops_batch",
    "urdf_base_inertia",
    "with_payload",
]


def __getattr__(name: str) -> type[RneaError]:
    """``rc.PlanningError``, ``rc.BagError`` & co. (moved to their packages): resolved
    on access through :data:`rnea_ros.core.errors.MOVED`, never at import."""
    if name in _errors.MOVED:
        cls: type[RneaError] = getattr(_errors, name)
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
