"""ClosedLoopController without ROS: closed-loop robots (URDF spanning tree + loop file)
measured and commanded on their active joints, against Pinocchio's constrained dynamics
(:class:`rnea_ros.simulation.LoopSimulator`) in closed loop; rejection of states at which
the loops cannot close or are singular; passive-encoder checks; configuration errors."""

from __future__ import annotations

import time

import numpy as np
import pytest
from loop_cases import names, random_mechanism, run

import rnea_ros.core as rc
from rnea_ros.control.closed_loop import ClosedLoopController, wrapped
from rnea_ros.control.config import controller_config, default_values
from rnea_ros.core.errors import ParameterError, StateError
from rnea_ros.samples import load_loop_robot, sample_urdf
from rnea_ros.simulation import LoopSimulator

FIVE_BAR = load_loop_robot("five_bar")
# Exactly stretched: both proximal links along the base line, the distal links collinear.
# The loop closes there, but the elbows are not determined by the motors (singular).
SINGULAR = np.array([np.pi - 2.260904310996017, -0.8806883425937764])
GAINS = {"five_bar": ([50.0], [5.0]), "palletizer": ([20000.0], [2000.0]),
         "four_bar": ([20.0], [1.0])}


def make(loops: rc.ClosedLoopModel = FIVE_BAR, **changes) -> ClosedLoopController:
    values = {**default_values(), **changes}
    return ClosedLoopController(loops, controller_config(values, loops.tree, loops=loops))




# ---------------------------------------------------------------- the control law
def test_gravity_mode_commands_the_closed_loop_gravity_of_the_solved_configuration() -> None:
    ctl = make(joints=["right_motor", "left_motor"])
    qa = np.array([0.2, -0.15])
    result = ctl.joint_state(["right_motor", "extra", "left_motor"], [qa[1], 9.0, qa[0]], [],
                             stamp=1.0, now=0.0)
    q = rc.solve_loops(FIVE_BAR, qa)
    assert np.allclose(result.command, rc.loop_gravity(FIVE_BAR, q)[[1, 0]], atol=1e-12)
    assert np.allclose(ctl.solver.last, q, atol=1e-12)


def test_inverse_dynamics_is_the_closed_loop_id_of_the_reference_plus_pd() -> None:
    ctl = make(mode="inverse_dynamics", kp=[50.0], kd=[5.0], **{"slew_limit.enable": False})
    qa = np.array([0.05, -0.1])
    ctl.joint_state(names(FIVE_BAR), qa, [0.0, 0.0], stamp=1.0, now=0.0)  # holds here
    T = np.array([0.0, 1.0])
    P = np.array([qa, qa + np.array([0.1, 0.1])])
    ctl.trajectory(names(FIVE_BAR), T, P, None, None, start=1.0)
    measured, velocity = qa + np.array([0.01, -0.02]), np.array([0.3, 0.1])
    result = ctl.joint_state(names(FIVE_BAR), measured, velocity, stamp=1.4, now=0.4)
    q_d, qd_d, qdd_d = ctl.reference.trajectory.sample(1.4)
    q_ref = rc.solve_loops(FIVE_BAR, q_d)
    model = FIVE_BAR.tree.without_friction()
    loops = rc.build_loops(model, FIVE_BAR.loops, FIVE_BAR.active, FIVE_BAR.q_reference)
    expected = rc.loop_rnea(loops, q_ref, qd_d, qdd_d) + 50.0 * (q_d - measured) + \
        5.0 * (qd_d - velocity)
    assert np.allclose(result.command, expected, rtol=1e-12, atol=1e-12)


def test_gravity_mode_holds_the_five_bar_in_pinocchios_constrained_dynamics() -> None:
    """Hold: 2 s from a start off the reference, within 1e-9 rad on every tree joint."""
    ctl = make()
    sim = LoopSimulator(sample_urdf("five_bar"), FIVE_BAR)
    q0 = rc.solve_loops(FIVE_BAR, [0.3, -0.2])
    sim.reset(q0)
    run(ctl, sim, 2.0)
    assert np.abs(sim.q - q0).max() < 1e-9
    assert sim.closure_error() < 1e-9 and ctl.passive_deviation_max < 1e-9
    assert sum(ctl.rejected.values()) == 0
    # Without gravity compensation (zero gravity in the controller) it falls.
    ctl = make(gravity=[0.0, 0.0, 0.0])
    sim.reset(q0)
    run(ctl, sim, 0.3)
    assert np.abs(sim.q - q0).max() > 1e-2


@pytest.mark.parametrize(("robot", "amplitude", "bound"), [
    ("five_bar", 0.15, 2e-4), ("palletizer", 0.1, 2e-4), ("four_bar", 0.5, 5e-4)])
def test_inverse_dynamics_tracks_a_cosine_in_pinocchios_constrained_dynamics(
        robot: str, amplitude: float, bound: float) -> None:
    """Track ``q0 + A (1 - cos(pi t))`` on every active joint for 3 s (active joints
    only measured); the error bound is checked at every step, passive joints included
    (against the reference solved by our closure). Measured: 7.2e-5 (five_bar),
    5.0e-5 (palletizer), 1.6e-4 rad (four_bar)."""
    loops = load_loop_robot(robot)
    kp, kd = GAINS[robot]
    ctl = make(loops, mode="inverse_dynamics", kp=kp, kd=kd,
               effort_rate_limits=[1e5])
    sim = LoopSimulator(sample_urdf(robot), loops)
    qa0 = 0.5 * (loops.q_reference[loops.active_index] - amplitude)
    t0 = 1.0  # [s] the run's first stamp (a stamp is never negative: bad_stamp)
    sim.reset(rc.solve_loops(loops, qa0), t=t0)
    T = np.arange(0.0, 4.0, 0.01)
    w = np.pi
    shape = np.ones(loops.n_active)
    P = qa0 + amplitude * (1 - np.cos(w * T))[:, None] * shape
    V = amplitude * w * np.sin(w * T)[:, None] * shape
    A = amplitude * w**2 * np.cos(w * T)[:, None] * shape
    # (the robot at rest one step before the run's first state, at t0: a state at t0
    # here would make that one a duplicate stamp, rejected)
    ctl.joint_state(names(loops), sim.q[loops.active_index], sim.qd[loops.active_index],
                    stamp=t0 - sim.dt, now=t0 - sim.dt)
    ctl.trajectory(names(loops), T, P, V, A, start=t0)
    errors: list[float] = []
    reference = np.array(loops.q_reference)

    def check(s: LoopSimulator) -> None:
        nonlocal reference
        qa_d = ctl.reference.trajectory.sample(s.t)[0]
        reference = rc.solve_loops(loops, qa_d, reference)
        errors.append(float(np.abs(wrapped(s.q - reference, np.ones(loops.n, bool))).max()))
    commands = run(ctl, sim, 3.0, publish_passive=False, on_step=check)
    assert max(errors) < bound, max(errors)
    assert np.all(np.isfinite(commands)) and sum(ctl.rejected.values()) == 0
    assert ctl.saturated == 0


# ---------------------------------------------------------------- bad states
def test_a_singular_state_is_rejected_then_the_watchdog_holds_then_it_recovers() -> None:
    ctl = make(watchdog_timeout=0.1, watchdog_grace=0.0)
    good = np.array([0.1, -0.1])
    first = ctl.joint_state(names(FIVE_BAR), good, [], stamp=1.0, now=0.0)
    assert first.command is not None
    q_good = ctl.solver.last.copy()
    bad = ctl.joint_state(names(FIVE_BAR), SINGULAR, [], stamp=1.001, now=0.001)
    assert bad.command is None and bad.reason == "loop_closure"
    assert "singular" in bad.message and "tool_pin" in bad.message
    assert ctl.rejected["loop_closure"] == 1 and np.array_equal(ctl.solver.last, q_good)
    assert ctl.watchdog(now=0.05) is None  # the last command stays until the timeout
    held = ctl.watchdog(now=0.2)
    assert ctl.stale and np.allclose(held, rc.loop_gravity(FIVE_BAR, q_good), atol=1e-12)
    again = ctl.joint_state(names(FIVE_BAR), good + 0.01, [], stamp=1.21, now=0.21)
    assert again.command is not None and not ctl.stale
    assert np.allclose(again.command, rc.loop_gravity(FIVE_BAR,
                                                      rc.solve_loops(FIVE_BAR, good + 0.01)))


def test_near_singular_states_give_finite_saturated_commands() -> None:
    ctl = make()
    ctl.joint_state(names(FIVE_BAR), [0.1, -0.1], [], stamp=1.0, now=0.0)
    t = 1.0
    for eps in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
        t += 0.01
        result = ctl.joint_state(names(FIVE_BAR), SINGULAR - eps, [], stamp=t, now=t)
        if result.command is None:
            assert result.reason == "loop_closure", (eps, result)
            continue
        assert np.all(np.isfinite(result.command)), eps
        assert np.all(np.abs(result.command) <= 5.0), eps  # the URDF's effort limit


def test_a_state_where_the_loop_cannot_close_is_rejected() -> None:
    mechanism = random_mechanism(0, "revolute").model  # closes for q_a >= -0.75 rad only
    ctl = make(mechanism)
    assert ctl.joint_state(["ja1"], [0.5], [], stamp=1.0, now=0.0).command is not None
    bad = ctl.joint_state(["ja1"], [-2.5], [], stamp=1.001, now=0.0)
    assert bad.reason == "loop_closure" and "cannot be closed" in bad.message
    assert ctl.joint_state(["ja1"], [0.4], [], stamp=1.002, now=0.0).command is not None


def test_a_trajectory_leaving_the_workspace_is_refused_and_the_old_one_kept() -> None:
    mechanism = random_mechanism(0, "revolute").model
    ctl = make(mechanism, mode="inverse_dynamics")
    ctl.joint_state(["ja1"], [0.5], [0.0], stamp=1.0, now=0.0)
    ctl.trajectory(["ja1"], np.array([0.0, 1.0]), np.array([[0.5], [1.0]]), None, None, 1.0)
    kept = ctl.reference.trajectory
    with pytest.raises(StateError, match="trajectory does not close the loops"):
        ctl.trajectory(["ja1"], np.array([0.0, 1.0]), np.array([[0.5], [-2.0]]), None, None,
                       1.0)
    assert ctl.reference.trajectory is kept
    with pytest.raises(StateError, match=r"names passive joints 'jb1': .* active joints 'ja1'"):
        ctl.trajectory(["ja1", "jb1"], np.array([0.0]), np.array([[0.5, 0.0]]), None, None,
                       1.0)


# ---------------------------------------------------------------- passive encoders
def test_passive_encoders_are_checked_against_the_solution() -> None:
    ctl = make(**{"loops.passive_tolerance": 0.01})
    qa = np.array([0.1, -0.1])
    q = rc.solve_loops(FIVE_BAR, qa)
    passive = q[FIVE_BAR.passive_index]
    everything = names(FIVE_BAR, passive=True)
    ok = ctl.joint_state(everything, np.r_[qa, passive + np.array([1e-4, 2 * np.pi])], [], 1.0, 0.0)
    assert ok.command is not None and ctl.passive_checks == 1
    assert ctl.passive_deviation == pytest.approx(1e-4, abs=1e-9)  # 2 pi is no deviation
    assert ctl.passive_alarm == "" and ctl.passive_mismatches == 0
    wrong = ctl.joint_state(everything, np.r_[qa, passive + np.array([0.0, 0.2])], [], 1.001, 0.0)
    assert wrong.command is not None  # a consistency check, not a rejection
    assert ctl.passive_deviation == pytest.approx(0.2, abs=1e-9)
    assert ctl.passive_worst == "right_elbow" and ctl.passive_mismatches == 1
    assert "right_elbow" in ctl.passive_alarm and "0.2" in ctl.passive_alarm
    # A passive-only message is checked against the latest solution.
    ctl.joint_state(["left_elbow"], [passive[0] - 0.05], [], 1.002, 0.0)
    assert ctl.passive_worst == "left_elbow" and ctl.passive_deviation_max == \
        pytest.approx(0.2, abs=1e-9) and ctl.passive_checks == 3
    # Passive joints do not complete a state: the active ones are needed.
    fresh = make()
    partial = fresh.joint_state(["left_motor", "left_elbow", "right_elbow"], [0.1, 0.0, 0.0],
                                [], 1.0, 0.0)
    assert partial.reason == "missing_joints" and "right_motor" in partial.message


# ---------------------------------------------------------------- configuration
@pytest.mark.parametrize(("changes", "message"), [
    ({"joints": ["left_motor", "left_elbow"]},
     "'left_elbow' passive in the loop file (not actuated); commandable (active) joints: "
     "'left_motor', 'right_motor'"),
    ({"joints": ["left_motor", "wrist"]}, "'wrist' not in the model"),
    ({"mode": "elastic"}, "a closed-loop robot runs 'gravity' or 'inverse_dynamics'"),
    ({"time_scaling.enable": True}, "not supported for closed-loop robots"),
    ({"kp": [1.0, 2.0, 3.0]}, "parameter 'kp' has 3 values; give 1 or 2"),
    ({"loops.passive_tolerance": 0.0}, "'loops.passive_tolerance' must be > 0"),
])
def test_invalid_parameters_name_the_parameter(changes, message: str) -> None:
    with pytest.raises(ParameterError) as error:
        controller_config({**default_values(), **changes}, FIVE_BAR.tree, loops=FIVE_BAR)
    assert message in str(error.value)


def test_payload_and_gravity_apply_to_the_closed_loop_model() -> None:
    payload = {"payload.link": "tool", "payload.mass": 1.0}
    ctl = make(**payload)
    qa = np.array([0.1, -0.1])
    result = ctl.joint_state(names(FIVE_BAR), qa, [], 1.0, 0.0)
    heavier = rc.with_payload(FIVE_BAR.tree, rc.Payload("tool", 1.0))
    loops = rc.build_loops(heavier, FIVE_BAR.loops, FIVE_BAR.active, FIVE_BAR.q_reference)
    expected = rc.loop_gravity(loops, rc.solve_loops(FIVE_BAR, qa))
    assert np.allclose(result.command, expected, atol=1e-12)
    assert not np.allclose(expected, rc.loop_gravity(FIVE_BAR, rc.solve_loops(FIVE_BAR, qa)))


# ---------------------------------------------------------------- hostile states
FOUR_BAR = load_loop_robot("four_bar")


def handle(ctl: ClosedLoopController, qa, stamp: float):
    """One joint state, and the wall time the controller spent on it [s]."""
    started = time.perf_counter()
    result = ctl.joint_state(names(ctl.loops), qa, [], stamp=stamp, now=stamp)
    return result, time.perf_counter() - started


@pytest.mark.parametrize("crank", [1e5, 2e4, 5e4, -1e6])
def test_a_far_continuous_crank_angle_is_solved_at_once_not_walked_to(crank: float) -> None:
    """four_bar's crank is continuous: 1e5 rad is a legal angle (1e5 mod 2 pi). It used
    to be walked to in 0.25 rad steps inside the executor (13-130 s, no command, the
    0.1 s watchdog starved) and, from 5e4, falsely rejected (sin/cos of 1e5 rad close the
    loop to 1.3e-12 only). Now: one command, the gravity of the equivalent angle, in far
    less than one watchdog period (each solve is capped at SOLVE_BUDGET iterations)."""
    ctl = make(FOUR_BAR, watchdog_timeout=0.1)
    ctl.warm_up()
    assert handle(ctl, [0.3], 1.0)[0].command is not None
    result, seconds = handle(ctl, [crank], 1.001)
    assert seconds < 0.1, seconds
    assert result.command is not None and sum(ctl.rejected.values()) == 0, result
    equivalent = crank - 2 * np.pi * np.round((crank - 0.3) / (2 * np.pi))
    assert abs(equivalent - 0.3) <= np.pi
    q = rc.solve_loops(FOUR_BAR, [equivalent], ctl.solver.last)
    assert np.allclose(ctl.solver.last, q, atol=1e-9)
    assert np.allclose(result.command, rc.loop_gravity(FOUR_BAR, q), atol=1e-9)
    # The next state near the same angle is solved from there (one Newton solve).
    again, seconds = handle(ctl, [crank + 0.01], 1.002)
    assert again.command is not None and seconds < 0.1


def test_revolute_motors_far_beyond_their_limits_are_rejected_at_once() -> None:
    """five_bar's motors are revolute, limits +-0.5 rad: 1e6 rad (two 6.5 s stalls before,
    then accepted) is an encoder fault, rejected before solving (joint_limits), counted;
    the last command stays, the watchdog holds, good states are used again."""
    ctl = make(FIVE_BAR, watchdog_timeout=0.1, watchdog_grace=0.0)
    ctl.warm_up()
    good = np.array([0.1, -0.1])
    assert handle(ctl, good, 1.0)[0].command is not None
    q_good = ctl.solver.last.copy()
    for k, bad in enumerate(([1e6, 1e6], [1e6, -0.1], [0.1, -1e3], [1.2, 0.0])):
        result, seconds = handle(ctl, bad, 1.001 + 0.001 * k)
        assert seconds < 0.1, seconds
        assert result.command is None and result.reason == "joint_limits", result
        assert "beyond the URDF limits" in result.message
        assert ("left_motor" in result.message) == (abs(bad[0]) > 1.0)
        assert np.array_equal(ctl.solver.last, q_good)
    assert ctl.rejected["joint_limits"] == 4
    held = ctl.watchdog(now=1.2)
    assert ctl.stale and np.allclose(held, rc.loop_gravity(FIVE_BAR, q_good), atol=1e-12)
    assert handle(ctl, good + 0.01, 1.21)[0].command is not None and not ctl.stale


def test_a_state_not_solved_within_the_budget_is_rejected_and_counted() -> None:
    """The solve's work is capped (Newton iterations, deterministic): a state that needs
    more is rejected as loop_budget, counted, the solver keeps its last solution, the
    last command stays and the next good state is used."""
    ctl = make(FOUR_BAR, watchdog_timeout=0.1)
    ctl.warm_up()
    assert handle(ctl, [0.3], 1.0)[0].command is not None
    q_good = ctl.solver.last.copy()
    ctl.solver.budget = 60  # a few continuation steps; half a turn needs more
    result = handle(ctl, [0.3 + 3.0], 1.001)[0]
    assert result.command is None and result.reason == "loop_budget", result
    assert "budget of 60 Newton iterations" in result.message
    assert ctl.rejected["loop_budget"] == 1 and np.array_equal(ctl.solver.last, q_good)
    assert handle(ctl, [0.31], 1.002)[0].command is not None


def test_the_wall_time_backstop_rejects_a_slow_solve() -> None:
    """The backstop (looked at every CHUNK iterations) stops a solve whose budget
    would allow more: with no time at all, a continuation is stopped after its first
    chunk."""
    ctl = make(FOUR_BAR, watchdog_timeout=0.1)
    assert ctl.solver.seconds == pytest.approx(0.02)  # a fifth of the watchdog period
    ctl.warm_up()
    assert handle(ctl, [0.3], 1.0)[0].command is not None
    ctl.solver.seconds = 0.0
    assert handle(ctl, [0.31], 1.001)[0].command is not None  # one chunk: no look
    walk = ctl.solver.last.copy()
    with pytest.raises(rc.LoopBudgetError, match=r"or 0 ms"):
        rc.solve_loops(FOUR_BAR, [walk[0] + 3.0], walk, budget=10**6, seconds=0.0,
                       max_iter=200)


def test_inverse_dynamics_pd_takes_a_continuous_joint_the_shortest_way_round() -> None:
    """A crank measured a thousand turns from its reference (an encoder counting turns,
    the reference not) is 0.01 rad behind it, not 6283 rad: the same command as at
    the equivalent angle, not a saturated one."""
    def command(crank: float) -> np.ndarray:
        ctl = make(FOUR_BAR, mode="inverse_dynamics", kp=[20.0], kd=[1.0],
                   **{"slew_limit.enable": False})
        ctl.joint_state(["crank_joint"], [0.3], [0.0], stamp=1.0, now=1.0)
        ctl.trajectory(["crank_joint"], np.array([0.0, 1.0]), np.array([[0.3], [0.3]]),
                       None, None, start=1.0)
        result = ctl.joint_state(["crank_joint"], [crank], [0.0], stamp=1.5, now=1.5)
        assert result.command is not None, result
        assert ctl.saturated == 0
        return result.command
    near = command(0.29)
    assert np.allclose(command(0.29 + 2000 * np.pi), near, atol=1e-6)
    assert np.allclose(command(0.29 - 2000 * np.pi), near, atol=1e-6)
