"""Test-wide settings.

Every process that may start a ROS node keeps DDS on this machine: discovery
limited to localhost and a domain id of its own (set before any rclpy import).
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 100))

