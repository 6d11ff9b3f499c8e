"""The dynamics core: models and algorithms, numpy + numba, no ROS.

One flat namespace, like Pinocchio's ``pin.rnea``::

    import rnea_ros.core as rc

    model = rc.load_urdf("urdf/arm7.urdf")
    tau = rc.rnea(model, q, qd, qdd)

Layout (one concept per folder, one algorithm per module): ``model/`` (the
model and its builders), ``dynamics/`` (rigid-body algorithms), ``elastic/``
(mixed rigid/elastic joints); at this level only what everything shares:
``spatial`` (3D/spatial algebra), ``_jit`` (compiled-kernel helpers and the
packed model), ``inputs`` (argument checks), ``errors``.
"""

from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.coriolis import coriolis_matrix, coriolis_product
from rnea_ros.core.dynamics.crba import mass_matrix, mass_matrix_batch
from rnea_ros.core.dynamics.derivatives import (
    joint_wrench_derivatives,
    joint_wrench_derivatives_batch,
    rnea_derivative_sensitivities,
    rnea_derivative_sensitivities_batch,
    rnea_derivatives,
    rnea_derivatives_batch,
)
from rnea_ros.core.dynamics.forward_dynamics import forward_dynamics, forward_dynamics_batch
from rnea_ros.core.dynamics.gfd import (
    rnea_derivative,
    rnea_derivative_batch,
    rnea_second_derivative,
    rnea_second_derivative_batch,
)
from rnea_ros.core.dynamics.kinematics import (
    body_poses,
    kinetic_energy,
    link_pose,
    potential_energy,
)
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.regressor import (
    joint_torque_regressor,
    joint_torque_regressor_batch,
)
from rnea_ros.core.dynamics.regressor import parameter_names as regressor_parameter_names
from rnea_ros.core.dynamics.regressor import parameter_vector as regressor_parameters
from rnea_ros.core.dynamics.rnea import (
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
    BagError,
    DHError,
    IdentificationError,
    InertiaError,
    InertiaWarning,
    InfeasibleError,
    JointNameError,
    ModelError,
    ParameterError,
    PlanningError,
    RneaError,
    SolverError,
    StateError,
    URDFError,
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
    "BagError",
    "BaseMotion",
    "DHError",
    "DHLink",
    "ElasticModel",
    "ElasticTorques",
    "Feedforward",
    "Frame",
    "IdentificationError",
    "InertiaError",
    "InertiaWarning",
    "InfeasibleError",
    "JointDrive",
    "JointNameError",
    "MDHLink",
    "MimicJoint",
    "ModelError",
    "MotorReference",
    "MotorSpec",
    "ParameterError",
    "Payload",
    "PlanningError",
    "RneaError",
    "RobotModel",
    "SolverError",
    "StateError",
    "URDFError",
    "aba",
    "aba_batch",
    "apply_drive_parameters",
    "body_poses",
    "coriolis_matrix",
    "coriolis_product",
    "elastic_dynamics",
    "elastic_forward_dynamics",
    "elastic_forward_dynamics_recursive",
    "elastic_inverse_dynamics",
    "elastic_model",
    "elastic_rnea",
    "forward_dynamics",
    "forward_dynamics_batch",
    "friction_torques",
    "from_dh",
    "from_mdh",
    "gravity_batch",
    "gravity_torques",
    "joint_torque_regressor",
    "joint_torque_regressor_batch",
    "joint_wrench_derivatives",
    "joint_wrench_derivatives_batch",
    "kinetic_energy",
    "link_pose",
    "load_drive_file",
    "load_urdf",
    "mass_matrix",
    "mass_matrix_batch",
    "nonlinear_effects",
    "nonlinear_effects_batch",
    "parse_urdf",
    "potential_energy",
    "regressor_parameter_names",
    "regressor_parameters",
    "rnea",
    "rnea_batch",
    "rnea_derivative",
    "rnea_derivative_batch",
    "rnea_derivative_sensitivities",
    "rnea_derivative_sensitivities_batch",
    "rnea_derivatives",
    "rnea_derivatives_batch",
    "rnea_second_derivative",
    "rnea_second_derivative_batch",
    "rnea_with_wrenches",
    "with_payload",
]
