"""Clock resets in closed loop over DDS (issue 16, section 2): the simulator's
clock jumps (reset to 0, 1 hour back, 1 hour forward) or a single rogue message
comes with a stale or future stamp; the controller re-synchronises or rejects,
reports it on /diagnostics, and the arm keeps being held by fresh commands (not
by the watchdog)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

from rnea_ros.control.controller_status import CLOCK_RESET_SHOWN
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.nodes.harness import ClosedLoop
from rnea_ros.samples import sample_urdf

URDF = "package://rnea_ros/urdf/arm7.urdf"
MODEL = load_urdf(sample_urdf("arm7"))
Q0 = 0.5 * (MODEL.lower_limit + MODEL.upper_limit) + 0.3
CONTROLLER = {"urdf_path": URDF, "watchdog_timeout": 1.0, "diagnostics_period": 0.1}
# Real time (a timer at 1 kHz), not lockstep: a robot keeps streaming while the
# controller rejects, a lockstep simulator would wait for the command.
SIMULATOR = {"urdf_path": URDF, "initial_positions": Q0.tolist(), "lockstep": False}


def status_values(loop: ClosedLoop) -> dict[str, str]:
    """The newest controller status received: its values and message."""
    for array in reversed(loop.probe.recording.diagnostics):
        values = controller_values(array)
        if values:
            return values
    return {}


def controller_values(array: DiagnosticArray) -> dict[str, str]:
    """The controller status's values and message in ``array`` (empty: none)."""
    for s in array.status:
        if "rnea_controller" in s.name:
            return {v.key: v.value for v in s.values} | {"message": s.message}
    return {}


@pytest.fixture
def loop():
    with ClosedLoop(CONTROLLER, SIMULATOR) as closed:
        closed.simulator.sim.reset(Q0, t=3600.0)  # start an hour into simulated time
        assert closed.run_for(0.2)
        yield closed


def held(loop: ClosedLoop, seconds: float) -> tuple[int, float]:
    """Run ``seconds`` of simulated time: (fresh commands + states shed because a newer
    one was queued (issue 35), largest drift from Q0)."""
    c, intake = loop.controller.controller, loop.controller.intake
    before = c.commands + intake.shed
    start = len(loop.probe.recording.q)
    assert loop.run_for(seconds, wall_timeout=20.0), "the loop stalled (watchdog-paced?)"
    q = np.array(loop.probe.recording.q[start:])
    return c.commands + intake.shed - before, float(np.abs(q - Q0).max())


@pytest.mark.parametrize(("new_time", "reason"), [
    (0.0, "time_backwards"),  # simulator reset
    (10.0, "time_backwards"),  # an hour back (a bag played in a loop)
    (7200.0, "time_future"),  # an hour forward
])
def test_simulator_clock_jump_resynchronises_and_holds(loop: ClosedLoop, new_time: float,
                                                       reason: str) -> None:
    c = loop.controller.controller
    resets, rejected = c.clock_resets, c.rejected[reason]
    sim = loop.simulator.sim
    published: list[tuple[float, DiagnosticArray]] = []  # (steady time, report)
    pub = loop.controller.diagnostics_pub
    publish = pub.publish
    pub.publish = lambda msg: (published.append((time.monotonic(), msg)), publish(msg))[1]
    before = time.monotonic()
    sim.reset(sim.q, sim.qd, t=new_time)
    fresh, drift = held(loop, 0.5)
    assert c.clock_resets == resets + 1
    assert c.rejected[reason] - rejected == c.config.clock_reset.count - 1
    assert fresh >= 490 - c.config.clock_reset.count and drift < 1e-3
    assert not c.stale and c.stale_events == 0
    assert loop.spin_until(lambda: status_values(loop).get("clock resets") == str(resets + 1),
                           5.0)
    # Every report that counts the reset, published within CLOCK_RESET_SHOWN of it (of
    # `before`, earlier), says so (the first comes a diagnostics period after it). Not
    # the newest report: under load held() took 5.6-6.2 s of wall time for its 0.5 s
    # (the simulator's 1 kHz timer starved), and a report made more than
    # CLOCK_RESET_SHOWN after the reset rightly says "rejecting some inputs (4 in the
    # last 10 s)" again. (Its stamps are /clock's: the publishing time is taken here.)
    shown = [values for t, values in ((t, controller_values(a)) for t, a in published)
             if values.get("clock resets") == str(resets + 1) and t - before < CLOCK_RESET_SHOWN]
    assert shown, "no report within CLOCK_RESET_SHOWN of the reset"
    assert {r["message"] for r in shown} == {"clock reset: re-synchronised"}


@pytest.mark.parametrize(("offset", "reason"), [(-3600.0, "time_backwards"),
                                                (-0.05, "time_backwards"),
                                                (3600.0, "time_future")])
def test_single_rogue_stamp_is_rejected_and_the_loop_goes_on(loop: ClosedLoop, offset,
                                                             reason: str) -> None:
    c = loop.controller.controller
    resets, rejected = c.clock_resets, c.rejected[reason]
    msg = JointState()
    t = loop.sim_time + offset
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), round((t - int(t)) * 1e9)
    # (names in reverse order: another kind than the simulator's states, so a newer one
    # of those queued behind it does not shed it -- issue 35 -- and its stamp is checked)
    msg.name = list(MODEL.joint_names)[::-1]
    msg.position = (Q0 + 0.5).tolist()[::-1]  # would make a wrong command if merged
    msg.velocity = [0.0] * 7
    loop.probe.state_pub.publish(msg)
    assert loop.spin_until(lambda: c.rejected[reason] > rejected, 5.0)
    fresh, drift = held(loop, 0.3)
    assert c.clock_resets == resets and c.rejected[reason] == rejected + 1
    assert fresh >= 290 and drift < 1e-3 and not c.stale
