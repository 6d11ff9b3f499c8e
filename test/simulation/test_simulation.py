"""The plant of the tests and the simulator node (rnea_ros.simulation.Simulator):
hard stops at the URDF limits and no non-finite state, ever; on a rocking base,
its accelerations against Pinocchio's free-flyer with a prescribed root."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rnea_ros.core.errors import ParameterError
from rnea_ros.core.model.payload import Payload
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation import RockingBase, Simulator

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


# ------------------------------------------------------------------ moving base
ROCKING = RockingBase(roll_amplitude=0.0873, roll_frequency=0.5, pitch_amplitude=0.05,
                      pitch_frequency=0.3, heave_amplitude=0.05, heave_frequency=0.7,
                      roll_offset=0.02, pitch_offset=-0.03)


def test_rocking_base_velocities_and_accelerations_are_the_pose_derivatives() -> None:
    h = 1e-5
    for t in (0.0, 0.37, 1.9):
        (R0, p0), (R1, p1), (R2, p2) = (ROCKING.pose(t + d) for d in (-h, 0.0, h))
        m = ROCKING.motion(t)
        np.testing.assert_allclose(m.orientation, R1, atol=1e-15)
        W = R1.T @ (R2 - R0) / (2 * h)  # [w_b] = R^T dR/dt
        np.testing.assert_allclose([W[2, 1], W[0, 2], W[1, 0]], m.angular_velocity, atol=1e-9)
        np.testing.assert_allclose(m.linear_velocity, R1.T @ (p2 - p0) / (2 * h), atol=1e-9)
        np.testing.assert_allclose(m.linear_acceleration, R1.T @ (p2 - 2 * p1 + p0) / h**2,
                                   atol=1e-5)
        dw = (ROCKING.motion(t + h).angular_velocity - ROCKING.motion(t - h).angular_velocity)
        np.testing.assert_allclose(m.angular_acceleration, dw / (2 * h), atol=1e-8)
    assert ROCKING.moving and not RockingBase().moving


def test_a_bad_rocking_base_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="'roll_amplitude' must be finite"):
        RockingBase(roll_amplitude=np.nan)
    with pytest.raises(ParameterError, match="'heave_frequency' must be >= 0 Hz"):
        RockingBase(heave_frequency=-1.0)


@pytest.mark.parametrize("integrator", ["semi_implicit", "rk4"])
def test_a_step_on_a_rocking_base_matches_pinocchio_free_flyer(integrator: str) -> None:
    """One step's accelerations against Pinocchio with a free-flyer root whose motion
    is prescribed: ``M_jj qdd = tau - h_j - M_jb a_base`` from the joint rows of
    Pinocchio's CRBA and RNEA (``a_base`` spatial, local), with a payload, damping
    and friction."""
    payload = Payload("flange", 1.5, (0.01, 0.0, 0.04), (0.002, 0.002, 0.001, 0.0, 0.0, 0.0))
    damping, friction = np.full(MODEL.nv, 0.3), np.full(MODEL.nv, 0.2)
    sim = Simulator(URDF, MODEL, base=ROCKING, payload=payload, damping=damping,
                    friction=friction, integrator=integrator)
    pm, pd, _, _, idx_v = sim.engine.free_flyer()
    rng = np.random.default_rng(7)
    for _ in range(5):
        t = float(rng.uniform(0.0, 3.0))
        q, qd = rng.uniform(MODEL.lower_limit, MODEL.upper_limit), rng.normal(0, 1, MODEL.nv)
        tau = rng.normal(0, 10, MODEL.nv)
        motion = ROCKING.motion(t)
        qf, vf, af = sim.engine.moving_base_state(motion, q, qd, np.zeros(MODEL.nv))
        M = pin.crba(pm, pd, qf)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.rnea(pm, pd, qf, vf, af)  # with the base's acceleration, qdd = 0
        applied = tau - damping * qd - friction * np.sign(qd)
        expected = np.linalg.solve(M[np.ix_(idx_v, idx_v)], applied - h[idx_v])
        sim.reset(q, qd, t)
        sim._time = t
        got = sim.acceleration(q, qd, tau)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
        sim.step(tau)
        if integrator == "semi_implicit":
            np.testing.assert_allclose(sim.qd, qd + sim.dt * expected, rtol=0, atol=1e-9)
            np.testing.assert_allclose(sim.q, q + sim.dt * sim.qd, rtol=0, atol=1e-12)
        np.testing.assert_allclose(sim.qdd, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
        assert sim.t == pytest.approx(t + sim.dt)


def test_a_fixed_base_still_uses_pinocchio_aba() -> None:
    sim = Simulator(URDF, MODEL, base=RockingBase())
    assert sim.base is None
