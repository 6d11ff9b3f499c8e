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

Free-floating dynamics of a model with a free-flyer root (Khalil 2010 §7.2-7.3,
``rc.free_floating_dynamics``): the base acceleration of eq. 97 and the joint torques
of eq. 98-100, on Talos, Solo12, ANYmal C, HyQ, Go2 and Talos with its mimic grippers,
200 random states each (random unit quaternions, base positions and twists; armature
on the joints, a tilted gravity; external wrenches on every body, the base's too, on
every other sample).

Three ways: with the torques ``[0_6; tau]`` -- no wrench on the base -- our own ABA
(``rc.aba``) and Pinocchio's ``pin.aba`` give back our base acceleration and the
joint accelerations we asked for; our RNEA at that base acceleration needs no base
wrench (``tau[:6] = 0``) and gives our joint torques; and the free-flyer model agrees
with the same robot given as base inertia + fixed-base tree (``rc.free_floating_rnea``).
Random trees with spherical and planar joints under a free-flyer root are checked
against Pinocchio models built joint by joint.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from multidof import random_multidof_tree, to_pinocchio
from oracle import PinOracle, relative_error

import rnea_ros.core as rc
from rnea_ros.core.model.configuration import integrate_joint, random_joint
from rnea_ros.samples import example_robots_directory, load_robot, robot_urdf, sample_urdf

# The robots example-robot-data's loaders use (erd.load("talos") is talos_reduced).
FLOATING_ROBOTS = {
    "talos": "talos_data/robots/talos_reduced.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "go2": "go2_description/urdf/go2.urdf",
}
# rc.free_floating_dynamics on the robots with a free-flyer root (talos_full: its mimic grippers)
FREE_FLYER_ROBOTS = ("talos", "solo12", "anymal_c", "hyq", "go2", "talos_full")
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


# ------------------------------------- free-floating dynamics (eq. 97-100)
def free_flyer(name: str, seed: int = 3, friction: bool = False) -> rc.RobotModel:
    """The robot on a free-flyer root with random armature (and friction) on the joints,
    none on the base (eq. 97 has no base drive), and a tilted gravity."""
    rng = np.random.default_rng(seed)
    model = load_robot(name, root_joint="free-flyer", mimic=name == "talos_full")
    joints = np.r_[np.zeros(6), np.ones(model.nv - 6)]
    model = model.without_friction().replace(
        armature=joints * rng.uniform(0.0, 0.3, model.nv), gravity=np.array([0.3, -0.2, -9.81]))
    if friction:
        model = model.replace(coulomb=joints * rng.uniform(0.0, 1.0, model.nv),
                              viscous=joints * rng.uniform(0.0, 1.0, model.nv))
    return model


def states(model: rc.RobotModel, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(count):
        q = rc.random_configuration(model, rng)
        v = rng.normal(0.0, 2.0, model.nv)
        qdd = rng.normal(0.0, 5.0, model.nv - 6)
        fext = rng.normal(0.0, 20.0, (model.nbodies, 6)) if k % 2 else None
        yield q, v, qdd, fext


@pytest.mark.parametrize("robot", FREE_FLYER_ROBOTS)
def test_base_acceleration_is_abas_and_pinocchios(robot: str) -> None:
    model = free_flyer(robot)
    oracle = PinOracle(robot_urdf(robot), model, mimic="eliminate")
    worst = {"rc.aba base": 0.0, "rc.aba joints": 0.0, "pin.aba": 0.0, "rnea base": 0.0,
             "rnea joints": 0.0}
    for q, v, qdd, fext in states(model, SAMPLES, seed=5):
        res = rc.free_floating_dynamics(model, q, v, qdd, fext=fext)
        assert res.base_acceleration.shape == (6,) and res.tau.shape == (model.nv - 6,)
        tau = np.r_[np.zeros(6), res.tau]
        ddq = rc.aba(model, q, v, tau, fext=fext)  # through M for the mimic model
        scale = float(np.abs(ddq).max())
        worst["rc.aba base"] = max(worst["rc.aba base"], float(
            np.abs(ddq[:6] - res.base_acceleration).max()) / scale)
        worst["rc.aba joints"] = max(worst["rc.aba joints"], relative_error(ddq[6:], qdd))
        if not model.mimic_joints:  # Pinocchio's aba has no mimic support
            theirs = oracle.aba(q, v, tau, fext)
            worst["pin.aba"] = max(worst["pin.aba"], float(
                np.abs(res.base_acceleration - theirs[:6]).max()) / scale)
        back = rc.rnea(model, q, v, np.r_[res.base_acceleration, qdd], fext=fext)
        scale = float(np.abs(back).max())
        worst["rnea base"] = max(worst["rnea base"], float(np.abs(back[:6]).max()) / scale)
        worst["rnea joints"] = max(worst["rnea joints"],
                                   float(np.abs(back[6:] - res.tau).max()) / scale)
    assert max(worst.values()) <= TOL, worst


@pytest.mark.parametrize("robot", ("solo12", "anymal_c"))
def test_friction_and_armature_are_joint_torques(robot: str) -> None:
    """Friction and armature act on the joints only: ABA with them gives back the base
    acceleration and the joint accelerations, RNEA needs no base wrench."""
    model = free_flyer(robot, friction=True)
    for q, v, qdd, fext in states(model, 40, seed=8):
        res = rc.free_floating_dynamics(model, q, v, qdd, fext=fext)
        ddq = rc.aba(model, q, v, np.r_[np.zeros(6), res.tau], fext=fext)
        assert relative_error(ddq, np.r_[res.base_acceleration, qdd]) < TOL
        back = rc.rnea(model, q, v, np.r_[res.base_acceleration, qdd], fext=fext)
        assert float(np.abs(back[:6]).max()) < TOL * float(np.abs(back).max())


@pytest.mark.parametrize("robot", ("solo12", "talos", "talos_full"))
def test_free_flyer_model_is_base_plus_tree(robot: str) -> None:
    """The model-level entry and the base + fixed-base tree entry (the same kernel, fed
    from two descriptions of the robot) agree; the base's wrench is fext's row 0. Talos'
    mimic grippers in the fixed-base tree too (the kernel tree carries them)."""
    model = free_flyer(robot, friction=True)
    tree = load_robot(robot, mimic=robot == "talos_full")
    order = np.array([model.joint_names.index(j) for j in tree.joint_names]) - 1
    tree = tree.replace(armature=model.armature[6:][order], coulomb=model.coulomb[6:][order],
                        viscous=model.viscous[6:][order], gravity=model.gravity)
    base = rc.urdf_base_inertia(robot_urdf(robot), inertia_check="warn")
    bodies = [model.body_names.index(b) for b in tree.body_names]
    for q, v, qdd, fext in states(model, 40, seed=2):
        res = rc.free_floating_dynamics(model, q, v, qdd, fext=fext)
        split = rc.free_floating_rnea(
            tree, base, q[:7], v[:6], q[7:][order], v[6:][order], qdd[order],
            fext=None if fext is None else fext[bodies],
            base_fext=None if fext is None else fext[0])
        assert relative_error(res.base_acceleration, split.base_acceleration) < 1e-12
        assert relative_error(res.tau[order], split.tau) < 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_random_multidof_trees_against_pinocchio(seed: int) -> None:
    """Spherical and planar joints in the tree (their sub-joints' corr terms): the joint
    accelerations are given, so the kernel tree carries them; pin.aba on the same tree
    built joint by joint gives back the base acceleration."""
    model = random_multidof_tree(seed, bodies=7, root="free-flyer", floating=True)
    model = model.replace(armature=np.r_[np.zeros(6), model.armature[6:]])
    assert {"spherical", "planar"} & set(model.joint_types[1:])
    pm, _ = to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    for q, v, qdd, _ in states(model, 50, seed=seed):
        res = rc.free_floating_dynamics(model, q, v, qdd)
        tau = np.r_[np.zeros(6), res.tau]
        ddq = pin.aba(pm, pd, q, v, tau)  # same layout, same order (no continuous joints)
        assert relative_error(ddq, np.r_[res.base_acceleration, qdd]) < TOL
        f = rng.normal(0.0, 10.0, (model.nbodies, 6))
        res = rc.free_floating_dynamics(model, q, v, qdd, fext=f)
        forces = [pin.Force.Zero()] + [pin.Force(w[:3], w[3:]) for w in f]
        ddq = pin.aba(pm, pd, q, v, np.r_[np.zeros(6), res.tau], forces)
        assert relative_error(ddq, np.r_[res.base_acceleration, qdd]) < TOL


def test_gravity_is_free_fall_and_a_lone_body_follows_euler() -> None:
    """Gravity adds R^T g to the base's linear acceleration and changes no torque; with
    the legs massless the base is a torque-free rigid body: I dw = -w x I w about its
    COM (here at the origin of a body we build)."""
    model = free_flyer("go2")
    rng = np.random.default_rng(4)
    for q, v, qdd, _ in states(model, 20, seed=4):
        g = rng.normal(0.0, 10.0, 3)
        with_g = rc.free_floating_dynamics(model, q, v, qdd, gravity=g)
        without = rc.free_floating_dynamics(model, q, v, qdd, gravity=np.zeros(3))
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        assert relative_error(with_g.base_acceleration,
                              without.base_acceleration + np.r_[R.T @ g, np.zeros(3)]) < 1e-12
        assert relative_error(with_g.tau, without.tau) < 1e-12
    nb = model.nbodies
    inertia = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, -0.2], [0.0, -0.2, 4.0]])
    lone = model.replace(mass=np.r_[5.0, np.zeros(nb - 1)], com=np.zeros((nb, 3)),
                         inertia=np.concatenate([inertia[None], np.zeros((nb - 1, 3, 3))]),
                         armature=np.zeros(model.nv))
    q, v, qdd, _ = next(states(lone, 1, seed=0))
    res = rc.free_floating_dynamics(lone, q, v, qdd, gravity=np.zeros(3))
    w, vl = v[3:6], v[:3]
    np.testing.assert_allclose(res.base_acceleration[3:],
                               np.linalg.solve(inertia, -np.cross(w, inertia @ w)), atol=1e-14)
    np.testing.assert_allclose(res.base_acceleration[:3] + np.cross(w, vl), 0.0, atol=1e-14)
    np.testing.assert_allclose(res.tau, 0.0, atol=1e-14)


def test_errors_name_the_joint_or_body() -> None:
    fixed = load_robot("solo12")
    with pytest.raises(rc.ModelError, match=r"root joint 'FL_HAA' \(revolute\), not a "
                                            r"free-flyer: load it with load_urdf\(\.\.\., "
                                            r"root_joint='free-flyer'\)"):
        rc.free_floating_dynamics(fixed, np.zeros(12), np.zeros(12), np.zeros(6))
    planar = load_robot("arm7", root_joint="planar")
    with pytest.raises(rc.ModelError, match=r"root joint 'root_joint' \(planar\), not a"):
        rc.free_floating_dynamics(planar, rc.neutral(planar), np.zeros(planar.nv),
                                  np.zeros(planar.nv - 6))
    model = load_robot("solo12", root_joint="free-flyer")
    two_roots = model.replace(parent=np.r_[model.parent[:4], -1, model.parent[5:]])
    with pytest.raises(rc.ModelError, match=r"bodies 'FR_SHOULDER' hang from the fixed world"):
        rc.free_floating_dynamics(two_roots, rc.neutral(model), np.zeros(18), np.zeros(12))
    for key in ("armature", "coulomb", "viscous"):
        driven = model.replace(**{key: np.r_[0.0, 0.0, 0.1, np.zeros(15)]})
        with pytest.raises(rc.ModelError, match=rf"root joint 'root_joint' has {key} "
                                                r"\[0\.0, 0\.0, 0\.1, 0\.0, 0\.0, 0\.0\]"):
            rc.free_floating_dynamics(driven, rc.neutral(model), np.zeros(18), np.zeros(12))
    q, v = rc.neutral(model), np.zeros(18)
    with pytest.raises(rc.StateError, match=r"qdd_joints has shape \(18,\), expected \(12,\)"):
        rc.free_floating_dynamics(model, q, v, np.zeros(18))
    with pytest.raises(rc.StateError, match=r"q has shape \(18,\), expected \(19,\)"):
        rc.free_floating_dynamics(model, q[1:], v, np.zeros(12))
    bad = q.copy()
    bad[6] = 1.01
    with pytest.raises(rc.StateError, match=r"free-flyer joint 'root_joint'.*norm 1\.01"):
        rc.free_floating_dynamics(model, bad, v, np.zeros(12))
    with pytest.raises(rc.StateError, match=r"v of joint 'FL_KFE' is nan"):
        rc.free_floating_dynamics(model, q, np.r_[np.zeros(8), np.nan, np.zeros(9)],
                                  np.zeros(12))
    with pytest.raises(rc.StateError, match=r"fext has shape \(12, 6\), expected \(13, 6\)"):
        rc.free_floating_dynamics(model, q, v, np.zeros(12), fext=np.zeros((12, 6)))
    massless = model.replace(mass=np.zeros(13), com=np.zeros((13, 3)),
                             inertia=np.zeros((13, 3, 3)))
    with pytest.raises(rc.ModelError, match="composite inertia is singular"):
        rc.free_floating_dynamics(massless, q, v, np.zeros(12))
