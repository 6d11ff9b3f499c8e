"""Analytic RNEA sensitivities (``core/dynamics/derivatives.py``).

* ``dtau/dq``, ``dtau/dqd``, ``M`` against Pinocchio's ``computeRNEADerivatives`` on
  every robot of the agreement suite (random states, gravity off the vertical,
  random armature, external wrenches), relative error <= 1e-9;
* internal joint wrenches and their derivatives against ``rnea_with_wrenches``
  and its central finite differences (<= 1e-6), and the identity
  ``tau_i = S_i . W_i`` differentiated;
* ``tau_dot`` sensitivities against central differences of the gfd recursion
  (<= 1e-6) and the chain-rule identity ``tau_dot = tau_q qd + tau_qd qdd + M qddd``;
* batch forms equal the per-sample ones; friction; bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np
import pytest
from dynamics_cases import Case
from oracle import PinOracle, pinocchio_rnea_derivatives, random_states, relative_error

from rnea_ros.core.dynamics.derivatives import (
    joint_wrench_derivatives,
    joint_wrench_derivatives_batch,
    rnea_derivatives,
    rnea_derivatives_batch,
    rnea_time_derivative_sensitivities,
    rnea_time_derivative_sensitivities_batch,
)
from rnea_ros.core.dynamics.gfd import rnea_time_derivative
from rnea_ros.core.dynamics.rnea import rnea_with_wrenches
from rnea_ros.core.errors import StateError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.samples import EXAMPLE_ROBOTS, SAMPLE_ROBOTS, load_robot, robot_urdf

ROBOTS = list(SAMPLE_ROBOTS) + list(EXAMPLE_ROBOTS)
SAMPLES = 100
TOL = 1e-9
FD_TOL = 1e-6

pytestmark = pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")


@pytest.fixture(scope="module", params=ROBOTS)
def case(request: pytest.FixtureRequest) -> Case:
    rng = np.random.default_rng(7)
    model = load_robot(request.param).without_friction()
    model = model.replace(armature=rng.uniform(0.0, 0.5, model.nv),
                          gravity=np.array([0.3, -0.2, -9.81]))
    q, qd, qdd = random_states(model, SAMPLES, seed=11)
    return Case(request.param, model, PinOracle(robot_urdf(request.param), model), q, qd, qdd)


def test_rnea_derivatives_match_pinocchio(case: Case) -> None:
    m, o = case.model, case.oracle
    ours = [rnea_derivatives(m, *s) for s in zip(case.q, case.qd, case.qdd, strict=True)]
    ref = [pinocchio_rnea_derivatives(o, *s) for s in zip(case.q, case.qd, case.qdd, strict=True)]
    for k in range(3):
        assert relative_error(np.array([x[k] for x in ours]), np.array([r[k] for r in ref])) <= TOL
    batch = rnea_derivatives_batch(m, case.q, case.qd, case.qdd)
    for k in range(3):
        np.testing.assert_array_equal(batch[k], np.array([x[k] for x in ours]))


def test_rnea_derivatives_with_external_wrenches_match_pinocchio(case: Case) -> None:
    m, o = case.model, case.oracle
    rng = np.random.default_rng(3)
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:30]:
        fext = rng.normal(0.0, 10.0, (m.nv, 6))
        ours = rnea_derivatives(m, q, qd, qdd, fext=fext)
        ref = pinocchio_rnea_derivatives(o, q, qd, qdd, fext)
        for k in range(3):
            assert relative_error(ours[k], ref[k]) <= TOL
    fext = rng.normal(0.0, 10.0, (m.nv, 6))
    batch = rnea_derivatives_batch(m, case.q[:5], case.qd[:5], case.qdd[:5], fext=fext)
    for s in range(5):
        one = rnea_derivatives(m, case.q[s], case.qd[s], case.qdd[s], fext=fext)
        for k in range(3):
            np.testing.assert_array_equal(batch[k][s], one[k])


def test_batch_with_one_wrench_per_sample(case: Case) -> None:
    m = case.model
    rng = np.random.default_rng(9)
    fext = rng.normal(0.0, 10.0, (4, m.nv, 6))
    batch = rnea_derivatives_batch(m, case.q[:4], case.qd[:4], case.qdd[:4], fext=fext)
    wrench_batch = joint_wrench_derivatives_batch(m, case.q[:4], case.qd[:4], case.qdd[:4],
                                                  fext=fext)
    for s in range(4):
        one = rnea_derivatives(m, case.q[s], case.qd[s], case.qdd[s], fext=fext[s])
        for k in range(3):
            np.testing.assert_array_equal(batch[k][s], one[k])
        wrench_one = joint_wrench_derivatives(m, case.q[s], case.qd[s], case.qdd[s], fext=fext[s])
        for k in range(4):
            np.testing.assert_array_equal(wrench_batch[k][s], wrench_one[k])
    with pytest.raises(StateError, match=r"\(4, \d+, 6\), one per sample"):
        rnea_derivatives_batch(m, case.q[:4], case.qd[:4], case.qdd[:4], fext=fext[:3])


def test_friction_adds_viscous_to_dtau_dqd_only(case: Case) -> None:
    rng = np.random.default_rng(2)
    m = case.model
    rough = m.replace(coulomb=rng.uniform(0.0, 2.0, m.nv), viscous=rng.uniform(0.0, 1.0, m.nv))
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:5]:
        smooth = rnea_derivatives(m, q, qd, qdd)
        dq, dv, M = rnea_derivatives(rough, q, qd, qdd)
        np.testing.assert_allclose(dq, smooth[0], rtol=0, atol=1e-12 * np.abs(dq).max())
        np.testing.assert_allclose(dv, smooth[1] + np.diag(rough.viscous), rtol=0,
                                   atol=1e-12 * np.abs(dv).max())
        np.testing.assert_allclose(M, smooth[2], rtol=0, atol=1e-12 * np.abs(M).max())


def _central_each(f: Callable[..., np.ndarray], args: tuple[np.ndarray, ...],
                  h: float) -> list[np.ndarray]:
    """Central differences of ``f(*args)`` w.r.t. each argument: ``(*f.shape, len(arg))``."""
    out = []
    for a, x in enumerate(args):
        cols = []
        for k in range(x.size):
            e = np.zeros_like(x)
            e[k] = h
            plus = [*args[:a], x + e, *args[a + 1:]]
            minus = [*args[:a], x - e, *args[a + 1:]]
            cols.append((f(*plus) - f(*minus)) / (2.0 * h))
        out.append(np.stack(cols, axis=-1))
    return out


def _wrenches(m: RobotModel, fext: np.ndarray, q: np.ndarray, qd: np.ndarray,
              qdd: np.ndarray) -> np.ndarray:
    return rnea_with_wrenches(m, q, qd, qdd, fext=fext)[1]


def _tau_dot(m: RobotModel, fext: np.ndarray, fext_dot: np.ndarray, q: np.ndarray,
             qd: np.ndarray, qdd: np.ndarray, j: np.ndarray) -> np.ndarray:
    return rnea_time_derivative(m, q, qd, qdd, j, fext=fext, fext_dot=fext_dot)[1]


def test_joint_wrench_derivatives_against_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(4)
    m = case.model.replace(coulomb=rng.uniform(0.0, 2.0, case.model.nv),
                           viscous=rng.uniform(0.0, 1.0, case.model.nv))
    h = 1e-6
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:3]:
        fext = rng.normal(0.0, 10.0, (m.nv, 6))
        W, dWq, dWv, dWa = joint_wrench_derivatives(m, q, qd, qdd, fext=fext)
        assert relative_error(W, rnea_with_wrenches(m, q, qd, qdd, fext=fext)[1]) <= 1e-12
        wrenches = partial(_wrenches, m, fext)
        for ours, fd in zip((dWq, dWv, dWa), _central_each(wrenches, (q, qd, qdd), h),
                            strict=True):
            assert relative_error(ours, fd) <= FD_TOL
        # tau_i = S_i . W_i (+ drive); S_i is fixed in body i, so the same holds for derivatives.
        S = np.array([np.r_[axis, 0, 0, 0] if jt == "prismatic" else np.r_[0, 0, 0, axis]
                      for axis, jt in zip(m.axis, m.joint_types, strict=True)])
        dq, dv, M = rnea_derivatives(m, q, qd, qdd, fext=fext)
        assert relative_error(np.einsum("ir,irk->ik", S, dWq), dq) <= TOL
        assert relative_error(np.einsum("ir,irk->ik", S, dWv) + np.diag(m.viscous), dv) <= TOL
        assert relative_error(np.einsum("ir,irk->ik", S, dWa) + np.diag(m.armature), M) <= TOL
    Wb, dWqb, dWvb, dWab = joint_wrench_derivatives_batch(m, case.q[:4], case.qd[:4],
                                                          case.qdd[:4], fext=fext)
    for s in range(4):
        one = joint_wrench_derivatives(m, case.q[s], case.qd[s], case.qdd[s], fext=fext)
        for batch, single in zip((Wb, dWqb, dWvb, dWab), one, strict=True):
            np.testing.assert_array_equal(batch[s], single)


def test_tau_dot_sensitivities_against_finite_differences_of_gfd(case: Case) -> None:
    rng = np.random.default_rng(5)
    m = case.model.replace(coulomb=rng.uniform(0.0, 2.0, case.model.nv),
                           viscous=rng.uniform(0.0, 1.0, case.model.nv))
    h = 1e-6
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:3]:
        j = rng.normal(0.0, 10.0, m.nv)
        fext = rng.normal(0.0, 10.0, (m.nv, 6))
        fext_dot = rng.normal(0.0, 10.0, (m.nv, 6))
        tau_dot, d_dq, d_dv, d_da, d_dj = rnea_time_derivative_sensitivities(
            m, q, qd, qdd, j, fext=fext, fext_dot=fext_dot)
        gfd = partial(_tau_dot, m, fext, fext_dot)
        assert relative_error(tau_dot, gfd(q, qd, qdd, j)) <= 1e-13
        for ours, fd in zip((d_dq, d_dv, d_da, d_dj), _central_each(gfd, (q, qd, qdd, j), h),
                            strict=True):
            assert relative_error(ours, fd) <= FD_TOL
        # tau_dot is linear in the jerk with slope M: exact identity, not a difference.
        assert relative_error(d_dj, rnea_derivatives(m, q, qd, qdd)[2]) <= TOL


def test_tau_dot_is_the_chain_rule_of_the_sensitivities(case: Case) -> None:
    """``tau_dot = tau_q qd + tau_qd qdd + M qddd``: gfd against the analytic derivatives."""
    rng = np.random.default_rng(6)
    m = case.model
    for q, qd, qdd in list(zip(case.q, case.qd, case.qdd, strict=True))[:20]:
        j = rng.normal(0.0, 10.0, m.nv)
        dq, dv, M = rnea_derivatives(m, q, qd, qdd)
        tau_dot = rnea_time_derivative(m, q, qd, qdd, j)[1]
        assert relative_error(dq @ qd + dv @ qdd + M @ j, tau_dot) <= TOL


def test_tau_dot_sensitivities_batch_equals_per_sample() -> None:
    model = load_robot("panda")
    q, qd, qdd = random_states(model, 4, seed=3)
    j = np.random.default_rng(1).normal(0.0, 5.0, q.shape)
    batch = rnea_time_derivative_sensitivities_batch(model, q, qd, qdd, j)
    for s in range(4):
        one = rnea_time_derivative_sensitivities(model, q[s], qd[s], qdd[s], j[s])
        for k in range(5):
            np.testing.assert_array_equal(batch[k][s], one[k])


def test_bad_input_is_a_state_error_naming_the_joint() -> None:
    model = load_robot("panda")
    n = model.nv
    with pytest.raises(StateError, match=rf"expected \({n},\)"):
        rnea_derivatives(model, np.zeros(n + 1), np.zeros(n), np.zeros(n))
    q = np.zeros(n)
    q[2] = np.nan
    with pytest.raises(StateError, match=model.joint_names[2]):
        rnea_derivatives(model, q, np.zeros(n), np.zeros(n))
    with pytest.raises(StateError, match="fext"):
        joint_wrench_derivatives(model, np.zeros(n), np.zeros(n), np.zeros(n),
                                 fext=np.zeros((n, 3)))
    with pytest.raises(StateError, match="qddd"):
        rnea_time_derivative_sensitivities(model, q * 0, q * 0, q * 0, np.zeros(2))
    with pytest.raises(StateError, match=rf"expected \(3, {n}\)"):
        rnea_derivatives_batch(model, np.zeros((3, n)), np.zeros((2, n)), np.zeros((3, n)))


def test_gravity_keyword_equals_a_model_with_that_gravity() -> None:
    model = load_robot("ur5")
    q, qd, qdd = (x[0] for x in random_states(model, 1, seed=8))
    g = np.array([1.0, 2.0, -3.0])
    for ours, ref in zip(rnea_derivatives(model, q, qd, qdd, gravity=g),
                         rnea_derivatives(model.replace(gravity=g), q, qd, qdd), strict=True):
        np.testing.assert_array_equal(ours, ref)
    zero_g = rnea_derivatives(model, q, qd, qdd, gravity=np.zeros(3))
    assert np.abs(zero_g[0] - rnea_derivatives(model, q, qd, qdd)[0]).max() > 1.0
