"""ParallelController without ROS: the Delta robot and the Gough-Stewart platform run as a
platform and legs (``loops.parallel``), measured and commanded on their active joints.
The commanded torques are checked against independent computations (Pinocchio's
constrained dynamics on the same URDF tree + loop file, :class:`rnea_ros.loop_oracle.
LoopOracle`, and our closed-loop formulation, ``rc.loop_gravity``/``rc.loop_rnea``); in
closed loop with :class:`rnea_ros.simulation.LoopSimulator` the robots hold and track;
bad states (NaN, actives beyond their limits, no platform pose, out of the Newton
budget) are rejected and counted, the watchdog holds, good states recover."""

from __future__ import annotations

import numpy as np
import pytest
from loop_cases import names, run

import rnea_ros.core as rc
from rnea_ros.control.closed_loop import closed
from rnea_ros.control.config import controller_config, default_values
from rnea_ros.control.factory import pinocchio_loop_oracle_factory
from rnea_ros.control.parallel import (
    ParallelController,
    PlatformSolver,
    parallel_robot,
    platform_pose_of,
)
from rnea_ros.core.coupling.loop_file import loop_file_path
from rnea_ros.core.errors import LoopBudgetError, ParameterError, StateError
from rnea_ros.core.model.configuration import quaternion_exp, quaternion_multiply
from rnea_ros.core.model.payload import Payload, with_payload
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.loop_oracle import LoopOracle
from rnea_ros.samples import share_directory
from rnea_ros.simulation import LoopSimulator

ROBOTS = ("delta", "gough_stewart")
GAINS = {"delta": ([200.0], [10.0]), "gough_stewart": ([5000.0], [200.0])}
START = {"delta": np.array([0.2, 0.1, 0.3]),
         "gough_stewart": np.array([0.02, -0.01, 0.03, 0.0, -0.02, 0.01])}
HOLD_DRIFT = 1e-9  # rad or m, every tree joint, 2 s
TRACK_ERROR = {"delta": 2e-4, "gough_stewart": 3e-5}  # rad, m: measured 4.2e-5, 5.1e-6


def urdf(name: str) -> str:
    return str(share_directory() / "urdf" / f"{name}.urdf")


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request: pytest.FixtureRequest) -> str:
    return str(request.param)


_LOOPS: dict[str, rc.ClosedLoopModel] = {}


def loops_of(name: str) -> rc.ClosedLoopModel:
    if name not in _LOOPS:
        tree = load_urdf(urdf(name))
        _LOOPS[name] = rc.load_loops(tree, loop_file_path(urdf(name)))
    return _LOOPS[name]


def make(name: str, **changes) -> ParallelController:
    loops = loops_of(name)
    kp, kd = GAINS[name]
    values = {**default_values(), "loops.parallel": name, "kp": kp, "kd": kd,
              "effort_rate_limits": [1e6], **changes}
    ctl = ParallelController(loops, controller_config(values, loops.tree, loops=loops))
    # Newton's budget in iterations only: what a state gives must not depend on the
    # machine's load (a 20 ms preemption inside one solve, the wall-time backstop, once
    # rejected a reachable Delta state beside make test-stress; the backstop is the node
    # tests').
    return iterations_only(ctl)


def iterations_only(ctl: ParallelController) -> ParallelController:
    """``ctl`` with its pose solvers' wall-time backstop off (configure sets it again)."""
    ctl.platform.seconds = ctl.reference_platform.seconds = None
    return ctl


def reconfigure(ctl: ParallelController, config) -> None:
    ctl.configure(config)
    iterations_only(ctl)



def reachable_actives(name: str, count: int, seed: int = 0) -> np.ndarray:
    """``count`` active positions (N_a,) of reachable platform poses around the start."""
    ctl = make(name)
    rng = np.random.default_rng(seed)
    home = platform_pose_of(ctl.robot, ctl.loops)
    out: list[np.ndarray] = []
    while len(out) < count:
        x = home.copy()
        x[:3] += rng.uniform(-0.04, 0.04, 3)
        if ctl.robot.nx == 7:
            w = rng.normal(0.0, 0.08, 3)
            x[3:] = quaternion_multiply(quaternion_exp(w), home[3:])
        try:
            qa = rc.platform_inverse_geometry(ctl.robot, x)
        except rc.ParallelRobotError:
            continue
        out.append(qa)
    return np.array(out)



# ---------------------------------------------------------------- the control law
def test_gravity_commands_equal_pinocchio_and_the_closed_loop_formulation(robot: str) -> None:
    """At 6 reachable states: the command is Pinocchio's constrained-dynamics active
    torque at rest (LoopOracle.active_torques at the tree closed by our loop solver,
    not by the platform model) and rc.loop_gravity (Khalil §4) to 1e-9."""
    loops = loops_of(robot)
    ctl = make(robot)
    oracle = LoopOracle(urdf(robot), loops)
    q_tree = loops.q_reference
    for k, qa in enumerate(reachable_actives(robot, 6)):
        result = ctl.joint_state(names(loops), qa, np.zeros_like(qa), stamp=1.0 + k,
                                 now=1.0 + k)
        assert result.command is not None, result
        q_tree = rc.solve_loops(loops, qa, q_tree)
        pin = oracle.active_torques(q_tree, np.zeros(loops.n), np.zeros(loops.n_active))
        scale = max(1.0, float(np.abs(pin).max()))
        assert np.abs(result.command - pin).max() < 1e-9 * scale, (result.command, pin)
        assert np.allclose(result.command, rc.loop_gravity(loops, q_tree), rtol=1e-10,
                           atol=1e-10)
    assert sum(ctl.rejected.values()) == 0 and ctl.commands == 6


def test_inverse_dynamics_feedforward_equals_pinocchio_and_loop_rnea(robot: str) -> None:
    """The reference in active coordinates (q_a, qd_a, qdd_a), the robot at it: the
    command is the feedforward, Pinocchio's active torque for those active accelerations
    at the tree velocities of qd_a, and rc.loop_rnea, to 1e-9 (the platform's twist and
    acceleration through J_p and the d/dt J_p^-1 term)."""
    loops = loops_of(robot)
    oracle = LoopOracle(urdf(robot), loops)
    rng = np.random.default_rng(1)
    q_tree = loops.q_reference
    for k, qa in enumerate(reachable_actives(robot, 4, seed=2)):
        ctl = make(robot, mode="inverse_dynamics")
        qd = rng.normal(0.0, 0.3, qa.size) * (1.0 if robot == "delta" else 0.1)
        qdd = rng.normal(0.0, 2.0, qa.size) * (1.0 if robot == "delta" else 0.1)
        times = np.array([0.0, 0.02])
        ctl.joint_state(names(loops), qa, np.zeros_like(qa), stamp=10.0, now=10.0)
        ctl.trajectory(list(loops.active_names), times,
                       np.array([qa, qa + 0.02 * qd + 2e-4 * qdd]), np.array([qd, qd + 0.02 * qdd]),
                       np.array([qdd, qdd]), start=10.0)
        traj = ctl.reference.trajectory
        assert traj is not None
        q_ref, qd_ref, qdd_ref = traj.sample(10.01)  # (continued from the held pose)
        assert np.abs(qd_ref).max() > 1e-3 and np.abs(qdd_ref).max() > 1e-2
        result = ctl.joint_state(names(loops), q_ref, qd_ref, stamp=10.01, now=10.01)
        assert result.command is not None, result
        q_ref, qd_ref, qdd_ref = ctl.reference.last
        q_tree = rc.solve_loops(loops, q_ref, q_tree)
        qd_tree = rc.loop_velocities(loops, q_tree, qd_ref)
        pin = oracle.active_torques(q_tree, qd_tree, qdd_ref)
        ours = rc.loop_rnea(loops, q_tree, qd_ref, qdd_ref)
        scale = max(1.0, float(np.abs(pin).max()))
        assert np.abs(result.command - pin).max() < 1e-8 * scale, (k, result.command, pin)
        assert np.abs(result.command - ours).max() < 1e-9 * scale, (k, result.command, ours)
        assert sum(ctl.rejected.values()) == 0


def test_live_oracle_agrees(robot: str) -> None:
    """oracle.enable: the controller's own cross-check (Pinocchio at the platform tree
    state of the solved pose) sees no discrepancy."""

    loops = loops_of(robot)
    values = {**default_values(), "loops.parallel": robot, "oracle.enable": True,
              "oracle.every_n": 1}
    ctl = ParallelController(loops, controller_config(values, loops.tree, loops=loops),
                             pinocchio_loop_oracle_factory(urdf(robot)))
    qa = START[robot]
    assert ctl.joint_state(names(loops), qa, np.zeros_like(qa), 1.0, 1.0).command is not None
    assert ctl.oracle_checks == 1 and ctl.oracle_discrepancy < 1e-9


# ---------------------------------------------------------------- closed loop
def test_holds_then_tracks_in_closed_loop(robot: str) -> None:
    """LoopSimulator (Pinocchio's constrained dynamics) from the simulator file's start:
    gravity mode holds every tree joint within HOLD_DRIFT over 2 s, the passive encoders
    agree with the solution; inverse_dynamics tracks a 3 s cosine on all actives."""
    loops = loops_of(robot)
    ctl = make(robot)
    sim = LoopSimulator(urdf(robot), loops, dt=1e-3)
    sim.q = rc.solve_loops(loops, START[robot])
    q0 = sim.q.copy()
    run(ctl, sim, 2.0)
    drift = float(np.abs(sim.q - q0).max())
    assert drift < HOLD_DRIFT, drift
    assert ctl.passive_checks == 2000 and ctl.passive_deviation_max < 1e-9
    assert sum(ctl.rejected.values()) == 0

    reconfigure(ctl, controller_config({**default_values(), "loops.parallel": robot,
                                     "mode": "inverse_dynamics", "kp": GAINS[robot][0],
                                     "kd": GAINS[robot][1], "effort_rate_limits": [1e6]},
                                    loops.tree, loops=loops))
    q_hold = sim.q[loops.active_index].copy()
    amplitude = (0.1 if robot == "delta" else 0.02) * np.linspace(1.0, -0.5, loops.n_active)
    T = np.arange(0.0, 3.0, 0.01)
    shape = (1.0 - np.cos(np.pi * T))[:, None]
    ctl.trajectory(list(loops.active_names), T, q_hold + amplitude * shape,
                   amplitude * np.pi * np.sin(np.pi * T)[:, None],
                   amplitude * np.pi**2 * np.cos(np.pi * T)[:, None], start=sim.t)
    t0, errors = sim.t, []

    def error(s: LoopSimulator) -> None:
        t = s.t - t0
        expected = q_hold + amplitude * (1.0 - np.cos(np.pi * min(t, 3.0)))
        errors.append(float(np.abs(s.q[loops.active_index] - expected).max()))
    commands = run(ctl, sim, 3.0, on_step=error)
    assert max(errors) < TRACK_ERROR[robot], max(errors)
    assert np.all(np.isfinite(commands)) and sum(ctl.rejected.values()) == 0
    assert sim.closure_error() < 1e-6


# ---------------------------------------------------------------- bad input
def test_bad_states_are_rejected_counted_held_and_recovered(robot: str) -> None:
    """NaN, an active beyond its limits + margin, a pose no leg reaches, and a pose out of
    the Newton budget: each rejected under its reason, no command; the watchdog holds
    gravity at the last solved pose; a good state afterwards is used."""
    loops = loops_of(robot)
    ctl = make(robot, watchdog_timeout=0.1, watchdog_grace=0.0)
    ctl.platform.seconds = None  # the budget in iterations only: the reasons do not depend
    # on the machine's load (the wall-time backstop is the node test's)
    qa = START[robot]
    good = ctl.joint_state(names(loops), qa, np.zeros_like(qa), 1.0, 1.0)
    assert good.command is not None
    hold = good.command.copy()
    x_good = ctl.platform.last.copy()
    t = 1.0

    def send(values: np.ndarray) -> str | None:
        nonlocal t
        t += 0.01
        result = ctl.joint_state(names(loops), values, np.zeros_like(values), t, t)
        assert result.command is None or result.reason is None
        return result.reason

    bad = qa.copy()
    bad[1] = np.nan
    assert send(bad) == "non_finite"
    beyond = qa.copy()
    beyond[0] = loops.tree.upper_limit[loops.active_index[0]] + 1.0
    assert send(beyond) == "joint_limits"
    unreachable = {"delta": np.array([1.4, 1.4, 1.4]),  # every arm up: forearms too short
                   "gough_stewart": np.array([0.12, 0.12, 0.12, -0.12, -0.12, -0.12])}[robot]
    reason = send(unreachable)
    assert reason == "platform_pose", (reason, ctl.rejected)
    assert np.array_equal(ctl.platform.last, x_good)  # the solver keeps the last pose
    ctl.platform.budget = 1  # a good state one Newton step cannot reach
    far = (reachable_actives(robot, 1, seed=5)[0])
    assert send(far) == "platform_budget"
    ctl.platform.budget = 100
    assert ctl.rejected == {"non_finite": 1, "joint_limits": 1, "platform_pose": 1,
                            "platform_budget": 1}
    stale = ctl.watchdog(now=t + 0.2)
    assert ctl.stale and stale is not None
    assert np.allclose(stale, hold, atol=1e-12)  # gravity at the last solved pose
    recovered = ctl.joint_state(names(loops), far, np.zeros_like(far), t + 0.3, t + 0.3)
    assert recovered.command is not None and not ctl.stale
    q_tree = rc.solve_loops(loops, far)
    assert np.allclose(recovered.command, rc.loop_gravity(loops, q_tree), atol=1e-9)


def test_a_wrong_passive_encoder_is_reported(robot: str) -> None:
    loops = loops_of(robot)
    ctl = make(robot)
    qa = START[robot]
    q = rc.solve_loops(loops, qa)
    wrong = q.copy()
    worst = loops.passive_index[-1]
    wrong[worst] += 0.05
    msg = np.r_[wrong[loops.active_index], wrong[loops.passive_index]]
    result = ctl.joint_state(names(loops, True), msg, np.zeros_like(msg), 1.0, 1.0)
    assert result.command is not None
    assert ctl.passive_mismatches == 1 and ctl.passive_worst == loops.tree.joint_names[worst]
    assert ctl.passive_deviation == pytest.approx(0.05, abs=1e-9)
    assert "passive encoder" in ctl.passive_alarm


def test_an_unreachable_trajectory_point_is_refused_and_the_reference_stays(
        robot: str) -> None:
    loops = loops_of(robot)
    ctl = make(robot, mode="inverse_dynamics")
    qa = START[robot]
    ctl.joint_state(names(loops), qa, np.zeros_like(qa), 1.0, 1.0)
    unreachable = {"delta": np.array([1.4, 1.4, 1.4]),
                   "gough_stewart": np.array([0.12, 0.12, 0.12, -0.12, -0.12, -0.12])}[robot]
    with pytest.raises(StateError, match="point 1"):
        ctl.trajectory(list(loops.active_names), np.array([0.0, 1.0]),
                       np.array([qa, unreachable]), None, None, start=1.0)
    assert ctl.reference.trajectory is None


def test_the_solver_budget_and_the_walk() -> None:
    """A far jump of the actives is walked in ACTIVE_STEP steps (to the pose the
    closed-loop solver finds in the same assembly mode); budget 1 cannot."""
    robot = parallel_robot("delta", loops_of("delta").tree, loops_of("delta"))
    home = platform_pose_of(robot, loops_of("delta"))
    target = np.array([0.9, -0.6, 0.4])
    x = PlatformSolver(robot, home).solve(target)
    assert np.allclose(rc.platform_inverse_geometry(robot, x), target, atol=1e-11)
    q = rc.solve_loops(loops_of("delta"), target)
    assert np.allclose(rc.platform_tree_state(robot, x)[0], q, atol=1e-9)
    with pytest.raises(LoopBudgetError, match="budget of 1 Newton iterations"):
        PlatformSolver(robot, home, budget=1).solve(target)


# ---------------------------------------------------------------- configuration
def test_configuration_errors_name_the_parameter() -> None:
    loops = loops_of("delta")
    values = {**default_values(), "loops.parallel": "delta"}
    with pytest.raises(ParameterError, match=r"'loops\.parallel' is 'stewart'; valid"):
        controller_config({**values, "loops.parallel": "stewart"}, loops.tree, loops=loops)
    with pytest.raises(ParameterError, match="no loop file"):
        controller_config(values, loops.tree)
    with pytest.raises(ParameterError, match="'friction_compensation' is not supported"):
        controller_config({**values, "friction_compensation": True}, loops.tree, loops=loops)
    gs = loops_of("gough_stewart")
    wrong = controller_config({**values, "joints": [""]}, gs.tree, loops=gs)
    with pytest.raises(ParameterError, match="is not a DeltaRobot"):
        ParallelController(gs, wrong)


def test_a_payload_on_the_platform_set_at_runtime_is_held(robot: str) -> None:
    """payload.* changed at runtime: the platform + legs model is rebuilt with it (the
    command equals rc.loop_gravity on the tree carrying the payload); a change of gains
    keeps the model."""
    loops = loops_of(robot)
    ctl = make(robot)
    qa = START[robot]
    before = ctl.joint_state(names(loops), qa, np.zeros_like(qa), 1.0, 1.0).command.copy()
    payload = {"payload.link": "platform", "payload.mass": 1.5,
               "payload.com": [0.01, -0.02, 0.03], "payload.inertia": [1e-3] * 3 + [0.0] * 3}
    values = {**default_values(), "loops.parallel": robot, "effort_rate_limits": [1e6],
              **payload}
    reconfigure(ctl, controller_config(values, loops.tree, loops=loops))
    robot_model = ctl.robot
    after = ctl.joint_state(names(loops), qa, np.zeros_like(qa), 1.01, 1.01).command
    tree = with_payload(loops.tree, Payload("platform", 1.5, (0.01, -0.02, 0.03),
                                            (1e-3, 1e-3, 1e-3, 0.0, 0.0, 0.0)))
    expected = rc.loop_gravity(closed(loops, tree), rc.solve_loops(loops, qa))
    assert np.allclose(after, expected, rtol=1e-10, atol=1e-10)
    assert np.abs(after - before).max() > 1.0  # 1.5 kg more: not the old command
    reconfigure(ctl, controller_config({**values, "kp": [1.0]}, loops.tree, loops=loops))
    assert ctl.robot is robot_model
