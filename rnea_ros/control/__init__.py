"""Control laws and the controller logic (pure Python + numpy, no ROS)."""
