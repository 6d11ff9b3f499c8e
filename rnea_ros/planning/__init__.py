"""Trajectory planning on the dynamics core (pure Python, no ROS).

Home of the minimum-time trajectory optimiser (B-spline joint profiles,
torque, torque-rate and internal-force limits; Barman 2020 ch. IV) and of
``rnea-plan``. It may import ``rnea_ros.core``; it never imports ROS, the
nodes or the control laws.
"""
