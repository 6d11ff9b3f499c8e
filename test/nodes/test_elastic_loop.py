"""Mode ``elastic``: controller and simulator nodes on the paper's mixed rigid/elastic
3-DoF arm, in closed loop over DDS (loopback), in-process."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rnea_ros.control.config import controller_config, default_values
from rnea_ros.control.controller import TorqueController
from rnea_ros.core.errors import ParameterError
from rnea_ros.nodes.harness import ClosedLoop, cosine_motion
from rnea_ros.samples import load_elastic_robot

ROBOT = {"urdf_path": "package://rnea_ros/urdf/mixed_3dof.urdf",
         "elastic_file": "package://rnea_ros/config/mixed_3dof_elastic.yaml",
         "inertia_check": "warn"}
CONTROLLER = {**ROBOT, "mode": "elastic", "watchdog_timeout": 1.0,
              "kp": [400.0, 400.0, 50.0], "kd": [40.0, 40.0, 1.0],
              "elastic.lambda_q": [50.0], "elastic.kd_q": [50.0],
              "elastic.lambda_theta": [20.0], "elastic.kd_theta": [5.0]}
Q0 = np.array([0.0, 0.2, -0.3])


@pytest.fixture(scope="module")
def model():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hua-2024 table I's inertias
        return load_elastic_robot("mixed_3dof")


# The hua law's motor loop (differentiated theta_d, motor inertia 0.004 kg m^2) goes
# unstable behind a 1000 N m/s slew limiter from a standing start: it runs unlimited.
LAWS = {"hua": {"slew_limit.enable": False}, "feedforward_pd": {}}


@pytest.mark.parametrize("law", list(LAWS))
def test_elastic_mode_tracks_over_dds(law: str) -> None:
    """The motor positions travel as 'joint3_motor'; both laws hold the arm (started
    with its spring relaxed) and then track a 0.2 rad cosine on every joint."""
    with ClosedLoop({**CONTROLLER, "elastic.law": law, **LAWS[law]},
                    {**ROBOT, "initial_positions": Q0.tolist()}) as loop:
        controller = loop.controller.controller
        assert controller.state_names[-1] == "joint3_motor"
        assert loop.run_for(2.0)
        rec = loop.probe.recording
        assert len(rec.q[-1]) == 4  # three links and the elastic joint's motor
        assert np.abs(rec.q[-1][:3] - Q0).max() < 2e-3
        T = np.arange(0.0, 5.0, 0.01)
        loop.probe.send_trajectory(("joint1", "joint2", "joint3"), T,
                                   *cosine_motion(Q0, 0.2, 2.0, T))
        loop.spin_until(lambda: controller.reference.trajectory is not None, 5.0)
        start = float(controller.reference.trajectory.times[0])
        assert loop.run_for(4.0, wall_timeout=60.0)
        t = np.array(rec.t)
        mask = (t > start + 1.0) & (t < start + 4.0)
        q = np.array(rec.q)[mask][:, :3]
        error = q - cosine_motion(Q0, 0.2, 2.0, t[mask] - start)[0]
        print(law, "max error after 1 s:", np.abs(error).max(axis=0))
        assert np.abs(error).max() < 5e-3
        assert sum(controller.rejected.values()) == 0
        assert controller.commands > 5900


def test_elastic_state_needs_the_motors(model) -> None:
    values = {**default_values(), **CONTROLLER}
    controller = TorqueController(model.links, controller_config(values, model.links, model),
                                  elastic=model)
    result = controller.joint_state(["joint1", "joint2", "joint3"], [0.0] * 3, [0.0] * 3, 1.0)
    assert result.reason == "missing_joints" and "'joint3_motor'" in result.message
    result = controller.joint_state(["joint3_motor"], [0.1], [0.0], 1.0)
    assert result.command is not None and result.command.shape == (3,)
    result = controller.joint_state(["joint3_motor"], [np.nan], [0.0], 1.1)
    assert result.reason == "non_finite" and "joint3_motor" in result.message
    result = controller.joint_state(["joint1", "joint3_motor"], [0.0, 0.0], [], 1.2)
    assert result.reason == "missing_velocity"


def test_elastic_mode_parameters_are_validated(model) -> None:
    values = {**default_values(), **CONTROLLER}
    with pytest.raises(ParameterError, match=r"mode 'elastic' needs parameter 'elastic_file'"):
        controller_config(values, model.links)
    with pytest.raises(ParameterError, match=r"neither 'time_scaling.enable' nor"):
        controller_config({**values, "time_scaling.enable": True}, model.links, model)
    with pytest.raises(ParameterError, match=r"'elastic.law' is 'pid'; valid: 'feedforward_pd'"):
        controller_config({**values, "elastic.law": "pid"}, model.links, model)
    with pytest.raises(ParameterError, match=r"'elastic.kd_theta' has 2 values; give 1 or 1"):
        controller_config({**values, "elastic.kd_theta": [1.0, 2.0]}, model.links, model)


def test_hold_is_the_motors_gravity_torque(model) -> None:
    """Watchdog 'hold' on an elastic robot: at rest every motor torque equals its link's
    gravity torque, of the unified bodies (links with their motors)."""
    values = {**default_values(), **CONTROLLER}
    controller = TorqueController(model.links, controller_config(values, model.links, model),
                                  elastic=model)
    controller.joint_state(["joint1", "joint2", "joint3", "joint3_motor"],
                           [*Q0, Q0[2]], [0.0] * 4, 1.0, now=0.0)
    assert controller.watchdog(now=5.0) is None  # the first look at a silence holds
    hold = controller.watchdog(now=5.02)  # (a stall of this process: issue 35 item 9)
    from rnea_ros.core.elastic.hybrid import forward_dynamics_recursive
    qdd, thetadd = forward_dynamics_recursive(model, Q0, Q0[2:] + hold[2] / 100.0,
                                              np.zeros(3), np.zeros(1), hold)
    assert np.abs(qdd).max() < 1e-9 and np.abs(thetadd).max() < 1e-9
