"""control/contact/monitor.py: the fused per-state path equals the batch observer and
detector on the same samples (1-DoF models: one compiled call; mimic models: the
unfused classes); a bad state is refused with a typed error and changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import rnea_ros.core as rc
from rnea_ros.control.contact import (
    ContactMonitor,
    DetectionSettings,
    contact_wrench,
    detect,
    residuals,
)
from rnea_ros.samples import load_robot

T = 1e-3


def recording(model: rc.RobotModel, n: int, seed: int) -> tuple[np.ndarray, ...]:
    """A smooth motion, its torques by RNEA, and a step of external torque on the first
    joints from ``t = 0.1 s`` (the drives push back)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * T + 5.0
    w = rng.uniform(1.0, 3.0, model.nv)
    q = np.sin(np.outer(t, w))
    qd = np.cos(np.outer(t, w)) * w
    qdd = -np.sin(np.outer(t, w)) * w * w
    tau = rc.rnea_batch(model, q, qd, qdd)
    tau[100:, :3] -= 4.0
    return t, q, qd, qdd, tau


def settings(nv: int) -> DetectionSettings:
    return DetectionSettings(np.full(nv, 1.0), np.full(nv, 0.05), np.full(nv, 0.01), 0.5,
                             0.003)


@pytest.mark.parametrize(("name", "mimic"), [("arm7", False), ("arm7_gripper", True)])
def test_monitor_equals_the_batch(name: str, mimic: bool) -> None:
    model = load_robot(name, mimic=mimic)
    t, q, qd, qdd, tau = recording(model, 300, 1)
    gains = np.linspace(30.0, 90.0, model.nv)
    r = residuals(model, t, q, qd, tau, gains)
    flag, joint = detect(model, settings(model.nv), t, r, qd, qdd)
    assert flag.any() and not flag[:100].any()
    monitor = ContactMonitor(model, gains, settings(model.nv), max_gap=0.1)
    assert monitor.fused is not mimic
    monitor.warm_up()  # compiles, then forgets: the run below starts fresh
    for k in range(len(t)):
        inside = monitor.update(float(t[k]), q[k], qd[k], tau[k], qdd[k])
        assert np.allclose(monitor.r, r[k], rtol=1e-9, atol=1e-9), k
        assert inside == flag[k]
        contact = monitor.contact()
        assert (contact is None) == (not flag[k])
        if contact is not None:
            assert contact.coordinate == joint[k]
    assert contact is not None and contact.link == "link3" and contact.since >= t[100]


def test_warm_up_leaves_nothing_to_compile_in_a_callback() -> None:
    """After warm_up, updates (with and without qdd), contact() and contact_wrench add no
    compiled specialisation to any numba dispatcher of the package."""
    import numba

    model = load_robot("arm7")
    monitor = ContactMonitor(model, 50.0, settings(model.nv), max_gap=0.1)
    monitor.warm_up()

    def specialisations() -> dict[str, int]:
        import sys
        out = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("rnea_ros"):
                for attr, value in vars(module).items():
                    if isinstance(value, numba.core.registry.CPUDispatcher):
                        out[f"{name}.{attr}"] = len(value.overloads)
        return out

    before = specialisations()
    t, q, qd, qdd, tau = recording(model, 150, 3)
    for k in range(150):
        monitor.update(float(t[k]), q[k], qd[k], tau[k], qdd[k] if k % 2 else None)
    contact = monitor.contact()
    assert contact is not None
    contact_wrench(model, q[-1], contact.link, monitor.r)
    assert specialisations() == before


def test_bad_states_are_refused_and_change_nothing() -> None:
    model = load_robot("arm7")
    t, q, qd, _, tau = recording(model, 50, 2)
    monitor = ContactMonitor(model, 50.0, settings(model.nv), max_gap=0.1)
    for k in range(20):
        monitor.update(float(t[k]), q[k], qd[k], tau[k])
    before = monitor._state.copy()
    bad = tau[20].copy()
    bad[2] = np.nan
    with pytest.raises(rc.StateError, match="tau of joint 'joint3' is not finite"):
        monitor.update(float(t[20]), q[20], qd[20], bad)
    with pytest.raises(rc.StateError, match=r"qd has shape \(3,\)"):
        monitor.update(float(t[20]), q[20], qd[20][:3], tau[20])
    with pytest.raises(rc.StateError, match="does not follow"):
        monitor.update(float(t[10]), q[20], qd[20], tau[20])
    with pytest.raises(rc.StateError, match="sample time inf"):
        monitor.update(np.inf, q[20], qd[20], tau[20])
    assert np.array_equal(monitor._state, before, equal_nan=True)
    with pytest.raises(ValueError, match="read-only"):
        monitor.r[0] = 1.0
    monitor.update(float(t[20]) + 1.0, q[21], qd[21], tau[21])  # a stalled stream
    assert monitor.restarts == 1 and not monitor.r.any()
    monitor.reset()
    assert monitor.restarts == 0 and monitor.contact() is None
