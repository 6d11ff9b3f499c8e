"""Every engine is a :class:`Plant`; the simulator node uses the interface and never
tests an engine's class."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from elastic_cases import setup_model

from rnea_ros.core.errors import ParameterError
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import sample_urdf
from rnea_ros.simulation import ElasticSimulator, LoopSimulator, RockingBase, Simulator
from rnea_ros.simulation.mujoco_backend import MujocoSimulator
from rnea_ros.simulation.plant import Capabilities, Plant

NODE = Path(__file__).resolve().parents[2] / "rnea_ros" / "nodes" / "simulator.py"
URDF = sample_urdf("arm7")
MODEL = load_urdf(URDF)


@pytest.mark.parametrize(("engine", "capabilities"), [
    (Simulator, Capabilities(imu=True)),
    (LoopSimulator, Capabilities()),
    (ElasticSimulator, Capabilities()),
    (MujocoSimulator, Capabilities(pushes=True, world=True, imu=True, viewer=True)),
])
def test_every_engine_is_a_plant_with_its_capabilities(engine: type,
                                                       capabilities: Capabilities) -> None:
    assert issubclass(engine, Plant)
    assert engine.capabilities == capabilities


def test_the_simulator_node_never_tests_an_engine_class() -> None:
    tree = ast.parse(NODE.read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert not [ast.unparse(c) for c in calls if c.func.id in ("isinstance", "type")]
    assert not [ast.unparse(c) for c in calls
                if c.func.id in ("getattr", "hasattr") and "sim" in ast.unparse(c.args[0])]
    engines = {"Simulator", "LoopSimulator", "ElasticSimulator", "MujocoSimulator"}
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert not imported & engines


def test_a_rigid_plant_reports_its_state_diagnostics_and_capabilities() -> None:
    sim = Simulator(URDF, MODEL, base=RockingBase(roll_amplitude=0.05, roll_frequency=0.5))
    q0 = np.linspace(-0.3, 0.3, MODEL.nv)
    sim.reset(q0)
    sim.step(np.zeros(MODEL.nv))
    state = sim.joint_state()
    assert state.name == list(MODEL.joint_names)
    assert np.array_equal(state.position, sim.q) and np.array_equal(state.velocity, sim.qd)
    part = sim.joint_state(np.array([2, 0]))
    assert part.name == [MODEL.joint_names[2], MODEL.joint_names[0]]
    assert part.position == [sim.q[2], sim.q[0]]
    values = sim.diagnostics()
    assert values["diverged steps (not taken)"] == "0"
    assert {"steps at a joint limit", "base roll [deg]", "base heave [m]"} <= set(values)
    q, qd, qdd = sim.imu_state()
    assert qd is sim.qd
    assert q is sim.q and qdd is sim.qdd
    assert sim.imu_engine() is sim.engine
    with pytest.raises(ParameterError, match="pushes need parameter 'engine'"):
        sim.apply_wrench("link1", np.zeros(3), np.zeros(3), 0.1, max_force=1.0,
                         max_torque=1.0)
    with pytest.raises(ParameterError, match="viewer"):
        sim.viewer_handles()


def test_an_elastic_plant_publishes_links_then_motors_and_has_no_imu() -> None:
    model, _ = setup_model("two_link_rr", 0, False)
    sim = ElasticSimulator(model, dt=1e-3)
    sim.reset(np.array([0.1, -0.2]))
    sim.step(np.zeros(model.n))
    state = sim.joint_state()
    assert state.name == list(model.links.joint_names + model.motor_names)
    assert len(state.position) == len(state.velocity) == len(state.effort) == len(state.name)
    assert sim.diverged == 0 and sim.instability == ""
    with pytest.raises(ParameterError, match=r"imu\.enable"):
        sim.imu_state()
    assert sim.imu_engine() is None
