"""The free-floating dynamics over a batch (``rc.free_floating_dynamics_batch``,
Khalil 2010 §7.2 in one compiled call, core/dynamics/floating_base.py).

Sample by sample it is the per-call ``rc.free_floating_dynamics`` (the same kernel,
looped in compiled code), and against Pinocchio: with the torques ``[0_6; tau]``
(no wrench on the base) ``pin.aba`` gives back the base acceleration and the joint
accelerations asked for, to 1e-9. Errors name the sample's joint, as per call.
"""

from __future__ import annotations

import numpy as np
import pytest
from multidof import free_flying_tree, random_multidof_tree
from oracle import PinOracle, relative_error

import rnea_ros.core as rc
from rnea_ros.samples import load_robot, robot_urdf

SAMPLES = 100
TOL = 1e-9

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


def free_flyer(name: str) -> rc.RobotModel:
    """The robot on a free-flyer root, armature and friction on the joints (none on the
    base), a tilted gravity."""
    rng = np.random.default_rng(4)
    model = load_robot(name, root_joint="free-flyer", mimic=name == "talos_full")
    joints = np.r_[np.zeros(6), np.ones(model.nv - 6)]
    return model.without_friction().replace(
        armature=joints * rng.uniform(0.0, 0.3, model.nv),
        coulomb=joints * rng.uniform(0.0, 1.0, model.nv),
        viscous=joints * rng.uniform(0.0, 1.0, model.nv),
        gravity=np.array([0.3, -0.2, -9.81]))


def batch_states(model: rc.RobotModel, count: int, seed: int):
    rng = np.random.default_rng(seed)
    Q = np.array([rc.random_configuration(model, rng) for _ in range(count)])
    return Q, rng.normal(0.0, 2.0, (count, model.nv)), rng.normal(0.0, 5.0, (count, model.nv - 6))


@pytest.mark.parametrize("robot", ("solo12", "talos", "talos_full"))
def test_batch_is_the_per_call_function(robot: str) -> None:
    """Twin: ``rc.free_floating_dynamics``, sample by sample (mimic grippers too)."""
    model = free_flyer(robot)
    Q, V, A = batch_states(model, SAMPLES, seed=1)
    for gravity in (None, np.array([1.0, 2.0, -3.0])):
        res = rc.free_floating_dynamics_batch(model, Q, V, A, gravity=gravity)
        assert res.base_acceleration.shape == (SAMPLES, 6)
        assert res.tau.shape == (SAMPLES, model.nv - 6)
        for s in range(SAMPLES):
            one = rc.free_floating_dynamics(model, Q[s], V[s], A[s], gravity=gravity)
            assert relative_error(res.base_acceleration[s], one.base_acceleration) < 1e-12
            assert relative_error(res.tau[s], one.tau) < 1e-12


@pytest.mark.parametrize("robot", ("solo12", "talos"))
def test_batch_agrees_with_pinocchio_aba(robot: str) -> None:
    model = free_flyer(robot).without_friction()
    oracle = PinOracle(robot_urdf(robot), model)
    Q, V, A = batch_states(model, SAMPLES, seed=2)
    res = rc.free_floating_dynamics_batch(model, Q, V, A)
    for s in range(SAMPLES):
        ddq = oracle.aba(Q[s], V[s], np.r_[np.zeros(6), res.tau[s]], None)
        assert relative_error(ddq, np.r_[res.base_acceleration[s], A[s]]) < TOL


def test_batch_on_random_multidof_trees() -> None:
    """Spherical and planar joints under the free-flyer root (the kernel tree)."""
    model = random_multidof_tree(3, bodies=7, root="free-flyer", floating=True)
    model = model.replace(armature=np.r_[np.zeros(6), model.armature[6:]])
    Q, V, A = batch_states(model, 30, seed=3)
    res = rc.free_floating_dynamics_batch(model, Q, V, A)
    for s in range(30):
        one = rc.free_floating_dynamics(model, Q[s], V[s], A[s])
        assert relative_error(res.base_acceleration[s], one.base_acceleration) < 1e-12
        assert relative_error(res.tau[s], one.tau) < 1e-12


def test_batch_errors_name_the_sample_joint_or_shape() -> None:
    model = load_robot("solo12", root_joint="free-flyer")
    Q, V, A = batch_states(model, 5, seed=4)
    with pytest.raises(rc.ModelError, match=r"root joint 'FL_HAA' \(revolute\), not a free-flyer"):
        rc.free_floating_dynamics_batch(load_robot("solo12"), Q[:, 7:], V[:, 6:], A[:, :6])
    with pytest.raises(rc.StateError, match=r"qdd_joints has shape \(5, 18\), expected \(5, 12\)"):
        rc.free_floating_dynamics_batch(model, Q, V, V)
    with pytest.raises(rc.StateError, match=r"v has shape \(4, 18\), expected \(5, 18\)"):
        rc.free_floating_dynamics_batch(model, Q, V[:4], A)
    with pytest.raises(rc.StateError, match=r"q has shape \(19,\), expected \(N, 19\)"):
        rc.free_floating_dynamics_batch(model, Q[0], V, A)
    bad = Q.copy()
    bad[3, 6] = 1.01
    with pytest.raises(rc.StateError, match=r"free-flyer joint 'root_joint'.*norm"):
        rc.free_floating_dynamics_batch(model, bad, V, A)
    V[2, 8] = np.nan
    with pytest.raises(rc.StateError, match=r"v of joint 'FL_KFE' is nan"):
        rc.free_floating_dynamics_batch(model, Q, V, A)


@pytest.mark.parametrize("robot", ("solo12", "talos", "tree"))
def test_free_rows_equal_their_twin_free_floating_rows(robot: str) -> None:
    """Twin of ``free_floating_free_rows`` (a free-flyer root over 1-DoF joints, no
    kernel-tree copy per sample, FMA): ``free_floating_rows``, to rounding; a random
    free-flying tree at a random root placement too."""
    from rnea_ros.core.dynamics._floating_base_jit import (
        free_floating_free_rows,
        free_floating_rows,
    )
    from rnea_ros.core.expansion import free_root

    model = free_flying_tree(4) if robot == "tree" else free_flyer(robot)
    assert free_root(model)
    Q, V, A = batch_states(model, SAMPLES, seed=5)
    ours, twin = (np.empty_like(A), np.empty((SAMPLES, 6))), (np.empty_like(A),
                                                                np.empty((SAMPLES, 6)))
    fp, g = model.kernel_floats, model.gravity
    assert free_floating_free_rows(fp, Q, V, A, g, *ours) == -1
    assert free_floating_rows(fp, model.kernel_map, model.kernel_last_row, 6, Q, V, A, g,
                              *twin) == -1
    assert relative_error(ours[0], twin[0]) < 1e-12
    assert relative_error(ours[1], twin[1]) < 1e-12
    Q[7, 3:7] *= 1.001
    assert free_floating_free_rows(fp, Q, V, A, g, *ours) == 7


@pytest.mark.parametrize("robot", ("solo12", "talos"))
def test_fused_per_call_entry_is_the_kernel_tree_entry(robot: str) -> None:
    """Twins: ``free_floating_free_call`` (a free-flyer root over 1-DoF joints, no
    wrench: the per-call face's route) and ``free_floating_call`` (the kernel tree,
    taken by the face when wrenches are given; zero here), equal to rounding."""
    from rnea_ros.core.dynamics.floating_base import _free_flyer_layout

    model = free_flyer(robot)
    assert _free_flyer_layout(model)[1]
    Q, V, A = batch_states(model, 20, seed=5)
    zero = np.zeros((model.nbodies, 6))
    for s in range(20):
        fused = rc.free_floating_dynamics(model, Q[s], V[s], A[s])
        tree = rc.free_floating_dynamics(model, Q[s], V[s], A[s], fext=zero)
        assert relative_error(fused.base_acceleration, tree.base_acceleration) < 1e-12
        assert relative_error(fused.tau, tree.tau) < 1e-12
