"""Configuration-space operations (core/model/configuration.py) against Pinocchio's
``pin.neutral``/``pin.integrate``/``pin.difference`` on Pinocchio models built here,
joint by joint and for a mixed chain, plus the group identities."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

import rnea_ros.core as rc
from rnea_ros.core.model import configuration as cfg
from rnea_ros.core.model.tree import JointSpec, LinkSpec, build_model
from rnea_ros.samples import robot_urdf

PIN_JOINTS = {
    "free-flyer": pin.JointModelFreeFlyer,
    "planar": pin.JointModelPlanar,
    "spherical": pin.JointModelSpherical,
    "revolute": pin.JointModelRZ,
    "continuous": pin.JointModelRX,  # ours keeps one angle: a plain revolute for Pinocchio
    "prismatic": pin.JointModelPY,
}
SCALES = (1e-9, 1e-4, 0.1, 1.0, 3.0)  # velocity magnitudes: series branches and large angles


def pin_chain(kinds):
    model = pin.Model()
    for k, kind in enumerate(kinds):
        placement = pin.SE3(pin.exp3(np.array([0.1, -0.2, 0.3]) * k), np.array([0.1 * k, 0, 0]))
        model.addJoint(k, PIN_JOINTS[kind](), placement, f"j{k}")
    return model


def same(kind, a, b):
    """Largest coordinate difference of two configurations of one joint, quaternions
    compared up to sign (q and -q are the same rotation)."""
    if kind in ("free-flyer", "spherical"):
        sign = 1.0 if float(a[-4:] @ b[-4:]) >= 0.0 else -1.0
        b = np.concatenate([b[:-4], sign * b[-4:]])
    return float(np.abs(a - b).max())


@pytest.mark.parametrize("kind", list(PIN_JOINTS))
def test_joint_operations_match_pinocchio(kind: str) -> None:
    model = pin_chain([kind])
    rng = np.random.default_rng(7)
    assert np.array_equal(cfg.neutral_joint(kind), pin.neutral(model))
    worst = {"integrate": 0.0, "difference": 0.0}
    for k in range(2000):
        q0, q1 = cfg.random_joint(kind, rng), cfg.random_joint(kind, rng)
        v = rng.normal(size=model.nv) * SCALES[k % len(SCALES)]
        ours = cfg.integrate_joint(kind, q0, v)
        worst["integrate"] = max(worst["integrate"],
                                 float(np.abs(ours - pin.integrate(model, q0, v)).max()))
        if kind == "planar" and abs(cfg.difference_joint(kind, q0, q1)[2]) < 1e-2:
            continue  # Pinocchio's SE(2) log loses digits there: test_planar_small_angle
        worst["difference"] = max(worst["difference"], float(np.abs(
            cfg.difference_joint(kind, q0, q1) - pin.difference(model, q0, q1)).max()))
    assert worst["integrate"] < 1e-12, worst
    assert worst["difference"] < 1e-12, worst


def test_planar_small_angle_is_exact_where_pinocchio_cancels() -> None:
    """Pinocchio's SE(2) log divides by ``1 - cos(theta)`` (cancellation at small
    angles); ours uses ``(t/2) cot(t/2)``: integrating our difference back lands on
    ``q1`` to rounding, while Pinocchio's is off by about ``eps / theta^2``."""
    rng = np.random.default_rng(2)
    model = pin_chain(["planar"])
    for theta in (1e-3, 1e-5, 1e-7, 1e-10, 0.0):
        q0 = cfg.random_joint("planar", rng)
        q1 = cfg.integrate_joint("planar", q0, np.array([0.7, -0.4, theta]))
        d = cfg.difference_joint("planar", q0, q1)
        assert np.abs(d - [0.7, -0.4, theta]).max() < 1e-14
        assert np.abs(cfg.integrate_joint("planar", q0, d) - q1).max() < 1e-15
        assert np.abs(d - pin.difference(model, q0, q1)).max() < 1e-15 / max(theta, 1e-4) ** 2


@pytest.mark.parametrize("kind", list(PIN_JOINTS))
def test_integrate_of_difference_is_the_target(kind: str) -> None:
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(3000):
        q0, q1 = cfg.random_joint(kind, rng), cfg.random_joint(kind, rng)
        worst = max(worst, same(kind, cfg.integrate_joint(kind, q0, cfg.difference_joint(
            kind, q0, q1)), q1))
    assert worst < 1e-12


@pytest.mark.parametrize("kind", ["free-flyer", "spherical", "planar"])
def test_difference_of_integrate_is_the_velocity(kind: str) -> None:
    """Within the injectivity radius (rotation angle below pi) the log inverts the exp."""
    rng = np.random.default_rng(5)
    nv = cfg.JOINT_SIZES[kind][1]
    for k in range(1000):
        q0 = cfg.random_joint(kind, rng)
        v = rng.normal(size=nv) * SCALES[k % 4]
        ang = v[3:] if kind == "free-flyer" else v if kind == "spherical" else v[2:]
        if np.linalg.norm(ang) >= 3.0:
            continue
        d = cfg.difference_joint(kind, q0, cfg.integrate_joint(kind, q0, v))
        assert np.abs(d - v).max() < 1e-12 * max(1.0, float(np.abs(v).max()))


@pytest.mark.parametrize("kind", ["free-flyer", "spherical"])
def test_difference_takes_the_short_way(kind: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        q0, q1 = cfg.random_joint(kind, rng), cfg.random_joint(kind, rng)
        flipped = q1.copy()
        flipped[-4:] *= -1.0
        d, d_flipped = cfg.difference_joint(kind, q0, q1), cfg.difference_joint(kind, q0, flipped)
        assert np.abs(d - d_flipped).max() < 1e-12
        assert np.linalg.norm(d[-3:]) <= math.pi + 1e-12
        assert np.abs(cfg.difference_joint(kind, q0, -q0 if kind == "spherical"
                                           else np.r_[q0[:3], -q0[3:]])).max() < 1e-12
    # A rotation of 3 rad one way is 2 pi - 3 rad the other way.
    q0 = cfg.neutral_joint(kind)
    w = np.array([0.0, 0.0, 3.5])
    v = w if kind == "spherical" else np.r_[0.0, 0.0, 0.0, w]
    d = cfg.difference_joint(kind, q0, cfg.integrate_joint(kind, q0, v))
    np.testing.assert_allclose(d[-3:], [0.0, 0.0, 3.5 - 2 * math.pi], atol=1e-12)


def test_free_flyer_moves_along_the_local_screw() -> None:
    """integrate(q, v) is M(q) exp6(v): with v = [u; 0] the body moves by R u, and a pure
    rotation [0; w] turns the body about its own origin."""
    q = np.r_[1.0, 2.0, 3.0, pin.Quaternion(pin.exp3(np.array([0.3, -0.2, 0.5]))).coeffs()]
    R = cfg.quaternion_matrix(q[3:])
    out = cfg.integrate_joint("free-flyer", q, np.r_[0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(out[:3], q[:3] + R[:, 0] * 0.5, atol=1e-15)
    out = cfg.integrate_joint("free-flyer", q, np.r_[0.0, 0.0, 0.0, 0.0, 0.4, 0.0])
    np.testing.assert_allclose(out[:3], q[:3], atol=1e-15)
    np.testing.assert_allclose(cfg.quaternion_matrix(out[3:]), R @ pin.exp3(np.r_[0, 0.4, 0]),
                               atol=1e-15)


# --------------------------------------------------------------- model level
MIXED = ("free-flyer", "revolute", "spherical", "planar", "continuous", "prismatic", "revolute")


def mixed_model():
    """A chain of every joint type (a real RobotModel, through the common builder), with
    position limits on the revolute joint j1 and the prismatic joint j5."""
    links = [LinkSpec("base")] + [LinkSpec(f"l{k}", 1.0, np.zeros(3), 0.01 * np.eye(3))
                                  for k in range(len(MIXED))]
    limits = {1: (-0.5, 2.0), 5: (0.1, 0.3)}
    joints = [JointSpec(f"j{k}", kind, "base" if k == 0 else f"l{k - 1}", f"l{k}",
                        (np.eye(3), np.array([0.1 * k, 0.0, 0.0])),
                        np.array([0.0, 0.0, 1.0]), lower_limit=limits.get(k, (-np.inf,))[0],
                        upper_limit=limits.get(k, (0, np.inf))[1])
              for k, kind in enumerate(MIXED)]
    return build_model("mixed", links, joints)


def test_layout_matches_pinocchio_indices() -> None:
    model, pmodel = mixed_model(), pin_chain(MIXED)
    layout = cfg.joint_layout(model)
    assert [(j.idx_q, j.idx_v, j.nq, j.nv) for j in layout] == [
        (pmodel.joints[k].idx_q, pmodel.joints[k].idx_v, pmodel.joints[k].nq,
         pmodel.joints[k].nv) for k in range(1, pmodel.njoints)]
    assert (model.nq, model.nv) == (pmodel.nq, pmodel.nv)


def test_model_operations_match_pinocchio() -> None:
    model, pmodel = mixed_model(), pin_chain(MIXED)
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(cfg.neutral(model), pin.neutral(pmodel))
    for _ in range(300):
        q0, q1 = cfg.random_configuration(model, rng), cfg.random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        np.testing.assert_allclose(cfg.integrate(model, q0, v), pin.integrate(pmodel, q0, v),
                                   rtol=0, atol=1e-12)
        d = cfg.difference(model, q0, q1)
        if abs(d[pmodel.joints[4].idx_v + 2]) > 1e-2:  # planar: see the small-angle test
            np.testing.assert_allclose(d, pin.difference(pmodel, q0, q1), rtol=0, atol=1e-12)
        back = cfg.integrate(model, q0, d)
        for j in cfg.joint_layout(model):
            sl = slice(j.idx_q, j.idx_q + j.nq)
            assert same(j.kind, back[sl], q1[sl]) < 1e-12


def test_random_configuration_is_valid_and_reproducible() -> None:
    model = mixed_model()
    qs = np.array([cfg.random_configuration(model, seed) for seed in range(2000)])
    np.testing.assert_array_equal(qs[5], cfg.random_configuration(model, 5))
    for q in qs:
        cfg.check_configuration(model, q, tol=1e-12)
    layout = {j.name: j for j in cfg.joint_layout(model)}
    rev, pri = layout["j1"], layout["j5"]
    assert qs[:, rev.idx_q].min() >= -0.5 and qs[:, rev.idx_q].max() <= 2.0
    assert qs[:, pri.idx_q].min() >= 0.1 and qs[:, pri.idx_q].max() <= 0.3
    assert np.abs(qs[:, layout["j6"].idx_q]).max() <= math.pi  # unlimited: [-pi, pi]
    assert np.abs(qs[:, 0:3]).max() <= cfg.DEFAULT_TRANSLATION_BOX
    # Uniform on S^3: E[x_k] = 0 and E[x_k^2] = 1/4 per quaternion coordinate.
    quats = qs[:, 3:7]
    assert np.abs(quats.mean(axis=0)).max() < 0.05
    assert np.abs((quats ** 2).mean(axis=0) - 0.25).max() < 0.02
    big = cfg.random_configuration(model, 0, translation_box=10.0)
    assert np.abs(big[:3]).max() > 1.0


def test_random_joint_with_one_finite_limit() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = float(cfg.random_joint("revolute", rng, lower=5.0)[0])
        assert 5.0 <= x <= 5.0 + 2 * math.pi
        y = float(cfg.random_joint("prismatic", rng, upper=-3.0)[0])
        assert -5.0 <= y <= -3.0


def test_fixed_base_robot_matches_pinocchio() -> None:
    """On today's RobotModel (one coordinate per joint): plain vector space."""
    path = str(robot_urdf("stanford_arm"))  # revolute and prismatic joints
    model = rc.load_urdf(path)
    pmodel = pin.buildModelFromUrdf(path)
    assert list(pmodel.names)[1:] == list(model.joint_names)
    rng = np.random.default_rng(1)
    q0, q1 = cfg.random_configuration(model, rng), cfg.random_configuration(model, rng)
    assert np.all(q0 >= model.lower_limit) and np.all(q0 <= model.upper_limit)
    v = rng.normal(size=model.nv)
    np.testing.assert_array_equal(cfg.neutral(model), pin.neutral(pmodel))
    np.testing.assert_allclose(cfg.integrate(model, q0, v), pin.integrate(pmodel, q0, v),
                               atol=1e-15)
    np.testing.assert_allclose(cfg.difference(model, q0, q1), pin.difference(pmodel, q0, q1),
                               atol=1e-15)
    np.testing.assert_array_equal(rc.check_configuration(model, q0), q0)


# --------------------------------------------------------------- bad input
def test_check_configuration_names_the_joint() -> None:
    model = mixed_model()
    q = cfg.random_configuration(model, 0)
    layout = {j.name: j for j in cfg.joint_layout(model)}
    bad = q.copy()
    bad[layout["j2"].idx_q:layout["j2"].idx_q + 4] *= 1.001
    with pytest.raises(rc.StateError, match=r"joint 'j2' \(spherical\): quaternion.*norm 1\.001"):
        cfg.check_configuration(model, bad)
    cfg.check_configuration(model, bad, tol=1e-2)  # within a looser tolerance
    bad = q.copy()
    bad[layout["j3"].idx_q + 2] = 0.0  # cos = 0 and |sin| < 1
    with pytest.raises(rc.StateError, match=r"joint 'j3' \(planar\): \(cos, sin\) pair"):
        cfg.check_configuration(model, bad)
    bad = q.copy()
    bad[layout["j0"].idx_q + 6] = np.nan
    with pytest.raises(rc.StateError, match=r"joint 'j0'.*not finite"):
        cfg.check_configuration(model, bad)
    with pytest.raises(rc.StateError, match=r"q has shape \(3,\), expected \(19,\)"):
        cfg.check_configuration(model, q[:3])


def test_bad_shapes_and_types() -> None:
    model = mixed_model()
    q = cfg.neutral(model)
    with pytest.raises(rc.StateError, match=r"v has shape \(19,\), expected \(16,\)"):
        cfg.integrate(model, q, q)
    with pytest.raises(rc.StateError, match="q1 has shape"):
        cfg.difference(model, q, q[:-1])
    with pytest.raises(rc.StateError, match="spherical velocity"):
        cfg.integrate_joint("spherical", [0, 0, 0, 1], [0.0, 1.0])
    with pytest.raises(rc.ModelError, match="'helical' is not one of 'free-flyer'"):
        cfg.neutral_joint("helical")
    with pytest.raises(rc.StateError, match="translation_box"):
        cfg.random_configuration(model, 0, translation_box=-1.0)
    model = mixed_model()
    odd = SimpleNamespace(**{k: getattr(model, k) for k in (
        "name", "joint_names", "joint_types", "idx_q", "idx_v", "joint_nq", "joint_nv",
        "lower_limit", "upper_limit", "nq", "nv")})
    odd.nq += 1
    with pytest.raises(rc.ModelError, match="add up to nq = 19, nv = 16"):
        cfg.joint_layout(odd)
    odd.nq -= 1
    odd.idx_q = np.r_[model.idx_q[:2], model.idx_q[2:] + 1]
    with pytest.raises(rc.ModelError, match=r"joint 'j2' \(spherical\) has idx_q, idx_v, nq, nv "
                                            r"= \(9, 7, 4, 3\), expected \(8, 7, 4, 3\)"):
        cfg.joint_layout(odd)
