"""Torque-rate limiting: the slew limiter, and predictive time scaling in a
simulated closed loop (controller logic + Pinocchio plant, 1 kHz)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.rate_limit import SlewLimiter
from rnea_ros.core.errors import ParameterError
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation import Simulator

URDF = "package://rnea_ros/urdf/arm7.urdf"
RATE_LIMIT = 400.0  # N m/s, every joint
Q0 = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8])
Q1 = Q0 + np.array([1.2, 0.8, 1.0, 0.9, 1.0, -0.8, 1.0])
DURATION = 0.45  # s: a quintic this fast needs ~1430 N m/s on joint 3


def test_slew_limiter_ramps_a_step_at_the_limit() -> None:
    slew = SlewLimiter(np.array([1000.0, 500.0]))
    assert np.array_equal(slew(np.array([0.0, 0.0]), 0.0), [0.0, 0.0])  # first passes
    outputs = [slew(np.array([10.0, -10.0]), k * 1e-3) for k in range(1, 30)]
    assert np.allclose(outputs[0], [1.0, -0.5]) and np.allclose(outputs[9], [10.0, -5.0])
    assert np.allclose(outputs[-1], [10.0, -10.0])
    steps = np.abs(np.diff(np.array(outputs), axis=0))
    assert np.all(steps <= np.array([1.0, 0.5]) + 1e-12)
    assert slew.limited > 0


@pytest.mark.parametrize("receipts", [False, True])
@pytest.mark.parametrize("t", [0.0, -1.0, math.nan])
def test_slew_limiter_holds_on_zero_negative_or_invalid_dt(t: float, receipts: bool) -> None:
    """Held whatever the receipt interval (a NaN stamp step with a good receipt step:
    held, not limited on the receipt step alone)."""
    slew = SlewLimiter(np.array([1000.0]))
    slew(np.array([1.0]), 0.0, 0.0 if receipts else None)
    assert slew(np.array([5.0]), t, 0.001 if receipts else None).tolist() == [1.0]
    assert slew.bad_dt == 1
    # resumes from the last good time
    assert slew(np.array([5.0]), 0.002, 0.002 if receipts else None).tolist() == [3.0]


@pytest.mark.parametrize("limits", [[0.0], [-5.0], [np.inf], []])
def test_non_positive_rate_limits_are_refused(limits) -> None:
    with pytest.raises(ParameterError, match="effort_rate_limits"):
        SlewLimiter(np.array(limits))
    values = default_values()
    values.update(urdf_path=URDF, effort_rate_limits=limits or [0.0])
    model = load_model(values)
    if np.all(np.isfinite(limits)):
        with pytest.raises(ParameterError, match="parameter 'effort_rate_limits'"):
            controller_config(values, model)


def fast_motion(scaling: bool):
    values = default_values()
    values.update(urdf_path=URDF, mode="inverse_dynamics",
                  kp=[60, 60, 60, 60, 20, 20, 10], kd=[8, 8, 8, 4, 1, 1, 0.5],
                  effort_rate_limits=[RATE_LIMIT])
    values["slew_limit.enable"] = False  # measure what the law itself commands
    values["time_scaling.enable"] = scaling
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    sim = Simulator(sample_urdf("arm7"), model)
    sim.reset(Q0)
    # (one step before the loop's first state, at 0: at 0 that one would repeat its stamp)
    ctl.joint_state(model.joint_names, sim.q, sim.qd, -sim.dt, now=-sim.dt)
    s = np.linspace(0, 1, 81)
    quintic = np.polynomial.Polynomial([0, 0, 0, 10, -15, 6])
    ctl.trajectory(model.joint_names, s * DURATION, Q0 + np.outer(quintic(s), Q1 - Q0),
                   np.outer(quintic.deriv(1)(s) / DURATION, Q1 - Q0),
                   np.outer(quintic.deriv(2)(s) / DURATION**2, Q1 - Q0), 0.0)
    commands, positions, speeds, constraints = [], [], [], set()
    for _ in range(2000):
        result = ctl.joint_state(model.joint_names, sim.q, sim.qd, sim.t, now=sim.t)
        commands.append(result.command)
        positions.append(sim.q.copy())
        if ctl.reference.scaling is not None:
            speeds.append(ctl.reference.scaling.speed)
            constraints.add(ctl.reference.scaling.constraint)
        sim.step(result.command)
    rate = np.abs(np.diff(np.array(commands), axis=0)).max(axis=0) / sim.dt
    positions = np.array(positions)
    arrival = float(np.argmax(np.abs(positions - Q1).max(axis=1) < 2e-3)) * sim.dt
    dense = Q0 + np.outer(quintic(np.linspace(0, 1, 20001)), Q1 - Q0)
    deviation = max(float(np.min(np.abs(dense - q).max(axis=1))) for q in positions[::5])
    return rate, arrival, deviation, speeds, constraints


def test_predictive_time_scaling_keeps_the_torque_rate_and_the_path() -> None:
    rate, arrival, deviation, speeds, constraints = fast_motion(scaling=True)
    assert rate.max() <= 1.05 * RATE_LIMIT  # stated tolerance: 5 % (1 ms time step)
    assert deviation < 2e-3  # rad, from the planned geometric path
    assert arrival > DURATION + 0.1  # it got there, later
    assert min(speeds) < 0.8 and speeds[-1] > 0.9999  # slowed down, back to 1 afterwards
    assert any(c.startswith("effort_rate joint") for c in constraints)


def test_without_time_scaling_the_limit_is_violated() -> None:
    rate, _, deviation, speeds, _ = fast_motion(scaling=False)
    assert rate.max() > 3 * RATE_LIMIT
    assert not speeds and deviation > 5 * 2e-3


def test_the_slew_counter_counts_only_a_bound_that_acted() -> None:
    """A move within rate * dt is not 'limited', even where previous + (tau - previous)
    rounds to something other than tau (found planning: 0.1 -> 1e-17)."""
    from rnea_ros.control._rate_limit_jit import slew_step

    out = np.zeros(3)
    previous = np.array([0.1, 0.0, 0.0])
    tau = np.array([1e-17, 5.0, -5.0])
    limited = slew_step(tau, previous, np.full(3, 1000.0), 1e-3, out)
    assert limited == 2
    assert out[0] == 1e-17 and out[1] == 1.0 and out[2] == -1.0


# Issue 22 §2: the limit protects the hardware in the hardware's (the receiver's) time,
# so a sender's stamps cannot loosen it. Each attack is a stream of (stamp, receipt)
# pairs: receipts 1 ms apart, stamps as the attacker likes.
ATTACKS = {
    # one state dated +0.9 s (inside the 1 s clock-reset threshold), then honest ones
    "single future stamp": [(1.0, 0.0), (1.9, 1e-3)] + [(1.9 + k * 1e-3, (k + 1) * 1e-3)
                                                         for k in range(1, 20)],
    "stamps 0.9 s apart": [(1.0 + 0.9 * k, k * 1e-3) for k in range(21)],
    "bag at --rate 10": [(1.0 + 1e-2 * k, k * 1e-3) for k in range(21)],
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_slew_limiter_bounds_each_step_by_the_receipt_interval(attack: str) -> None:
    slew = SlewLimiter(np.array([1000.0, 200.0]))
    outputs = [slew(np.array([0.0, 0.0]) if k == 0 else np.array([30.0, -30.0]), t, received)
               for k, (t, received) in enumerate(ATTACKS[attack])]
    steps = np.abs(np.diff(np.array(outputs), axis=0))
    assert np.all(steps <= np.array([1.0, 0.2]) + 1e-9), steps.max(axis=0)
    assert slew.limited > 0 and np.abs(outputs[-1]).min() > 0.0


CONTROLLER_PATHS = {
    "gravity (fused)": {},
    "gravity + friction (stages)": {"friction_compensation": True},
    "inverse_dynamics (fused)": {"mode": "inverse_dynamics"},
    "inverse_dynamics (stages)": {"mode": "inverse_dynamics"},
}


def path_controller(path: str) -> tuple[TorqueController, object]:
    """A controller at 200 N m/s (the issue's numbers) on ``path``."""
    values = default_values()
    values.update(urdf_path=URDF, effort_rate_limits=[200.0], **CONTROLLER_PATHS[path])
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    if path == "inverse_dynamics (stages)":
        ctl._inverse_dynamics_command = None  # the Reference and InverseDynamicsPD stages
    fused = ctl._gravity_command is not None or ctl._inverse_dynamics_command is not None
    assert fused == ("fused" in path)
    return ctl, model


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("path", CONTROLLER_PATHS)
def test_stamps_cannot_loosen_the_controllers_rate_limit(attack: str, path: str) -> None:
    """The issue's numbers: 200 N m/s, a pose that makes the law's torque jump by tens of
    N m; every step within 200 N m/s * 1 ms by the node's clock, on the fused paths and
    the stage pipeline alike (old main: 32 N m in one step)."""
    ctl, model = path_controller(path)
    names, zeros = model.joint_names, [0.0] * 7
    commands = []
    for k, (stamp, received) in enumerate(ATTACKS[attack]):
        q = Q0 if k == 0 else Q1  # gravity: g jumps; inverse_dynamics: Kp (q_hold - q) too
        result = ctl.joint_state(names, q, zeros, stamp, now=received)
        assert result.command is not None, (k, result)
        commands.append(result.command.copy())
    steps = np.abs(np.diff(np.array(commands), axis=0))
    assert np.all(steps <= 200.0 * 1e-3 + 1e-9), steps.max()
    assert ctl.slew is not None and ctl.slew.limited > 0
    unlimited = np.abs(commands[-1] - commands[0]).max()
    assert unlimited > 1.0  # it moved, at the limit


@pytest.mark.parametrize("path", CONTROLLER_PATHS)
def test_a_node_on_simulated_time_bounds_by_its_own_clock(path: str) -> None:
    """On simulated time the receipt clock is ``/clock`` under the clock rule
    (issue 35): a lockstep simulation slower than real time, or faster up to
    ``clock_max_speed`` (10), is limited in simulated time; one faster than that in
    steady time (a ``/clock`` jump cannot let a step through); a state stamped ahead
    of ``/clock`` gains nothing."""
    ctl, model = path_controller(path)
    clock = iter([1.0, 1.001, 1.002, 1.003, 1.004])
    ctl.use_plant_clock(lambda: next(clock))
    names, zeros = model.joint_names, [0.0] * 7
    first = ctl.joint_state(names, Q0, zeros, 1.0, now=0.0).command.copy()
    # 1 ms of simulated time in 10 ms of real time: a 0.2 N m step (200 N m/s), not 2
    second = ctl.joint_state(names, Q1, zeros, 1.001, now=0.01).command.copy()
    assert np.abs(second - first).max() == pytest.approx(0.2)
    # 1 ms of simulated time in 0.2 ms of real time (5x): 0.2 N m, in simulated time
    third = ctl.joint_state(names, Q1, zeros, 1.002, now=0.0102).command.copy()
    assert np.abs(third - second).max() == pytest.approx(0.2)
    # 1 ms of simulated time in 0.05 ms of real time (20x): 0.01 N m, in steady time
    fourth = ctl.joint_state(names, Q1, zeros, 1.003, now=0.01025).command.copy()
    assert np.abs(fourth - third).max() == pytest.approx(0.01)
    # a state stamped ahead of /clock gains nothing
    fifth = ctl.joint_state(names, Q1, zeros, 1.9, now=0.02025).command
    assert np.abs(fifth - fourth).max() == pytest.approx(0.2)
