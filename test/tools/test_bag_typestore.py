"""rnea-bag's own type store (``tools/bag/sources.py``): the message types a bag analysis
deserialises, not a whole ROS distribution's store.

A bag that carries no type definitions (a rosbag2 sqlite3 file before Iron) is decoded
with it: each type rnea-bag reads (``JointState``, ``Float64MultiArray``, ``String`` on
``/robot_description``) must be there, with the definitions and hashes of ROS 2's.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.bag import Analysis, Options
from rnea_ros.tools.bag.analysis import analyse_into
from rnea_ros.tools.bag.sources import MESSAGES, RosbagsSource, typestore
from rnea_ros.tools.synthetic_bag import write_bag

MODEL = load_robot("arm7")
URDF = sample_urdf("arm7")


@pytest.mark.parametrize("distribution", ["ROS2_HUMBLE", "ROS2_JAZZY", "ROS2_KILTED"])
def test_the_types_are_ros2s_own(distribution: str) -> None:
    """Each type (and each type it uses) has the definition and the RIHS01 hash of the
    distribution's store: rosbags checks a bag's hashes against them."""
    from rosbags.typesys import Stores, get_typestore

    ours, theirs = typestore(), get_typestore(getattr(Stores, distribution))
    assert set(MESSAGES) <= set(ours.fielddefs)
    for name in ours.fielddefs:
        assert ours.fielddefs[name] == theirs.fielddefs[name], name
        assert ours.generate_msgdef(name, ros_version=2) == \
            theirs.generate_msgdef(name, ros_version=2), name
        assert ours.hash_rihs01(name) == theirs.hash_rihs01(name), name


def strip_definitions(bag: Path) -> None:
    """Remove the message definitions from a rosbag2 sqlite3 bag, as a recording of Foxy
    to Humble has none."""
    (db,) = bag.glob("*.db3")
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM message_definitions")


def analysis(bag: Path, out: Path) -> tuple[Analysis, dict[str, Any]]:
    """rnea-bag on ``bag``, the robot from its ``/robot_description`` (a String)."""
    return analyse_into(Options(bag=bag, out=out, series=False, report=False, plots=False,
                                progress=False), Analysis)


def test_a_bag_without_definitions_is_analysed_with_each_type(tmp_path: Path) -> None:
    """States, commands and the robot description of a bag without type definitions are
    all decoded: the same analysis as the bag with them."""
    from rosbags.highlevel import AnyReader, AnyReaderError

    with_defs, without = tmp_path / "with", tmp_path / "without"
    for bag in (with_defs, without):
        write_bag(bag, MODEL, duration=1.0, storage="sqlite3",
                  robot_description=URDF.read_text(), seed=3)
    strip_definitions(without)
    with pytest.raises(AnyReaderError, match="no type definitions"):  # the store is needed
        AnyReader([without]).open()
    source = RosbagsSource(without)
    try:
        assert {t.msgtype for t in source.topics.values()} == set(MESSAGES)
    finally:
        source.close()
    a, stats_a = analysis(with_defs, tmp_path / "a")
    b, stats_b = analysis(without, tmp_path / "b")
    assert stats_b["states"] == stats_a["states"] == 1000
    assert stats_b["commands"] == stats_a["commands"] == 1000  # Float64MultiArray
    assert stats_b["skipped_undecodable"] == stats_a["skipped_undecodable"] == 0
    assert a.model.joint_names == b.model.joint_names == MODEL.joint_names  # the String
    for key, value in a.model_vs_measured.table().items():
        assert np.array_equal(value, b.model_vs_measured.table()[key], equal_nan=True), key


def test_a_bag_analysis_imports_no_distribution_store(tmp_path: Path) -> None:
    """A whole distribution's store (its module imports those of seven earlier ones) cost a
    fresh process 0.07-0.09 s of CPU in its first bag; none is imported now."""
    bag = tmp_path / "bag"
    write_bag(bag, MODEL, duration=0.2, storage="mcap")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from rnea_ros.tools.bag import Analysis, Options\n"
        "from rnea_ros.tools.bag.analysis import analyse_into\n"
        f"analyse_into(Options(bag=Path({str(bag)!r}), out=Path({str(tmp_path)!r}),\n"
        f"             urdf=Path({str(URDF)!r}), series=False, report=False, plots=False,\n"
        "             progress=False), Analysis)\n"
        "print(sorted(m for m in sys.modules if m.startswith('rosbags.typesys.stores.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out == "['rosbags.typesys.stores.empty']"
