"""Configuration-space operations (core/model/configuration.py) on real multi-DoF
models, against Pinocchio's ``neutral``/``integrate``/``difference``/
``randomConfiguration`` on the same robot: Solo12, Talos and ANYmal C with a
free-flyer root, the PR2 with a free-flyer root (continuous joints: ours keep one
angle, Pinocchio's a ``(cos, sin)`` pair, converted here), Talos with its mimic
grippers (followers are not coordinates), arm7 on a planar root, and a
modified-DH arm with a spherical joint (Pinocchio's model built joint by joint)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin
import pytest
from multidof import to_pinocchio

import rnea_ros.core as rc
from rnea_ros.core.model import configuration as cfg
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, robot_urdf

SAMPLES = 300
TOL = 1e-12

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@dataclass
class Pair:
    """Our model and Pinocchio's, with the maps between their coordinates."""

    model: rc.RobotModel
    pm: Any
    idx_q: np.ndarray  # Pinocchio's idx_q / nq / idx_v of each of our joints
    nq: np.ndarray
    idx_v: np.ndarray  # (nv,) Pinocchio's index of each of our velocity coordinates
    followers: list[tuple[int, int, float, float]]  # (pin idx_q, our leader idx_q, m, o)
    G: np.ndarray  # (pin nv, nv): Pinocchio's velocity from ours

    def config(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nq)
        for j, (iq, n) in enumerate(zip(self.idx_q, self.nq, strict=True)):
            k = int(self.model.idx_q[j])
            if n == 2 and self.model.joint_nq[j] == 1:  # continuous: angle -> (cos, sin)
                out[iq], out[iq + 1] = math.cos(q[k]), math.sin(q[k])
            else:
                out[iq:iq + n] = q[k:k + n]
        for iq_f, iq_l, m, o in self.followers:
            out[iq_f] = m * q[iq_l] + o
        return out

    def ours(self, pq: np.ndarray) -> np.ndarray:
        out = np.empty(self.model.nq)
        for j, (iq, n) in enumerate(zip(self.idx_q, self.nq, strict=True)):
            k = int(self.model.idx_q[j])
            if n == 2 and self.model.joint_nq[j] == 1:  # (cos, sin) -> angle
                out[k] = math.atan2(pq[iq + 1], pq[iq])
            else:
                out[k:k + n] = pq[iq:iq + n]
        return out

    def tangent(self, v: np.ndarray) -> np.ndarray:
        return self.G @ v


def urdf_pair(name: str, root: str | None, mimic: bool = False) -> Pair:
    model = load_robot(name, root_joint=root, mimic=mimic)
    oracle = PinocchioOracle(robot_urdf(name), model, mimic="eliminate")
    pm = oracle.pm
    jid = [pm.getJointId(j) for j in model.joint_names]
    idx_v = np.concatenate([np.arange(pm.joints[j].idx_v, pm.joints[j].idx_v + pm.joints[j].nv)
                            for j in jid])
    G = np.zeros((pm.nv, model.nv))
    G[idx_v, np.arange(model.nv)] = 1.0
    followers = []
    for fname, m in model.mimic_joints.items():
        joint = pm.joints[pm.getJointId(fname)]
        leader = model.joint_names.index(m.leader)
        G[joint.idx_v, model.idx_v[leader]] = m.multiplier
        followers.append((joint.idx_q, int(model.idx_q[leader]), m.multiplier, m.offset))
    return Pair(model, pm, np.array([pm.joints[j].idx_q for j in jid]),
                np.array([pm.joints[j].nq for j in jid]), idx_v, followers, G)


def mdh_spherical_pair() -> Pair:
    """A 4-joint modified-DH arm with a ball joint (Khalil's three concurrent axes as one
    joint) in the middle, and a prismatic joint."""
    rows = [rc.MDHLink(sigma=0, alpha=0.0, d=0.0, r=0.3, mass=2.0, com=(0, 0, 0.1),
                       inertia=(0.03, 0.03, 0.02)),
            rc.MDHLink(sigma=0, alpha=0.3, d=0.2, r=0.1, joint_type="spherical", mass=1.0,
                       com=(0.0, 0.0, 0.2), inertia=(0.02, 0.02, 0.01)),
            rc.MDHLink(sigma=1, alpha=-np.pi / 2, d=0.3, mass=0.5, com=(0.1, 0, 0),
                       inertia=(0.01, 0.01, 0.01), lower_limit=-0.2, upper_limit=0.4),
            rc.MDHLink(sigma=0, alpha=np.pi / 2, d=0.1, mass=0.3, com=(0, 0.05, 0),
                       inertia=(0.004, 0.004, 0.002), lower_limit=-2.0, upper_limit=1.0)]
    model = rc.from_mdh(rows, name="ball_arm")
    pm, jid = to_pinocchio(model)
    pm.lowerPositionLimit[:] = -np.inf
    pm.upperPositionLimit[:] = np.inf
    for j in range(model.njoints):
        joint = pm.joints[jid[j]]
        if joint.nq == 1:
            pm.lowerPositionLimit[joint.idx_q] = model.lower_limit[model.idx_q[j]]
            pm.upperPositionLimit[joint.idx_q] = model.upper_limit[model.idx_q[j]]
    idx_v = np.concatenate([np.arange(pm.joints[j].idx_v, pm.joints[j].idx_v + pm.joints[j].nv)
                            for j in jid])
    G = np.zeros((pm.nv, model.nv))
    G[idx_v, np.arange(model.nv)] = 1.0
    return Pair(model, pm, np.array([pm.joints[j].idx_q for j in jid]),
                np.array([pm.joints[j].nq for j in jid]), idx_v, [], G)


CASES = {
    "solo12": lambda: urdf_pair("solo12", "free-flyer"),
    "talos": lambda: urdf_pair("talos", "free-flyer"),
    "anymal_c": lambda: urdf_pair("anymal_c", "free-flyer"),
    "pr2": lambda: urdf_pair("pr2", "free-flyer"),  # continuous joints
    "talos_full": lambda: urdf_pair("talos_full", "free-flyer", mimic=True),  # mimic grippers
    "arm7_planar": lambda: urdf_pair("arm7", "planar"),
    "mdh_spherical": mdh_spherical_pair,
}


@pytest.fixture(scope="module", params=list(CASES))
def pair(request: pytest.FixtureRequest) -> Pair:
    return CASES[request.param]()


def same(model: rc.RobotModel, a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference of two configurations, quaternions up to sign."""
    worst = 0.0
    for j in cfg.joint_layout(model):
        x, y = a[j.idx_q:j.idx_q + j.nq], b[j.idx_q:j.idx_q + j.nq]
        if j.kind in ("free-flyer", "spherical") and float(x[-4:] @ y[-4:]) < 0.0:
            y = np.r_[y[:-4], -y[-4:]]
        worst = max(worst, float(np.abs(x - y).max()))
    return worst


def wrapped(model: rc.RobotModel, d: np.ndarray) -> np.ndarray:
    """A difference with continuous joints' angles wrapped into (-pi, pi] (Pinocchio's SO(2))."""
    out = d.copy()
    for j in cfg.joint_layout(model):
        if j.kind == "continuous":
            out[j.idx_v] = math.remainder(out[j.idx_v], 2 * math.pi)
    return out


def test_layout_is_the_models_and_pinocchios(pair: Pair) -> None:
    m, pm = pair.model, pair.pm
    layout = cfg.joint_layout(m)
    assert [j.name for j in layout] == list(m.joint_names)  # no mimic follower
    assert not set(m.mimic_joints) & {j.name for j in layout}
    assert [(j.idx_q, j.idx_v, j.nq, j.nv) for j in layout] == [
        (m.idx_q[k], m.idx_v[k], m.joint_nq[k], m.joint_nv[k]) for k in range(m.njoints)]
    continuous = sum(j.kind == "continuous" for j in layout)
    assert (m.nq + continuous + len(m.mimic_joints), m.nv + len(m.mimic_joints)) == (pm.nq, pm.nv)
    for j, n in zip(layout, pair.nq, strict=True):  # same sizes, but continuous joints
        assert j.nq == (1 if j.kind == "continuous" else n)
    for j in layout:  # a 1-DoF joint's limits are the nq-sized arrays at idx_q
        assert (j.lower, j.upper) == (m.lower_limit[j.idx_q], m.upper_limit[j.idx_q])
    if m.joint_types[0] in ("free-flyer", "planar"):
        assert layout[0].name == "root_joint" and (layout[0].idx_q, layout[0].idx_v) == (0, 0)


def test_neutral_integrate_difference_match_pinocchio(pair: Pair) -> None:
    m, pm = pair.model, pair.pm
    rng = np.random.default_rng(4)
    np.testing.assert_array_equal(pair.config(cfg.neutral(m)), pin.neutral(pm))
    planar = [j for j in cfg.joint_layout(m) if j.kind == "planar"]
    worst = {"integrate": 0.0, "difference": 0.0, "roundtrip": 0.0}
    for k in range(SAMPLES):
        q0, q1 = cfg.random_configuration(m, rng), cfg.random_configuration(m, rng)
        v = rng.normal(size=m.nv) * (0.1, 1.0, 3.0)[k % 3]
        ours = cfg.integrate(m, q0, v)
        theirs = pin.integrate(pm, pair.config(q0), pair.tangent(v))
        worst["integrate"] = max(worst["integrate"],
                                 float(np.abs(pair.config(ours) - theirs).max()))
        d = cfg.difference(m, q0, q1)
        worst["roundtrip"] = max(worst["roundtrip"], same(m, cfg.integrate(m, q0, d), q1))
        if any(abs(d[j.idx_v + 2]) < 1e-2 for j in planar):
            continue  # Pinocchio's SE(2) log cancels there (test_configuration.py)
        theirs_d = pin.difference(pm, pair.config(q0), pair.config(q1))
        worst["difference"] = max(worst["difference"], float(np.abs(
            pair.tangent(wrapped(m, d)) - theirs_d).max()))
    assert max(worst.values()) < TOL, worst


def test_random_configurations_are_pinocchio_configurations(pair: Pair) -> None:
    """Ours are normalised Pinocchio configurations within its position limits; Pinocchio's
    (base box +-1 m) are valid configurations of ours, and our random 1-DoF coordinates
    fill their limits (indexed by idx_q: the limits are nq-sized)."""
    m, pm = pair.model, pair.pm
    rng = np.random.default_rng(9)
    Q = np.array([cfg.random_configuration(m, rng) for _ in range(SAMPLES)])
    finite = (np.abs(pm.lowerPositionLimit) < 1e10) & (np.abs(pm.upperPositionLimit) < 1e10)
    lo = np.where(finite, pm.lowerPositionLimit, -1.0)  # Pinocchio's "none" is +-DBL_MAX
    hi = np.where(finite, pm.upperPositionLimit, 1.0)
    for q in Q[:50]:
        pq = pair.config(q)
        assert pin.isNormalized(pm, pq, 1e-12)
        assert np.all(pq[finite] >= pm.lowerPositionLimit[finite] - 1e-15)
        assert np.all(pq[finite] <= pm.upperPositionLimit[finite] + 1e-15)
        theirs = pin.randomConfiguration(pm, lo, hi)
        back = pair.ours(theirs)
        np.testing.assert_array_equal(rc.check_configuration(m, back, tol=1e-12), back)
        coordinates = np.ones(pm.nq, dtype=bool)  # Pinocchio's draws its followers freely
        coordinates[[f[0] for f in pair.followers]] = False
        assert np.abs(pair.config(back) - theirs)[coordinates].max() < 1e-15
    for j in cfg.joint_layout(m):
        if j.nq == 1 and math.isfinite(j.lower) and math.isfinite(j.upper) and j.upper > j.lower:
            x = Q[:, j.idx_q]
            assert x.min() >= j.lower and x.max() <= j.upper
            # uniform: the samples spread over the interval
            assert x.max() - x.min() > 0.8 * (j.upper - j.lower), j.name


def test_check_configuration_names_the_joint(pair: Pair) -> None:
    m = pair.model
    q = cfg.random_configuration(m, 0)
    rc.check_configuration(m, q)
    multi = [j for j in cfg.joint_layout(m) if j.nq > 1]
    assert multi
    for j in multi:
        bad = q.copy()
        lo = j.idx_q + (2 if j.kind == "planar" else j.nq - 4)
        hi = j.idx_q + (4 if j.kind == "planar" else j.nq)
        bad[lo:hi] *= 1.01
        what = r"\(cos, sin\) pair" if j.kind == "planar" else r"quaternion \[x, y, z, w\]"
        with pytest.raises(rc.StateError, match=rf"joint '{j.name}' \({j.kind}\): {what} .* "
                                                r"norm 1\.01\b"):
            rc.check_configuration(m, bad)
    one = next(j for j in cfg.joint_layout(m) if j.nq == 1)
    bad = q.copy()
    bad[one.idx_q] = np.inf
    with pytest.raises(rc.StateError, match=rf"q of joint '{one.name}' is \[inf\]: not finite"):
        rc.check_configuration(m, bad)
