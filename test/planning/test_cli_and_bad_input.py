"""``rnea-plan`` used as a user would, and bad input: unreachable waypoints, infeasible limits,
a solver that stops -- a message naming the constraint, exit 1, nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.planning import InfeasibleError, Limits, SolverError, plan_min_time
from rnea_ros.planning.cli import main
from rnea_ros.planning.output import read_trajectory
from rnea_ros.samples import sample_urdf

RR = str(sample_urdf("two_link_rr"))
ARM = str(sample_urdf("arm7"))
HOME = ["0", "-0.5", "0", "-2", "0", "1.5", "0.8"]


def test_cli_writes_a_joint_trajectory_within_the_limits(tmp_path: Path, capsys) -> None:
    out = tmp_path / "traj.yaml"
    code = main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", "--via", "0.6", "-1.8",
                 "--limits", "torque=10", "torque_rate=400", "--dt", "0.002", "--out", str(out)])
    assert code == 0
    assert "T = " in capsys.readouterr().out
    names, t, q, qd, qdd = read_trajectory(out)
    assert names == ["joint1", "joint2"]
    assert np.allclose(np.diff(t)[:-1], 0.002) and t[-1] > 0.3
    assert np.allclose(q[0], [0, -2]) and np.allclose(q[-1], [1, -1], atol=1e-9)
    assert np.min(np.linalg.norm(q - [0.6, -1.8], axis=1)) < 0.05  # passes near the via point
    model = rc.load_urdf(RR)
    tau = rc.rnea_batch(model, q, qd, qdd)
    assert np.abs(tau).max() <= 10.0
    assert np.abs(np.diff(tau, axis=0) / 0.002).max() <= 400.0 * 1.01  # finite-difference rate
    assert (tmp_path / "traj.png").stat().st_size > 10_000


@pytest.mark.parametrize(("args", "message"), [
    (["--to", "3.5", "0", "0", "-1", "0", "1", "0"],
     "waypoint 1 is unreachable: joint 'joint1' = 3.5 is outside its position limits"),
    (["--to", "0", "0.5", "0", "-1", "0", "1", "0", "--limits", "torque=2"],
     "torque limit infeasible: holding waypoint 0 needs |tau|"),
    (["--to", "0", "0.5", "0", "-1", "0", "1", "0", "--limits", "speed=2"],
     "unknown limit(s) ['speed']"),
    (["--to", "0", "0.5", "0", "-1"], "waypoint 1 has 4 values"),
])
def test_cli_bad_input_exits_1_and_writes_nothing(tmp_path: Path, capsys, args, message) -> None:
    out = tmp_path / "traj.yaml"
    assert main(["--urdf", ARM, "--from", *HOME, *args, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rnea-plan: error:") and message in err
    assert not out.exists() and not (tmp_path / "traj.png").exists()


@pytest.mark.parametrize("solver", ["ipopt", "slsqp"])
def test_solver_that_stops_says_why_and_which_constraint(solver: str) -> None:
    """Stopped at an infeasible iterate (from a guess far too fast): SolverError naming the
    worst constraint."""
    model = rc.load_urdf(RR)
    limits = Limits.from_model(model, torque=10.0)
    with pytest.raises(SolverError, match=r"stopped after 2 iterations: .*violates a "
                                          r"constraint; worst constraint: the \w+ limit of joint"):
        plan_min_time(model, [[0, -2], [1, -1]], limits, max_iter=2, T_guess=0.05,
                      solver=solver)


@pytest.mark.parametrize(("solver", "options", "message"), [
    ("ipopt", {"max_iter": 2}, "stopped after 2 iterations .* at a feasible"),
    ("slsqp", {"control_points": 48}, "Positive directional derivative .* at a feasible"),
])
def test_solver_stop_at_a_feasible_iterate_returns_it_with_a_warning(solver, options,
                                                                     message) -> None:
    """SLSQP at 48 control points stopped with 'Positive directional derivative for
    linesearch' and the planner raised, discarding a feasible iterate (issue 25)."""
    from rnea_ros.planning.optimize import SolverWarning

    model = rc.load_urdf(RR)
    limits = Limits.from_model(model, torque=10.0, velocity=np.inf)
    with pytest.warns(SolverWarning, match=message):
        plan = plan_min_time(model, [[0, -2], [1, -1]], limits, solver=solver, tol_T=None,
                             **options)
    assert plan.check.ok() and plan.T > 0.39


def test_internal_force_limit_below_the_static_load_is_infeasible() -> None:
    model = rc.load_urdf(ARM)
    q = np.array([float(x) for x in HOME])
    limits = Limits.from_model(model, force=5.0)
    with pytest.raises(InfeasibleError, match="internal force limit infeasible: at rest at "
                                              "waypoint 0 joint 'joint1'"):
        plan_min_time(model, [q, q + 0.1], limits)


def test_internal_force_limit_is_met_on_the_dense_grid() -> None:
    model = rc.load_urdf(RR)
    free = Limits.from_model(model, torque=10.0)
    fast = plan_min_time(model, [[0, -2], [1, -1]], free, control_points=12)
    bound = 0.8 * fast.dynamics(np.linspace(0, fast.T, 200))[2].max()
    capped = plan_min_time(model, [[0, -2], [1, -1]], free.with_(model, force=bound),
                           control_points=12)
    assert capped.T > fast.T and capped.check.force <= 1.0
    assert capped.dynamics(np.linspace(0, capped.T, 500))[2].max() <= bound


PLAN = ["--from", "0", "-2", "--to", "1", "-1", "--limits", "torque=10", "--no-plot"]


def test_cli_never_overwrites_an_output_nor_its_urdf(tmp_path: Path, capsys) -> None:
    urdf = tmp_path / "rr.urdf"
    urdf.write_text(Path(RR).read_text())
    assert main(["--urdf", str(urdf), *PLAN, "--out", str(urdf), "--force"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is the input" in err
    assert urdf.read_text() == Path(RR).read_text()
    out = tmp_path / "traj.yaml"
    out.write_text("mine")
    assert main(["--urdf", str(urdf), *PLAN, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists: not overwritten (--force" in err
    assert out.read_text() == "mine"
    assert main(["--urdf", str(urdf), *PLAN, "--out", str(out), "--force"]) == 0
    assert read_trajectory(out)[0] == ["joint1", "joint2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rr.urdf", "traj.yaml"]  # no temp


@pytest.mark.parametrize(("args", "message"), [
    (["--out", "/proc/x/traj.yaml"], "--out: cannot create directory '/proc/x'"),
    (["--dt", "nan"], "need finite numbers, --dt > 0"),
    (["--weight", "nan"], "0 <= --weight <= 1"),
    (["--grid", "0"], "--grid >= 1"),
    (["--control-points", "1"], "--control-points >= 4"),
])
def test_cli_bad_argument_is_one_line(tmp_path: Path, capsys, args, message) -> None:
    assert main(["--urdf", RR, *PLAN, "--out", str(tmp_path / "t.yaml"), *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rnea-plan: error:") and message in err and err.count("\n") == 1


def test_closed_loop_urdf_is_refused_naming_the_loop_file(tmp_path: Path, capsys) -> None:
    """Planning the five-bar's tree moves the motors with the elbows fixed (T = 0.056 s
    before): a motion that breaks the mechanism. Refused, naming the loop file."""
    out = tmp_path / "traj.yaml"
    urdf = sample_urdf("five_bar")
    assert main(["--urdf", str(urdf), "--from", "0", "0", "0", "0", "--to", "0.1", "0", "0.1",
                 "0", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(urdf.with_name("five_bar.loops.yaml")) in err
    assert "closed chains are not supported" in err and not out.exists()
