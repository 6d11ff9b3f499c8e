"""Closed-loop kinematics: Newton closure (eq. 3), G (eq. 4, 56), Gdot qd_a, against a
closed-form four-bar, finite differences, and the errors at and beyond the workspace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from loop_cases import random_closed_states, random_mechanism

import rnea_ros.core as rc
from rnea_ros.samples import LOOP_ROBOTS, load_loop_robot

DATA = Path(__file__).resolve().parents[2] / "data"
SAMPLES = 200


@pytest.fixture(scope="module", params=LOOP_ROBOTS)
def robot(request: pytest.FixtureRequest) -> rc.ClosedLoopModel:
    return load_loop_robot(request.param)


def test_solved_configurations_close_every_loop(robot: rc.ClosedLoopModel) -> None:
    Q, _, _ = random_closed_states(robot, SAMPLES, seed=1)
    worst = max(float(np.abs(rc.loop_residual(robot, q)).max()) for q in Q)
    assert worst <= 1e-12
    # Within the joint limits of the passive joints too (the limits describe the workspace).
    tree = robot.tree
    assert np.all(Q >= tree.lower_limit - 1e-9) and np.all(Q <= tree.upper_limit + 1e-9)


def test_four_bar_against_the_closed_form_solution() -> None:
    """Coupler and rocker angles and velocity ratios from circle intersection (data file)."""
    model = load_loop_robot("four_bar")
    rows = yaml.safe_load((DATA / "four_bar_closed_form.yaml").read_text())["rows"]
    theta0 = (1.0471975511965976, 0.6287151276455405, 1.7957749733962085)  # q = 0 (URDF)
    q = model.q_reference
    for deg, t3, t4, w3, w4 in rows:
        q = rc.solve_loops(model, [np.deg2rad(deg) - theta0[0]], q)  # warm start around the turn
        t2 = theta0[0] + q[0]
        coupler = t2 + q[1] + (theta0[1] - theta0[0])
        rocker = theta0[2] + q[2]
        assert np.angle(np.exp(1j * (coupler - t3))) == pytest.approx(0.0, abs=1e-12)
        assert np.angle(np.exp(1j * (rocker - t4))) == pytest.approx(0.0, abs=1e-12)
        G = rc.loop_jacobian(model, q)[:, 0]
        np.testing.assert_allclose([1.0 + G[1], G[2]], [w3, w4], rtol=1e-11, atol=1e-13)


def _fd_state(model: rc.ClosedLoopModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
              h: float) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of q(t) along q_a(t) = q_a + qd t + qdd t^2 / 2, Richardson-
    extrapolated from steps h and h/2 (error O(h^4))."""
    a = model.active_index

    def at(t: float) -> np.ndarray:
        return rc.solve_loops(model, q[a] + qd * t + 0.5 * qdd * t * t, q)

    def central(step: float) -> tuple[np.ndarray, np.ndarray]:
        plus, minus = at(step), at(-step)
        return (plus - minus) / (2 * step), (plus - 2 * q + minus) / (step * step)

    (v1, a1), (v2, a2) = central(h), central(h / 2)
    return (4 * v2 - v1) / 3, (4 * a2 - a1) / 3


def test_rates_match_finite_differences(robot: rc.ClosedLoopModel) -> None:
    Q, QD, QDD = random_closed_states(robot, 20, seed=2)
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        vel, acc = _fd_state(robot, q, qd, qdd, 1e-3)
        scale = np.abs(acc).max() + 1.0
        np.testing.assert_allclose(rc.loop_velocities(robot, q, qd), vel, atol=1e-8 * scale)
        np.testing.assert_allclose(rc.loop_accelerations(robot, q, qd, qdd), acc,
                                   atol=1e-7 * scale)
        G = rc.loop_jacobian(robot, q)
        np.testing.assert_allclose(G @ qd, rc.loop_velocities(robot, q, qd), atol=1e-13)
        np.testing.assert_allclose(G[robot.active_index], np.eye(robot.n_active))
        bias = rc.loop_bias_acceleration(robot, q, qd)
        np.testing.assert_allclose(G @ qdd + bias, rc.loop_accelerations(robot, q, qd, qdd),
                                   atol=1e-12 * scale)
        K = rc.loop_constraint_jacobian(robot, q)
        assert np.abs(K @ G).max() <= 1e-12  # eq. 4: K qd = 0 for every qd_a


@pytest.mark.parametrize("cut", ["weld", "revolute", "spherical"])
def test_spatial_mechanisms_rates_match_finite_differences(cut: str) -> None:
    model = random_mechanism(5, cut).model
    # Away from singularities, where finite differences are accurate.
    Q, QD, QDD = random_closed_states(model, 10, seed=3, spread=0.1, conditioning=0.01)
    for q, qd, qdd in zip(Q, QD, QDD, strict=True):
        vel, acc = _fd_state(model, q, qd, qdd, 3e-4)
        scale = np.abs(acc).max() + 1.0
        np.testing.assert_allclose(rc.loop_velocities(model, q, qd), vel, atol=1e-8 * scale)
        np.testing.assert_allclose(rc.loop_accelerations(model, q, qd, qdd), acc,
                                   atol=1e-6 * scale)


def test_residual_jacobian_is_the_constraint_jacobian_at_closure(robot: rc.ClosedLoopModel
                                                                 ) -> None:
    """d(residual)/dq = K at a closed configuration (all joints, not only the motion)."""
    q = random_closed_states(robot, 1, seed=4)[0][0]
    K = rc.loop_constraint_jacobian(robot, q)
    h = 1e-6
    for j in range(robot.n):
        dq = np.zeros(robot.n)
        dq[j] = h
        column = (rc.loop_residual(robot, q + dq) - rc.loop_residual(robot, q - dq)) / (2 * h)
        np.testing.assert_allclose(column, K[:, j], atol=1e-8)


def test_batch_solve_follows_a_trajectory() -> None:
    model = load_loop_robot("palletizer")
    t = np.linspace(0.0, 2.0, 101)
    QA = np.column_stack([0.4 * np.sin(2 * t), 0.5 * np.sin(3 * t + 0.3)])
    Q = rc.solve_loops_batch(model, QA)
    np.testing.assert_allclose(Q[:, model.active_index], QA)
    assert max(float(np.abs(rc.loop_residual(model, q)).max()) for q in Q) <= 1e-12
    assert np.abs(np.diff(Q, axis=0)).max() < 0.1  # continuous: one assembly mode


def test_palletizer_parallelograms_keep_the_wrist_plate_level() -> None:
    """The kinematics the mechanism was built for: forearm parallel to the crank, elbow
    plate and wrist plate keep the base's orientation."""
    model = load_loop_robot("palletizer")
    tree = model.tree
    for qa in ([0.3, -0.4], [-0.45, 0.5], [0.1, 0.2]):
        q = rc.solve_loops(model, qa)
        for link in ("wrist_plate", "elbow_plate"):
            R, _ = rc.link_pose(tree, q, link)
            Rb, _ = rc.link_pose(tree, np.zeros(tree.nv), link)
            np.testing.assert_allclose(R, Rb, atol=1e-12)
        Rf, _ = rc.link_pose(tree, q, "forearm")
        Rc, _ = rc.link_pose(tree, q, "crank")
        np.testing.assert_allclose(Rf[:, 0], -Rc[:, 0], atol=1e-12)


def test_outside_the_workspace_names_the_loop() -> None:
    """A spatial crank-universal-spherical-rocker whose crank cannot turn fully."""
    model = random_mechanism(0, "spherical").model
    rc.solve_loops(model, [0.5])
    with pytest.raises(rc.LoopClosureError) as error:
        rc.solve_loops(model, [-2.0])
    message = str(error.value)
    assert "loop 'cut'" in message and "cannot be closed" in message
    assert "ja1=-2" in message and "workspace" in message


def test_singular_configuration_names_the_loop_and_joints() -> None:
    """Five-bar with both proximal links horizontal and pointing out: the elbows are 0.6 m
    apart, the two 0.3 m distal links aligned (a type-2 singularity), the passive elbows
    not determined by the motors."""
    model = load_loop_robot("five_bar")
    t1, t2 = 2.260904310996017, 0.8806883425937764  # motor angles at q = 0 (URDF)
    with pytest.raises(rc.LoopClosureError) as error:
        rc.solve_loops(model, [np.pi - t1, -t2])
    message = str(error.value)
    assert "tool_pin" in message and "singular" in message


def test_configuration_that_does_not_close_is_refused() -> None:
    model = load_loop_robot("four_bar")
    q = rc.solve_loops(model, [0.5]) + np.array([0.0, 1e-3, 0.0])
    for call in (lambda: rc.loop_velocities(model, q, [1.0]),
                 lambda: rc.loop_jacobian(model, q),
                 lambda: rc.loop_rnea(model, q, [1.0], [0.0])):
        with pytest.raises(rc.StateError, match="does not close loop 'coupler_rocker'") as e:
            call()
        assert "rc.solve_loops" in str(e.value)


def test_bad_inputs_name_the_joint() -> None:
    model = load_loop_robot("five_bar")
    with pytest.raises(rc.StateError, match=r"shape \(3,\), expected \(2,\).*'left_motor'"):
        rc.solve_loops(model, [0.0, 0.1, 0.2])
    with pytest.raises(rc.StateError, match="active joint 'right_motor' is not finite"):
        rc.solve_loops(model, [0.0, np.nan])
    with pytest.raises(rc.StateError, match="guess of joint 'left_elbow' is not finite"):
        rc.solve_loops(model, [0.0, 0.0], guess=[0.0, np.inf, 0.0, 0.0])
    with pytest.raises(rc.StateError, match="sample 1:"):
        rc.solve_loops_batch(model, [[0.0, 0.0], [0.0, np.nan]])
