"""Inverse dynamics on a moving base (Khalil 2010 §7.1) against Pinocchio.

The oracle is the same URDF under a Pinocchio free-flyer root: with the
base's configuration, velocity and acceleration set to the known motion, the
joint part of Pinocchio's RNEA is the moving-base inverse dynamics. Pinocchio's
free-flyer acceleration is spatial (local frame), so the classical linear
acceleration ``a`` enters as ``a - w x v``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from dynamics_cases import SAMPLES, TOL, FreeFlyerCase
from oracle import relative_error

import rnea_ros.core as rc
from rnea_ros.core.dynamics.moving_base import BaseMotion
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea
from rnea_ros.samples import load_robot, robot_urdf

ROBOTS = ("arm7", "stanford_arm", "ur5")


def _random_motion(rng: np.random.Generator) -> rc.BaseMotion:
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    return rc.BaseMotion(quat, rng.normal(size=3), rng.normal(size=3), rng.normal(size=3),
                         rng.normal(size=3))


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("robot", ROBOTS)
def test_moving_base_matches_pinocchio_free_flyer(robot: str) -> None:
    path = str(robot_urdf(robot))
    model = rc.load_urdf(path, inertia_check="warn").without_friction()
    model = model.replace(armature=np.zeros(model.nv))
    pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data = pmodel.createData()
    rng = np.random.default_rng(3)
    for _ in range(200):
        bm = _random_motion(rng)
        q, v, a = (rng.uniform(-1.5, 1.5, model.nv) for _ in range(3))
        quat = pin.Quaternion(bm.orientation).coeffs()
        qf = np.concatenate([rng.normal(size=3), quat, q])
        vf = np.concatenate([bm.linear_velocity, bm.angular_velocity, v])
        af = np.concatenate([bm.linear_acceleration - np.cross(bm.angular_velocity,
                                                              bm.linear_velocity),
                             bm.angular_acceleration, a])
        expected = pin.rnea(pmodel, data, qf, vf, af)[6:]
        got = rc.rnea(model, q, v, a, base_motion=bm)
        assert np.abs(got - expected).max() <= 1e-9 * max(1.0, np.abs(expected).max())
        vf[6:] = 0.0
        af[6:] = 0.0
        expected_g = pin.rnea(pmodel, data, qf, vf, af)[6:]
        got_g = rc.gravity_torques(model, q, base_motion=bm)
        assert np.abs(got_g - expected_g).max() <= 1e-9 * max(1.0, np.abs(expected_g).max())


def test_base_at_rest_is_the_fixed_base() -> None:
    model = rc.load_urdf(str(robot_urdf("arm7")))
    rng = np.random.default_rng(0)
    q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    np.testing.assert_allclose(rc.rnea(model, q, v, a, base_motion=rc.BaseMotion()),
                               rc.rnea(model, q, v, a), rtol=0, atol=1e-12)


def test_tilted_base_equals_rotated_gravity() -> None:
    """A base at rest tilted by R sees gravity R^T g: an arm on a 5 degree slope."""
    model = rc.load_urdf(str(robot_urdf("arm7")))
    R = pin.rpy.rpyToMatrix(np.deg2rad(5.0), 0.0, 0.0)
    q = np.linspace(-1.0, 1.0, model.nv)
    tilted = rc.gravity_torques(model, q, base_motion=rc.BaseMotion(orientation=R))
    np.testing.assert_allclose(tilted, rc.gravity_torques(model, q, gravity=R.T @ model.gravity),
                               rtol=0, atol=1e-12)
    assert np.abs(tilted - rc.gravity_torques(model, q)).max() > 0.1


@pytest.mark.parametrize("orientation", [[0.0, 0.0, 0.0, 1.1], np.eye(3) * 2.0,
                                         [np.nan, 0.0, 0.0, 1.0], np.eye(2)])
def test_bad_orientation_is_a_state_error(orientation: object) -> None:
    with pytest.raises(rc.StateError, match="orientation"):
        rc.BaseMotion(orientation=orientation)


def test_bad_vector_is_a_state_error() -> None:
    with pytest.raises(rc.StateError, match="angular_velocity"):
        rc.BaseMotion(angular_velocity=[0.0, np.inf, 0.0])


# ----------------------------------- free-flyer robots against Pinocchio (1000 states)
@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
def test_free_flyer_and_moving_base_agree(ff_case: FreeFlyerCase) -> None:
    """The joints' torques of the free-flyer model are those of the fixed-base model
    on a base moving as the free-flyer (rc.BaseMotion, Khalil §7.1; its linear
    acceleration is the classical one, a + w x v); and a free-flyer model takes a
    base motion too (a base at rest changes nothing)."""
    m = ff_case.model
    if m.mimic_joints:
        return  # the fixed-base model below is loaded without the followers' coupling
    fixed = load_robot(ff_case.name).without_friction()
    fixed = fixed.replace(armature=m.armature[6:], gravity=m.gravity)
    order = [m.joint_names.index(j) - 1 for j in fixed.joint_names]  # same names, maybe
    for k in range(0, SAMPLES, 200):                                   # another order
        q, v, a = ff_case.q[k], ff_case.v[k], ff_case.a[k]
        motion = BaseMotion(orientation=q[3:7], angular_velocity=v[3:6],
                            angular_acceleration=a[3:6], linear_velocity=v[:3],
                            linear_acceleration=a[:3] + np.cross(v[3:6], v[:3]))
        ours = rnea(fixed, q[7:][order], v[6:][order], a[6:][order], base_motion=motion)
        assert relative_error(ours, rnea(m, q, v, a)[6:][order]) < TOL
        at_rest = rnea(m, q, v, a, base_motion=BaseMotion())
        assert relative_error(at_rest, rnea(m, q, v, a)) < 1e-14
        assert relative_error(gravity_torques(m, q, base_motion=BaseMotion()),
                              gravity_torques(m, q)) < 1e-14
