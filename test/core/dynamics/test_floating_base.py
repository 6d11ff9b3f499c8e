"""The free-floating robot (Khalil 2010 §7.2, core/dynamics/floating_base.py).

Against Pinocchio with a ``JointModelFreeFlyer`` root on the same URDF (the root
link's inertia is the base's): with the joint torques we return and zero base
wrench, Pinocchio's ABA gives back our base acceleration and the joint
accelerations we asked for, and Pinocchio's RNEA at our base acceleration needs no
base wrench and our joint torques. Independently of Pinocchio: the whole robot's
momentum is conserved without gravity or external wrenches (eq. 97 is Newton-Euler
on the whole robot), gravity only adds ``g`` to every acceleration (free fall),
a torque-free rigid body follows Euler's equations, and the joint torques equal
our moving-base RNEA (§7.1) started from the base motion found here.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import rnea_ros.core as rc
from rnea_ros.core.model.configuration import integrate_joint, random_joint
from rnea_ros.samples import example_robots_directory, sample_urdf

# The robots example-robot-data's loaders use (erd.load("talos") is talos_reduced).
FLOATING_ROBOTS = {
    "talos": "talos_data/robots/talos_reduced.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "go2": "go2_description/urdf/go2.urdf",
}
SAMPLES = 200
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


def floating_robot(name: str):
    path = str(example_robots_directory() / FLOATING_ROBOTS[name])
    tree = rc.load_urdf(path, inertia_check="warn")
    return path, tree, rc.urdf_base_inertia(path, inertia_check="warn")


def random_state(tree: rc.RobotModel, rng: np.random.Generator):
    pose = random_joint("free-flyer", rng)
    twist = rng.normal(0.0, 1.0, 6)
    q = rng.uniform(-1.5, 1.5, tree.nv)
    v = rng.normal(0.0, 2.0, tree.nv)
    a = rng.normal(0.0, 5.0, tree.nv)
    return pose, twist, q, v, a


class PinFreeFlyer:
    """Pinocchio's free-flyer model of the URDF, in our joint order."""

    def __init__(self, path: str, tree: rc.RobotModel) -> None:
        self.pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        self.pd = self.pm.createData()
        ids = [self.pm.getJointId(name) for name in tree.joint_names]
        self.jid = ids
        self.iq = np.array([self.pm.joints[j].idx_q for j in ids])
        self.iv = np.array([self.pm.joints[j].idx_v for j in ids])
        assert all(self.pm.joints[j].nq == 1 for j in ids)  # no continuous joints here

    def q(self, pose, q):
        out = np.zeros(self.pm.nq)
        out[:7], out[self.iq] = pose, q
        return out

    def v(self, base, x):
        out = np.zeros(self.pm.nv)
        out[:6], out[self.iv] = base, x
        return out

    def forces(self, fext, base_fext):
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        if base_fext is not None:
            out[1] = pin.Force(base_fext[:3], base_fext[3:])
        if fext is not None:
            for k, j in enumerate(self.jid):
                out[j] = pin.Force(fext[k, :3], fext[k, 3:])
        return out


def rel(x, ref, scale=None):
    s = max(float(np.abs(ref).max()) if scale is None else scale, 1e-12)
    return float(np.abs(np.asarray(x) - ref).max()) / s


@pytest.mark.parametrize("robot", list(FLOATING_ROBOTS))
def test_base_inertia_is_pinocchios_free_flyer_body(robot: str) -> None:
    path, _, base = floating_robot(robot)
    ref = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()).inertias[1]
    assert base.mass == pytest.approx(ref.mass, rel=1e-14)
    np.testing.assert_allclose(base.com, ref.lever, rtol=0, atol=1e-14)
    np.testing.assert_allclose(base.inertia, ref.inertia, rtol=0, atol=1e-13)


@pytest.mark.parametrize("robot", list(FLOATING_ROBOTS))
def test_matches_pinocchio_free_flyer(robot: str) -> None:
    path, tree, base = floating_robot(robot)
    rng = np.random.default_rng(17)
    tree = tree.without_friction().replace(armature=rng.uniform(0.0, 0.3, tree.nv))
    ff = PinFreeFlyer(path, tree)
    ff.pm.armature[ff.iv] = tree.armature
    worst = {"aba base": 0.0, "aba joints": 0.0, "rnea base": 0.0, "rnea joints": 0.0}
    for k in range(SAMPLES):
        pose, twist, q, v, a = random_state(tree, rng)
        fext = base_fext = None
        if k % 2:  # external wrenches on every other sample
            fext = rng.normal(0.0, 20.0, (tree.nv, 6))
            base_fext = rng.normal(0.0, 50.0, 6)
        res = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, fext=fext,
                                    base_fext=base_fext)
        qf, vf = ff.q(pose, q), ff.v(twist, v)
        forces = ff.forces(fext, base_fext)
        ddq = pin.aba(ff.pm, ff.pd, qf, vf, ff.v(np.zeros(6), res.tau), forces)
        worst["aba base"] = max(worst["aba base"], rel(res.base_acceleration, ddq[:6]))
        worst["aba joints"] = max(worst["aba joints"], rel(ddq[ff.iv], a))
        tau = pin.rnea(ff.pm, ff.pd, qf, vf, ff.v(res.base_acceleration, a), forces)
        scale = float(np.abs(tau).max())
        worst["rnea base"] = max(worst["rnea base"], rel(tau[:6], np.zeros(6), scale))
        worst["rnea joints"] = max(worst["rnea joints"], rel(res.tau, tau[ff.iv], scale))
    assert max(worst.values()) <= TOL, worst


def _trajectory_rate(tree, base, state, acc, a, h=1e-3):
    """d/dt of the whole robot's centroidal momentum along the motion with base
    acceleration ``acc`` and joint accelerations ``a``: central differences with one
    Richardson step (error O(h^4)). Any curve through the state with these first
    derivatives will do; here the base moves on exp(t twist)."""
    pose, twist, q, v = state

    def hg(t: float) -> np.ndarray:
        pose_t = integrate_joint("free-flyer", pose, t * twist)
        return rc.free_floating_momentum(tree, base, pose_t, twist + t * acc, q + t * v,
                                         v + t * a).hg
    def central(step: float) -> np.ndarray:
        return (hg(step) - hg(-step)) / (2 * step)
    return (4.0 * central(h / 2) - central(h)) / 3.0


@pytest.mark.parametrize("robot", ["talos", "solo12", "anymal_c"])
def test_momentum_is_conserved_without_gravity(robot: str) -> None:
    """Eq. 97 checked without Pinocchio: with no gravity and no external wrench the
    centroidal momentum of base + tree is constant, and only at the base acceleration
    eq. 97 gives."""
    _, tree, base = floating_robot(robot)
    rng = np.random.default_rng(2)
    zero = np.zeros(3)
    for _ in range(20):
        pose, twist, q, v, a = random_state(tree, rng)
        res = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, gravity=zero)
        rate = _trajectory_rate(tree, base, (pose, twist, q, v), res.base_acceleration, a)
        wrong = _trajectory_rate(tree, base, (pose, twist, q, v), np.zeros(6), a)
        scale = float(np.abs(wrong).max())
        assert scale > 1.0
        assert float(np.abs(rate).max()) < 1e-9 * scale, (rate, scale)


def test_momentum_rate_is_the_external_wrench() -> None:
    """With gravity and a wrench on the base: d/dt l = m g + f (world), d/dt k = the
    wrench's moment about the centre of mass (gravity has none)."""
    _, tree, base = floating_robot("go2")
    rng = np.random.default_rng(8)
    for _ in range(10):
        pose, twist, q, v, a = random_state(tree, rng)
        wrench = rng.normal(0.0, 30.0, 6)
        res = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, base_fext=wrench)
        rate = _trajectory_rate(tree, base, (pose, twist, q, v), res.base_acceleration, a)
        Rb = pin.Quaternion(pose[3:]).toRotationMatrix()
        mom = rc.free_floating_momentum(tree, base, pose, twist, q, v)
        force = Rb @ wrench[:3]
        torque = Rb @ wrench[3:] + np.cross(pose[:3] - mom.com, force)
        expected = np.r_[mom.mass * tree.gravity + force, torque]
        assert rel(rate, expected) < 1e-9


@pytest.mark.parametrize("robot", ["talos", "hyq"])
def test_gravity_is_free_fall(robot: str) -> None:
    """A free-floating robot in a uniform field falls with it: gravity adds R^T g to the
    base's linear acceleration and changes no joint torque."""
    _, tree, base = floating_robot(robot)
    rng = np.random.default_rng(4)
    for _ in range(20):
        pose, twist, q, v, a = random_state(tree, rng)
        g = rng.normal(0.0, 10.0, 3)
        with_g = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, gravity=g)
        without = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, gravity=np.zeros(3))
        Rb = pin.Quaternion(pose[3:]).toRotationMatrix()
        expected = without.base_acceleration + np.r_[Rb.T @ g, np.zeros(3)]
        assert rel(with_g.base_acceleration, expected) < 1e-12
        assert rel(with_g.tau, without.tau) < 1e-12


def test_joint_torques_are_the_moving_base_rnea() -> None:
    """§7.2's torques are §7.1's RNEA started from the base motion §7.2 found (armature
    and friction included), and the base's Newton-Euler equations balance the root
    joints' wrenches (rnea_with_wrenches)."""
    _, tree, base = floating_robot("anymal_c")
    rng = np.random.default_rng(6)
    tree = tree.replace(armature=rng.uniform(0, 0.2, tree.nv),
                        coulomb=rng.uniform(0, 1, tree.nv), viscous=rng.uniform(0, 1, tree.nv))
    I0 = np.zeros((6, 6))  # base spatial inertia, [linear; angular] order
    c = base.com
    C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I0[:3, :3] = base.mass * np.eye(3)
    I0[:3, 3:] = -base.mass * C
    I0[3:, :3] = base.mass * C
    I0[3:, 3:] = base.inertia - base.mass * C @ C
    roots = np.flatnonzero(tree.parent < 0)
    for _ in range(20):
        pose, twist, q, v, a = random_state(tree, rng)
        res = rc.free_floating_rnea(tree, base, pose, twist, q, v, a)
        vl, w = twist[:3], twist[3:]
        dv, dw = res.base_acceleration[:3], res.base_acceleration[3:]
        Rb = pin.Quaternion(pose[3:]).toRotationMatrix()
        motion = rc.BaseMotion(Rb, w, dw, vl, dv + np.cross(w, vl))
        tau = rc.rnea(tree, q, v, a, base_motion=motion)
        assert rel(res.tau, tau) < 1e-12
        # Base: I0 (a0 - g0) + v0 x* I0 v0 = -(sum of the root joints' wrenches on the base).
        _, wrenches = rc.rnea_with_wrenches(tree, q, v, a, base_motion=motion)
        Rr, pr = rc.body_poses(tree, q)
        total = np.zeros(6)
        for i in roots:
            f = Rr[i] @ wrenches[i, :3]
            total += np.r_[f, Rr[i] @ wrenches[i, 3:] + np.cross(pr[i], f)]
        acc = res.base_acceleration - np.r_[Rb.T @ tree.gravity, np.zeros(3)]
        h = I0 @ twist
        bias = np.r_[np.cross(w, h[:3]), np.cross(w, h[3:]) + np.cross(vl, h[:3])]
        assert rel(I0 @ acc + bias, -total, float(np.abs(total).max())) < 1e-10


def test_torque_free_rigid_body_follows_euler() -> None:
    """A massless tree on a rigid base: Euler's equations, I dw = -w x I w (about the
    COM), and the COM moves in a straight line."""
    path = str(sample_urdf("arm7"))
    tree = rc.load_urdf(path)
    tree = tree.replace(mass=np.zeros(tree.nv), com=np.zeros((tree.nv, 3)),
                        inertia=np.zeros((tree.nv, 3, 3)))
    inertia = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, -0.2], [0.0, -0.2, 4.0]])
    base = rc.BodyInertia(5.0, np.zeros(3), inertia)
    rng = np.random.default_rng(0)
    pose, twist, q, v, a = random_state(tree, rng)
    res = rc.free_floating_rnea(tree, base, pose, twist, q, v, a, gravity=np.zeros(3))
    w, vl = twist[3:], twist[:3]
    np.testing.assert_allclose(res.base_acceleration[3:],
                               np.linalg.solve(inertia, -np.cross(w, inertia @ w)), atol=1e-14)
    np.testing.assert_allclose(res.base_acceleration[:3] + np.cross(w, vl), 0.0, atol=1e-14)
    np.testing.assert_allclose(res.tau, 0.0, atol=1e-14)


def test_bad_input() -> None:
    _, tree, base = floating_robot("solo12")
    pose, twist = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], np.zeros(6)
    q = np.zeros(tree.nv)
    with pytest.raises(rc.StateError, match=r"base_pose: quaternion .* norm 1\.001"):
        rc.free_floating_rnea(tree, base, np.r_[0, 0, 0, 0, 0, 0, 1.001], twist, q, q, q)
    with pytest.raises(rc.StateError, match="base_pose must be a finite"):
        rc.free_floating_rnea(tree, base, np.zeros(6), twist, q, q, q)
    with pytest.raises(rc.StateError, match="base_twist"):
        rc.free_floating_rnea(tree, base, pose, np.r_[np.nan, np.zeros(5)], q, q, q)
    with pytest.raises(rc.StateError, match="a has shape"):
        rc.free_floating_rnea(tree, base, pose, twist, q, q, q[:3])
    with pytest.raises(rc.StateError, match="v of joint 'FL_HAA' is nan"):
        rc.free_floating_rnea(tree, base, pose, twist, q, np.r_[np.nan, q[1:]], q)
    with pytest.raises(rc.StateError, match="base_fext"):
        rc.free_floating_rnea(tree, base, pose, twist, q, q, q, base_fext=np.ones(3))
    with pytest.raises(rc.StateError, match="fext has shape"):
        rc.free_floating_rnea(tree, base, pose, twist, q, q, q, fext=np.ones((2, 6)))
    massless = tree.replace(mass=np.zeros(tree.nv), com=np.zeros((tree.nv, 3)),
                            inertia=np.zeros((tree.nv, 3, 3)))
    with pytest.raises(rc.ModelError, match="composite inertia is singular"):
        rc.free_floating_rnea(massless, rc.BodyInertia(0.0), pose, twist, q, q, q)
    with pytest.raises(rc.InertiaError, match="base body: mass -1 kg is negative"):
        rc.BodyInertia(-1.0)
    with pytest.raises(rc.ModelError, match="com must be"):
        rc.BodyInertia(1.0, np.zeros(2))
    with pytest.raises(rc.URDFError, match="cannot read URDF file"):
        rc.urdf_base_inertia("/nonexistent.urdf")
