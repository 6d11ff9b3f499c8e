"""control/contact/reaction.py: the controller node's contact supervision without ROS —
detection on a recorded push, the hold/float/none reactions (bumpless, every step within
the slew limit, latched until re-armed), efforts by joint name, the families that refuse
contact monitoring, and the parameter table's refusal of non-finite or huge thresholds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.control.config import CONTROLLER_PARAMETERS, default_values
from rnea_ros.control.config_rules import contact_in_family
from rnea_ros.control.contact.detection import Contact
from rnea_ros.control.contact.reaction import ContactSupervisor
from rnea_ros.core.dynamics.rnea import gravity_torques
from rnea_ros.core.errors import ParameterError
from rnea_ros.parameters import parameter_set
from rnea_ros.samples import load_robot, sample_urdf

T = 1e-3
RATE = 1000.0  # [N m/s] the slew limit
PUSH = 150  # the sample the external torque starts at


def params(**contact: Any) -> Any:
    values = default_values()
    values.update({"contact.enable": True, "contact.thresholds": [1.0],
                   "contact.min_duration": 0.002, "contact.observer_gain": 50.0})
    values.update({f"contact.{k}": v for k, v in contact.items()})
    return parameter_set(CONTROLLER_PARAMETERS, values)


def motion(model: rc.RobotModel, n: int) -> tuple[np.ndarray, ...]:
    """A smooth motion, the drives' torques by RNEA, and +4 N m of external torque on
    joints 0-2 from sample PUSH on (the drives' torques drop by as much)."""
    t = np.arange(n) * T + 2.0
    w = np.linspace(1.0, 2.0, model.nv)
    q = 0.3 * np.sin(np.outer(t, w))
    qd = 0.3 * np.cos(np.outer(t, w)) * w
    qdd = -0.3 * np.sin(np.outer(t, w)) * w * w
    tau = rc.rnea_batch(model, q, qd, qdd)
    tau[PUSH:, :3] -= 4.0
    return t, q, qd, tau


def supervisor(model: rc.RobotModel, **contact: Any) -> ContactSupervisor:
    nv = model.nv
    return ContactSupervisor(model, params(**contact), range(nv), np.full(nv, 500.0),
                             np.full(nv, RATE))


def run(model: rc.RobotModel, sup: ContactSupervisor, n: int
        ) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """Each state's step, the commands published (after the reaction), the commands the
    controller computed (its torques)."""
    t, q, qd, tau = motion(model, n)
    steps, published = [], np.empty((n, model.nv))
    for k in range(n):
        command = tau[k].copy()
        steps.append(sup.update(float(t[k]), q[k], qd[k], command))
        published[k] = command
    return steps, published, tau


def test_push_detected_and_isolated_without_reaction() -> None:
    model = load_robot("arm7")
    sup = supervisor(model, reaction="none")
    steps, published, tau = run(model, sup, 400)
    onset = next(k for k, s in enumerate(steps) if s.started)
    assert PUSH < onset <= PUSH + 30  # within 30 ms
    assert not any(s.contact for s in steps[:PUSH])  # no false contact before the push
    assert steps[onset].contact is not None and steps[onset].contact.joint in \
        {model.joint_of_coordinate(j) for j in range(3)}
    assert np.allclose(sup.monitor.r[:3], 4.0, atol=0.4)  # r ~ tau_ext
    assert not any(s.reacting for s in steps) and np.array_equal(published, tau)
    assert sup.contacts == 1 and sup.latched is None


@pytest.mark.parametrize("reaction", ["hold", "float"])
def test_reaction_bumpless_slew_limited_latched_until_rearm(reaction: str) -> None:
    model = load_robot("arm7")
    sup = supervisor(model, reaction=reaction, hold_damping=[5.0])
    steps, published, tau = run(model, sup, 700)
    onset = next(k for k, s in enumerate(steps) if s.started)
    assert np.array_equal(published[:onset], tau[:onset])  # untouched before the contact
    assert all(s.reacting for s in steps[onset:])  # latched, contact or not
    jumps = np.abs(np.diff(published[onset - 1:], axis=0))
    assert jumps.max() <= RATE * T * (1 + 1e-9)  # every step within the slew limit
    # it converges to the reaction's torque at the current pose
    _, q, qd, _ = motion(model, 700)
    gains = sup.hold_gains(q[-1])  # 5 N m s/rad, less on the wrist (M_jj / (4 T))
    assert np.all(gains <= 5.0) and np.all(gains > 0.0)
    target = gravity_torques(model, q[-1]) - (gains * qd[-1] if reaction == "hold" else 0.0)
    assert np.allclose(published[-1], target, atol=RATE * T)
    assert not np.allclose(published[-1], tau[-1], atol=0.5)  # the reaction took over
    assert "re-armed" in sup.rearm() and sup.latched is None
    command = tau[-1].copy()
    step = sup.update(3.0, q[-1], qd[-1], command)
    assert not step.reacting and np.array_equal(command, tau[-1])


def test_hold_stops_a_moving_arm_without_chatter() -> None:
    """Our plant (semi-implicit Euler on rc.aba, 1 kHz, each torque held one period):
    arm7 moving at 0.5 rad/s on every joint, ``hold`` with D = 20 N m s/rad latched. The
    damping is capped at M_jj / (4 T) (arm7's wrist: M_77 = 0.005 kg m^2, D T / M_77 = 4
    would diverge); no joint's speed chatters (changes sign every period), all are below
    a fifth of 0.5 rad/s after 0.2 s, every command step within the slew limit."""
    model = load_robot("arm7")
    sup = supervisor(model, reaction="hold", hold_damping=[20.0])
    q = 0.5 * (model.lower_limit + model.upper_limit)
    qd = np.full(model.nv, 0.5)
    t0 = 5.0
    command = gravity_torques(model, q)
    sup.observe(t0, q, qd, command)  # the last command before the contact
    sup.latched = Contact(t0, "link7", "joint7", 6, 1.0)  # (as a detected contact would)
    speeds, commands = [], [command.copy()]
    for k in range(1, 301):
        command = np.zeros(model.nv)
        sup.update(t0 + k * T, q, qd, command)
        commands.append(command.copy())
        qd = qd + T * rc.aba(model, q, qd, command)
        q = q + T * qd
        speeds.append(qd.copy())
    v = np.array(speeds)
    assert np.abs(np.diff(np.array(commands), axis=0)).max() <= RATE * T * (1 + 1e-9)
    flips = (np.diff(np.sign(v), axis=0) != 0).sum(axis=0)
    print(f"max |qd| after 0.2 s: {np.abs(v[200:]).max():.4f} rad/s; sign changes {flips}")
    assert flips.max() <= 3  # coupling may reverse a joint; chatter flips every period
    assert np.abs(v[200:]).max() < 0.2 * 0.5  # damped: M_11 / D = 75 ms on joint 1
    gains = sup.hold_gains(q)
    inertia = np.diagonal(rc.mass_matrix(model, q))
    assert np.allclose(gains, np.minimum(20.0, inertia / (4 * T)))
    assert gains[-1] < 2.0 and gains[0] == 20.0


def test_layouts_without_one_coordinate_per_joint_refused() -> None:
    """The node's merged state holds one position per joint name: a floating (free-flyer)
    or planar root cannot be monitored, refused naming the joint; 1-DoF models map the
    merged state to ``q``/``qd`` views."""
    text = sample_urdf("two_link_rr").read_text()
    for root in ("free-flyer", "planar"):
        model = rc.parse_urdf(text, root_joint=root)
        with pytest.raises(ParameterError, match="joint 'root_joint' has nq = "):
            supervisor(model)
    model = load_robot("two_link_rr")
    sup = supervisor(model)
    merged = np.arange(4.0)  # (2 joints, 2 elastic motors)
    q, qd = sup.state(merged, -merged)
    assert np.array_equal(q, [0.0, 1.0]) and np.array_equal(qd, [-0.0, -1.0])


def test_measured_efforts_by_joint_name() -> None:
    model = load_robot("arm7")
    sup = supervisor(model, reaction="none", effort_source="measured")
    names = [model.joint_of_coordinate(j) for j in range(model.nv)][::-1]
    t, q, qd, tau = motion(model, 300)
    started = False
    for k in range(300):
        effort = sup.effort(names, list(tau[k][::-1]))
        assert effort is not None and np.array_equal(effort, tau[k])
        started |= sup.update(float(t[k]), q[k], qd[k], np.zeros(model.nv), effort).started
    assert started
    assert sup.effort(names[:-1], list(tau[0][:-1])) is None  # a joint without effort
    command = np.ones(model.nv)
    sup.update(3.0, q[0], qd[0], command, None)  # no efforts: counted, not a crash
    assert sup.rejected == 1 and "effort" in sup.last_error


def test_non_finite_state_counted_not_raised() -> None:
    model = load_robot("arm7")
    sup = supervisor(model)
    q = rc.neutral(model)
    sup.update(1.0, q, np.zeros(model.nv), np.zeros(model.nv))
    bad = q.copy()
    bad[2] = np.nan
    step = sup.update(1.001, bad, np.zeros(model.nv), np.zeros(model.nv))
    assert sup.rejected == 1 and "not finite" in sup.last_error and step.contact is None


@pytest.mark.parametrize(("elastic", "loops", "parallel", "words"), [
    (object(), None, "", "elastic-joint"), (None, object(), "", "closed-loop"),
    (None, object(), "delta", "parallel")])
def test_families_without_contact_refuse_enable(elastic: Any, loops: Any, parallel: str,
                                                words: str) -> None:
    values = {**default_values(), "contact.enable": True, "loops.parallel": parallel}
    with pytest.raises(ParameterError, match=f"contact.enable.*{words}"):
        contact_in_family(values, elastic, loops)
    contact_in_family({**values, "contact.enable": False}, elastic, loops)
    contact_in_family({**values, "loops.parallel": ""}, None, None)  # serial: fine


@pytest.mark.parametrize(("name", "value"), [
    ("contact.thresholds", [float("nan")]), ("contact.thresholds", [1e12]),
    ("contact.thresholds", [0.0]), ("contact.observer_gain", float("inf")),
    ("contact.observer_gain", 1e9), ("contact.min_duration", 100.0),
    ("contact.hysteresis", 0.0), ("contact.hold_damping", [1e9]),
    ("contact.reaction", "explode"), ("contact.effort_source", "guessed")])
def test_parameter_attacks_refused_by_the_table(name: str, value: Any) -> None:
    refusal = CONTROLLER_PARAMETERS[name].refusal(name, value)
    assert refusal is not None and name in refusal
