"""A synthetic fleet on disk (tests, benchmark, docs): robots, days, wear and bad bags.

``write_fleet(root)`` writes ``root/fleet.yaml`` and:

* ``r1`` (arm7): ``days`` bags, one every ``spacing`` days, whose ``joint3`` needs an
  extra Coulomb friction rising by ``wear`` N m per day (a drying bearing);
* ``r2`` (arm7): healthy bags on the same days and two older ones (a ROS 1 bag, an
  sqlite3 rosbag2 directory), plus a truncated MCAP (the first 60 %
  of one: read up to its cut), an empty file, random bytes and a bag of another robot
  (the two-link arm: the arm7's joints are missing);
* ``r3``: a glob that matches nothing (a warning);
* ``r4``: ``r1``'s first bag read for a states topic it does not have;
* ``h1``, ``h2``, ...: ``robots - 2`` more healthy arm7s (each day a different motion);
* ``copy=(ROBOT, DAY)``: beside that robot's bag of that day, ``copyDD.mcap``, its
  first 60 % (the same stamps: a truncated re-upload of the recording).
"""

from __future__ import annotations

import math
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
                duration: float = 2.0, rate: float = 500.0, bad: bool = True,
                robots: int = 2, copy: tuple[str, int] | None = None) -> Path:
    """Write the fleet under ``root``; returns the manifest's path."""
    root = Path(root)
    arm = load_robot("arm7")
    joint = arm.joint_index(WORN[1])
    names = ["r1", "r2", *(f"h{k}" for k in range(1, robots - 1))]
    for number, robot in enumerate(names):
        (root / robot).mkdir(parents=True, exist_ok=True)
        for day in range(days):
            extra = wear * spacing * day if robot == "r1" else 0.0
            write_bag(root / robot / f"day{day:02d}", arm, duration=duration, rate=rate,
                      seed=day + 100 * number, clock=EPOCH + day * spacing * DAY + 3600.0,
                      inverse_dynamics=wearing(arm, joint, extra))
    if copy is not None:
        whole = next((root / copy[0] / f"day{copy[1]:02d}").glob("*.mcap")).read_bytes()
        (root / copy[0] / f"copy{copy[1]:02d}.mcap").write_bytes(whole[:int(0.6 * len(whole))])
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
           if bad else "")
        + "".join(f"  {name}: {{urdf: {urdf}, bags: {name}/*}}\n" for name in names[2:]))
    return manifest


def fleet_tables(out: Path, *, robots: int = 1000, days: int = 8, seed: int = 0) -> Path:
    """Write the tables and ``summary.json`` of a generated fleet into ``out`` (no bags:
    for the report's scale, docs/scale.md), then the report from them; returns
    ``out / "report.html"``.

    ``robots`` arm7s named ``robot0000``...; one bag a day of 10^5 samples; residual
    RMS 0.05 N m (varying 1 % with the day's motion) and extra friction 0 ± its
    standard error 0.0005; every 97th robot's ``joint3`` gains 0.005 N m of Coulomb
    friction a day (10 %/day of its RMS: flagged), every 250th has only failed bags,
    every 333rd no bag (silent), every 50th re-uploaded a truncated copy of a day.
    """
    import json

    from rnea_ros import __version__
    from rnea_ros.tools.fleet.drift import THRESHOLD, drift
    from rnea_ros.tools.fleet.recordings import duplicates
    from rnea_ros.tools.fleet.report import report_from_tables
    from rnea_ros.tools.fleet.tables import FLOATS, write_bags, write_drift

    rng = np.random.default_rng(seed)
    joints = load_robot("arm7").joint_names
    rows: list[dict[str, Any]] = []
    names = [f"robot{k:04d}" for k in range(robots)]
    for k, robot in enumerate(names):
        if k % 333 == 1:
            continue  # silent: no bag
        for day in range(days):
            bag = f"/fleet/{robot}/day{day:02d}.mcap"
            start = EPOCH + day * DAY + 3600.0
            if k % 250 == 2:
                rows.append({"robot": robot, "bag": bag, "joint": "", "start": math.nan,
                             "samples": 0, "violations": 0, "unit": "", "status": "error",
                             "message": "File magic is invalid", "key": f"{k}-{day}",
                             **{c: math.nan for c in FLOATS}})
                continue
            copies = [(bag, 100_000)] + ([(bag + ".copy", 60_000)] if k % 50 == 3
                                         and day == days - 1 else [])
            for path, samples in copies:
                for joint in joints:
                    wear = 0.005 * day if k % 97 == 5 and joint == WORN[1] else 0.0
                    part = samples < 100_000  # the copy: another part of the motion
                    rows.append({
                        "robot": robot, "bag": path, "joint": joint, "start": start,
                        "duration": samples / 1000.0, "samples": samples,
                        "rms": 0.05 * (1 + 0.01 * rng.standard_normal()) * (1.3 if part
                                                                             else 1.0),
                        "bias": 0.0, "max_abs": 0.2, "peak_effort_ratio": 0.5,
                        "peak_rate_ratio": 0.5, "violations": 0,
                        "viscous": 0.0005 * rng.standard_normal(), "viscous_se": 0.0005,
                        "coulomb": wear + 0.0005 * rng.standard_normal(),
                        "coulomb_se": 0.0005, "velocity_rms": 1.0, "unit": "N m",
                        "status": "partial" if part else "ok", "message": "",
                        "key": f"{k}-{day}-{samples}"})
    rows = duplicates(rows)
    trends = drift(rows, THRESHOLD)
    stamp = {"version": __version__, "command": f"fleet_tables(robots={robots})"}
    out.mkdir(parents=True, exist_ok=True)
    write_bags(out / "bags.parquet", rows, stamp)
    write_drift(out / "drift.parquet", trends, stamp)
    bags = {(r["robot"], r["bag"]): r for r in rows}
    summary = {
        **stamp, "bags": len(bags), "robots": robots, "analysed": len(bags), "cached": 0,
        "failed": sum(r["status"] == "error" for r in bags.values()),
        "partial": sum(r["status"] == "partial" for r in bags.values()),
        "flagged": sorted({f"{t['robot']}/{t['joint']}" for t in trends if t["flagged"]}),
        "duplicates": [{"robot": r["robot"], "bag": r["bag"], "copy_of": r["duplicate_of"]}
                       for r in bags.values() if r["duplicate_of"]],
        "silent": [n for k, n in enumerate(names) if k % 333 == 1],
        "drift_threshold": THRESHOLD,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    report_from_tables(out)
    return out / "report.html"
