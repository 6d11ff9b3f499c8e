"""control/contact/detection.py and calibration.py: thresholds with hysteresis and a
minimum duration, speed and acceleration terms, isolation to the deepest significant
joint, the contact wrench from ``pinv(J^T)``, contact episodes, calibrated thresholds
written as a parameter fragment; the per-sample detector equals the batch."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

import rnea_ros.core as rc
from rnea_ros.control.contact import (
    ContactDetector,
    DetectionSettings,
    contact_wrench,
    detect,
    episodes,
    propose_thresholds,
    write_thresholds,
)
from rnea_ros.core.errors import StateError
from rnea_ros.samples import load_robot

T = 1e-3


@pytest.fixture(scope="module")
def model() -> rc.RobotModel:
    return load_robot("arm7")


def settings(n: int, **kw: object) -> DetectionSettings:
    base = dict(thresholds=np.full(n, 1.0), velocity=np.zeros(n), acceleration=np.zeros(n),
                release=0.5, min_duration=0.005)
    base.update(kw)
    return DetectionSettings(**base)  # type: ignore[arg-type]


def test_hysteresis_and_minimum_duration(model: rc.RobotModel) -> None:
    n = 400
    t = np.arange(n) * T
    r = np.zeros((n, model.nv))
    r[10:14, 1] = 5.0  # 4 ms spike: shorter than min_duration, no contact
    r[100:200, 1] = 2.0  # a contact ...
    r[200:250, 1] = 0.7  # ... below the threshold but above release: still in contact
    r[250:253, 1] = 0.2  # below release for 3 ms: not yet released
    r[253:260, 1] = 0.7
    qd = np.zeros_like(r)
    flag, joint = detect(model, settings(model.nv), t, r, qd)
    assert not flag[:100].any()
    onset = int(np.flatnonzero(flag)[0])
    assert onset == 105  # 100 + min_duration
    assert flag[105:265].all()
    assert not flag[266:].any() and flag[264]  # released 5 ms after 260
    assert set(joint[flag]) == {1}
    (event,) = episodes(model, settings(model.nv), t, r, qd)
    assert event.start_s == pytest.approx(0.1) and event.end_s == pytest.approx(0.265)
    assert (event.link, event.joint, event.peak_nm) == ("link2", "joint2", 2.0)


def test_speed_and_acceleration_terms_raise_the_thresholds(model: rc.RobotModel) -> None:
    n = 100
    t = np.arange(n) * T
    qd = np.full((n, model.nv), 2.0)
    qdd = np.full((n, model.nv), 10.0)
    r = 0.5 + 0.4 * qd + 0.1 * qdd  # what model errors at speed look like
    assert detect(model, settings(model.nv), t, r, qd, qdd)[0].any()
    s = settings(model.nv, velocity=np.full(model.nv, 0.5), acceleration=np.full(model.nv, 0.12))
    assert not detect(model, s, t, r, qd, qdd)[0].any()
    assert detect(model, s, t, r, qd)[0].any()  # no acceleration given: no term


@pytest.mark.parametrize("link", ["link3", "link5", "link7"])
def test_isolation_and_wrench_of_a_contact_on_a_link(model: rc.RobotModel, link: str) -> None:
    """r = J^T F for a wrench on ``link``: isolated to it; the wrench comes back from
    pinv(J^T) (exactly when the link has six or more joints before it)."""
    rng = np.random.default_rng(3)
    q = 0.5 * (model.lower_limit + model.upper_limit) + rng.uniform(-0.5, 0.5, model.nv)
    F = np.array([20.0, -10.0, 15.0, 2.0, -1.0, 1.5])
    J = rc.frame_jacobian(model, q, link, "LOCAL_WORLD_ALIGNED")
    tau = J.T @ F
    n = 60
    t = np.arange(n) * T
    r = np.outer(1.0 - np.exp(-t / 0.01), tau) + rng.normal(0.0, 0.01, (n, model.nv))
    s = settings(model.nv, thresholds=np.full(model.nv, 0.1))
    flag, joint = detect(model, s, t, r, np.zeros_like(r))
    assert flag[-1] and model.body_names[int(model.joint_body[joint[-1]])] == link
    estimate = contact_wrench(model, q, link, tau)
    assert np.allclose(J.T @ estimate, tau, atol=1e-9)
    if int(link[-1]) >= 6:
        assert np.allclose(estimate, F, atol=1e-8)
    world = contact_wrench(model, q, link, tau, "LOCAL")
    R, _ = rc.link_pose(model, q, link)
    assert np.allclose(R @ world[:3], estimate[:3], atol=1e-8) or int(link[-1]) < 6


@pytest.mark.parametrize("link", ["link3", "link4", "link5", "link7"])
def test_pure_force_at_a_point_comes_back_in_every_reference(model: rc.RobotModel,
                                                             link: str) -> None:
    """A 30 N force at the link's centre of mass: with ``point`` its joint torques come
    back, and the force exactly where the point's Jacobian has rank 3 (link4 on: on
    arm7's link3 it has rank 2, one direction unseen), in all three references, as
    ``[f; c x f]``; the minimum-norm wrench of link4 (four joints) is mostly moment."""
    rng = np.random.default_rng(5)
    q = 0.5 * (model.lower_limit + model.upper_limit) + rng.uniform(-0.5, 0.5, model.nv)
    body = model.body_names.index(link)
    R, x = rc.body_poses(model, q)
    com = model.com[body]
    f = 30.0 * np.array([0.3, -0.5, 0.81]) / np.linalg.norm([0.3, -0.5, 0.81])  # world
    c = R[body] @ com  # the point from the link origin, world axes
    J = rc.frame_jacobian(model, q, link, "LOCAL_WORLD_ALIGNED")
    tau = J.T @ np.r_[f, np.cross(c, f)]
    est = contact_wrench(model, q, link, tau, point=com)
    assert np.allclose(J.T @ est, tau, atol=1e-8 * 30.0)
    if link == "link3":
        return
    assert np.allclose(est, np.r_[f, np.cross(c, f)], atol=1e-8 * 30.0)
    local = contact_wrench(model, q, link, tau, "LOCAL", point=com)
    fl = R[body].T @ f
    assert np.allclose(local, np.r_[fl, np.cross(com, fl)], atol=1e-8 * 30.0)
    world = contact_wrench(model, q, link, tau, "WORLD", point=com)
    xw = x[body] + c
    assert np.allclose(world, np.r_[f, np.cross(xw, f)], atol=1e-8 * 30.0)
    if link == "link4":
        assert np.linalg.norm(contact_wrench(model, q, link, tau)[:3]) < 0.5 * 30.0
    with pytest.raises(StateError, match=f"contact point on '{link}'"):
        contact_wrench(model, q, link, tau, point=[0.0, np.nan, 0.0])


def test_per_sample_detector_equals_the_batch(model: rc.RobotModel) -> None:
    rng = np.random.default_rng(0)
    n = 500
    t = np.arange(n) * T
    r = rng.normal(0.0, 0.2, (n, model.nv))
    r[100:300, :5] += 3.0
    qd = rng.normal(0.0, 1.0, (n, model.nv))
    s = settings(model.nv, velocity=np.full(model.nv, 0.1))
    flag, joint = detect(model, s, t, r, qd)
    det = ContactDetector(model, s)
    seen = [det.update(float(t[k]), r[k], qd[k]) for k in range(n)]
    assert [c is not None for c in seen] == list(flag)
    assert [c.coordinate for c in seen if c is not None] == list(joint[flag])
    assert {c.link for c in seen if c is not None} == {"link5"}
    det.reset()
    assert det.update(1.0, r[0], qd[0]) is None


def test_bad_settings_and_samples(model: rc.RobotModel) -> None:
    z = np.zeros((3, model.nv))
    t = np.arange(3) * T
    thresholds = np.ones(model.nv)
    thresholds[4] = 0.0
    with pytest.raises(rc.ParameterError, match=r"contact.thresholds of joint 'joint5'"):
        detect(model, settings(model.nv, thresholds=thresholds), t, z, z)
    with pytest.raises(rc.ParameterError, match=r"contact.velocity: 2 values for the 7"):
        detect(model, settings(model.nv, velocity=np.ones(2)), t, z, z)
    with pytest.raises(rc.ParameterError, match=r"contact.release 1.5 must be in \(0, 1\]"):
        detect(model, settings(model.nv, release=1.5), t, z, z)
    with pytest.raises(rc.ParameterError, match="min_duration"):
        ContactDetector(model, settings(model.nv, min_duration=math.nan))
    with pytest.raises(rc.StateError, match="r must be finite"):
        detect(model, settings(model.nv), t, np.full_like(z, np.nan), z)
    with pytest.raises(rc.StateError, match="contact detector"):
        ContactDetector(model, settings(model.nv)).update(0.0, np.zeros(3), np.zeros(7))


# ------------------------------------------------------------------- calibration
def test_proposed_thresholds_and_their_parameter_fragment(tmp_path: Path) -> None:
    r = np.array([[0.1, -0.4, 0.0], [-0.3, 0.2, 0.001]])
    qd = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    th = propose_thresholds(r, 1.5, floor=0.01)
    assert np.allclose(th, [0.45, 0.6, 0.01])
    th_v = propose_thresholds(r, 1.5, floor=0.01, qd=qd, velocity=[0.0, 0.3, 0.0])
    assert np.allclose(th_v, [0.45, 0.3, 0.01])  # joint 2: max(0.4 - 0.3, 0.2) * 1.5
    path = write_thresholds(tmp_path / "contact.yaml", th, comment="arm7, margin 1.5")
    text = path.read_text()
    assert text.startswith("# arm7, margin 1.5\n")
    data = yaml.safe_load(text)
    assert data == {"/**": {"ros__parameters": {"contact.thresholds": [0.45, 0.6, 0.01]}}}
    with pytest.raises(rc.ParameterError, match="exists: pass force=True"):
        write_thresholds(path, th)
    write_thresholds(path, 2 * th, force=True)
    assert yaml.safe_load(path.read_text())["/**"]["ros__parameters"][
        "contact.thresholds"] == [0.9, 1.2, 0.02]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contact.yaml"]
    with pytest.raises(rc.ParameterError, match=r"margin 0.5 must be finite and >= 1"):
        propose_thresholds(r, 0.5, floor=0.01)
    with pytest.raises(rc.ParameterError, match="does not exist"):
        write_thresholds(tmp_path / "nope" / "c.yaml", th)
