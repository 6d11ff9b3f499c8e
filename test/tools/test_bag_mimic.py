"""rnea-bag on robots with mimic joints: a real PR2's /joint_states (45 names against
example-robot-data's pr2.urdf: 20 coordinates), arm7_gripper with its follower
published, wrong, or analysed with the wrong URDF."""

from __future__ import annotations

import csv
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import rnea_ros.core as rc
from rnea_ros.samples import robot_urdf
from rnea_ros.tools.bag import main
from rnea_ros.tools.synthetic_bag import PR2_JOINT_STATES, PR2_ROLES, write_bag, write_pr2_bag

PR2 = robot_urdf("pr2")
GRIPPER = robot_urdf("arm7_gripper")


def pr2_model() -> rc.RobotModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.InertiaWarning)  # two sensor links of pr2.urdf
        return rc.load_urdf(PR2, inertia_check="warn")


class PinocchioMimic:
    """Pinocchio's ``buildModelFromUrdf(path, mimic=True)``: inverse dynamics of the
    coordinates, by joint name (continuous joints as cos/sin)."""

    def __init__(self, path: Path, names: tuple[str, ...]) -> None:
        self.pm = pin.buildModelFromUrdf(str(path), mimic=True)
        self.pd = self.pm.createData()
        joints = [self.pm.joints[self.pm.getJointId(j)] for j in names]
        self.iq = [(j.idx_q, j.nq) for j in joints]
        self.iv = np.array([j.idx_v for j in joints])

    def __call__(self, Q: np.ndarray, QD: np.ndarray, QDD: np.ndarray) -> np.ndarray:
        out = np.empty_like(Q)
        for k in range(len(Q)):
            x = pin.neutral(self.pm)
            for j, (iq, nq) in enumerate(self.iq):
                x[iq:iq + nq] = [np.cos(Q[k, j]), np.sin(Q[k, j])] if nq == 2 else Q[k, j]
            v, a = np.zeros(self.pm.nv), np.zeros(self.pm.nv)
            v[self.iv], a[self.iv] = QD[k], QDD[k]
            out[k] = pin.rnea(self.pm, self.pd, x, v, a)[self.iv]
        return out


def read_series(path: Path) -> dict[str, np.ndarray]:
    with open(path, newline="", encoding="utf-8") as stream:
        rows = list(csv.reader(stream))
    data = np.array(rows[1:], dtype=float)
    return {name: data[:, k] for k, name in enumerate(rows[0])}


def test_a_real_pr2_publishes_45_names_whose_roles_match_pr2_urdf() -> None:
    """Per name: a coordinate of the mimic model, a <mimic> follower, a fixed joint of
    pr2.urdf, or a joint pr2.urdf does not have (transmission joints)."""
    assert len(PR2_JOINT_STATES) == 45 == len(set(PR2_JOINT_STATES))
    root = ET.parse(PR2).getroot()
    urdf = {e.get("name"): e for e in root.findall("joint")}
    model = pr2_model()
    assert model.nv == 20 and set(model.joint_names) <= set(PR2_JOINT_STATES)
    roles = {}
    for name in PR2_JOINT_STATES:
        joint = urdf.get(name)
        if joint is None:
            roles[name] = "absent"
        elif joint.get("type") == "fixed":
            roles[name] = "fixed"
        elif joint.find("mimic") is not None:
            roles[name] = "follower"
        else:
            roles[name] = "coordinate"
    assert {n: r for n, r in roles.items() if r != "coordinate"} == PR2_ROLES
    assert [n for n, r in roles.items() if r == "coordinate"] == \
        [n for n in PR2_JOINT_STATES if n in model.joint_names]
    assert sorted(n for n, r in roles.items() if r == "follower") == \
        sorted(n for n in model.mimic_joints if n in PR2_JOINT_STATES)
    counts = {role: list(roles.values()).count(role) for role in set(roles.values())}
    assert counts == {"coordinate": 20, "follower": 6, "fixed": 14, "absent": 5}


@pytest.fixture(scope="module")
def pr2_bag(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    model = pr2_model()
    path = tmp_path_factory.mktemp("pr2") / "pr2.bag"
    truth = write_pr2_bag(path, model, duration=1.0,
                          inverse_dynamics=PinocchioMimic(PR2, model.joint_names))
    return path, truth


def test_the_pr2_bag_is_a_ros1_recording_with_the_coupled_fingers(pr2_bag) -> None:
    from rosbags.highlevel import AnyReader

    path, truth = pr2_bag
    assert path.read_bytes()[:13] == b"#ROSBAG V2.0\n"
    model = pr2_model()
    with AnyReader([path]) as reader:
        assert [c.topic for c in reader.connections] == ["/joint_states"]
        _, _, raw = next(reader.messages())
        msg = reader.deserialize(raw, reader.connections[0].msgtype)
    assert list(msg.name) == list(PR2_JOINT_STATES)
    position = dict(zip(msg.name, msg.position, strict=True))
    for side in "rl":
        leader = position[f"{side}_gripper_l_finger_joint"]
        assert 0.0 <= leader <= model.upper_limit[model.joint_index(
            f"{side}_gripper_l_finger_joint")]
        for follower in ("r_finger", "l_finger_tip", "r_finger_tip"):
            m = model.mimic_joints[f"{side}_gripper_{follower}_joint"]
            assert position[f"{side}_gripper_{follower}_joint"] == \
                m.multiplier * leader + m.offset
    inside = (truth["q"] >= model.lower_limit) & (truth["q"] <= model.upper_limit)
    assert inside.all()


def test_pr2_bag_analyses_and_the_model_torques_agree_with_pinocchio(
        pr2_bag, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = pr2_bag
    out = tmp_path / "out"
    assert main([str(path), "--urdf", str(PR2), "--out", str(out), "--quiet",
                 "--no-plots", "--series", "csv"]) == 0
    err = capsys.readouterr().err
    # The 5 transmission joints pr2.urdf lacks are warned about; followers and the
    # joints it has as fixed ones are not.
    lacks = next(line for line in err.splitlines() if "lacks" in line)
    assert "have 5 joints the robot 'pr2' lacks" in lacks
    for name in ("torso_lift_motor_screw_joint", "r_gripper_motor_screw_joint",
                 "l_gripper_motor_slider_joint"):
        assert name in lacks
    assert "finger" not in lacks and "caster" not in lacks
    assert "note: 14 joints of the bag are fixed in the URDF" in err
    assert "note: 6 mimic followers in the bag" in err and "agree with their leaders" in err
    model = pr2_model()
    series = read_series(out / "series.csv")
    assert len(series["t"]) == 1000
    assert [k[len("tau_model."):] for k in series if k.startswith("tau_model.")] == \
        list(model.joint_names)
    rows = [5, 250, 500, 750, 994]
    column = {kind: np.array([[series[f"{kind}.{j}"][r] for j in model.joint_names]
                              for r in rows]) for kind in ("q", "qd", "qdd", "tau_model")}
    reference = PinocchioMimic(PR2, model.joint_names)(column["q"], column["qd"],
                                                      column["qdd"])
    ours = column["tau_model"] - np.array([rc.friction_torques(model, qd)
                                           for qd in column["qd"]])
    assert np.abs(ours - reference).max() <= 1e-9 * np.abs(reference).max()
    # tau_dot of the mimic model (G^T of the unfolded tree's) is the rate of tau.
    tau = np.column_stack([series[f"tau_model.{j}"] for j in model.joint_names])
    tau_dot = np.column_stack([series[f"tau_dot_model.{j}"] for j in model.joint_names])
    rate = np.gradient(tau, series["t"], axis=0)
    middle = slice(50, -50)
    assert np.abs(tau_dot[middle] - rate[middle]).max() < 2e-2 * np.abs(rate[middle]).max()


def test_a_follower_in_the_bags_joints_option_is_refused(pr2_bag, tmp_path: Path,
                                                       capsys) -> None:
    path, _ = pr2_bag
    code = main([str(path), "--urdf", str(PR2), "--out", str(tmp_path), "--quiet",
                 "--no-plots", "--joints", "r_gripper_r_finger_joint"])
    err = capsys.readouterr().err
    assert code == 1
    assert "r_gripper_r_finger_joint (follows r_gripper_l_finger_joint)" in err


@pytest.fixture(scope="module")
def gripper_bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    model = rc.load_urdf(GRIPPER)
    folder = tmp_path_factory.mktemp("gripper")
    bags = {}
    for name, kwargs in (("with_follower", {}), ("without", {"followers": False}),
                         ("wrong_follower", {"follower_error": 0.01})):
        bags[name] = folder / name
        write_bag(bags[name], model, duration=0.5, noise=0.0, **kwargs)
    return bags


def test_arm7_gripper_bags_with_or_without_the_follower_give_the_same_analysis(
        gripper_bags, tmp_path: Path, capsys) -> None:
    joints = rc.load_urdf(GRIPPER).joint_names
    series = {}
    for bag in ("with_follower", "without"):
        assert main([str(gripper_bags[bag]), "--urdf", str(GRIPPER), "--out",
                     str(tmp_path / bag), "--quiet", "--no-plots", "--series", "csv"]) == 0
        err = capsys.readouterr().err
        assert "warning" not in err
        assert ("mimic follower in the bag (finger_joint2) agree" in err) == \
            (bag == "with_follower")
        series[bag] = read_series(tmp_path / bag / "series.csv")
    for column in series["without"]:
        assert np.array_equal(series["with_follower"][column], series["without"][column],
                              equal_nan=True), column
    tau = np.column_stack([series["without"][f"tau_model.{j}"] for j in joints])
    residual = np.column_stack([series["without"][f"residual.{j}"] for j in joints])
    # Noiseless bag: only Savitzky-Golay's differentiation error is left.
    assert np.sqrt(np.mean(residual**2)) < 1e-3 * np.abs(tau).max()


def test_a_wrong_follower_in_the_bag_is_a_warning(gripper_bags, tmp_path: Path,
                                                  capsys) -> None:
    assert main([str(gripper_bags["wrong_follower"]), "--urdf", str(GRIPPER), "--out",
                 str(tmp_path), "--quiet", "--no-plots"]) == 0
    err = capsys.readouterr().err
    warning = next(line for line in err.splitlines() if "off its coupling" in line)
    assert "mimic follower 'finger_joint2'" in warning and "'finger_joint1'" in warning
    assert "in 500 of 500 samples (up to 0.01;" in warning
    assert main([str(gripper_bags["wrong_follower"]), "--urdf", str(GRIPPER), "--out",
                 str(tmp_path / "again"), "--quiet", "--no-plots", "--mimic-tolerance",
                 "0.02"]) == 0
    assert "off its coupling" not in capsys.readouterr().err


def test_the_wrong_urdf_still_warns_about_the_joints_it_lacks(gripper_bags, tmp_path: Path,
                                                              capsys) -> None:
    """arm7_gripper's bag analysed with arm7.urdf (no gripper): both fingers are joints
    that URDF lacks; a follower is only exempt where the URDF knows it as one."""
    assert main([str(gripper_bags["with_follower"]), "--urdf", str(robot_urdf("arm7")),
                 "--out", str(tmp_path), "--quiet", "--no-plots"]) == 0
    err = capsys.readouterr().err
    assert "have 2 joints the robot 'arm7' lacks (finger_joint1, finger_joint2)" in err
