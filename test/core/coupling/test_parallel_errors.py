"""Parallel robots: bad descriptions and unreachable or malformed platform states raise
typed errors that name the leg, joint or loop; the shipped samples are what
``parallel_samples.py`` writes and are not offered to the nodes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml
from parallel_oracle import load_sample, sample_path
from parallel_samples import SAMPLES

import rnea_ros.core as rc
from rnea_ros.core.errors import ModelError, StateError
from rnea_ros.samples import shipped_robots


@pytest.fixture(scope="module")
def gs():
    return load_sample("gough_stewart")


@pytest.fixture(scope="module")
def delta():
    return load_sample("delta")


def loops_of(name: str) -> dict:
    return yaml.safe_load(sample_path(name).with_name(f"{name}.loops.yaml").read_text())


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_shipped_samples_are_the_generated_ones(name: str) -> None:
    urdf, loops = SAMPLES[name]()
    assert sample_path(name).read_text() == urdf
    assert sample_path(name).with_name(f"{name}.loops.yaml").read_text() == loops
    assert name in shipped_robots()  # robot:=<name> (config/<name>_*.yaml)
    assert issubclass(rc.ParallelRobotError, ModelError)


def test_structure_found_from_the_tree_and_loop_file(gs, delta) -> None:
    assert gs.active == tuple(f"leg{k}_slide" for k in range(1, 7))
    assert [leg.name for leg in gs.legs] == [f"leg{k}" for k in range(1, 7)]
    assert gs.legs[0].connection == ("leg1_s1", "leg1_s2", "leg1_s3") and not gs.legs[0].cut
    assert [leg.cut for leg in gs.legs[1:]] == [f"leg{k}_sphere" for k in range(2, 7)]
    assert all(leg.joints[leg.active].endswith("_slide") for leg in gs.legs)
    assert gs.platform == "platform" and gs.platform_mass == 4.0 and (gs.nx, gs.nv) == (7, 6)
    # The Delta's platform includes the three brackets: two welded by loops.
    assert delta.platform_mass == pytest.approx(0.25 + 3 * 0.02, abs=1e-15)
    assert [leg.connection for leg in delta.legs] == [
        (f"leg{i}_wrist1", f"leg{i}_wrist2") for i in (1, 2, 3)]
    assert (delta.nx, delta.nv) == (3, 3)


def test_out_of_reach_names_the_leg_and_joint(gs, delta) -> None:
    home = rc.platform_forward_geometry(gs, np.zeros(6))
    high = home + np.r_[0.0, 0.0, 0.5, 0, 0, 0, 0]
    with pytest.raises(rc.ParallelRobotError, match=r"out of reach of leg 'leg1'.*joint "
                       r"'leg1_slide' would be at .*outside its limits \[-0.12, 0.12\]"):
        rc.platform_inverse_dynamics(gs, high, np.zeros(6), np.zeros(6))
    far = np.array([0.0, 0.0, -2.0])
    with pytest.raises(rc.ParallelRobotError, match="out of reach of leg 'leg1': no joint "
                       r"values put its end on its platform anchor at \[0.05, 0.0, -2.0\] m"):
        rc.platform_inverse_geometry(delta, far)
    side = np.array([0.2, 0.3, -0.3])  # legs 1 and 2 reach it, leg 3's arm would rise too far
    with pytest.raises(rc.ParallelRobotError, match="leg 'leg3'.*joint 'leg3_arm' would be at "
                       r"1.42159, outside its limits \[-1, 1.4\]"):
        rc.platform_inverse_dynamics(delta, side, np.zeros(3), np.zeros(3))
    X = np.array([home, high])
    with pytest.raises(rc.ParallelRobotError, match=r"^sample 1: "):
        rc.platform_inverse_dynamics_batch(gs, X, np.zeros((2, 6)), np.zeros((2, 6)))
    with pytest.raises(rc.ParallelRobotError, match=r"did not converge|left the workspace"):
        rc.platform_forward_geometry(gs, np.full(6, 0.5))


def test_malformed_states_are_state_errors(gs, delta) -> None:
    home = rc.platform_forward_geometry(gs, np.zeros(6))
    zero = np.zeros(6)
    with pytest.raises(StateError, match=r"x has shape \(3,\), expected \(7,\)"):
        rc.platform_inverse_dynamics(gs, home[:3], zero, zero)
    with pytest.raises(StateError, match=r"xdd has shape \(3,\), expected \(6,\)"):
        rc.platform_inverse_dynamics(gs, home, zero, zero[:3])
    with pytest.raises(StateError, match="not a unit quaternion"):
        rc.platform_inverse_dynamics(gs, home * np.r_[1, 1, 1, 2, 2, 2, 2], zero, zero)
    bad = zero.copy()
    bad[4] = np.nan
    with pytest.raises(StateError, match=r"xd\[4\] = nan is not finite"):
        rc.platform_inverse_dynamics(gs, home, bad, zero)
    with pytest.raises(StateError, match=r"expected \(2, 3\)"):
        rc.platform_forward_dynamics_batch(delta, np.zeros((2, 3)), np.zeros((2, 3)),
                                           np.zeros((3, 3)))
    with pytest.raises(StateError, match="gravity"):
        rc.platform_inverse_dynamics(gs, home, zero, zero, gravity=[0.0, np.inf, 0.0])


def test_descriptions_that_do_not_fit(gs) -> None:
    tree = gs.tree
    with pytest.raises(rc.ParallelRobotError, match=r"leg ending at link 'leg1_ball3'.* needs "
                       r"legs of three joints.*'leg1_s1'"):
        rc.DeltaRobot.from_model(tree, loops_of("gough_stewart"))
    with pytest.raises(rc.ParallelRobotError, match="'leg1_wrist1', 'leg1_wrist2' join it to "
                       "the platform; a GoughStewart needs 3 revolute joints"):
        rc.GoughStewart.from_model(load_sample("delta").tree, loops_of("delta"))
    loops = loops_of("gough_stewart")
    loops["loops"][0]["type"] = "revolute"
    with pytest.raises(rc.ParallelRobotError, match="loop 'leg2_sphere' is a revolute cut"):
        rc.GoughStewart.from_model(tree, loops)
    loops = loops_of("gough_stewart")
    loops["active"].append("leg3_u1")
    with pytest.raises(rc.ParallelRobotError, match=r"leg 'leg3'.*2 active joints"):
        rc.GoughStewart.from_model(tree, loops)
    loops = loops_of("gough_stewart")
    loops["loops"][0]["type"] = "hinge"
    # A malformed loop file is the shared reader's LoopError (rc.read_loop_file).
    with pytest.raises(rc.LoopError, match="loop 'leg2_sphere': type 'hinge' is not one of"):
        rc.GoughStewart.from_model(tree, loops)
    loops = loops_of("gough_stewart")
    del loops["loops"][4]
    with pytest.raises(rc.ParallelRobotError, match="active joints 'leg6_slide' are in no leg"):
        rc.GoughStewart.from_model(tree, loops)
    loops["active"].remove("leg6_slide")
    with pytest.raises(rc.ParallelRobotError, match=r"'leg6_u1', .* belong to no leg"):
        rc.GoughStewart.from_model(tree, loops)
    loops = loops_of("gough_stewart")
    loops["active"][0] = "leg1_nope"
    with pytest.raises(rc.JointNameError, match="unknown joint 'leg1_nope'"):
        rc.GoughStewart.from_model(tree, loops)
    root = ET.fromstring(sample_path("delta").read_text())
    for element in list(root):
        if element.get("name", "").startswith("leg3_"):
            root.remove(element)
    loops = loops_of("delta")
    del loops["loops"][1]
    loops["active"].remove("leg3_arm")
    with pytest.raises(rc.ParallelRobotError, match="has 2 legs; a DeltaRobot has 3"):
        rc.DeltaRobot.from_model(rc.parse_urdf(ET.tostring(root, encoding="unicode")), loops)
    with pytest.raises(rc.LoopError, match=r"cannot read loop file '/nonexistent\.loops\.yaml'"):
        rc.GoughStewart.from_urdf(sample_path("gough_stewart"), "/nonexistent.loops.yaml")
    with pytest.raises(rc.ParallelRobotError, match="needs its loop file"):
        rc.GoughStewart.from_urdf(sample_path("gough_stewart").read_text())
    moved = loops_of("gough_stewart")
    moved["loops"][0]["frame1"]["xyz"] = [0.01, 0.0, 0.0]
    with pytest.raises(rc.ParallelRobotError, match="leg 'leg2': its end must lie on the axis"):
        rc.GoughStewart.from_model(tree, moved)


@pytest.mark.parametrize("code", [2, 99, -1])
def test_an_unknown_robot_kind_code_fails_loudly(delta, code: int) -> None:
    """The kernels branch on each robot kind (KIND_UPS, KIND_RUU) explicitly: another
    code raises, it never runs the Delta's (RUU) geometry."""
    from rnea_ros.core.coupling import _parallel_jit as pk
    from rnea_ros.core.coupling import _parallel_legs as lk
    from rnea_ros.core.errors import ParallelRobotError

    assert {lk.KIND_UPS, lk.KIND_RUU} == {load_sample(name).KIND
                                          for name in ("delta", "gough_stewart")}
    with pytest.raises(ParallelRobotError, match="unknown robot kind code"):
        lk.leg_geometry_call(code, delta.leg_geometry, 0, np.zeros(3), np.empty(3))
    x, tau = np.zeros(3), np.empty(3)
    with pytest.raises(ParallelRobotError, match="unknown robot kind code"):
        pk.inverse_dynamics_call(delta.leg_floats, delta.leg_geometry, delta.platform_floats,
                                 code, x, x, x, np.array([0.0, 0.0, -9.81]), tau,
                                 np.empty((0, 9)), np.empty((0, 6)))
