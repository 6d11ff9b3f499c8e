"""Identification in closed loop over DDS (issue 15): the embedded simulator runs a
"true" arm7 (masses +-20 %, centres of mass moved by up to 3 cm, Coulomb and viscous
joint friction) while the controller has the nominal URDF; ``rnea-identify excite``
designs the excitation, ``inverse_dynamics`` executes it, the simulator's joint states
(effort = applied torque) and the commands go to a bag, ``rnea-identify`` identifies,
and the controller restarts with the identified files. Used by the demo (phase 7) and
``test/nodes/test_identification_loop.py``. The true robot:
:mod:`rnea_ros.identification.truth`; the bag: :func:`rnea_ros.tools.synthetic_bag.
write_recording`.
"""

from __future__ import annotations

import time

import numpy as np

from rnea_ros.identification.errors import IdentificationLoopError
from rnea_ros.identification.truth import TRUE_COULOMB, TRUE_VISCOUS, true_urdf
from rnea_ros.nodes.harness import ARM7_GAINS as GAINS
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.synthetic_bag import write_recording

__all__ = ["TRUE_COULOMB", "TRUE_VISCOUS", "identification_loop", "true_simulator",
           "true_urdf"]


def true_simulator(truth: str, q0: np.ndarray) -> dict[str, object]:
    """The simulator's parameters for the true robot (URDF text ``truth``) from ``q0``."""
    return {"robot_description": truth, "initial_positions": q0.tolist(),
            "friction": TRUE_COULOMB, "damping": TRUE_VISCOUS}


# Lockstep runs on simulated time; the controller's watchdog is on the steady clock and
# would count a stall of this process (a loaded machine) as states stopping: its stale
# command then steps the simulator once more, two states go round the loop from then on
# and the recording changes. These runs are about identification, not the watchdog.
WATCHDOG = 10.0  # s: the safety bound's longest (params/controller.yaml: watchdog_timeout)


def excite_and_record(truth: str, nominal: str, trajectory, bag) -> int:  # type: ignore[no-untyped-def]
    """Execute the excitation ``trajectory`` (YAML) with ``inverse_dynamics`` on the nominal
    URDF, the simulator running ``truth`` in lockstep; write its joint states from the
    trajectory's start on (effort = applied torque) and the commands (the controller's
    ``~/efforts``, stamped with the state each answers) to ``bag``. The same states and
    commands on any schedule (:meth:`~rnea_ros.nodes.harness.ClosedLoop.send_trajectory_held`
    at the first state, :data:`WATCHDOG`).
    Returns the number of states recorded."""
    from rnea_ros.nodes.harness import ClosedLoop
    from rnea_ros.planning.output import read_trajectory

    names, t, q, qd, qdd = read_trajectory(trajectory)
    controller = {"urdf_path": nominal, "watchdog_timeout": WATCHDOG,
                  "mode": "inverse_dynamics", "publish_effort_state": True, **GAINS}
    with ClosedLoop(controller, true_simulator(truth, q[0])) as loop:
        ctl = loop.controller.controller if loop.controller else None
        assert ctl is not None  # (ClosedLoop with a controller)
        # From the simulator's first state (t = 0, at the excitation's start pose, at rest):
        # the controller holds no pose of its own before, so the recording starts where the
        # excitation does (after 0.3 s of holding on the nominal model, the true arm had
        # sagged 0.0101 rad).
        start = loop.send_trajectory_held(names, t, q, qd, qdd)
        duration = float(t[-1]) + 0.3
        began = time.monotonic()
        if not loop.run_for(duration, wall_timeout=120 + 30 * duration):
            raise IdentificationLoopError(
                f"the lockstep loop simulated {loop.sim_time - start:.2f} of "
                f"{duration:.2f} s in {time.monotonic() - began:.0f} s")
        rec = loop.probe.recording
        with loop.held():  # the probe takes the last state and the command answering it
            end = loop.sim_time
            if not loop.spin_until(lambda: bool(rec.t) and bool(rec.efforts) and
                                   min(rec.t[-1], rec.efforts[-1][0]) >= end - 1e-9, 10.0):
                raise IdentificationLoopError(
                    "the probe did not receive the last state and command")
        if ctl.stale_events:
            raise IdentificationLoopError(
                f"the controller's watchdog fired ({ctl.stale_events}x): the "
                f"process stalled for more than {WATCHDOG:g} s")
    # The probe subscribed before the loop started (ClosedLoop): every state and command,
    # once each (a first state the controller missed is published again: the probe may
    # have it twice, the same message).
    states: dict[float, tuple[float, list[float], list[float], list[float]]] = {}
    for stamp, p, v, e in zip(rec.t, rec.q, rec.qd, rec.effort, strict=True):
        if start - 1e-9 <= stamp <= end + 1e-9:
            states.setdefault(stamp, (stamp, p.tolist(), v.tolist(), e.tolist()))
    commands = [(stamp, e.tolist()) for stamp, e in rec.efforts
                if start - 1e-9 <= stamp <= end + 1e-9]
    write_recording(bag, names, list(states.values()), commands)
    return len(states)


def hold_and_track(truth: str, urdf: str, drives: str | None, q0: np.ndarray
                   ) -> tuple[float, float]:
    """Gravity mode holds ``q0`` for 1 s: the drift; then ``inverse_dynamics`` with
    friction compensation tracks a 0.3 rad, 0.5 Hz sinusoid for 2 s: the RMS. (Gravity
    mode compensates no friction: at the measured velocity it would cancel the friction
    that holds the arm.)"""
    from rnea_ros.nodes.harness import ClosedLoop, track_sinusoid

    controller = {"urdf_path": urdf, "watchdog_timeout": WATCHDOG, "mode": "gravity",
                  **GAINS}
    if drives is not None:
        controller["drives_file"] = drives
    with ClosedLoop(controller, true_simulator(truth, q0)) as loop:
        loop.run_for(1.0, wall_timeout=60.0)
        drift = float(np.abs(loop.probe.recording.q[-1] - q0).max())
        results = loop.set_controller_parameters({"mode": "inverse_dynamics",
                                                  "friction_compensation": True})
        if not all(r.successful for r in results):
            raise IdentificationLoopError(f"mode switch refused: {[r.reason for r in results]}")
        _, error, _ = track_sinusoid(loop, loop.probe.recording.q[-1], 0.3, np.pi, 2.0)
    return drift, float(np.sqrt(np.mean(error**2)))


def identification_loop(workdir, periods: int = 2, seed: int = 2):  # type: ignore[no-untyped-def]
    """Phase 7: ``rnea-identify excite`` -> execute and record a bag -> ``rnea-identify``
    -> hold and track with the nominal and the identified files, on the true robot.
    Returns ``(before, after)``, each ``(hold drift, tracking RMS)`` [rad]."""
    from pathlib import Path

    from rnea_ros.identification.cli import main as identify

    workdir = Path(workdir)
    nominal = str(sample_urdf("arm7"))
    truth = true_urdf(Path(nominal).read_text(encoding="utf-8"))
    trajectory, bag, out = workdir / "excitation.yaml", workdir / "bag", workdir / "ident"
    if identify(["excite", "--urdf", nominal, "--out", str(trajectory), "--frequency", "0.2",
                 "--harmonics", "4", "--periods", str(periods), "--torque-fraction", "0.6",
                 "--acceleration", "4", "--limits", "velocity=1.5"]) != 0:
        raise IdentificationLoopError("rnea-identify excite failed")
    count = excite_and_record(truth, nominal, trajectory, bag)
    print(f"[identify] executed and recorded {count} joint states to {bag}")
    # The simulator has no sensor noise: a higher cutoff and rate keep more samples.
    if identify([str(bag), "--urdf", nominal, "--out", str(out), "--no-plots",
                 "--validation", "0.15", "--rate", "40", "--cutoff", "20"]) != 0:
        raise IdentificationLoopError("rnea-identify failed")
    model = load_robot("arm7")
    mid = 0.5 * (model.lower_limit + model.upper_limit)
    q0 = np.random.default_rng(seed).uniform(mid - 0.4, mid + 0.4)
    before = hold_and_track(truth, nominal, None, q0)
    after = hold_and_track(truth, str(out / "robot_identified.urdf"),
                           str(out / "drives_identified.yaml"), q0)
    return before, after
