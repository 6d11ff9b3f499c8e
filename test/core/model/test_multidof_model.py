"""Multi-DoF and mimic joints in the model: layout, builders (URDF, modified DH,
Python), the kernel tree, input checks and the algorithms that refuse them."""

from __future__ import annotations

import numpy as np
import pytest
from multidof import random_configurations, random_multidof_tree

import rnea_ros.core as rc
from rnea_ros.core import _layout
from rnea_ros.core.errors import DHError, ModelError, StateError, URDFError
from rnea_ros.core.model.joints import MimicJoint
from rnea_ros.core.model.tree import JointSpec, LinkSpec, build_model
from rnea_ros.samples import load_robot

LINK = ('<link name="{}"><inertial><mass value="1"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>')
REVOLUTE = ('<joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/>'
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="2"/>{}</joint>')


def urdf(*parts: str) -> str:
    return f"<robot name='r'>{''.join(parts)}</robot>"


def test_free_flyer_layout_is_pinocchios() -> None:
    m = load_robot("solo12", root_joint="free-flyer")
    assert m.joint_names[0] == "root_joint" and m.joint_types[0] == "free-flyer"
    assert (m.nq, m.nv, m.njoints, m.nbodies) == (19, 18, 13, 13)
    assert m.idx_q[:3].tolist() == [0, 7, 8] and m.idx_v[:3].tolist() == [0, 6, 7]
    assert m.joint_nq[0] == 7 and m.joint_nv[0] == 6
    assert m.frames[m.root_link].body == 0  # the root link rides on the free-flyer
    assert m.armature.shape == m.effort_limit.shape == (18,)
    assert m.lower_limit.shape == (19,) and np.all(np.isinf(m.lower_limit[:7]))
    assert m.kernel_floats.shape[0] == 18 and m.expanded  # six sub-joints
    assert m.joint_of_coordinate(5, "v") == "root_joint"
    assert m.joint_of_coordinate(7, "q") == m.joint_names[1]


def test_one_dof_models_pack_as_before() -> None:
    """The kernel tree of a 1-DoF model is the model itself: the same packed rows."""
    m = load_robot("stanford_arm")
    kinds = np.array([_layout.joint_kind(t == "prismatic", u)
                      for t, u in zip(m.joint_types, m.axis, strict=True)])
    packed = _layout.pack_model(m.parent, kinds, m.placement_rotation, m.placement_translation,
                             m.axis, m.mass, m.com, m.inertia, m.armature, m.coulomb, m.viscous)
    assert np.array_equal(packed, m.kernel_floats) and not m.expanded
    assert m.nq == m.nv == m.njoints and m.joint_body.tolist() == list(range(m.nbodies))


def test_urdf_floating_and_planar_joints() -> None:
    text = urdf(LINK.format("world"), LINK.format("body"), LINK.format("arm"),
                '<joint name="float" type="floating"><parent link="world"/>'
                '<child link="body"/></joint>',
                REVOLUTE.format("j", "body", "arm", ""))
    m = rc.parse_urdf(text)
    assert m.joint_types == ("free-flyer", "revolute") and (m.nq, m.nv) == (8, 7)
    with pytest.raises(URDFError, match="root link 'world' already floats on joint 'float'"):
        rc.parse_urdf(text, root_joint="free-flyer")
    planar = rc.parse_urdf(text.replace('type="floating"', 'type="planar"'))
    assert planar.joint_types[0] == "planar" and (planar.nq, planar.nv) == (5, 4)
    with pytest.raises(URDFError, match="root_joint 'ball' is not one of"):
        rc.parse_urdf(text, root_joint="ball")


def test_root_joint_on_a_urdf() -> None:
    text = urdf(LINK.format("base"), LINK.format("a"), REVOLUTE.format("j", "base", "a", ""))
    m = rc.parse_urdf(text, root_joint="planar")
    assert m.joint_names == ("root_joint", "j") and m.body_names == ("base", "a")
    assert (m.nq, m.nv) == (5, 4)
    fixed = rc.parse_urdf(text)
    assert fixed.nv == 1 and fixed.frames["base"].body == -1


def test_mimic_errors_name_the_joints() -> None:
    chain = [LINK.format(n) for n in ("base", "a", "b", "c")]
    mimic = '<mimic joint="{}" multiplier="{}"/>'
    with pytest.raises(URDFError, match="mimic joints form a cycle: j2 -> j3 -> j2"):
        rc.parse_urdf(urdf(*chain, REVOLUTE.format("j1", "base", "a", ""),
                           REVOLUTE.format("j2", "a", "b", mimic.format("j3", 1)),
                           REVOLUTE.format("j3", "b", "c", mimic.format("j2", 1))))
    with pytest.raises(URDFError, match="joint 'j2' mimics unknown joint 'ghost'"):
        rc.parse_urdf(urdf(*chain[:3], REVOLUTE.format("j1", "base", "a", ""),
                           REVOLUTE.format("j2", "a", "b", mimic.format("ghost", 1))))
    text = urdf(*chain[:3], '<joint name="j1" type="floating"><parent link="base"/>'
                '<child link="a"/></joint>', REVOLUTE.format("j2", "a", "b", mimic.format("j1", 1)))
    with pytest.raises(URDFError, match="joint 'j2' mimics 'j1', a free-flyer joint; a leader "
                                        "must be 1-DoF"):
        rc.parse_urdf(text)
    assert rc.parse_urdf(text, mimic=False).nv == 7  # independent joints


def test_python_constructor_with_spherical_joint_and_mimic() -> None:
    eye = np.eye(3)
    model = rc.RobotModel(
        name="py", joint_names=("ball", "elbow"), joint_types=("spherical", "revolute"),
        body_names=("upper", "lower", "finger"), parent=np.array([-1, 0, 1]),
        placement_rotation=np.array([eye, eye, eye]),
        placement_translation=np.array([[0, 0, 0.5], [0, 0, 0.4], [0.1, 0, 0]]),
        axis=np.array([[0, 0, 1.0], [0, 1.0, 0], [1.0, 0, 0]]),
        mass=np.array([2.0, 1.0, 0.2]), com=np.array([[0, 0, 0.2], [0, 0, 0.2], [0, 0, 0.05]]),
        inertia=np.array([0.1 * eye, 0.05 * eye, 0.001 * eye]),
        armature=np.zeros(4), coulomb=np.zeros(4), viscous=np.zeros(4),
        effort_limit=np.full(4, np.inf), velocity_limit=np.full(4, np.inf),
        lower_limit=np.full(5, -np.inf), upper_limit=np.full(5, np.inf),
        mimic_joints={"finger": MimicJoint(body=2, type="revolute", leader="elbow",
                                           multiplier=0.5, offset=0.1)},
    )
    assert (model.nq, model.nv, model.nbodies) == (5, 4, 3)
    assert model.joint_body.tolist() == [0, 1]
    q = np.array([0.0, 0.0, 0.0, 1.0, 0.6])
    assert model.mimic_positions(q) == {"finger": pytest.approx(0.4)}
    tau = rc.rnea(model, q, np.zeros(4), np.zeros(4))
    assert np.allclose(tau, rc.gravity_torques(model, q)) and tau.shape == (4,)
    with pytest.raises(ModelError, match=r"armature has shape \(3,\), expected \(4,\)"):
        model.replace(armature=np.zeros(3))
    with pytest.raises(ModelError, match="leader 'ball' is a spherical joint"):
        model.replace(mimic_joints={"finger": MimicJoint(2, "revolute", "ball")})


def test_mdh_spherical_row() -> None:
    rows = [rc.MDHLink(sigma=0, alpha=0.3, d=0.2, r=0.1, joint_type="spherical", mass=1.0,
                       com=(0.0, 0.0, 0.2), inertia=(0.02, 0.02, 0.01)),
            rc.MDHLink(sigma=0, alpha=-np.pi / 2, d=0.3, mass=0.5, com=(0.1, 0, 0),
                       inertia=(0.01, 0.01, 0.01))]
    m = rc.from_mdh(rows)
    assert m.joint_types == ("spherical", "revolute") and (m.nq, m.nv) == (5, 4)
    # The ball's frame R_1 is the row's frame: Rot(x, alpha) Tran(x, d) Tran(z, r).
    assert np.allclose(m.placement_translation[0], [0.2, -0.1 * np.sin(0.3), 0.1 * np.cos(0.3)])
    with pytest.raises(DHError, match="joint_type = 'universal' must be None or one of"):
        rc.from_mdh([rc.MDHLink(joint_type="universal")])
    with pytest.raises(DHError, match="with sigma = 0"):
        rc.from_mdh([rc.MDHLink(sigma=1, joint_type="spherical")])


def test_state_errors_name_sizes_and_joints() -> None:
    m = load_robot("solo12", root_joint="free-flyer")
    q = random_configurations(m, 3, seed=1)
    v = np.zeros(m.nv)
    with pytest.raises(StateError, match=r"q has shape \(18,\), expected \(19,\) \(nq\)"):
        rc.rnea(m, q[0, :18], v, v)
    with pytest.raises(StateError, match=r"qd has shape \(19,\), expected \(18,\) \(nv\)"):
        rc.rnea(m, q[0], q[0], v)
    bad = q.copy()
    bad[1, 3:7] *= 1.001
    with pytest.raises(StateError, match="free-flyer joint 'root_joint': quaternion"):
        rc.rnea(m, bad[1], v, v)
    for fn in (rc.gravity_torques, rc.mass_matrix):
        with pytest.raises(StateError, match=r"quaternion .* has norm 1\.001"):
            fn(m, bad[1])
    with pytest.raises(StateError, match=r"not 1 \(tolerance 1e-06\) \(sample 1\)"):
        rc.rnea_batch(m, bad, np.zeros((3, m.nv)), np.zeros((3, m.nv)))
    with pytest.raises(StateError, match="quaternion"):
        rc.aba(m, bad[1], v, v)
    with pytest.raises(StateError, match="quaternion"):
        rc.coriolis_matrix(m, bad[1], v)
    slightly = q[0].copy()
    slightly[3:7] *= 1 + 5e-7  # within the tolerance: accepted as given, not normalised
    assert np.all(np.isfinite(rc.rnea(m, slightly, v, v)))
    nan = q[0].copy()
    nan[5] = np.nan
    with pytest.raises(StateError, match="q of joint 'root_joint' is nan"):
        rc.rnea(m, nan, v, v)
    with pytest.raises(StateError, match=r"fext has shape \(12, 6\), expected \(13, 6\)"):
        rc.rnea(m, q[0], v, v, fext=np.zeros((12, 6)))
    with pytest.raises(ModelError, match="multi-DoF joints 'root_joint'"):
        m.to_model_order(list(m.joint_names), np.zeros(m.njoints))


# The derivatives take mimic followers (chain rule on the kernel rows: test_mimic);
# multi-DoF joints are refused by all eight, mimic joints by the last three.
DERIVATIVES = [
    lambda m, q, v: rc.rnea_time_derivative(m, q, v, v, v),
    lambda m, q, v: rc.rnea_second_time_derivative(m, q, v, v, v, v),
    lambda m, q, v: rc.rnea_derivatives(m, q, v, v),
    lambda m, q, v: rc.joint_wrench_derivatives(m, q, v, v),
    lambda m, q, v: rc.rnea_time_derivative_sensitivities(m, q, v, v, v),
]
ONE_BODY_PER_JOINT = [
    lambda m, q, v: rc.joint_torque_regressor(m, q, v, v),
    lambda m, q, v: rc.regressor_parameters(m),
    lambda m, q, v: rc.elastic_model(m, []),
]


@pytest.mark.parametrize("kind, call", [("free-flyer", c) for c in DERIVATIVES + ONE_BODY_PER_JOINT]
                         + [("mimic", c) for c in ONE_BODY_PER_JOINT])
def test_unsupported_algorithms_raise_model_errors(call, kind: str) -> None:
    if kind == "mimic":
        m = load_robot("panda", mimic=True)
        message = "supports 1-DoF joints without mimic only; model 'panda' has 'panda_finger"
    else:
        m = load_robot("solo12", root_joint="free-flyer")
        message = "model 'solo' has 'root_joint' \\(free-flyer\\)"
    q = random_configurations(m, 1)[0]
    with pytest.raises(ModelError, match=message):
        call(m, q, np.zeros(m.nv))


@pytest.mark.parametrize("call", DERIVATIVES)
def test_the_derivatives_take_mimic_followers(call) -> None:
    m = load_robot("panda", mimic=True)
    q = random_configurations(m, 1)[0]
    assert all(np.all(np.isfinite(x)) for x in call(m, q, np.ones(m.nv)))


def test_drive_parameters_on_a_multi_dof_joint() -> None:
    m = load_robot("solo12", root_joint="free-flyer")
    m2 = rc.apply_drive_parameters(m, {"joints": {"root_joint": {"viscous": 0.5},
                                                  "FL_HAA": {"armature": 0.1}}})
    assert m2.viscous[:6].tolist() == [0.5] * 6 and m2.viscous[6:].sum() == 0.0
    assert m2.armature[6] == 0.1


def test_random_trees_keep_every_body() -> None:
    m = random_multidof_tree(3, bodies=8, root="free-flyer")
    assert m.nbodies == 8 and len(m.kernel_last_row) == 8
    R, p = rc.body_poses(m, random_configurations(m, 1)[0])
    assert R.shape == (8, 3, 3) and p.shape == (8, 3)


def test_build_model_rejects_a_second_root_joint_name() -> None:
    links = [LinkSpec("base"), LinkSpec("a", 1.0, np.zeros(3), 0.1 * np.eye(3))]
    joints = [JointSpec("root_joint", "revolute", "base", "a")]
    with pytest.raises(ModelError, match="already has a joint named 'root_joint'"):
        build_model("r", links, joints, root_joint="free-flyer")


def test_link_pose_rides_on_the_free_flyer() -> None:
    m = load_robot("solo12", root_joint="free-flyer")
    q = random_configurations(m, 1, seed=3)[0]
    R, p = rc.link_pose(m, q, m.root_link)
    x, y, z, w = q[3:7]
    expected = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    assert np.allclose(R, expected, atol=1e-14) and np.allclose(p, q[:3], atol=1e-14)
