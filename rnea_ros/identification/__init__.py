"""Dynamic parameter identification (pure Python, no ROS).

Home of the regressor-based identification (base parameters, weighted least
squares, physically consistent inertias and friction) and of
``rnea-identify``. It may import ``rnea_ros.core``, ``rnea_ros.planning`` (for
excitation trajectories) and the bag reader of ``rnea_ros.tools``; never ROS.
"""
