"""The papers' own robots, each in urdf/ and built from its (M)DH table:
Barman 2020 two-link RR (tables 4.1-4.2) and PR (4.3-4.4), Guarino Lo Bianco
2009 Stanford arm (tables I-II, modified DH). Data and provenance:
test/data/*.yaml and the URDF headers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from oracle import PinOracle, random_states, relative_error

from rnea_ros.core.dynamics.crba import mass_matrix
from rnea_ros.core.dynamics.kinematics import link_pose
from rnea_ros.core.dynamics.rnea import gravity_torques, rnea, rnea_with_wrenches
from rnea_ros.core.model.dh import DHLink, from_dh
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.samples import sample_urdf

DATA = Path(__file__).resolve().parents[2] / "data"
BARMAN = yaml.safe_load((DATA / "barman_two_link.yaml").read_text())
STANFORD = yaml.safe_load((DATA / "stanford_arm.yaml").read_text())
L, LC, MASS, IZZ = 0.4, 0.2, 0.5, 0.1  # Barman table 4.2


def barman_dh(name: str):
    rows = [DHLink(**row) for row in BARMAN[name]["rows"]]
    return from_dh(rows, name=name)


def stanford_mdh():
    return from_mdh([MDHLink(**row) for row in STANFORD["rows"]], name="stanford_arm",
                    gravity=STANFORD["gravity"])


def models():
    return [("two_link_rr", barman_dh("two_link_rr")), ("two_link_pr", barman_dh("two_link_pr")),
            ("stanford_arm", stanford_mdh())]


@pytest.mark.parametrize(("name", "table_model"), models(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_table_and_urdf_give_identical_dynamics(name: str, table_model) -> None:
    urdf_model = load_urdf(sample_urdf(name))
    rng = np.random.default_rng(0)
    gravity = rng.normal(0, 9.81, 3)  # any direction: exercises every frame
    q, qd, qdd = random_states(urdf_model, 500)
    for s in zip(q, qd, qdd, strict=True):
        a = rnea(table_model, *s, gravity=gravity)
        b = rnea(urdf_model, *s, gravity=gravity)
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(b).max(), 1.0)
        assert np.allclose(mass_matrix(table_model, s[0]), mass_matrix(urdf_model, s[0]),
                           rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["two_link_rr", "two_link_pr", "stanford_arm"])
def test_sample_urdf_agrees_with_pinocchio(name: str) -> None:
    model = load_urdf(sample_urdf(name))
    oracle = PinOracle(sample_urdf(name), model)
    q, qd, qdd = random_states(model, 1000)
    ours = np.array([rnea(model, *s) for s in zip(q, qd, qdd, strict=True)])
    ref = np.array([oracle.rnea(*s) for s in zip(q, qd, qdd, strict=True)])
    assert relative_error(ours, ref) <= 1e-9


def planar_2r_closed_form(q, qd, qdd):
    """Lagrange equations of a planar 2R arm, COM at LC from each joint, I about the COM."""
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    m11 = IZZ + MASS * LC**2 + IZZ + MASS * (L**2 + LC**2 + 2 * L * LC * c2)
    m12 = IZZ + MASS * (LC**2 + L * LC * c2)
    m22 = IZZ + MASS * LC**2
    k = MASS * L * LC * s2
    return np.array([m11 * qdd[0] + m12 * qdd[1] - k * (2 * qd[0] * qd[1] + qd[1] ** 2),
                     m12 * qdd[0] + m22 * qdd[1] + k * qd[0] ** 2])


def test_barman_rr_matches_its_lagrange_equations() -> None:
    """Horizontal plane (gravity along the joint axes): no gravity torque."""
    model = barman_dh("two_link_rr")
    q, qd, qdd = random_states(model, 500)
    for s in zip(q, qd, qdd, strict=True):
        assert np.allclose(rnea(model, *s), planar_2r_closed_form(*s), rtol=1e-12, atol=1e-12)
    assert np.abs(gravity_torques(model, q[0])).max() < 1e-15


def test_barman_rr_dh_frames_follow_eq_2_8() -> None:
    """DH frame 2 (the tip) at (L1 c1 + L2 c12, L1 s1 + L2 s12, 0)."""
    model = barman_dh("two_link_rr")
    for q in random_states(model, 20)[0]:
        _, tip = link_pose(model, q, "link2_frame")
        expected = [L * np.cos(q[0]) + L * np.cos(q.sum()),
                    L * np.sin(q[0]) + L * np.sin(q.sum()), 0.0]
        assert np.allclose(tip, expected, atol=1e-14)


def point_acc(r: float, phi: float, dphi: float, ddphi: float) -> np.ndarray:
    """Second time derivative of r (cos phi, sin phi, 0)."""
    c, s = np.cos(phi), np.sin(phi)
    return r * (ddphi * np.array([-s, c, 0.0]) - dphi**2 * np.array([c, s, 0.0]))


def test_barman_rr_internal_joint_force_balances_the_arm() -> None:
    """Barman eq. 2.1 summed over the chain: the force through joint 1 is
    sum_i m_i (a_ci - g) -- the internal reaction force of his figure 4.3."""
    model = barman_dh("two_link_rr")
    g = np.array([0.0, 0.0, -9.81])
    q, qd, qdd = random_states(model, 200)
    for qq, vv, aa in zip(q, qd, qdd, strict=True):
        _, wrenches = rnea_with_wrenches(model, qq, vv, aa)
        phi = np.array([qq[0], qq.sum()])
        dphi = np.array([vv[0], vv.sum()])
        ddphi = np.array([aa[0], aa.sum()])

        a_c1 = point_acc(LC, phi[0], dphi[0], ddphi[0])
        a_c2 = point_acc(L, phi[0], dphi[0], ddphi[0]) + point_acc(LC, phi[1], dphi[1], ddphi[1])
        expected_world = MASS * (a_c1 - g) + MASS * (a_c2 - g)
        c1, s1 = np.cos(qq[0]), np.sin(qq[0])
        R1 = np.array([[c1, -s1, 0], [s1, c1, 0], [0, 0, 1]])  # body 1 in the base
        assert np.allclose(R1 @ wrenches[0, :3], expected_world, atol=1e-12)


def test_stanford_arm_along_the_table_iii_motion() -> None:
    """MDH and URDF models agree along the paper's quintic point-to-point motion."""
    traj = STANFORD["trajectory"]
    q0, q1, T = np.array(traj["initial"]), np.array(traj["final"]), traj["duration"]
    table, urdf = stanford_mdh(), load_urdf(sample_urdf("stanford_arm"))
    for t in np.linspace(0.0, T, 41):
        s = t / T
        blend = 10 * s**3 - 15 * s**4 + 6 * s**5
        dblend = (30 * s**2 - 60 * s**3 + 30 * s**4) / T
        ddblend = (60 * s - 180 * s**2 + 120 * s**3) / T**2
        state = (q0 + (q1 - q0) * blend, (q1 - q0) * dblend, (q1 - q0) * ddblend)
        a, b = rnea(table, *state), rnea(urdf, *state)
        assert np.abs(a - b).max() <= 1e-12 * max(np.abs(b).max(), 1.0)
