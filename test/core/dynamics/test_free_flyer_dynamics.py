"""Free-floating dynamics of a model with a free-flyer root (Khalil 2010 §7.2-7.3,
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
from rnea_ros.samples import load_robot, robot_urdf

ROBOTS = ("talos", "solo12", "anymal_c", "hyq", "go2", "talos_full")
SAMPLES = 200
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


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


@pytest.mark.parametrize("robot", ROBOTS)
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
