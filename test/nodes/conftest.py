"""Every node test module leaves no DDS participant behind (issue 35).

A participant left in the pytest process takes one of the few participant indices
Fast DDS probes on localhost, and a process started later (the flood tests' flooder)
never discovers the node under test. The fixture below, set up before any other of a
module's fixtures and torn down after them, counts the process's UDP sockets
(test/dds_sockets.py) before and after the module and fails the module's last test
if they did not return to the count it started with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dds_sockets import udp_sockets


@pytest.fixture(autouse=True, scope="module")
def no_participant_left(request: pytest.FixtureRequest) -> Iterator[None]:
    before = udp_sockets()
    yield
    after = udp_sockets()
    assert after <= before, (
        f"{request.module.__name__} left {after - before} UDP sockets (DDS participants: "
        f"about 5 each) in this process: a node, an executor or a context not destroyed")
