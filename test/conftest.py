"""Test-wide settings.

Every process that may start a ROS node keeps DDS on this machine: discovery
limited to localhost and a domain id of its own (set before any rclpy import).
"""

from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 100))


def pytest_collection_modifyitems(items: list) -> None:  # type: ignore[type-arg]
    """The flood tests first. Their flooder is a separate process that must discover the
    node under test over DDS; with discovery limited to localhost, Fast DDS probes only
    the first few participant indices of the host, and the participants that earlier
    test modules leave in this process (rclpy contexts shut down but not yet released)
    take those indices: late in a full run the flooder never found the node (every flood
    test failed there, none alone). Run first, they meet no leftovers. Order only: no
    assertion changes."""
    floods = [item for item in items if "flood" in item.name]
    items[:] = floods + [item for item in items if "flood" not in item.name]
