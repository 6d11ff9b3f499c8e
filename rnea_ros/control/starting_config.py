"""``rnea-config``: a starting controller parameter file for a robot of your own.

    rnea-config --urdf my_arm.urdf --out config/my_arm_controller.yaml

The file is what ``sim.launch.py``/``robot.launch.py controller_config:=FILE`` and the
controller load unchanged: the joints in the URDF's order, effort limits from the URDF,
effort-rate limits, PD gains scaled to the robot, friction compensation off until the
friction is identified; every value with its unit and the rule that made it, every other
parameter at its default (``python -m rnea_ros.parameters controller`` lists them).

Rules (docs/nodes.md, "A starting configuration"):

* **reference pose** ``q_ref``: the middle of each joint's position limits (0 where a
  joint has none); the gains use the mass matrix there, ``M(q_ref)`` with armature;
* **gains**: per joint the error dynamics ``M_ii ë + kd ė + kp e = 0`` (the PD of
  inverse-dynamics mode on top of an exact feedforward) get the natural frequency
  ``ω = 2π --bandwidth`` and damping ratio ``--damping-ratio``:
  ``kp = M_ii ω²``, ``kd = 2 ζ sqrt(kp M_ii)``; then ``kp`` is capped so that an error of
  ``--saturation-error`` (rad or m) alone asks for the joint's effort limit
  (``kp <= effort / e_sat``), and ``kd`` recomputed from the capped ``kp`` (same ζ);
* **effort-rate limits**: the effort limit reached from zero in ``--rise-time``
  (``rate = effort / t_rise``; Franka's 1000 N m/s on 87 N m is about 0.09 s);
* **friction**: ``friction_compensation: false`` from a URDF alone, even when its
  ``<dynamics>`` gives damping or friction (often placeholders): compensating friction
  the robot does not have injects energy -- the arm drifts away (the Unitree Z1's
  URDF, 1-2 N m of Coulomb friction per joint, drifted 5.6 rad in 15 s on a plant
  without it). The file says what the URDF gives; turn it on once the friction is
  identified (``rnea-identify``, or ``--bag`` below, which turns it on).

With ``--bag BAG`` (a recording of the robot: ``sensor_msgs/JointState`` with efforts)
the effort limits are the recorded maxima times ``--margin`` (never above the URDF's),
the effort-rate limits the recorded maximum rates times ``--margin``, and the friction
is identified from the recording where it can tell (else the URDF's ``<dynamics>``),
written to the drive file ``--drives-out`` that the parameter file names in
``drives_file`` (rules: :mod:`rnea_ros.tools.config_bag`).

A URDF with a joint lacking an effort limit is refused with the list of such joints: a
torque controller without limits has no saturation (``<limit effort="...">``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

import rnea_ros.core as rc
from rnea_ros.core.errors import RneaError
from rnea_ros.parameter_errors import ParameterError
from rnea_ros.parameters import load_table
from rnea_ros.tools.files import check_outputs, one_line, write_text
from rnea_ros.tools.provenance import exit_on_signals, parser, stamp

if TYPE_CHECKING:
    from rnea_ros.tools.config_bag import Proposal

PROG = "rnea-config"
BANDWIDTH = 3.0         # [Hz] closed-loop natural frequency of each joint's PD
DAMPING_RATIO = 1.0     # critically damped
SATURATION_ERROR = 0.1  # [rad or m] an error this large asks for the full effort
RISE_TIME = 0.1         # [s] effort limit reached from zero in this time


def reference_pose(model: rc.RobotModel) -> np.ndarray:
    """``q_ref`` (nv,): the middle of each joint's position limits, 0 without limits."""
    lower, upper = model.lower_limit, model.upper_limit
    finite = np.isfinite(lower) & np.isfinite(upper)
    return np.where(finite, 0.5 * (lower + upper), 0.0)


def missing_effort_limits(model: rc.RobotModel) -> list[str]:
    """The joints whose URDF gives no (or a zero) effort limit."""
    return [name for name, limit in zip(model.joint_names, model.effort_limit, strict=True)
            if not np.isfinite(limit) or limit <= 0]


def pd_gains(model: rc.RobotModel, bandwidth: float = BANDWIDTH,
             damping_ratio: float = DAMPING_RATIO,
             saturation_error: float = SATURATION_ERROR) -> tuple[np.ndarray, np.ndarray]:
    """``(kp, kd)`` (nv,) [N m/rad, N m s/rad; N/m, N s/m for prismatic joints] by the
    module's rule: ``kp = M_ii(q_ref) ω²`` capped at ``effort / saturation_error``,
    ``kd = 2 ζ sqrt(kp M_ii)``."""
    inertia = np.diag(rc.mass_matrix(model, reference_pose(model)))
    omega = 2.0 * np.pi * bandwidth
    kp = np.minimum(inertia * omega**2, model.effort_limit / saturation_error)
    kd = 2.0 * damping_ratio * np.sqrt(kp * inertia)
    return kp, kd


def _number(x: float) -> str:
    """``x`` to 4 significant digits as a YAML float literal (``87.0``, never ``87``: rcl
    refuses a double array holding an integer, "Sequence should be of same type")."""
    return str(np.format_float_positional(float(f"{float(x):.4g}"), trim="0"))


def _numbers(values: Sequence[float] | np.ndarray) -> str:
    return "[" + ", ".join(_number(v) for v in np.asarray(values, dtype=float)) + "]"


def _comment(name: str, extra: str = "") -> str:
    """``# unit; description`` of parameter ``name`` from the controller's table."""
    spec = load_table("controller")[name]
    unit = f"[{spec.unit}] " if spec.unit else ""
    return f"# {unit}{extra or spec.description}"


def _limit_rows(model: rc.RobotModel, rise_time: float, bag: Proposal | None
                ) -> list[tuple[str, str, str]]:
    """The ``effort_limits`` and ``effort_rate_limits`` rows: the URDF's (rise-time rule)
    or the recording's (:mod:`rnea_ros.tools.config_bag`)."""
    if bag is None:
        effort = model.effort_limit
        return [("effort_limits", _numbers(effort),
                 _comment("effort_limits", "from the URDF <limit effort>")),
                ("effort_rate_limits", _numbers(effort / rise_time),
                 _comment("effort_rate_limits",
                          f"effort limit reached from zero in {rise_time:g} s"))]
    return [("effort_limits", _numbers(bag.effort_limits), _comment(
                "effort_limits", f"{bag.margin:g} x the recorded max |effort| "
                f"{_numbers(bag.effort_max)}, at most the URDF's")),
            ("effort_rate_limits", _numbers(bag.rate_limits), _comment(
                "effort_rate_limits", f"{bag.margin:g} x the recorded max |d effort/dt| "
                f"{_numbers(bag.rate_max)} (Savitzky-Golay, 0.05 s)"))]


def _friction_rows(model: rc.RobotModel, drives: Path | None) -> list[tuple[str, str, str]]:
    """``friction_compensation`` (and ``drives_file`` with a recording's friction)."""
    friction = bool(np.any(model.coulomb > 0) or np.any(model.viscous > 0))
    if drives is None:  # off: the URDF's values are not identified (module docstring)
        given = ("given: enable once identified (rnea-identify, rnea-config --bag); "
                 "friction the robot does not have makes the arm drift") if friction \
            else "none given"
        return [("friction_compensation", "false", _comment(
            "friction_compensation", f"the URDF's <dynamics damping friction> ({given})"))]
    return [("drives_file", f'"{drives.resolve()}"', "# friction identified from the "
             "recording (or the URDF's where it could not tell), per joint"),
            ("friction_compensation", "true" if friction else "false",
             _comment("friction_compensation", "the drive file's friction"))]


def render(model: rc.RobotModel, urdf: Path, *, bandwidth: float, damping_ratio: float,
           saturation_error: float, rise_time: float, made_by: dict[str, object],
           bag: Proposal | None = None, drives: Path | None = None) -> str:
    """The parameter file's text (YAML keyed ``/**``, comments with units and rules);
    ``bag``: the limits and friction a recording proposes, the friction written to the
    drive file ``drives``."""
    if bag is not None:  # the gains' cap and the friction follow the recording
        model = model.replace(effort_limit=bag.effort_limits, viscous=bag.viscous,
                              coulomb=bag.coulomb)
    kp, kd = pd_gains(model, bandwidth, damping_ratio, saturation_error)
    q_ref = reference_pose(model)
    rows = [
        ("joints", "[" + ", ".join(model.joint_names) + "]",
         "# command order: the URDF's joints (mimic followers are never commanded)"),
        ("mode", "gravity", "# gravity | inverse_dynamics (switch at runtime with "
         "ros2 param set)"),
        *_limit_rows(model, rise_time, bag),
        ("kp", _numbers(kp), _comment("kp", f"M_ii(q_ref) (2 pi {bandwidth:g} Hz)^2, at most "
                                      f"effort / {saturation_error:g}")),
        ("kd", _numbers(kd), _comment("kd", f"2 x {damping_ratio:g} x sqrt(kp M_ii): damping "
                                      f"ratio {damping_ratio:g}")),
        *_friction_rows(model, drives if bag is not None else None),
    ]
    body = "\n".join(f"    {c}\n    {k}: {v}" for k, v, c in rows)
    header = "\n".join([
        f"# A starting configuration of the RNEA controller for '{model.name}', written by",
        f"# {made_by['tool']} {made_by['version']}: {made_by['command']}",
        f"# URDF {urdf} ({made_by['inputs'].get(str(urdf), '')})" if isinstance(
            made_by["inputs"], dict) else f"# URDF {urdf}",
        f"# Reference pose for the gains (middle of the position limits): {_numbers(q_ref)}",
        f"# Diagonal of M(q_ref) [kg m^2 or kg]: {_numbers(np.diag(rc.mass_matrix(model, q_ref)))}",
        "# Every other parameter keeps its default: python -m rnea_ros.parameters controller.",
        "# Keyed /** so it applies under any namespace; the launch file gives the robot",
        "# (urdf:= or robot_description). Check the limits against your drives' data sheet.",
        *([f"# Recording: {bag.samples} joint states over {bag.duration:.1f} s; "
           + "; ".join(bag.notes)] if bag is not None and bag.notes else []),
    ])
    return f"{header}\n/**:\n  ros__parameters:\n{body}\n"


def _parser() -> argparse.ArgumentParser:
    p = parser(PROG, "a starting controller parameter file for a URDF: joints, effort and "
               "rate limits, PD gains from the mass matrix (docs/nodes.md)")
    p.add_argument("--urdf", type=Path, required=True, help="the robot's URDF")
    p.add_argument("--out", type=Path, required=True,
                   help="the parameter file written (YAML, keyed /**)")
    p.add_argument("--bandwidth", type=float, default=BANDWIDTH,
                   help="closed-loop natural frequency of each joint's PD [Hz]")
    p.add_argument("--damping-ratio", type=float, default=DAMPING_RATIO,
                   help="damping ratio of each joint's PD")
    p.add_argument("--saturation-error", type=float, default=SATURATION_ERROR,
                   help="position error [rad or m] that alone asks for the effort limit "
                   "(caps kp)")
    p.add_argument("--rise-time", type=float, default=RISE_TIME,
                   help="time [s] to reach the effort limit from zero (effort_rate_limits)")
    p.add_argument("--bag", type=Path, default=None,
                   help="a recording of the robot (rosbag2 folder, .mcap, .db3 or ROS 1 "
                   ".bag; joint states with efforts): limits and friction from it")
    p.add_argument("--margin", type=float, default=1.2,
                   help="--bag: the limits are the recorded maxima times this")
    p.add_argument("--states-topic", default="/joint_states",
                   help="--bag: the sensor_msgs/JointState topic")
    p.add_argument("--drives-out", type=Path, default=None,
                   help="--bag: the drive file written with the identified friction "
                   "(default: <--out stem>_drives.yaml beside --out)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out (and --drives-out)")
    return p


def _check(a: argparse.Namespace) -> None:
    ranges = {"--bandwidth": (a.bandwidth, 0.01, 100.0),
              "--damping-ratio": (a.damping_ratio, 0.1, 10.0),
              "--saturation-error": (a.saturation_error, 1e-3, 10.0),
              "--rise-time": (a.rise_time, 1e-3, 10.0),
              "--margin": (a.margin, 1.0, 10.0)}
    for option, (value, low, high) in ranges.items():
        if not low <= value <= high:
            raise ParameterError(f"{option} {value:g}: need {low:g} to {high:g}")


def _from_bag(a: argparse.Namespace, model: rc.RobotModel
              ) -> tuple[Proposal | None, Path | None]:
    """With ``--bag``: the recording's proposal and the drive file to write (checked
    like ``--out``); else ``(None, None)``."""
    if a.bag is None:
        return None, None
    from rnea_ros.tools.config_bag import propose, read_recording

    drives = a.drives_out or a.out.with_name(f"{a.out.stem}_drives.yaml")
    check_outputs([drives], [a.urdf, a.bag, a.out], force=a.force, option="--drives-out")
    return propose(model, read_recording(a.bag, model, a.states_topic), a.margin), drives


def main(argv: Sequence[str] | None = None) -> int:
    """Write the file; 0, or 1 with one line and nothing written."""
    a = _parser().parse_args(argv)
    exit_on_signals()
    try:
        _check(a)
        check_outputs([a.out], [a.urdf, a.bag], force=a.force)
        from rnea_ros.core.coupling.loop_file import loop_file_path

        if loop_file_path(a.urdf).is_file():
            raise ParameterError(f"{loop_file_path(a.urdf)} closes kinematic loops: {PROG} "
                                 "writes serial robots' files; start from "
                                 "config/five_bar_controller.yaml for a closed chain")
        model = rc.load_urdf(a.urdf)
        missing = missing_effort_limits(model)
        if missing:
            raise ParameterError(f"{a.urdf}: joints {missing} have no effort limit (<limit "
                                 "effort=...> > 0): a torque controller needs one per joint")
        proposal, drives = _from_bag(a, model)
        inputs = [a.urdf] + ([a.bag] if a.bag is not None else [])
        made_by = stamp(PROG, argv, inputs)
        text = render(model, a.urdf, bandwidth=a.bandwidth, damping_ratio=a.damping_ratio,
                      saturation_error=a.saturation_error, rise_time=a.rise_time,
                      made_by=made_by, bag=proposal, drives=drives)
        if proposal is not None and drives is not None:
            from rnea_ros.tools.config_bag import drives_text

            write_text(drives, drives_text(model, proposal, [
                f"Friction of '{model.name}' for drives_file, written by {PROG} "
                f"{made_by['version']}: {made_by['command']}",
                f"from {a.bag} ({proposal.samples} joint states, {proposal.duration:.1f} s): "
                "least squares of tau - RNEA_URDF(q, qd, qdd) on Fv qd + Fc sign(qd)"]))
        write_text(a.out, text)
    except ModuleNotFoundError as exc:  # --bag without the tools extra
        print(f"{PROG}: error: --bag needs the Python module '{(exc.name or '').split('.')[0]}'"
              ": pip install 'rnea_ros[tools]'", file=sys.stderr)
        return 1
    except (RneaError, OSError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    if proposal is not None:
        print(f"{PROG}: limits and friction from {a.bag}; friction in {drives}")
    print(f"{PROG}: {model.name}: {model.nv} joints {list(model.joint_names)}; wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
