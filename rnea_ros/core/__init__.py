"""Dynamics core: robot models and rigid-body algorithms (numpy + numba, no ROS)."""
