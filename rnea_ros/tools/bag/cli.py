"""``rnea-bag``'s command line: ``main(argv) -> int``."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from rnea_ros.control.contact.observer import COULOMB_BAND
from rnea_ros.core.errors import RneaError
from rnea_ros.tools.bag.analysis import analyse
from rnea_ros.tools.bag.contacts import (
    DEFAULT_FRACTION,
    DEFAULT_NO_LIMIT,
    NOISE_SIGMAS,
    THRESHOLDS_FILE,
)
from rnea_ros.tools.bag.options import Options, check
from rnea_ros.tools.bag.report import effort_unit
from rnea_ros.tools.bag.series import FORMATS
from rnea_ros.tools.files import one_line
from rnea_ros.tools.provenance import parser as cli_parser

PROG = "rnea-bag"


class _Parser(argparse.ArgumentParser):
    """An argument error is one line and exit code 1, like every other bad input."""

    def error(self, message: str) -> NoReturn:
        print(f"{PROG}: error: {message} (--help lists the options)", file=sys.stderr)
        raise SystemExit(1)


def parser() -> argparse.ArgumentParser:
    """Every flag with its help; defaults shown by ``--help``."""
    p = cli_parser(PROG, "model torques, torque rates and limit violations from a bag "
                   "(docs/bag.md)", cls=_Parser)
    p.add_argument("bag", type=Path, help="rosbag2 directory, .mcap/.db3 file or ROS 1 .bag")
    p.add_argument("--urdf", type=Path, help="robot URDF (default: /robot_description in the bag)")
    p.add_argument("--loops", help="closed-loop robot: the loop file closing the URDF's "
                   "spanning tree (default: <urdf stem>.loops.yaml next to --urdf if it exists; "
                   "'none': no loops); the active joints are analysed, the passive ones solved")
    p.add_argument("--out", type=Path, default=Path("rnea_bag_report"), help="output directory")
    p.add_argument("--states-topic", default="/joint_states",
                   help="sensor_msgs/JointState topic")
    p.add_argument("--commands-topic", default="/effort_controller/commands",
                   help="std_msgs/Float64MultiArray effort commands, in --joints order")
    p.add_argument("--joints", nargs="+",
                   help="joint order of the command arrays (default: the robot's order)")
    p.add_argument("--time-base", default="header",
                   help="time of a sample: 'header' (its stamp) or 'receive' (the bag's "
                        "receive time)")
    p.add_argument("--window", type=float, default=0.05,
                   help="Savitzky-Golay window [s] (q derivatives and the measured effort rate)")
    p.add_argument("--order", type=int, default=4, help="Savitzky-Golay polynomial order, 3 to 10")
    p.add_argument("--differentiate-velocity", action="store_true",
                   help="differentiate positions even when velocities are recorded")
    p.add_argument("--effort-rate-limits", type=float, nargs="+", default=[1000.0],
                   help="per joint or one, > 0 [N m/s or N/s]")
    p.add_argument("--chunk", type=int, default=20000, help="samples per processing chunk")
    p.add_argument("--plot-points", type=int, default=4000,
                   help="points per plotted curve (> 0; violation peaks are always marked)")
    p.add_argument("--mimic-tolerance", type=float, default=0.005,
                   help="a mimic follower (URDF <mimic>) in the bag further than this from "
                        "multiplier * leader + offset is reported [rad or m]")
    p.add_argument("--series", choices=FORMATS, default="none",
                   help="also write every sample's numbers: series.parquet (zstd-compressed; "
                        "needs pyarrow) or series.csv (shortest exact decimals, ~1.4 KB a "
                        "sample of a 7-joint arm)")
    c = p.add_argument_group("contacts (docs/bag.md, 'Contacts'; docs/contacts.md)")
    c.add_argument("--contact-thresholds", nargs="+", metavar="VALUE_OR_FILE",
                   help="contact thresholds [N m or N]: one value, one per joint, or a "
                   "controller parameter file with contact.thresholds (default: the "
                   f"larger of {100 * DEFAULT_FRACTION:g} %% of each joint's URDF effort "
                   f"limit, {DEFAULT_NO_LIMIT:g} without one, and {NOISE_SIGMAS:g} sigma of "
                   "the residual's noise from the measured effort's)")
    c.add_argument("--contact-gain", type=float, default=100.0,
                   help="momentum observer gain K_O [1/s] (time constant 1/K_O)")
    c.add_argument("--contact-release", type=float, default=0.5,
                   help="a contact ends below this fraction of the thresholds, (0, 1]")
    c.add_argument("--contact-min-duration", type=float, default=0.002,
                   help="onset and release must hold this long [s]")
    c.add_argument("--contact-band", type=float, default=COULOMB_BAND,
                   help="velocity band of the observer's Coulomb friction: Fs sign(qd) is "
                   "Fs qd / band below it (as the controller's friction.coulomb_band) "
                   "[rad/s or m/s], 0: the exact sign")
    c.add_argument("--propose-contact-thresholds", action="store_true",
                   help="write --out/contact_thresholds.yaml from this contact-free "
                   "recording: worst |r| per joint x --contact-margin")
    c.add_argument("--contact-margin", type=float, default=2.0,
                   help="margin of the proposed thresholds over the worst residual, >= 1")
    c.add_argument("--no-contacts", action="store_true", help="no contact observer")
    p.add_argument("--no-plots", action="store_true", help="no joint_<name>.png, no plots "
                   "in report.html")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true",
                   help="replace existing outputs in --out (never an input)")
    return p


def parse(argv: Sequence[str] | None) -> Options:
    a = parser().parse_args(argv)
    command = [PROG, *(sys.argv[1:] if argv is None else argv)]
    return Options(bag=a.bag, out=a.out, urdf=a.urdf, loops=a.loops, states_topic=a.states_topic,
                   commands_topic=a.commands_topic, joints=a.joints, time_base=a.time_base,
                   window=a.window, order=a.order, recorded_velocity=not a.differentiate_velocity,
                   effort_rate_limits=a.effort_rate_limits, chunk=a.chunk,
                   plot_points=a.plot_points, plots=not a.no_plots, progress=not a.quiet,
                   mimic_tolerance=a.mimic_tolerance, force=a.force,
                   series=a.series != "none",
                   series_format=a.series if a.series != "none" else "csv",
                   command=[shlex.quote(str(c)) for c in command],
                   contacts=not a.no_contacts, contact_thresholds=a.contact_thresholds,
                   contact_gain=a.contact_gain, contact_release=a.contact_release,
                   contact_min_duration=a.contact_min_duration, contact_band=a.contact_band,
                   propose_contact_thresholds=a.propose_contact_thresholds,
                   contact_margin=a.contact_margin)


def main(argv: Sequence[str] | None = None) -> int:
    """Analyse a bag; 0 on success, 1 with one message on bad input."""
    try:
        options = parse(argv)
    except SystemExit as exc:  # --help, --version (0), a bad argument (1, one line)
        return exc.code if isinstance(exc.code, int) else 1
    try:
        check(options)  # every option, before any work
        analysis, stats = analyse(options)
    except (RneaError, OSError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    for warning in stats["warnings"]:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    for note in stats["notes"]:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    table = analysis.model_vs_measured.table()
    count = len(stats["warnings"])
    print(f"{PROG}: {analysis.written} samples of {analysis.model.name}; {count} "
          f"warning{'' if count == 1 else 's'}; report in {options.out / 'report.html'}")
    for j, name in enumerate(analysis.model.joint_names):
        if not table["samples"][j]:
            print(f"  {name:<20} model - measured: no efforts recorded")
            continue
        print(f"  {name:<20} model - measured: RMS {table['rms'][j]:.4g}, bias "
              f"{table['bias'][j]:.4g} {effort_unit(analysis.model.joint_types[j])} "
              f"({int(table['samples'][j])} samples)")
    print(f"  contacts: {analysis.contact_summary()}")
    if analysis.contacts.proposed is not None:
        print(f"  proposed contact thresholds: {options.out / THRESHOLDS_FILE} (pass it to "
              "--contact-thresholds, or to the controller with --params-file)")
    print(f"  limit violations: {len(analysis.violations)}; skipped samples: "
          f"{stats['skipped_nan'] + stats['skipped_missing'] + stats['skipped_undecodable']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
