"""message_map: a JointState's names onto the merged state, the rejections' words and
the mimic check (arm7_gripper: finger_joint2 = -finger_joint1)."""

from __future__ import annotations

import math
from array import array

import numpy as np
import pytest

from rnea_ros.control.config import default_values, load_model
from rnea_ros.control.joint_state import (
    BACKWARDS,
    DUPLICATE_NAMES,
    FUTURE,
    LENGTH_MISMATCH,
    NO_MODEL_JOINT,
    NON_FINITE,
)
from rnea_ros.control.message_map import mimic_mismatch, mimic_warning, name_map, rejection


@pytest.fixture(scope="module")
def model():
    values = default_values()
    values.update(urdf_path="package://rnea_ros/urdf/arm7_gripper.urdf")
    return load_model(values)


def mapped(model, names):
    state = model.joint_names
    return name_map(names, state, {j: i for i, j in enumerate(state)}, model)


def test_names_map_message_entries_onto_the_state_order(model) -> None:
    names = ["other", model.joint_names[2], model.joint_names[0]]
    idx, screen, duplicates, followers = mapped(model, names)
    assert idx.tolist() == [[2, 1], [0, 2]] and screen == 0 and duplicates == ()
    assert followers == ()


def test_a_model_joint_named_twice_is_screened_and_named(model) -> None:
    j = model.joint_names[1]
    idx, screen, duplicates, _ = mapped(model, [j, "x", "x", j])
    assert screen == DUPLICATE_NAMES and duplicates == (j,)
    assert idx.tolist() == [[0], [1]]  # the first occurrence


def test_no_model_joint_is_screened(model) -> None:
    assert mapped(model, ["a", "b"])[1] == NO_MODEL_JOINT


def test_followers_with_their_leader_are_checked(model) -> None:
    names = [*model.joint_names, "finger_joint2"]
    followers = mapped(model, names)[3]
    assert [row[4] for row in followers] == ["finger_joint2"]
    p = array("d", np.zeros(len(names)))
    leader = names.index(model.mimic_joints["finger_joint2"].leader)
    p[leader], p[-1] = 0.01, -0.01
    assert mimic_mismatch(followers, p, 1e-6) == ("", 0.0)
    p[-1] = 0.02
    bad, d = mimic_mismatch(followers, p, 1e-3)
    assert bad == "finger_joint2" and d == pytest.approx(0.03)
    p[-1] = math.nan
    assert mimic_mismatch(followers, p, 1e3)[0] == "finger_joint2"
    text = mimic_warning(model, bad, d, 1e-3)
    assert "finger_joint2" in text and "finger_joint1" in text and "+0.03" in text


def test_rejections_name_what_is_wrong(model) -> None:
    names = list(model.joint_names[:2])
    idx = mapped(model, names)[0]
    p, v = array("d", [0.1, math.nan]), array("d", [0.0, 0.0])

    def words(status, **kw):
        args = dict(mode="gravity", names=names, state_names=model.joint_names, p=p, v=v,
                    idx=idx, duplicates=(), stamp=2.0, last_stamp=3.0, newest=1.0,
                    since_newest=0.5)
        args.update(kw)
        return rejection(status, **args)

    assert words(NO_MODEL_JOINT) is None
    assert words(LENGTH_MISMATCH, v=array("d", [0.0])) == (
        "length_mismatch", "2 names, 2 positions, 1 velocities")
    reason, text = words(NON_FINITE)
    assert reason == "non_finite" and model.joint_names[1] in text \
        and model.joint_names[0] not in text
    assert words(BACKWARDS) == ("time_backwards",
                                "stamp 2.000000 s is older than the last one (3.000000 s)")
    assert words(FUTURE)[0] == "time_future" and "1.000 s after" in words(FUTURE)[1]
    with pytest.raises(ValueError, match="not a rejection"):
        words(12345)
