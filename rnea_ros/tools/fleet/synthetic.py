"""A synthetic fleet on disk (tests, benchmark, docs): robots, days, wear and bad bags.

``write_fleet(root)`` writes ``root/fleet.yaml`` and:

* ``r1`` (arm7): ``days`` bags, one every ``spacing`` days, whose ``joint3`` needs an
  extra Coulomb friction rising by ``wear`` N m per day (a drying bearing);
* ``r2`` (arm7): healthy bags on the same days and two older ones (a ROS 1 bag, an
  sqlite3 rosbag2 directory), plus a truncated MCAP (the first 60 %
  of one: read up to its cut), an empty file, random bytes and a bag of another robot
  (the two-link arm: the arm7's joints are missing);
* ``r3``: a glob that matches nothing (a warning);
* ``r4``: ``r1``'s first bag read for a states topic it does not have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rnea_ros.core.dynamics.rnea import rnea_batch
from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.synthetic_bag import write_bag

EPOCH = 1.78e9  # 2026-05-28 20:26:40 UTC: the first day (bags start an hour later)
DAY = 86400.0
WORN = ("r1", "joint3")


def wearing(model: Any, joint: int, coulomb: float) -> Any:
    """Inverse dynamics with an extra Coulomb friction on ``joint`` [N m]."""
    def inverse_dynamics(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        tau = rnea_batch(model, q, qd, qdd)
        tau[:, joint] += coulomb * np.sign(qd[:, joint])
        return tau
    return inverse_dynamics


def write_fleet(root: Path, *, days: int = 4, spacing: float = 3.0, wear: float = 0.03,
                duration: float = 2.0, rate: float = 500.0, bad: bool = True) -> Path:
    """Write the fleet under ``root``; returns the manifest's path."""
    root = Path(root)
    arm = load_robot("arm7")
    joint = arm.joint_index(WORN[1])
    for robot in ("r1", "r2"):
        (root / robot).mkdir(parents=True, exist_ok=True)
        for day in range(days):
            extra = wear * spacing * day if robot == "r1" else 0.0
            write_bag(root / robot / f"day{day:02d}", arm, duration=duration, rate=rate,
                      seed=day + (100 if robot == "r2" else 0),
                      clock=EPOCH + day * spacing * DAY + 3600.0,
                      inverse_dynamics=wearing(arm, joint, extra))
    old = root / "old" / "r2"  # r2's older bags in the other formats: ROS 1, sqlite3
    old.mkdir(parents=True, exist_ok=True)
    for k, storage in ((1, "ros1"), (2, "sqlite3")):
        write_bag(old / (f"before{k}.bag" if storage == "ros1" else f"before{k}"), arm,
                  duration=duration, rate=rate, seed=200 + k, storage=storage,
                  clock=EPOCH - k * spacing * DAY + 3600.0)
    if bad:
        r2 = root / "r2"
        whole = next((r2 / "day00").glob("*.mcap")).read_bytes()
        (r2 / "cut.mcap").write_bytes(whole[:int(0.6 * len(whole))])
        (r2 / "empty.mcap").write_bytes(b"")
        (r2 / "random.mcap").write_bytes(np.random.default_rng(0).bytes(5000))
        write_bag(r2 / "other_robot", load_robot("two_link_rr"), duration=0.5, rate=rate,
                  clock=EPOCH + DAY)
    manifest = root / "fleet.yaml"
    urdf = sample_urdf("arm7")
    manifest.write_text(
        "robots:\n"
        f"  r1: {{urdf: {urdf}, bags: r1/*}}\n"
        f"  r2: {{urdf: {urdf}, bags: [r2/*, old/r2/*], states_topic: /joint_states}}\n"
        + (f"  r3: {{urdf: {urdf}, bags: r3/*.mcap}}\n"
           f"  r4: {{urdf: {urdf}, bags: r1/day00, states_topic: /arm/joint_states}}\n"
           if bad else ""))
    return manifest
