"""Trajectory planning on the dynamics core (pure Python, no ROS).

Minimum-time (or Barman's multi-objective) joint trajectories on clamped
B-splines (Barman 2020 ch. IV, eq. 4.13-4.19) within position, velocity,
torque, torque-rate and internal-force limits, with analytic gradients from
the RNEA sensitivities; and ``rnea-plan``. It may import ``rnea_ros.core``;
it never imports ROS, the nodes or the control laws::

    from rnea_ros.planning import Limits, plan_min_time

    plan = plan_min_time(model, [q_start, q_goal], Limits.from_model(model, torque_rate=400))
    t, q, qd, qdd = plan.sample(0.001)
"""

from rnea_ros.planning.bspline import Basis, JointSpline
from rnea_ros.planning.dense import DenseCheck
from rnea_ros.planning.errors import InfeasibleError, PlanningError, SolverError
from rnea_ros.planning.limits import Limits
from rnea_ros.planning.optimize import Plan, plan_min_time
from rnea_ros.planning.output import read_trajectory, trajectory_message, write_trajectory

__all__ = [
    "Basis",
    "DenseCheck",
    "InfeasibleError",
    "JointSpline",
    "Limits",
    "Plan",
    "PlanningError",
    "SolverError",
    "plan_min_time",
    "read_trajectory",
    "trajectory_message",
    "write_trajectory",
]
