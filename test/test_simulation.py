"""The plant of the tests and the simulator node (rnea_ros.simulation.Simulator):
hard stops at the URDF limits and no non-finite state, ever."""

from __future__ import annotations

import numpy as np

from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation import Simulator

URDF = sample_urdf("arm7")
MODEL = load_urdf(URDF)
Q0 = 0.5 * (MODEL.lower_limit + MODEL.upper_limit)


def test_an_unpowered_arm_falls_onto_its_stops_and_stays_finite() -> None:
    sim = Simulator(URDF, MODEL)
    sim.reset(Q0)
    for _ in range(3000):  # 3 s of free fall, no damping
        sim.step(np.zeros(MODEL.nv))
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
        assert np.all(sim.q >= MODEL.lower_limit) and np.all(sim.q <= MODEL.upper_limit)
    assert sim.stops > 0 and sim.diverged == 0


def test_without_stops_the_same_fall_leaves_the_limits() -> None:
    sim = Simulator(URDF, MODEL, hard_stops=False)
    sim.reset(Q0)
    left = False
    for _ in range(3000):
        sim.step(np.zeros(MODEL.nv))
        left |= bool(np.any(sim.q < MODEL.lower_limit) or np.any(sim.q > MODEL.upper_limit))
    assert left and sim.stops == 0


def test_a_diverged_step_is_not_taken() -> None:
    sim = Simulator(URDF, MODEL)
    sim.reset(Q0, 0.1 * np.ones(MODEL.nv))
    sim.acceleration = lambda q, qd, tau: np.full(MODEL.nv, np.inf)  # type: ignore[method-assign]
    sim.step(np.zeros(MODEL.nv))
    assert np.array_equal(sim.q, Q0) and not sim.qd.any()
    assert sim.diverged == 1 and sim.steps == 1
