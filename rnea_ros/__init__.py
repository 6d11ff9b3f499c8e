"""rnea_ros: joint torques from joint states with our own recursive Newton-Euler algorithm."""

__version__ = "0.1.0"
