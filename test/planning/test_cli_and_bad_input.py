"""``rnea-plan`` used as a user would, and bad input: unreachable waypoints, infeasible limits,
a solver that stops -- a message naming the constraint, exit 1, nothing written."""

from __future__ import annotations

import os
import re
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
    line = capsys.readouterr().out
    assert "T = " in line and "|tau_dot|/limit" in line and "|F|/limit" not in line, line
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
                                                                     message,
                                                                     monkeypatch) -> None:
    """SLSQP at 48 control points stopped with 'Positive directional derivative for
    linesearch' and the planner raised, discarding a feasible iterate (issue 25). It stops
    so in the re-solve after the grid constraints are backed off below the limits, which a
    stretch of T now replaces here: disabled, so that re-solve runs."""
    from rnea_ros.planning import optimize
    from rnea_ros.planning.optimize import SolverWarning

    monkeypatch.setattr(optimize, "_stretch", lambda *args: None)
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
    (["--dt", "nan"], "need finite numbers"),
    (["--weight", "nan"], "need finite numbers"),
    (["--grid", "0"], "--grid >= 1"),
    (["--control-points", "1"], "--control-points >= 4"),
    # issue 25: --weight 2 diverged to T = 5.5e17 s; u = 1 has no minimum either
    (["--weight", "2"], "--weight 2: Barman's u must be in [0, 1)"),
    (["--weight", "1"], "--weight 1: Barman's u must be in [0, 1)"),
    (["--dt", "0"], "--dt 0: the output step must be > 0 s"),
    (["--dt", "-0.01"], "--dt -0.01: the output step must be > 0 s"),
    (["--grid", "-3"], "--grid >= 1"),
    (["--margin", "1.5"], "need 0 < --margin <= 1"),
    # degree 4 with a torque-rate limit: 4 control points are below degree + 1 (traceback)
    (["--limits", "torque_rate=400", "--control-points", "4"],
     "a degree-4 B-spline needs at least 5"),
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


def test_cli_refuses_an_out_that_is_a_directory_or_an_input(tmp_path: Path, capsys) -> None:
    """``--out /tmp`` gave a traceback (issue 25); ``--out`` equal to the controller file
    would overwrite an input."""
    before = sorted(tmp_path.iterdir())
    assert main(["--urdf", RR, *PLAN, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a directory" in err
    config = tmp_path / "c.yaml"
    config.write_text(CONTROLLER_YAML)
    assert main(["--urdf", RR, *PLAN, "--controller-config", str(config), "--out",
                 str(config), "--force"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is the input" in err
    assert config.read_text() == CONTROLLER_YAML
    assert sorted(tmp_path.iterdir()) == sorted([*before, config])


def test_cli_unwritable_out_is_one_line_and_no_file(tmp_path: Path, capsys) -> None:
    """An unwritable --out gave a traceback (issue 25)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["--urdf", RR, *PLAN, "--out", str(blocker / "t.yaml")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists and is not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            return  # running as root: every directory is writable
        assert main(["--urdf", RR, *PLAN, "--out", str(locked / "t.yaml")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("rnea-plan: error:") and err.count("\n") == 1
        assert "not writable" in err and list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


def test_cli_from_equal_to_is_refused(tmp_path: Path, capsys) -> None:
    """It returned T = 0.001 s and wrote a file (issue 25)."""
    out = tmp_path / "t.yaml"
    assert main(["--urdf", RR, "--from", "0", "-2", "--to", "0", "-2", "--no-plot", "--out",
                 str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--from equals --to" in err and not out.exists()


CONTROLLER_YAML = """/**:
  ros__parameters:
    joints: [joint2, joint1]
    effort_limits: [6.0, 8.0]
    effort_rate_limits: [300.0]
    slew_limit:
      enable: true
"""


def test_controller_config_limits_are_planned_with_the_margin(tmp_path: Path) -> None:
    from rnea_ros.planning.cli import controller_limits

    config = tmp_path / "c.yaml"
    config.write_text(CONTROLLER_YAML)
    model = rc.load_urdf(RR)
    got = controller_limits(model, config, 0.9)
    assert np.allclose(got["torque"], [0.9 * 8.0, 0.9 * 6.0])  # the file's joint order
    assert np.allclose(got["torque_rate"], [270.0, 270.0])
    config.write_text(CONTROLLER_YAML.replace("enable: true", "enable: false"))
    assert "torque_rate" not in controller_limits(model, config, 0.9)


@pytest.mark.parametrize("end", ["rest", "free"])
def test_cli_end_torque(tmp_path: Path, end: str) -> None:
    out = tmp_path / "t.yaml"
    assert main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", "--limits", "torque=10",
                 "torque_rate=400", "--end-torque", end, "--control-points", "12",
                 "--no-plot", "--out", str(out)]) == 0
    _names, _t, q, qd, qdd = read_trajectory(out)
    model = rc.load_urdf(RR)
    tau = rc.rnea_batch(model, q[[0, -1]], qd[[0, -1]], qdd[[0, -1]])
    if end == "rest":
        assert np.abs(tau).max() < 1e-6
    else:
        assert np.abs(tau).max() > 1.0


def test_cli_says_when_knot_refinement_stopped_before_tol_T(tmp_path: Path, capsys) -> None:
    """A plan whose T still changed by more than --tol-T at the last refinement (here the
    rounds run out before 1e-9) says so in its summary line: its T may be that much above
    the optimum (issue 25: arm7 stopped at the 150-coordinate cap with T changing by ~1 %)."""
    out = tmp_path / "traj.yaml"
    code = main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", "--limits", "torque=10",
                 "--tol-T", "1e-9", "--no-plot", "--out", str(out)])
    assert code == 0 and out.exists()
    line = capsys.readouterr().out
    assert "NOT below --tol-T 1e-09" in line, line
    assert "rounds ran out" in line or "cap was reached" in line, line


def test_cli_summary_says_when_no_knot_refinement_was_made(tmp_path: Path, capsys) -> None:
    """No knot refinement (fixed --control-points; arm7 through a waypoint, whose knot-span
    cap leaves no room): the summary says so and why, not 'last change of T nan'."""
    from dataclasses import replace

    out = tmp_path / "traj.yaml"
    assert main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", "--limits", "torque=10",
                 "--control-points", "12", "--no-plot", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "nan" not in line, line
    assert "no knot refinement made (--control-points given)" in line, line
    from rnea_ros.planning.cli import _refinement_note
    model = rc.load_urdf(RR)
    plan = plan_min_time(model, [[0.0, -2.0], [1.0, -1.0]],
                         Limits.from_model(model, torque=10.0), control_points=8)
    capped = replace(plan, refinement_stop="max_intervals")
    assert _refinement_note(capped, 1e-3) == ("no knot refinement made (the knot-span cap was "
                                              "reached)")
    refined = replace(plan, refinement_stop="tol_T", knot_refinements=2, T_change=2e-4)
    assert _refinement_note(refined, 1e-3) == "2 knot refinements, last change of T 0.0002"
    once = replace(refined, knot_refinements=1)
    assert _refinement_note(once, 1e-3) == "1 knot refinement, last change of T 0.0002"


def test_cli_summary_reports_the_ratios_of_the_limits_given(tmp_path: Path, capsys) -> None:
    """A force limit: the summary gives the worst |F|/limit (it printed |tau| and |tau_dot|
    only, the latter 0 without a rate limit), and no |tau_dot| ratio without its limit."""
    out = tmp_path / "traj.yaml"
    assert main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", "--limits", "torque=10",
                 "force=40", "--no-plot", "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "|tau_dot|/limit" not in line, line
    ratio = float(re.search(r"\|F\|/limit ([0-9.]+)", line).group(1))  # type: ignore[union-attr]
    assert 0.5 < ratio <= 1.0, line


def test_cli_refuses_more_via_points_than_it_plans_in_one_line(tmp_path: Path, capsys) -> None:
    from rnea_ros.planning.cli import MAX_VIA

    out = tmp_path / "traj.yaml"
    via = [x for k in range(MAX_VIA + 1) for x in ("--via", f"{0.1 * (k + 1)}", "-1.5")]
    code = main(["--urdf", RR, "--from", "0", "-2", "--to", "1", "-1", *via, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and not out.exists()
    assert len(err.strip().splitlines()) == 1
    assert f"{MAX_VIA + 1} --via points: at most {MAX_VIA}" in err, err


@pytest.mark.parametrize(("args", "message"), [
    (["--grid", "1000000000"], "--grid 1000000000: need --grid >= 1 and <= 64"),
    (["--control-points", "100000"], "--control-points 100000: need --control-points >= 4 "
     "and <= 200"),
    (["--dt", "1e-12"], "--dt 1e-12: the output step must be >= 0.0001 s"),
    (["--max-iter", "1000000000"], "--max-iter 1000000000: need 1 to 100000"),
    (["--limits", "velocity=1e-300"], "the velocity limits make this motion last at least"),
])
def test_cli_sizes_are_bounded_before_any_allocation(tmp_path: Path, capfd, args,
                                                     message) -> None:
    """Issue 37: --grid 1e9 ended in a MemoryError after 68 s and 97 GiB; a velocity limit
    of 1e-300 printed two tracebacks and CasADi's NaN dumps. Now one line, exit 1, quickly,
    and nothing from the solver."""
    out = tmp_path / "traj.yaml"
    assert main(["--urdf", RR, "--from", "0", "0", "--to", "1", "1", *args,
                 "--out", str(out)]) == 1
    captured = capfd.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnea-plan: error:") and message in lines[0]
    assert "CasADi" not in captured.out + captured.err and not out.exists()


def test_cli_records_the_solver_that_ran_and_what_made_the_file(tmp_path: Path) -> None:
    """traj.yaml said 'SLSQP: ...' after an IPOPT solve; it now names the solver that ran,
    and carries the version, the command line and the URDF's digest."""
    import yaml

    import rnea_ros
    from rnea_ros.tools.provenance import digest

    out = tmp_path / "traj.yaml"
    argv = ["--urdf", RR, "--from", "0", "0", "--to", "1", "1", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["plan"]["solver"].startswith("IPOPT: Solve_Succeeded"), doc["plan"]["solver"]
    made = doc["made_by"]
    assert made["version"] == rnea_ros.__version__ and made["tool"] == "rnea-plan"
    assert made["command"].startswith("rnea-plan --urdf ") and str(out) in made["command"]
    assert made["inputs"] == {RR: digest(Path(RR))}
    assert main([*argv[:-3], "--solver", "slsqp", "--no-plot", "--force",
                 "--out", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["plan"]["solver"].startswith("SLSQP: ")
