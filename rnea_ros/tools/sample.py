"""``rnea-sample bag|fleet|identify DIR``: sample data for the offline tools, without ROS.

Each writes a directory a newcomer can run the next tool on, and prints that command:

* ``bag``: ``DIR/arm7.urdf`` and ``DIR/arm7_run`` (rosbag2, MCAP), 20 s at 1 kHz of the
  arm moving, efforts from our RNEA plus 0.5 N m of noise (motor-current-like), the
  commands the controller sent, and one 2 ms effort spike on ``joint2`` at t = 12 s:
  ``rnea-bag DIR/arm7_run --urdf DIR/arm7.urdf --out DIR/bag_report``;
* ``fleet``: ``DIR/fleet.yaml`` and the bags of four robots over several days, one with a
  wearing joint (r1's ``joint3``) and bags that fail on purpose (a truncated MCAP, an
  empty file, another robot's bag; so ``rnea-fleet`` exits 2, "finished, some bags
  failed"): ``rnea-fleet analyse DIR/fleet.yaml --out DIR/fleet_report``;
* ``identify``: ``DIR/arm7.urdf`` (the prior) and ``DIR/arm7_heavy`` (60 s at 200 Hz) of
  an arm whose links 3-5 are 25 % heavier than that URDF says, with viscous friction it
  does not state: ``rnea-identify DIR/arm7_heavy --urdf DIR/arm7.urdf --out
  DIR/identified``.

The data come from :mod:`rnea_ros.tools.synthetic_bag` and
:mod:`rnea_ros.tools.fleet.synthetic`; the same seed gives the same files.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rnea_ros.core.errors import RneaError
from rnea_ros.tools.files import OutputError, make_directory, one_line
from rnea_ros.tools.provenance import exit_on_signals, parser

PROG = "rnea-sample"
HEAVY_LINKS = ("link3", "link4", "link5")  # 25 % heavier in the identify sample's truth
HEAVY = 1.25
VISCOUS = 0.3  # [N m s/rad] the identify sample's true viscous friction, every joint


def _arm7_urdf(out: Path) -> Path:
    from rnea_ros.samples import sample_urdf

    urdf = out / "arm7.urdf"
    shutil.copyfile(sample_urdf("arm7"), urdf)
    return urdf


def heavier(urdf_text: str, links: Sequence[str], factor: float) -> str:
    """``urdf_text`` with the mass and inertia of each of ``links`` times ``factor``."""
    def scale(match: re.Match[str]) -> str:
        body = re.sub(r'(\b(?:value|ixx|ixy|ixz|iyy|iyz|izz)=")([^"]+)"',
                      lambda m: f'{m.group(1)}{float(m.group(2)) * factor!r}"', match.group(2))
        return match.group(1) + body + match.group(3)

    for link in links:
        pattern = rf'(<link name="{link}">.*?<inertial>)(.*?)(</inertial>)'
        urdf_text, count = re.subn(pattern, scale, urdf_text, count=1, flags=re.S)
        if count != 1:
            raise RneaError(f"sample URDF has no <inertial> for link '{link}'")
    return urdf_text


def write_bag_sample(out: Path) -> list[str]:
    """The ``bag`` sample; returns the command to run next."""
    from rnea_ros.core.model.urdf import load_urdf
    from rnea_ros.tools.synthetic_bag import write_bag

    urdf = _arm7_urdf(out)
    model = load_urdf(urdf)
    write_bag(out / "arm7_run", model, duration=20.0, rate=1000.0, noise=0.5,
              spikes=[(12.0, 0.002, 1, 80.0)], seed=7)
    return ["rnea-bag", str(out / "arm7_run"), "--urdf", str(urdf),
            "--out", str(out / "bag_report")]


def write_fleet_sample(out: Path) -> list[str]:
    from rnea_ros.tools.fleet.synthetic import write_fleet

    manifest = write_fleet(out)
    return ["rnea-fleet", "analyse", str(manifest), "--out", str(out / "fleet_report")]


def write_identify_sample(out: Path) -> list[str]:
    from rnea_ros.core.dynamics.rnea import rnea_batch
    from rnea_ros.core.model.urdf import parse_urdf
    from rnea_ros.tools.synthetic_bag import write_bag

    urdf = _arm7_urdf(out)
    prior = parse_urdf(urdf.read_text())
    truth = parse_urdf(heavier(urdf.read_text(), HEAVY_LINKS, HEAVY))

    def torques(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return rnea_batch(truth, q, qd, qdd) + VISCOUS * qd

    write_bag(out / "arm7_heavy", prior, duration=60.0, rate=200.0, noise=0.05,
              inverse_dynamics=torques, seed=11, commands=False)
    return ["rnea-identify", str(out / "arm7_heavy"), "--urdf", str(urdf),
            "--out", str(out / "identified")]


SAMPLES: dict[str, Callable[[Path], list[str]]] = {
    "bag": write_bag_sample, "fleet": write_fleet_sample, "identify": write_identify_sample}


def _parser() -> object:
    p = parser(PROG, __doc__.split("\n\n")[0].split(": ", 1)[-1]
               + "\n\n" + __doc__.split("\n\n")[2])
    p.add_argument("what", choices=sorted(SAMPLES), help="which sample to write")
    p.add_argument("out", type=Path, metavar="DIR",
                   help="the directory to write it in (created; must be "
                   "empty or new)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Write the sample and print the next command; 0, or 1 with one line."""
    a = _parser().parse_args(argv)  # type: ignore[attr-defined]
    exit_on_signals()
    out: Path = a.out
    try:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise OutputError(f"'{out}' exists and is not an empty directory: give a new one")
        make_directory(out, "DIR")
        command = SAMPLES[a.what](out)
    except (RneaError, OSError) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=sys.stderr)
        return 1
    print(f"{PROG}: wrote the {a.what} sample in {out}; next:\n  {' '.join(command)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
