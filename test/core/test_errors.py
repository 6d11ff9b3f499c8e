"""Bad input raises typed errors whose message names the joint/link/parameter."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.core import errors
from rnea_ros.core.dynamics.aba import aba, aba_batch
from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea, rnea_batch, rnea_with_wrenches
from rnea_ros.core.model.dh import DHLink, from_dh
from rnea_ros.core.model.drives import apply_drive_parameters
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.core.model.urdf import load_urdf, parse_urdf
from rnea_ros.samples import sample_urdf


@pytest.fixture(scope="module")
def arm():
    return load_urdf(sample_urdf("stanford_arm"))


LINK = ('<link name="{n}"><inertial><mass value="{m}"/>'
        '<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def robot(body: str) -> str:
    return f'<robot name="r">{body}</robot>'


def link(name: str, m: float = 1.0, ixx: float = 0.1, iyy: float = 0.1, izz: float = 0.1) -> str:
    return LINK.format(n=name, m=m, ixx=ixx, iyy=iyy, izz=izz)


def joint(name: str, parent: str, child: str, jtype: str = "revolute") -> str:
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/><axis xyz="0 0 1"/></joint>')


CHAIN = link("base") + link("a") + joint("j1", "base", "a")


# ----------------------------------------------------------------------------- states
@pytest.mark.parametrize("fn", [
    lambda m, x: rnea(m, x, np.zeros(6), np.zeros(6)),
    lambda m, x: rnea(m, np.zeros(6), x, np.zeros(6)),
    lambda m, x: rnea_with_wrenches(m, np.zeros(6), np.zeros(6), x),
    lambda m, x: gravity_torques(m, x),
    lambda m, x: mass_matrix(m, x),
    lambda m, x: aba(m, np.zeros(6), np.zeros(6), x),
])
def test_wrong_shape_is_a_state_error(arm, fn) -> None:
    with pytest.raises(errors.StateError, match=r"shape \(5,\), expected \(6,\)"):
        fn(arm, np.zeros(5))


def test_wrong_batch_shape(arm) -> None:
    with pytest.raises(errors.StateError, match=r"qd has shape \(9, 6\), expected \(10, 6\)"):
        rnea_batch(arm, np.zeros((10, 6)), np.zeros((9, 6)), np.zeros((10, 6)))
    with pytest.raises(errors.StateError, match="tau has shape"):
        aba_batch(arm, np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((3, 5)))


@pytest.mark.parametrize(("which", "value"), [("q", np.nan), ("qd", np.inf), ("qdd", -np.inf)])
def test_non_finite_state_names_the_joint(arm, which: str, value: float) -> None:
    args = {"q": np.zeros(6), "qd": np.zeros(6), "qdd": np.zeros(6)}
    args[which][3] = value
    with pytest.raises(errors.StateError, match=f"{which} of joint 'joint4' is"):
        rnea(arm, **args)


def test_non_finite_in_batch_names_joint_and_sample(arm) -> None:
    Q = np.zeros((4, 6))
    Q[2, 1] = np.nan
    with pytest.raises(errors.StateError, match=r"q of joint 'joint2' is nan \(sample 2\)"):
        rnea_batch(arm, Q, Q * 0, Q * 0)


def test_non_finite_gravity_and_wrench(arm) -> None:
    with pytest.raises(errors.StateError, match="gravity"):
        rnea(arm, np.zeros(6), np.zeros(6), np.zeros(6), gravity=[0, np.nan, 0])
    fext = np.zeros((6, 6))
    fext[4, 0] = np.inf
    with pytest.raises(errors.StateError, match="fext for body 'link5'"):
        rnea(arm, np.zeros(6), np.zeros(6), np.zeros(6), fext=fext)
    with pytest.raises(errors.StateError, match=r"expected \(6, 6\)"):
        rnea(arm, np.zeros(6), np.zeros(6), np.zeros(6), fext=np.zeros((6, 3)))


# ------------------------------------------------------------------------ joint names
def test_unknown_and_missing_joint_names(arm) -> None:
    with pytest.raises(errors.JointNameError, match=r"unknown joint 'elbow'.*'joint1'"):
        arm.joint_index("elbow")
    with pytest.raises(errors.JointNameError, match="lacks joints 'joint6'"):
        arm.name_map(["joint1", "joint2", "joint3", "joint4", "joint5"])
    with pytest.raises(errors.JointNameError, match="listed twice: 'joint1'"):
        arm.name_map(["joint1", "joint1"])
    with pytest.raises(errors.JointNameError, match="unknown link 'tool'"):
        arm.link_frame("tool")


def test_name_map_accepts_any_order_and_extra_joints(arm) -> None:
    names = ["gripper", *reversed(arm.joint_names)]
    values = [99.0, 6, 5, 4, 3, 2, 1]
    assert arm.to_model_order(names, values).tolist() == [1, 2, 3, 4, 5, 6]
    with pytest.raises(errors.StateError, match="7 joint names but values of shape"):
        arm.to_model_order(names, values[:3])


# ------------------------------------------------------------------------------ URDF
@pytest.mark.parametrize(("text", "message"), [
    ("<robot", "not well-formed XML"),
    ("<model/>", "root element is <model>, expected <robot>"),
    (robot(""), "defines no links"),
    (robot(link("base") + link("a") + joint("j1", "base", "ghost")),
     "joint 'j1': child link 'ghost' is not defined"),
    (robot(link("base") + link("a") + joint("j1", "nowhere", "a")),
     "joint 'j1': parent link 'nowhere' is not defined"),
    (robot(CHAIN + link("b") + joint("j2", "a", "b") + joint("j3", "base", "b")),
     "link 'b' has two parent joints, 'j2' and 'j3'"),
    (robot(link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")),
     "cycle"),
    (robot(CHAIN + link("c") + link("d") + joint("j2", "c", "d")),
     "several root links: 'base', 'c'"),
    (robot(CHAIN.replace('"revolute"', '"ball"')),
     "joint 'j1' has type 'ball', which is not supported; supported types:"),
    (robot(CHAIN.replace('"revolute"', '"planar"').replace('xyz="0 0 1"', 'xyz="1 0 0"')),
     r"joint 'j1': planar joint with axis \[1.0, 0.0, 0.0\]"),
    (robot(link("base") + link("a") + joint("j1", "base", "a", "fixed")), "no moving joint"),
    (robot(CHAIN.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>')),
     "joint 'j1': axis"),
    (robot(CHAIN.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 one 1"/>')),
     "joint 'j1': axis xyz='0 one 1' is not a list of numbers"),
    (robot(CHAIN.replace('<axis xyz="0 0 1"/>',
                         '<limit lower="1" upper="-1" effort="1" velocity="1"/>')),
     "joint 'j1': lower limit 1 > upper limit -1"),
    ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="m"/></robot>',
     "xacro"),
    (robot('<link/>'), "a <link> has no name"),
    (robot(link("base") + '<joint name="j" type="revolute"><parent link="base"/></joint>'),
     "joint 'j' has no <child link=...>"),
])
def test_malformed_urdf(text: str, message: str) -> None:
    with pytest.raises(errors.URDFError, match=message):
        parse_urdf(text)


@pytest.mark.parametrize(("text", "message"), [
    (robot(link("base") + link("a", m=-1.0) + joint("j1", "base", "a")),
     "link 'a': mass -1 kg is negative"),
    (robot(link("base") + link("a", ixx=-0.1) + joint("j1", "base", "a")),
     "link 'a': inertia tensor is not positive definite"),
    (robot(link("base") + link("a", ixx=0.01, iyy=0.01, izz=1.0) + joint("j1", "base", "a")),
     "link 'a': principal moments .* violate the triangle inequality"),
])
def test_nonphysical_inertia(text: str, message: str) -> None:
    with pytest.raises(errors.InertiaError, match=message):
        parse_urdf(text)


def test_nonphysical_inertia_error_types_and_warn_mode() -> None:
    bad = robot(link("base") + link("a", ixx=0.01, iyy=0.01, izz=1.0) + joint("j1", "base", "a"))
    with pytest.raises(errors.InertiaError, match="inertia_check='warn'"):
        parse_urdf(bad)
    with pytest.warns(errors.InertiaWarning, match="link 'a'"):
        model = parse_urdf(bad, inertia_check="warn")
    assert model.nv == 1
    negative_mass = bad.replace('value="1.0"', 'value="-2"')
    with pytest.raises(errors.InertiaError, match="negative"):
        parse_urdf(negative_mass, inertia_check="warn")


def test_missing_urdf_file(tmp_path) -> None:
    with pytest.raises(errors.URDFError, match="cannot read URDF file"):
        load_urdf(tmp_path / "missing.urdf")


def test_errors_form_one_hierarchy() -> None:
    for cls in (errors.URDFError, errors.DHError, errors.InertiaError, errors.ModelParameterError,
                errors.JointNameError, errors.StateError):
        assert issubclass(cls, errors.RneaError)


# --------------------------------------------------------------------- drives and DH
@pytest.mark.parametrize(("drives", "message"), [
    ({"joints": {"elbow": {"armature": 1}}}, "unknown joint 'elbow'; valid joints: 'joint1'"),
    ({"joints": {"joint1": {"inertia": 1}}}, "unknown drive parameters 'inertia'"),
    ({"joints": {"joint1": {"armature": -1}}}, "joint 'joint1': armature = -1 must be"),
    ({"joints": {"joint1": {"viscous": "a lot"}}}, "viscous = 'a lot' is not a number"),
    ({"joints": {"joint1": {"rotor_inertia": 1e-4, "gear_ratio": 0}}}, "gear_ratio must be > 0"),
    ({"joints": {"joint1": {"gear_ratio": 100}}}, "gear_ratio needs rotor_inertia"),
    ({"joints": {"joint1": {"armature": 1, "rotor_inertia": 1}}}, "not both"),
    ({"joint1": {}}, "'joints' mapping"),
])
def test_bad_drive_parameters(arm, drives, message: str) -> None:
    with pytest.raises(errors.ModelParameterError, match=message):
        apply_drive_parameters(arm, drives)


def test_drive_file_sets_armature_from_rotor_and_gear(arm, tmp_path) -> None:
    path = tmp_path / "drives.yaml"
    path.write_text("joints:\n  joint2: {rotor_inertia: 2.0e-4, gear_ratio: 100, viscous: 0.5}\n")
    model = load_urdf(sample_urdf("stanford_arm"), drives=path)
    assert model.armature[1] == pytest.approx(2.0)
    assert model.viscous[1] == 0.5 and model.armature[0] == 0.0
    (tmp_path / "bad.yaml").write_text("joints: [1, 2")
    with pytest.raises(errors.ModelParameterError, match="not valid YAML"):
        apply_drive_parameters(arm, tmp_path / "bad.yaml")


def test_bad_dh_tables() -> None:
    with pytest.raises(errors.DHError, match=r"joint 'joint1'.*'spherical'"):
        from_dh([DHLink(joint="spherical")])
    with pytest.raises(errors.DHError, match="at least one row"):
        from_dh([])
    with pytest.raises(errors.DHError, match=r"DH row 2 .* must be finite"):
        from_dh([DHLink(mass=1, inertia=(1, 1, 1)), DHLink(a=np.nan)])
    with pytest.raises(errors.DHError, match="sigma = 3"):
        from_mdh([MDHLink(sigma=3)])
    with pytest.raises(errors.DHError, match=r"antecedent a\(j\) = 2 must be in 0..1"):
        from_mdh([MDHLink(mass=1, inertia=(1, 1, 1)), MDHLink(antecedent=2)])
    with pytest.raises(errors.DHError, match="inertia needs 3, 6 or 9 numbers"):
        from_mdh([MDHLink(inertia=(1, 2))])
    with pytest.raises(errors.InertiaError, match="DH row 1, link 'link1': principal moments"):
        from_dh([DHLink(link_name="link1", mass=1, inertia=(0.1, 0.1, 1.0))])
