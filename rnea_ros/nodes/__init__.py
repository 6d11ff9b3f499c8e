"""rclpy nodes: the torque controller and the embedded simulator."""
