"""The DDS participants this process holds, counted by their UDP sockets.

rmw_fastrtps makes one DDS participant per rclpy context (created with the context's
first node, destroyed with its last), each with its UDP sockets (metatraffic and user
traffic, unicast and multicast). A participant left behind in the test process takes one
of the few participant indices Fast DDS probes on localhost
(``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``: 127.0.0.1 as an initial peer without a
port), so a process started later (the flooder of the flood tests) may never discover
the node under test (issue 35). Used by test/nodes/conftest.py after every module.
"""

from __future__ import annotations

import os


def socket_inodes() -> set[str]:
    """The inodes of this process's sockets (``/proc/self/fd`` -> ``socket:[inode]``)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # (closed since listed: the listing's own descriptor)
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def udp_sockets() -> int:
    """How many UDP sockets (IPv4 and IPv6) this process holds: 5 per live
    participant with rmw_fastrtps' defaults on localhost, 0 with none."""
    inodes = socket_inodes()
    count = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        if not os.path.exists(table):
            continue
        with open(table) as rows:
            next(rows)  # the header
            count += sum(1 for row in rows if row.split()[9] in inodes)
    return count
