"""Offline tools (no rclpy): rosbag analysis."""
