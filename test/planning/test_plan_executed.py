"""An ``rnea-plan --controller-config`` plan executed by the controller (issue 25, item 4).

With the URDF limits and no rate limit, an arm7 plan run by the controller saturated 76
times, slew-limited 1119 commands and ended 0.074 rad off the goal. Planned inside the
controller's own effort and slew limits (config/arm7_controller.yaml, margin 0.9), the
closed loop (TorqueController in inverse-dynamics mode with the file's gains, on the
Pinocchio-ABA simulator at 1 kHz, in lockstep: no ROS) tracks it to < 2e-3 rad with no
saturated and no slew-limited command."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnea_ros.control.config import controller_config, load_model
from rnea_ros.control.controller import TorqueController
from rnea_ros.demo import launch_parameters
from rnea_ros.planning.cli import main
from rnea_ros.planning.output import read_trajectory
from rnea_ros.samples import robot_files
from rnea_ros.simulation import Simulator

START = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]
GOAL = [0.6, -0.1, 0.3, -1.4, 0.4, 1.9, 0.2]


def test_controller_config_plan_is_tracked_without_saturation_or_slew_limiting(
        tmp_path: Path) -> None:
    files = robot_files("arm7")
    out = tmp_path / "plan.yaml"
    assert main(["--urdf", str(files.urdf), "--from", *map(str, START), "--to",
                 *map(str, GOAL), "--controller-config", str(files.controller), "--dt",
                 "0.002", "--control-points", "12", "--no-plot", "--out", str(out)]) == 0
    names, t, q, qd, qdd = read_trajectory(out)

    values, _sim = launch_parameters("arm7")
    values.update(mode="inverse_dynamics")
    model = load_model(values)
    ctl = TorqueController(model, controller_config(values, model))
    sim = Simulator(files.urdf, model, dt=1e-3)
    sim.reset(np.array(START))
    ctl.trajectory(names, t, q, qd, qdd, start=0.0)
    order = [names.index(j) for j in model.joint_names]
    errors = []
    while sim.t < t[-1] + 0.3:
        stamp = sim.t
        result = ctl.joint_state(list(model.joint_names), sim.q, sim.qd, stamp=stamp,
                                 now=stamp)
        assert result.command is not None, result.message
        sim.step(result.command)
        k = min(int(np.searchsorted(t, sim.t)), len(t) - 1)
        if abs(t[k] - sim.t) < 1e-9:
            errors.append(np.abs(sim.q - q[k][order]).max())
    print(f"T = {t[-1]:.4f} s, max tracking error {max(errors):.2e} rad, saturated "
          f"{ctl.saturated}, slew-limited {ctl.slew.limited if ctl.slew else None}")
    assert ctl.saturated == 0
    assert ctl.slew is not None and ctl.slew.limited == 0
    assert max(errors) < 2e-3, max(errors)
    assert np.abs(sim.q - np.array(GOAL)).max() < 2e-3
