"""Physical consistency and the writers: LMI projection, welded links, URDF text edits."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
from rnea_ros.core.model.robot_model import check_inertia
from rnea_ros.identification import parameters
from rnea_ros.identification.base import base_parameters
from rnea_ros.identification.cli import outputs
from rnea_ros.identification.consistency import consistent_parameters, pseudo_inertia
from rnea_ros.identification.writers import fixed_parts, replace_inertials
from rnea_ros.samples import load_robot

TOOL_URDF = """<?xml version="1.0"?>
<!-- a comment that must survive -->
<robot name="tool_arm">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/>
  </joint>
  <link name="l1">
    <inertial>
      <origin xyz="0.1 0 0" rpy="0 0 0"/>
      <mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/>
    </inertial>
    <visual><geometry><box size="0.2 0.05 0.05"/></geometry></visual>
  </link>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="l2"/>
    <origin xyz="0.2 0 0" rpy="1.5707963 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/>
  </joint>
  <link name="l2"/>
  <joint name="weld" type="fixed">
    <parent link="l2"/><child link="tool"/>
    <origin xyz="0.25 0 0" rpy="0 0.3 0"/>
  </joint>
  <link name="tool">
    <inertial>
      <origin xyz="0.02 0 0.01" rpy="0.1 0 0"/>
      <mass value="0.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/>
    </inertial>
  </link>
</robot>
"""


def body_ok(theta: np.ndarray, model: rc.RobotModel, fixed=None) -> None:
    for j in range(model.nv):
        m, h, Io = parameters.body_parameters(theta, j)
        if fixed and j in fixed:
            fm, fh, fI = fixed[j]
            m, h, Io = m - fm, h - fh, Io - fI
        assert np.linalg.eigvalsh(pseudo_inertia(m, h, Io)).min() > 0.0
        c, Ic = parameters.to_com(m, h, Io)
        check_inertia(f"body {j}", m, c, 0.5 * (Ic + Ic.T), "strict")
    drive = theta[10 * model.nv:].reshape(model.nv, 4)
    assert np.all(drive[:, :3] >= 0.0)


def test_nonphysical_estimate_becomes_physical() -> None:
    model = load_robot("arm7")
    base = base_parameters(model)
    prior = parameters.from_model(model)
    bad = prior.copy()
    bad[10 * 6] = -1.0  # link7 with a negative mass
    bad[10 * 3 + 4:10 * 3 + 10] = [0.5, 0.0, 0.01, 0.0, 0.0, 0.01]  # link4 breaks the triangle
    bad[parameters.drive_index(model, 2, "Fv")] = -0.3  # negative damping
    x = base.of(bad)
    theta = consistent_parameters(model, base.K, 100.0 * np.eye(base.rank), x, prior)
    body_ok(theta, model)


def test_physical_estimate_is_kept_and_the_prior_fills_the_rest() -> None:
    model = load_robot("arm7")
    base = base_parameters(model)
    prior = parameters.from_model(model)
    rng = np.random.default_rng(0)
    truth = parameters.from_model(model.replace(mass=model.mass * rng.uniform(0.8, 1.2, 7),
                                                armature=np.full(7, 0.1)), np.full(7, 0.2))
    x = base.of(truth)
    theta = consistent_parameters(model, base.K, 1e3 * np.eye(base.rank), x, prior)
    assert np.abs(base.of(theta) - x).max() <= 1e-6 * np.abs(x).max()
    names = parameters.names(model)
    for gone in base.without_effect():  # no torque ever sees them: the URDF value stays
        k = names.index(gone)
        assert abs(theta[k] - prior[k]) <= 1e-6 * max(1.0, abs(prior[k])), gone
    body_ok(theta, model)


def test_welded_link_keeps_its_inertial_and_files_reproduce_theta() -> None:
    model = rc.parse_urdf(TOOL_URDF)
    fixed = fixed_parts(model, TOOL_URDF)
    assert list(fixed) == [1] and fixed[1][0] == pytest.approx(0.5)
    base = base_parameters(model)
    prior = parameters.from_model(model)
    truth = prior.copy()
    truth[10:20] *= 1.3  # body 2 (l2 + tool) 30 % heavier: l2 itself carries the difference
    theta = consistent_parameters(model, base.K, 1e3 * np.eye(base.rank), base.of(truth),
                                  prior, fixed=fixed)
    body_ok(theta, model, fixed)
    urdf, drives, links = outputs(SimpleNamespace(prior=model, theta=theta), TOOL_URDF)
    assert "<!-- a comment that must survive -->" in urdf and "<visual>" in urdf
    assert rc.apply_drive_parameters(model, yaml.safe_load(drives)).armature.shape == (2,)
    tool = re.search(r'<link name="tool">.*?</link>', urdf, re.S).group(0)
    assert tool == re.search(r'<link name="tool">.*?</link>', TOOL_URDF, re.S).group(0)
    assert set(links) == {"l1", "l2"}
    again = rc.parse_urdf(urdf, inertia_check="strict")
    got = parameters.from_model(again)
    n = model.nv
    assert np.abs(got[:10 * n] - theta[:10 * n]).max() <= 1e-8 * np.abs(theta).max()


def without_inertials(text: str) -> str:
    root = ET.fromstring(text)
    for link in root.findall("link"):
        for inertial in link.findall("inertial"):
            link.remove(inertial)
    return ET.canonicalize(ET.tostring(root, encoding="unicode"), strip_text=True)


def test_replace_inertials_edits_only_inertials() -> None:
    value = (1.5, np.array([0.01, 0.02, 0.03]), np.diag([0.1, 0.2, 0.25]))
    out = replace_inertials(TOOL_URDF, {"l1": value, "l2": value, "base": value})
    assert out.count("<inertial>") == 4
    assert out.startswith('<?xml version="1.0"?>\n<!-- a comment that must survive -->')
    assert without_inertials(out) == without_inertials(TOOL_URDF)
    model = rc.parse_urdf(out)
    assert model.mass[0] == pytest.approx(1.5)
