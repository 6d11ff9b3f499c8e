"""``rnea-identify``: dynamic parameters of a robot from a recorded bag.

    rnea-identify BAG --urdf robot.urdf [--drives drives.yaml] --out DIR
    rnea-identify excite --urdf robot.urdf --out traj.yaml

``excite`` designs an excitation trajectory (finite Fourier series optimised for
the condition number of the base regressor, within the position, velocity,
acceleration and torque limits: :mod:`rnea_ros.identification.excitation`) and
writes it as a ``trajectory_msgs/JointTrajectory`` YAML for the controller's
``inverse_dynamics`` mode; it starts and ends at rest at its first point.
(A bag directory named ``excite`` is read as ``./excite``.)

writes ``DIR/robot_identified.urdf`` (every moving link's ``<inertial>``
replaced by physically consistent identified values, the rest of the file
unchanged), ``DIR/drives_identified.yaml`` (armature, viscous and Coulomb
friction per joint in the drive-file format; offsets aside) and
``DIR/report.md`` with ``validation.png``. When the data cannot determine
some parameters (a joint that never moves...), it names them and writes
nothing unless ``--partial`` (then they keep their URDF/drive-file values and
the report lists them). Exit codes: 0 written, 1 error or nothing written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rnea_ros.core.dynamics.regressor import parameter_vector
from rnea_ros.core.errors import RneaError
from rnea_ros.core.model.drives import apply_drive_parameters
from rnea_ros.core.model.urdf import load_urdf, parse_urdf
from rnea_ros.identification.data import SLOW_FRACTION
from rnea_ros.identification.errors import IdentificationError
from rnea_ros.identification.pipeline import Identification, Settings, read_and_identify
from rnea_ros.identification.report import markdown, plot_validation
from rnea_ros.identification.writers import (
    Inertial,
    drives_yaml,
    fixed_parts,
    own_link_inertials,
    replace_inertials,
)
from rnea_ros.tools.files import (
    OutputError,
    atomic_path,
    check_outputs,
    make_directory,
    one_line,
    write_text,
)
from rnea_ros.tools.provenance import exit_on_signals, stamp
from rnea_ros.tools.provenance import parser as cli_parser

PROG = "rnea-identify"
# `excite` sizes, bounded before the optimiser allocates anything (like rnea-plan's)
MAX_HARMONICS = 20      # per joint: 2 x 20 coefficients; the grid grows with them
MAX_PERIODS = 1000      # written periods
MAX_EXCITE_ITER = 10_000
MIN_DT = 1e-4           # [s] output step
MAX_SAMPLES = 1_000_000  # output points: periods / frequency / dt


def parser() -> argparse.ArgumentParser:
    p = cli_parser(PROG, __doc__.split("\n\n")[0].split(": ")[-1],
                   epilog=f"{PROG} excite --help: the excitation trajectory designer")
    p.add_argument("bag", type=Path, help="ROS 1 .bag, rosbag2 directory, .mcap or .db3 "
                   "(or 'excite': design an excitation trajectory)")
    p.add_argument("--urdf", type=Path, required=True, help="robot URDF: the prior")
    p.add_argument("--drives", type=Path, help="drive file (armature, friction) of the prior")
    p.add_argument("--out", type=Path, default=Path("identification"), help="output directory")
    p.add_argument("--states-topic", default="/joint_states",
                   help="the sensor_msgs/JointState topic in the bag")
    p.add_argument("--time-base", default="header", choices=("header", "receive"),
                   help="sample times: the messages' header stamps or the bag's receive times")
    p.add_argument("--cutoff", type=float, default=10.0, help="zero-phase low-pass [Hz]")
    p.add_argument("--rate", type=float, default=15.0,
                   help="rate after decimation [Hz], at most the recording's; about 1.5 x "
                        "cutoff keeps the noise of successive samples nearly independent")
    p.add_argument("--validation", type=float, default=0.2,
                   help="fraction of the recording (its end) kept for validation")
    p.add_argument("--band", type=float, default=0.01,
                   help="Coulomb sign smoothing band [rad/s]")
    p.add_argument("--slow-fraction", type=float, default=SLOW_FRACTION,
                   help="rows where a joint moves slower than this fraction of its peak "
                        "speed are not fitted nor validated: near rest, friction sticks "
                        "and the Coulomb + viscous model does not hold (0 keeps them)")
    p.add_argument("--partial", action="store_true",
                   help="write files even when some parameters are not identifiable "
                        "(they keep their prior values)")
    p.add_argument("--no-plots", action="store_true", help="write no validation.png")
    p.add_argument("--force", action="store_true",
                   help="replace existing output files (never an input)")
    return p


def refuse_loops(urdf: Path, program: str = PROG) -> None:
    """:class:`IdentificationError` when a loop file sits beside ``urdf``: the open tree's
    regressor would fit the passive joints' zero effort as data (closed chains are not
    identified here: Khalil's G^T projection of the tree regressor is not implemented)."""
    from rnea_ros.core.coupling.loop_file import loop_file_path

    path = loop_file_path(urdf)
    if path.is_file():
        raise IdentificationError(
            f"{path} closes kinematic loops in this URDF: {program} handles open trees only "
            "(closed chains are not supported: the tree would fit the passive joints' zero "
            "effort as data); nothing written")


def outputs(result: Identification, urdf_text: str) -> tuple[str, str, dict[str, Inertial]]:
    """The identified URDF and drive-file texts, checked by loading them back."""
    model = result.prior
    fixed = fixed_parts(model, urdf_text)
    links = own_link_inertials(model, result.theta, fixed)
    new_urdf = replace_inertials(urdf_text, links)
    header = (f"Identified by {PROG}: armature [kg m^2], coulomb [N m], viscous [N m s/rad]\n"
              "per joint, read by the controller (drives:=this file).")
    drives = drives_yaml(model, result.theta, header)
    try:  # strict: positive masses, positive-definite inertias, triangle inequalities
        import yaml

        check = apply_drive_parameters(parse_urdf(new_urdf, inertia_check="strict"),
                                       yaml.safe_load(drives))
    except RneaError as exc:
        raise IdentificationError(f"the identified files do not load back: {exc}") from None
    expected = result.theta.copy()
    n = model.nv
    drive = expected[10 * n:].reshape(n, 4)
    got = parameter_vector(check, drives=True)
    want = np.concatenate([expected[:10 * n], np.maximum(drive[:, :3], 0.0).ravel()])
    scale = np.abs(want).max()
    if np.abs(got - want).max() > 1e-6 * scale:
        raise IdentificationError("the identified files do not reproduce the identified "
                                  "parameters (internal error)")
    return new_urdf, drives, links


def excite_parser() -> argparse.ArgumentParser:
    p = cli_parser(f"{PROG} excite", "excitation trajectory: finite Fourier series "
                   "minimising cond of the base regressor (Swevers et al. 1997)")
    p.add_argument("--urdf", type=Path, required=True, help="the robot's URDF")
    p.add_argument("--drives", type=Path, help="drive file (armature, friction) of the model")
    p.add_argument("--out", type=Path, default=Path("excitation.yaml"),
                   help="the JointTrajectory YAML written")
    p.add_argument("--frequency", type=float, default=0.1,
                   help="base frequency [Hz]: one period lasts 1/frequency")
    p.add_argument("--harmonics", type=int, default=5,
                   help=f"harmonics of the base frequency per joint (1 to {MAX_HARMONICS})")
    p.add_argument("--periods", type=int, default=1,
                   help=f"periods written (1 to {MAX_PERIODS})")
    p.add_argument("--acceleration", type=float, nargs="+", default=[5.0],
                   help="acceleration limit [rad/s^2], one or per joint")
    p.add_argument("--torque-fraction", type=float, default=0.8,
                   help="fraction of the torque limit the nominal model may use (the rest "
                        "is for feedback and the model's error)")
    p.add_argument("--margin", type=float, default=0.05, help="kept from position limits")
    p.add_argument("--limits", nargs="+", default=[], metavar="KEY=VALUE",
                   help="override limits: lower upper velocity torque (one value or a list)")
    p.add_argument("--dt", type=float, default=0.02,
                   help="output step [s]; the controller interpolates quintic Hermite between "
                        "points (arm7, up to 5 harmonics of 0.5 Hz: below 1e-9 rad at 0.02 s) "
                        "and by default takes at most 256 KiB (trajectory.max_bytes): about "
                        "1000 points")
    p.add_argument("--max-iter", type=int, default=200, help="SLSQP iterations")
    p.add_argument("--seed", type=int, default=0, help="initial guess")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    return p


def _check_excite(a: argparse.Namespace) -> str | None:
    """The first bad ``excite`` argument as one line (None when all are fine)."""
    numbers = (a.dt, a.torque_fraction, a.frequency, a.margin, *a.acceleration)
    if not (all(np.isfinite(numbers)) and a.dt >= MIN_DT and 0 < a.torque_fraction <= 1
            and a.frequency > 0 and a.margin >= 0 and min(a.acceleration) > 0):
        return (f"need finite --dt >= {MIN_DT:g} s, 0 < --torque-fraction <= 1, --frequency "
                "> 0, --margin >= 0, --acceleration > 0")
    if not (1 <= a.harmonics <= MAX_HARMONICS and 1 <= a.periods <= MAX_PERIODS
            and 1 <= a.max_iter <= MAX_EXCITE_ITER):
        return (f"need --harmonics 1 to {MAX_HARMONICS}, --periods 1 to {MAX_PERIODS}, "
                f"--max-iter 1 to {MAX_EXCITE_ITER}")
    samples = a.periods / a.frequency / a.dt
    if samples > MAX_SAMPLES:
        return (f"{a.periods} periods of {1 / a.frequency:g} s at --dt {a.dt:g} are "
                f"{samples:.3g} points, more than {MAX_SAMPLES}: raise --dt or --frequency")
    return None


def excite(argv: Sequence[str]) -> int:
    """``rnea-identify excite``: 0 when the trajectory was written, 1 with one message."""
    from rnea_ros.identification.excitation import design_excitation, write_excitation
    from rnea_ros.planning.limits import limits_from_arguments

    a = excite_parser().parse_args(argv)
    exit_on_signals()
    bad = _check_excite(a)
    if bad:
        print(f"{PROG} excite: error: {bad}", file=sys.stderr)
        return 1
    try:
        check_outputs([a.out], [a.urdf, a.drives], force=a.force)
        refuse_loops(a.urdf, f"{PROG} excite")
        model = load_urdf(a.urdf, drives=a.drives)
        if len(a.acceleration) not in (1, model.nv):
            raise IdentificationError(f"--acceleration needs one value or {model.nv} (joints "
                                      f"{list(model.joint_names)})")
        ex = design_excitation(model, limits=limits_from_arguments(model, a.limits),
                               acceleration=np.array(a.acceleration) if len(a.acceleration) > 1
                               else a.acceleration[0], frequency=a.frequency,
                               harmonics=a.harmonics, margin=a.margin,
                               torque_fraction=a.torque_fraction, periods=a.periods,
                               max_iter=a.max_iter, seed=a.seed)
        write_excitation(ex, a.out, a.dt,
                         made_by=stamp(f"{PROG} excite", argv, [a.urdf, a.drives]))
    except (RneaError, OSError) as exc:
        print(f"{PROG} excite: error: {one_line(exc)}", file=sys.stderr)
        return 1
    c = ex.check
    print(f"{PROG} excite: {model.name}: {ex.series.harmonics} harmonics of "
          f"{a.frequency:g} Hz, {ex.periods} x {ex.series.period:.4g} s; cond of the base "
          f"regressor ({ex.base.rank} base parameters) {ex.cond_initial:.4g} -> {ex.cond:.4g} "
          f"({ex.iterations} SLSQP iterations, {ex.solve_time:.2f} s); worst ratio to the limit "
          f"(10x finer than the grid): position {c.position:.3f}, velocity {c.velocity:.3f}, "
          f"acceleration {c.acceleration:.3f}, torque {c.torque:.3f}")
    print(f"  starts and ends at rest at {np.array2string(ex.series.start, precision=4)}; "
          f"wrote {a.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Identify (or ``excite ...``); 0 when the files were written, 1 with messages otherwise."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["excite"]:
        return excite(args[1:])
    a = parser().parse_args(args)
    exit_on_signals()
    if not (0.0 <= a.validation < 0.9 and 0 < a.cutoff < np.inf and 0 < a.rate < np.inf
            and 0 <= a.band < np.inf and 0 <= a.slow_fraction < 1):
        print(f"{PROG}: error: need 0 <= --validation < 0.9, finite --cutoff > 0, --rate > 0, "
              "--band >= 0, 0 <= --slow-fraction < 1", file=sys.stderr)
        return 1
    a.argv = args
    try:
        return identify_and_write(a)
    except (RneaError, OSError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:  # numbers the fit
        print(f"{PROG}: error: the data cannot be fitted ({one_line(exc)}): are the efforts "
              "plausible torques?", file=sys.stderr)
        return 1


def identify_and_write(a: argparse.Namespace) -> int:
    """The identification of parsed arguments ``a``: writes and prints, 0 or 1."""
    settings = Settings(cutoff=a.cutoff, rate=a.rate, validation=a.validation, band=a.band,
                        slow_fraction=a.slow_fraction)
    files = [a.out / name for name in ("robot_identified.urdf", "drives_identified.yaml",
                                       "report.md", "validation.png")]
    if a.out.exists() and not a.out.is_dir():
        raise OutputError(f"--out: '{a.out}' exists and is not a directory")
    check_outputs([a.out, *files], [a.bag, a.urdf, a.drives], force=a.force)
    refuse_loops(a.urdf)
    model = load_urdf(a.urdf, drives=a.drives, inertia_check="warn")
    urdf_text = a.urdf.read_text(encoding="utf-8")
    result = read_and_identify(a.bag, model, settings, urdf=urdf_text,
                               states_topic=a.states_topic, time_base=a.time_base)
    if result.unidentified and not a.partial:
        print(f"{PROG}: error: these data cannot identify every parameter; nothing "
              "written (--partial keeps them at their URDF/drive-file values):",
              file=sys.stderr)
        for what, why in result.unidentified.items():
            print(f"  {what}: {why}", file=sys.stderr)
        return 1
    new_urdf, drives, links = outputs(result, urdf_text)
    make_directory(a.out)
    write_text(a.out / "robot_identified.urdf", new_urdf)
    write_text(a.out / "drives_identified.yaml", drives)
    plots = []
    if not a.no_plots and (~result.fit).any():
        with atomic_path(a.out / "validation.png", keep_suffix=True) as png:
            plot_validation(result, png, a.band)
        plots.append("validation.png")
    made_by = stamp(PROG, a.argv, [a.bag, a.urdf, a.drives])
    write_text(a.out / "report.md", markdown(
        result, links, bag=str(a.bag), urdf=str(a.urdf), band=a.band, plots=plots,
        written=["robot_identified.urdf", "drives_identified.yaml"])
        + f"\n---\nMade by {made_by['tool']} {made_by['version']}: `{made_by['command']}`; "
        + "inputs: " + ", ".join(f"`{k}` {v}" for k, v in made_by["inputs"].items()) + "\n")
    for warning in result.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    names = model.joint_names
    print(f"{PROG}: {model.name}: {result.base.rank} base parameters from "
          f"{int(result.fit.sum())} samples; condition number {result.estimate.cond:.4g}; "
          f"{len(result.warnings)} warning{'' if len(result.warnings) == 1 else 's'}")
    if result.rms_before.size:
        print("  validation torque RMS, before -> after:")
        for j, name in enumerate(names):
            print(f"    {name:<20} {result.rms_before[j]:.4g} -> {result.rms_after[j]:.4g}")
    else:
        print("  no validation segment; fitted torque RMS: "
              + ", ".join(f"{name} {result.fit_rms_after[j]:.4g}" for j, name in enumerate(names)))
    for what, why in result.unidentified.items():
        print(f"  not identified (kept from the prior): {what}: {why}")
    print(f"  written: {a.out / 'robot_identified.urdf'}, {a.out / 'drives_identified.yaml'}, "
          f"{a.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
