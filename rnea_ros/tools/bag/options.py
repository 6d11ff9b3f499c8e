"""What the user asked ``rnea-bag`` for (built by :mod:`~rnea_ros.tools.bag.cli`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from rnea_ros.control.contact.observer import COULOMB_BAND
from rnea_ros.tools.bag.errors import BagError


@dataclass
class Options:
    bag: Path
    out: Path
    urdf: Path | None = None
    loops: str | None = None  # loop file; "none": no loops; None: next to urdf if any
    states_topic: str = "/joint_states"
    commands_topic: str = "/effort_controller/commands"
    joints: list[str] | None = None
    time_base: str = "header"
    window: float = 0.05
    order: int = 4
    recorded_velocity: bool = True
    effort_rate_limits: list[float] = field(default_factory=lambda: [1000.0])
    chunk: int = 20000
    plot_points: int = 4000
    plots: bool = True
    progress: bool = True
    mimic_tolerance: float = 0.005  # [rad or m]: a published mimic follower off its coupling
    force: bool = False  # replace existing outputs (never an input)
    drives: Path | None = None  # drive side file (armature, gear ratio, friction) for the URDF
    series: bool = True  # write the per-sample series (rnea-fleet: summaries only)
    series_format: str = "csv"  # "csv" or "parquet" (zstd); the CLI writes none by default
    command: list[str] | None = None  # the command line, stamped on the outputs
    report: bool = True  # write report.md (and the plots if ``plots``)
    # Contacts (tools/bag/contacts.py, docs/bag.md "Contacts"):
    contacts: bool = True  # observe contacts when the bag has velocities and efforts
    contact_thresholds: list[str] | None = None  # values or a parameter file; None: default
    contact_gain: float = 100.0  # observer gain K_O [1/s]
    contact_release: float = 0.5  # release at this fraction of the thresholds
    contact_min_duration: float = 0.002  # [s] onset and release must hold this long
    contact_band: float = COULOMB_BAND  # [rad/s or m/s] the observer's Coulomb sign band
    propose_contact_thresholds: bool = False  # write contact_thresholds.yaml in --out
    contact_margin: float = 2.0  # proposed thresholds: worst |r| times this


MAX_ORDER = 10  # higher Savitzky-Golay orders are ill-conditioned (numpy warns past ~15)


def check(options: Options) -> None:
    """Reject options that cannot give a meaningful analysis (:class:`BagError`, one line)."""
    if options.time_base not in ("header", "receive"):
        raise BagError(f"--time-base '{options.time_base}' must be 'header' or 'receive'")
    if not 3 <= options.order <= MAX_ORDER:
        raise BagError(f"--order {options.order}: must be 3 (the jerk needs it) to "
                       f"{MAX_ORDER} (higher orders are ill-conditioned)")
    if not 0 < options.window < float("inf"):
        raise BagError(f"--window {options.window}: must be > 0 s and finite")
    if not options.mimic_tolerance > 0 or options.mimic_tolerance == float("inf"):
        raise BagError(f"--mimic-tolerance {options.mimic_tolerance}: must be finite and > 0")
    if options.chunk < 100:
        raise BagError(f"--chunk {options.chunk}: must be >= 100 samples")
    if options.plot_points <= 0:
        raise BagError(f"--plot-points {options.plot_points}: must be > 0 (points per "
                       "plotted curve)")
    if options.joints is not None:
        seen = {j for j in options.joints if options.joints.count(j) > 1}
        if seen:
            raise BagError(f"--joints {', '.join(sorted(seen))} given more than once: each "
                           "joint once, in the command arrays' order")
        if not options.joints:
            raise BagError("--joints: needs at least one joint name")
    if options.series_format not in ("parquet", "csv"):
        raise BagError(f"--series '{options.series_format}': must be parquet, csv or none")
    if options.series and options.series_format == "parquet" and find_spec("pyarrow") is None:
        raise BagError("--series parquet needs pyarrow (pip install pyarrow, or the 'fleet' "
                       "extra); --series csv needs nothing more")
    check_contacts(options)
    bad = [v for v in options.effort_rate_limits if not v > 0 or v == float("inf")]
    if bad or not options.effort_rate_limits:
        raise BagError(f"--effort-rate-limits {' '.join(map(str, bad))}: limits must be "
                       "finite and > 0")


def check_contacts(options: Options) -> None:
    """The contact options (the thresholds are checked against the robot later)."""
    if not (0 < options.contact_gain < float("inf")):
        raise BagError(f"--contact-gain {options.contact_gain}: must be finite and > 0 [1/s]")
    if not 0 < options.contact_release <= 1:
        raise BagError(f"--contact-release {options.contact_release}: must be in (0, 1]")
    if not 0 <= options.contact_min_duration < float("inf"):
        raise BagError(f"--contact-min-duration {options.contact_min_duration}: must be "
                       "finite and >= 0 s")
    if not 0 <= options.contact_band < float("inf"):
        raise BagError(f"--contact-band {options.contact_band}: must be finite and >= 0 "
                       "[rad/s or m/s] (0: the exact sign)")
    if not 1 <= options.contact_margin < float("inf"):
        raise BagError(f"--contact-margin {options.contact_margin}: must be finite and >= 1")
    if options.propose_contact_thresholds and not options.contacts:
        raise BagError("--propose-contact-thresholds needs the contacts (drop --no-contacts)")
