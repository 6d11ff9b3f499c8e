"""TorqueController with a mimic joint (arm7_gripper: finger_joint2 = -finger_joint1):
followers never required, never merged, never commanded; when published with their
leader, checked against the coupling (counted, never a rejection)."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.joint_state import MERGED, merge_state
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea
from rnea_ros.core.errors import JointNameError, ParameterError, StateError

URDF = "package://rnea_ros/urdf/arm7_gripper.urdf"
Q = np.array([0.2, -0.3, 0.1, -1.8, 0.2, 1.4, 0.3, 0.015])
ARM = [f"joint{i}" for i in range(1, 8)]


def make(**changes):
    values = default_values()
    values.update(urdf_path=URDF, **changes)
    model = load_model(values)
    return TorqueController(model, controller_config(values, model)), model


def test_the_follower_is_not_a_coordinate_of_the_controller() -> None:
    ctl, model = make()
    assert model.joint_names == (*ARM, "finger_joint1") and model.nv == 8
    assert set(model.mimic_joints) == {"finger_joint2"}
    assert ctl.state_names == model.joint_names
    assert ctl.config.joints == model.joint_names  # every coordinate, no follower


@pytest.mark.parametrize("with_follower", [False, True])
def test_name_map_and_model_order_with_and_without_the_follower(with_follower: bool) -> None:
    _, model = make()
    names = ["finger_joint1", *reversed(ARM)] + (["finger_joint2"] if with_follower else [])
    values = [Q[7], *Q[6::-1]] + ([-Q[7]] if with_follower else [])
    assert np.array_equal(model.to_model_order(names, values), Q)
    index = model.name_map(names)
    assert index.tolist() == [7, 6, 5, 4, 3, 2, 1, 0]


def test_a_missing_leader_is_named_a_missing_follower_is_not() -> None:
    _, model = make()
    with pytest.raises(JointNameError, match="lacks joints 'finger_joint1'") as error:
        model.name_map([*ARM, "finger_joint2"])
    assert "finger_joint2" not in str(error.value)


def test_merge_kernel_ignores_the_follower() -> None:
    """merge_state writes only the model's coordinates: a message with the follower
    (placed between the leader and the arm) merges the same state as one without."""
    names = ["finger_joint1", "finger_joint2", *ARM]
    position = np.array([Q[7], 0.123, *Q[:7]])
    msg_idx = np.array([2, 3, 4, 5, 6, 7, 8, 0])  # model order -> message
    model_idx = np.arange(8)
    q, qd, stamps = np.zeros(8), np.zeros(8), np.full(8, -np.inf)
    status = merge_state(q, qd, stamps, position, np.zeros(0), False, msg_idx, model_idx, 1.0,
                         0.1)
    assert status == MERGED and np.array_equal(q, Q) and len(names) == position.size


@pytest.mark.parametrize("follower", ["absent", "consistent"])
def test_commands_are_the_same_with_or_without_the_follower(follower: str) -> None:
    ctl, model = make()
    names, position = [*model.joint_names], list(Q)
    if follower == "consistent":
        names.insert(3, "finger_joint2")
        position.insert(3, -Q[7])
    result = ctl.joint_state(names, position, [], stamp=1.0, now=0.0)
    assert result.reason is None and not result.warning
    assert np.allclose(result.command, gravity_torques(model, Q), atol=1e-12)
    assert result.command.shape == (8,)
    assert ctl.mimic_checks == (1 if follower == "consistent" else 0)
    assert ctl.mimic_mismatches == 0


def test_a_wrong_follower_is_counted_and_said_but_not_rejected() -> None:
    ctl, model = make()
    names = [*model.joint_names, "finger_joint2"]
    good = ctl.joint_state(names, [*Q, -Q[7] + 0.004], [], stamp=1.0, now=0.0)  # within 5 mm
    assert good.command is not None and not good.warning
    bad = ctl.joint_state(names, [*Q, +Q[7]], [], stamp=1.001, now=0.0)  # sign flipped
    assert bad.reason is None and bad.command is not None
    assert np.allclose(bad.command, gravity_torques(model, Q), atol=1e-12)
    assert "'finger_joint2'" in bad.warning and "'finger_joint1'" in bad.warning
    assert "+0.03" in bad.warning  # q_f - (-1 * q_l) = 2 * 0.015
    assert ctl.mimic_checks == 2 and ctl.mimic_mismatches == 1
    assert ctl.mimic_worst == ("finger_joint2", pytest.approx(0.03))
    assert sum(ctl.rejected.values()) == 0
    nan = ctl.joint_state(names, [*Q, np.nan], [], stamp=1.002, now=0.0)  # not a coordinate
    assert nan.command is not None and "'finger_joint2'" in nan.warning
    assert ctl.mimic_mismatches == 2 and sum(ctl.rejected.values()) == 0


def test_a_follower_without_its_leader_is_not_checked() -> None:
    ctl, model = make()
    ctl.joint_state(list(model.joint_names), Q, [], stamp=1.0, now=0.0)
    result = ctl.joint_state(["finger_joint2", "joint1"], [5.0, Q[0]], [], stamp=1.001, now=0.0)
    assert result.command is not None and not result.warning and ctl.mimic_checks == 0


def test_only_followers_is_a_message_for_someone_else() -> None:
    ctl, _ = make()
    result = ctl.joint_state(["finger_joint2"], [0.01], [], stamp=1.0, now=0.0)
    assert result.command is None and result.reason is None and ctl.ignored == 1


def test_the_check_can_be_turned_off() -> None:
    ctl, model = make(**{"mimic.check": False})
    result = ctl.joint_state([*model.joint_names, "finger_joint2"], [*Q, 1.0], [], stamp=1.0,
                             now=0.0)
    assert result.command is not None and not result.warning and ctl.mimic_checks == 0


def test_inverse_dynamics_uses_the_coupled_inertia() -> None:
    """The finger's feedforward carries both fingers (the follower's mass through the
    coupling): our RNEA on the mimic model, the same with the follower published."""
    ctl, model = make(mode="inverse_dynamics", kp=[0.0], kd=[0.0],
                      **{"slew_limit.enable": False})
    qd = np.zeros(8)
    names = [*model.joint_names, "finger_joint2"]
    ctl.joint_state(names, [*Q, -Q[7]], [*qd, 0.0], stamp=1.0, now=0.0)
    qdd = np.zeros((2, 8))
    qdd[:, 7] = 1.0  # 1 m/s^2 on the finger, from the trajectory's start
    ctl.trajectory(list(model.joint_names), np.array([0.0, 1.0]), np.array([Q, Q]), None,
                   qdd, start=1.0)
    result = ctl.joint_state(names, [*Q, -Q[7]], [*qd, 0.0], stamp=1.0005, now=0.0)
    expected = rnea(model.without_friction(), *ctl.reference.last)
    assert np.allclose(result.command, expected, atol=1e-9)
    single = rnea(model.without_friction(), Q, qd, np.eye(8)[7])
    gravity = gravity_torques(model, Q)
    assert single[7] - gravity[7] == pytest.approx(0.030, rel=1e-9)  # 2 x 15 g


def test_a_follower_in_joints_is_a_clear_error_naming_its_leader() -> None:
    values = default_values()
    values.update(urdf_path=URDF, joints=[*ARM, "finger_joint2"])
    model = load_model(values)
    with pytest.raises(ParameterError) as error:
        controller_config(values, model)
    message = str(error.value)
    assert "parameter 'joints'" in message and "'finger_joint2' follows 'finger_joint1'" in message
    assert "never commanded" in message


def test_mimic_tolerance_must_be_positive() -> None:
    values = default_values()
    values.update(urdf_path=URDF, **{"mimic.tolerance": 0.0})
    with pytest.raises(ParameterError, match=r"'mimic\.tolerance' must be > 0"):
        controller_config(values, load_model(values))


def test_a_trajectory_naming_a_follower_is_rejected() -> None:
    ctl, model = make(mode="inverse_dynamics")
    with pytest.raises(StateError, match="'finger_joint2' \\(follows 'finger_joint1'\\)"):
        ctl.trajectory([*model.joint_names, "finger_joint2"], np.array([1.0]),
                       np.zeros((1, 9)), None, None, start=0.0)


def test_time_scaling_on_a_mimic_model_is_refused_at_configuration() -> None:
    """The time scaling's look-ahead kernel runs on 1-DoF rows without followers: asking
    for it is a ParameterError naming the parameter and the follower when the controller
    is configured (the node does not start, a runtime set is refused), not a ModelError
    on every trajectory."""
    with pytest.raises(ParameterError, match=r"parameter 'time_scaling.enable': time scaling "
                                             r".*'finger_joint2' \(mimic\)"):
        make(mode="inverse_dynamics", **{"time_scaling.enable": True})
    ctl, _ = make(mode="inverse_dynamics")  # the default: off
    assert ctl.reference.scaling is None
