"""elastic/model.py: the mixed rigid/elastic model's side file and validation."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.core.elastic.model import JointDrive, MotorSpec, elastic_model
from rnea_ros.core.errors import InertiaError, ModelParameterError
from rnea_ros.samples import load_robot


def test_side_file_round_trip(hua, tmp_path) -> None:
    assert hua.elastic_names == ("joint3",)
    assert hua.motor_names == ("joint3_motor",)
    assert hua.motor_body.tolist() == [-1, 0, 0]
    assert hua.stiffness.tolist() == [0.0, 0.0, 100.0]
    # the unified body of link 1 carries motors 2 and 3 (table I: 1 kg each)
    assert hua.unified.mass.tolist() == [4.5, 1.5, 1.0]


BAD = [
    ({"joint9": {}}, "unknown joint 'joint9'; valid joints: 'joint1', 'joint2'"),
    ({"joint1": {"stiffness": 0.0, "motor": {"link": "base_link"}}},
     "joint 'joint1': stiffness = 0 must be > 0"),
    ({"joint1": {"stiffness": -5, "motor": {"link": "base_link"}}}, "stiffness = -5 must be > 0"),
    ({"joint1": {"stiffness": 10.0}}, "joint 'joint1' is elastic and needs a motor"),
    ({"joint1": {"stiffness": 10.0, "damping": -1, "motor": {"link": "base_link"}}},
     "damping = -1 must be >= 0"),
    ({"joint1": {"damping": 1.0}}, "damping needs stiffness"),
    ({"joint1": {"motor": {"link": "link7"}}},
     "motor of joint 'joint1': unknown link 'link7'; valid links: 'world', 'base_link'"),
    ({"joint1": {"motor": {"link": "base_link", "gear_ratio": 0}}},
     "gear_ratio = 0 must be > 0"),
    ({"joint1": {"motor": {"link": "base_link", "inertia": [0.1, 0.2, 0.1]}}},
     "I_mx = 0.1 and I_my = 0.2 differ"),
    ({"joint1": {"motor": {"link": "base_link", "inertia": [0.1, 0.1]}}},
     "inertia needs 3 numbers"),
    ({"joint1": {"stiffness": 10.0, "motor": {"link": "base_link", "inertia": [0.1, 0.1, 0]}}},
     "its motor needs I_mz > 0"),
    ({"joint1": {"motor": {"link": "base_link", "axis": [0, 0, 0]}}}, "axis .* is zero"),
    ({"joint1": {"motor": {"link": "base_link", "mass": "heavy"}}},
     "mass = 'heavy' is not a number"),
    ({"joint1": {"stiff": 1.0}}, "unknown keys 'stiff'; valid: 'stiffness', 'damping', 'motor'"),
    ({"joint1": {"motor": {"link": "base_link", "ratio": 2}}}, "unknown keys 'ratio'"),
    ({"joint1": {"motor": {"axis": [0, 0, 1]}}}, "motor must be a mapping with a 'link'"),
]


@pytest.mark.parametrize(("joints", "message"), BAD, ids=[m[:30] for _, m in BAD])
def test_bad_parameters_are_named(joints, message) -> None:
    with pytest.raises(ModelParameterError, match=message):
        elastic_model(load_robot("two_link_rr"), {"joints": joints})


def test_bad_files(tmp_path) -> None:
    links = load_robot("two_link_rr")
    with pytest.raises(ModelParameterError, match="cannot read elastic-joint file"):
        elastic_model(links, tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("joints: [1, 2")
    with pytest.raises(ModelParameterError, match="is not valid YAML"):
        elastic_model(links, bad)
    bad.write_text("stiffness: 3")
    with pytest.raises(ModelParameterError, match="need a 'joints' mapping"):
        elastic_model(links, bad)
    with pytest.raises(InertiaError, match="triangle inequality"):
        elastic_model(links, {"joints": {"joint1": {"motor": {
            "link": "base_link", "inertia": [0.1, 0.1, 0.5]}}}})


def test_armature_and_elasticity_exclude_each_other() -> None:
    links = load_robot("two_link_rr")
    links = links.replace(armature=np.array([0.1, 0.0]))
    with pytest.raises(ModelParameterError, match="give its rotor inertia to its motor"):
        elastic_model(links, [JointDrive("joint1", 10.0, motor=MotorSpec("base_link",
                                                                          (1, 1, 1)))])
