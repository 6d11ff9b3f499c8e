"""rnea-fleet's contacts: per bag (by joint) in bags.parquet, per robot and day in the
report, on bags recorded from MuJoCo (rnea_ros.tools.synthetic_bag.record_contacts:
pushes on known links at known times, an engine other than ours)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.simulation.mujoco_backend import MujocoSimulator
from rnea_ros.tools.fleet import main
from rnea_ros.tools.synthetic_bag import ContactPush, record_contacts

VISCOUS = 0.3
DAY = 86400.0
CLOCK = 1.7e9  # 2023-11-14T22:13:20Z
# rnea-bag --propose-contact-thresholds on the contact-free phase-0 run (margin 2)
THRESHOLDS = [0.0991, 0.11, 0.0737, 0.0558, 0.05, 0.05, 0.05]
PUSHES = [ContactPush("link4", 0.4, 0.3, 30.0), ContactPush("link6", 1.0, 0.3, 30.0)]


def record(path: Path, pushes: list[ContactPush], phase: float, clock: float,
           **kwargs: bool) -> dict[str, np.ndarray]:
    model = load_robot("arm7")
    model = model.replace(viscous=np.full(model.nv, VISCOUS))
    plant = MujocoSimulator(sample_urdf("arm7"), model, damping=model.viscous,
                            contacts=False)
    return record_contacts(path, model, plant, pushes, duration=1.6, phase=phase,
                           clock=clock, **kwargs)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    root = tmp_path_factory.mktemp("fleet")
    urdf = root / "arm7.urdf"
    urdf.write_text(sample_urdf("arm7").read_text().replace('damping="0.0"',
                                                            f'damping="{VISCOUS}"'))
    truth = record(root / "a1" / "pushed", PUSHES, 0.7, CLOCK)
    record(root / "a1" / "free", [], 0.0, CLOCK + DAY)
    record(root / "a1" / "no_effort", PUSHES, 0.7, CLOCK + DAY + 60.0, efforts=False)
    (root / "fleet.yaml").write_text(
        "robots:\n"
        f"  a1: {{urdf: {urdf}, bags: a1/*, contact_thresholds: {THRESHOLDS}}}\n")
    out = root / "out"
    assert main(["analyse", str(root / "fleet.yaml"), "--out", str(out), "--workers", "1",
                 "--quiet"]) == 0
    return out, truth


def test_bags_parquet_counts_the_contacts_per_bag_and_joint(
        run: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, truth = run
    rows = pq.read_table(out / "bags.parquet").to_pylist()
    by_bag: dict[str, list[dict]] = {}
    for r in rows:
        by_bag.setdefault(Path(r["bag"]).name, []).append(r)
    pushed = {r["joint"]: r for r in by_bag["pushed"]}
    assert {j: r["contacts"] for j, r in pushed.items() if r["contacts"]} == \
        {"joint4": 1, "joint6": 1}  # each push isolated at its link's joint
    for push in PUSHES:
        t = truth["t"] - truth["t"][0]
        window = (t >= push.start) & (t < push.start + push.duration)
        true_peak = np.abs(truth["tau_ext"][window]).max()
        peak = pushed["joint" + push.link[-1]]["contact_peak"]
        assert abs(peak - true_peak) <= 0.10 * true_peak, (push.link, peak, true_peak)
    assert [r["contacts"] for r in by_bag["free"]] == [0] * 7
    assert all(r["contact_peak"] is None or math.isnan(r["contact_peak"])
               for r in by_bag["free"])
    assert [r["contacts"] for r in by_bag["no_effort"]] == [None] * 7  # not observed


def test_the_report_lists_contacts_per_robot_and_day(
        run: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, _ = run
    overview = (out / "report.html").read_text()
    assert "<th>contacts</th>" in overview
    page = (out / "robots" / "a1.html").read_text()
    assert "Contacts per day" in page
    assert "<tr><td>2023-11-14</td><td>1</td><td>2</td>" in page
    assert "joint4 1, joint6 1" in page
    assert "<tr><td>2023-11-15</td><td>1</td><td>0</td>" in page  # the free bag only
