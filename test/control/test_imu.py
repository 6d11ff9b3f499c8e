"""The IMU on a moving base (rnea_ros.control.imu), without ROS.

Three ways: the kinematics against Pinocchio's frame velocities and classical
accelerations; the whole chain -- an IMU simulated by Pinocchio's free-flyer
kinematics (rnea_ros.simulation.ImuSensor) on a rocking base, read back by
ImuEstimator -- against the base motion it came from and the moving-base
torques; and identities (a resting IMU reads +g up, a tilted base is rotated
gravity, the base's linear velocity does not matter once its acceleration is
classical). Then every rejection, the fallbacks and the recovery.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pinocchio as pin
import pytest

import rnea_ros.core as rc
from rnea_ros.control.config import controller_config, default_values
from rnea_ros.control.controller import TorqueController
from rnea_ros.control.imu import (
    HOLD,
    ImuEstimator,
    ImuSample,
    derivative_at_newest,
    frame_motion,
    imu_config,
    provided,
)
from rnea_ros.core.errors import ParameterError
from rnea_ros.oracle import PinocchioOracle
from rnea_ros.samples import load_robot, robot_urdf, sample_urdf
from rnea_ros.simulation import ImuSensor, RockingBase

ARM7 = rc.load_urdf(sample_urdf("arm7"))
ROCKING = RockingBase(roll_amplitude=math.radians(5.0), roll_frequency=0.5,
                      pitch_amplitude=math.radians(3.0), pitch_frequency=0.3,
                      heave_amplitude=0.05, heave_frequency=0.5, roll_offset=0.02,
                      pitch_offset=-0.03)
# arm7 with an IMU link welded to link0 off its origin and turned (like a real mount).
IMU_LINK_URDF = sample_urdf("arm7").read_text().replace("</robot>", """
  <link name="imu_link"/>
  <joint name="imu_joint" type="fixed">
    <parent link="link0"/>
    <child link="imu_link"/>
    <origin xyz="0.12 -0.05 0.03" rpy="0.3 -0.2 0.5"/>
  </joint>
</robot>""")


def config(model: rc.RobotModel = ARM7, **values: object):
    return imu_config({**default_values(), "imu.topic": "imu", **values}, model)


@pytest.mark.filterwarnings("ignore::rnea_ros.core.errors.InertiaWarning")
@pytest.mark.parametrize("robot", ["arm7", "stanford_arm", "ur5", "panda"])
def test_frame_motion_matches_pinocchio(robot: str) -> None:
    model = load_robot(robot)
    pm = pin.buildModelFromUrdf(str(robot_urdf(robot)))
    pd = pm.createData()
    oracle = PinocchioOracle(robot_urdf(robot), model)
    rng = np.random.default_rng(5)
    links = [name for name in model.frames if pm.existFrame(name, pin.BODY)]
    assert len(links) >= model.nv
    for _ in range(20):
        q, qd, qdd = (rng.uniform(-1, 1, model.nv) for _ in range(3))
        pin.forwardKinematics(pm, pd, oracle.config(q), oracle.tangent(qd), oracle.tangent(qdd))
        pin.updateFramePlacements(pm, pd)
        for link in links:
            fid = pm.getFrameId(link, pin.BODY)
            ours = frame_motion(model, q, qd, link, qdd)
            V = pin.getFrameVelocity(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            A = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            for got, want in ((ours.R, pd.oMf[fid].rotation), (ours.p, pd.oMf[fid].translation),
                              (ours.w, V.angular), (ours.v, V.linear), (ours.dw, A.angular),
                              (ours.a, A.linear)):
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_the_base_linear_velocity_does_not_matter_once_the_acceleration_is_classical() -> None:
    """Why the IMU's base motion has v = 0: with the classical acceleration, the torques
    are the same for any linear velocity of the base (Galilean invariance)."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        q, qd, qdd = (rng.uniform(-1, 1, 7) for _ in range(3))
        quat = rng.normal(size=4)
        kw = {"orientation": quat / np.linalg.norm(quat),
              "angular_velocity": rng.normal(size=3), "angular_acceleration": rng.normal(size=3),
              "linear_acceleration": rng.normal(size=3)}
        moving = rc.BaseMotion(linear_velocity=rng.normal(size=3) * 3.0, **kw)
        still = rc.BaseMotion(**kw)
        np.testing.assert_allclose(rc.rnea(ARM7, q, qd, qdd, base_motion=moving),
                                   rc.rnea(ARM7, q, qd, qdd, base_motion=still),
                                   rtol=0, atol=1e-10)


def test_a_resting_imu_reads_plus_g_up_and_a_tilted_one_rotated_gravity() -> None:
    oracle = PinocchioOracle(sample_urdf("arm7"), ARM7)
    sensor = ImuSensor(oracle, "world", ARM7.gravity)
    z = np.zeros(7)
    quat, w, f = sensor.read(z, z, z, rc.BaseMotion(), np.zeros(3))
    np.testing.assert_allclose(f, [0.0, 0.0, 9.81], atol=1e-12)
    np.testing.assert_allclose(quat, [0, 0, 0, 1], atol=1e-15)
    assert not w.any()
    slope = RockingBase(roll_offset=math.radians(5.0))
    R, p = slope.pose(1.0)
    quat, _, f = sensor.read(z, z, z, slope.motion(1.0), p)
    np.testing.assert_allclose(f, -R.T @ ARM7.gravity, atol=1e-12)
    np.testing.assert_allclose(f[1], 9.81 * math.sin(math.radians(5.0)), atol=1e-12)


def feed(estimator: ImuEstimator, sensor: ImuSensor, base: RockingBase, q: np.ndarray,
         qd: np.ndarray, times: np.ndarray, *, orientation: bool = True, gyro: bool = True,
         accelerometer: bool = True, frame_id: str = "imu") -> None:
    for t in times:
        _, p = base.pose(t)
        quat, w, f = sensor.read(q, qd, np.zeros_like(q), base.motion(t), p)
        result = estimator.update(
            ImuSample(t, frame_id, quat if orientation else None, w if gyro else None,
                      f if accelerometer else None), q, qd, -math.inf, True, 0.0)
        assert result.reason is None, result


@pytest.mark.parametrize(("link", "mode"), [("world", "measured"), ("link0", "measured"),
                                            ("imu_link", "measured"), ("imu_link", "ignore"),
                                            ("link3", "ignore"), ("flange", "ignore")])
def test_the_estimate_is_the_base_motion_the_imu_was_simulated_from(link: str,
                                                                     mode: str) -> None:
    """Readings of an IMU on ``link`` (Pinocchio) over 60 ms at 1 kHz, the arm moving
    at constant joint velocity relative to the base: the estimated base motion gives
    the same torques as the true one (``ignore``: the base's heave is then not
    measured, so the true motion is taken without it)."""
    model = rc.load_urdf(IMU_LINK_URDF)
    base = ROCKING if mode == "measured" else dataclasses.replace(ROCKING, heave_amplitude=0.0)
    sensor = ImuSensor(PinocchioOracle(IMU_LINK_URDF, model), link, model.gravity)
    estimator = ImuEstimator(model, config(model, **{"imu.link": link,
                                                     "imu.linear_acceleration": mode}))
    assert estimator.config.linear_acceleration == mode
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-1, 1, 7), rng.uniform(-0.3, 0.3, 7) * (link != "world")
    times = 0.731 + np.arange(61) * 1e-3
    feed(estimator, sensor, base, q, qd, times)
    e, true = estimator.estimate, base.motion(times[-1])  # at the last sample
    np.testing.assert_allclose(e.w, true.angular_velocity, rtol=0, atol=1e-12)
    # (the cubic's bias for these sines, about 3e-5 of dw)
    np.testing.assert_allclose(e.dw, true.angular_acceleration, rtol=0, atol=5e-5)
    np.testing.assert_allclose(e.R_wb, true.orientation, rtol=0, atol=1e-12)
    if mode == "measured":  # the specific force at the base origin
        np.testing.assert_allclose(e.f, true.linear_acceleration - true.orientation.T @
                                   model.gravity, rtol=0, atol=1e-5)
    else:
        assert e.f is None
    qdd = rng.uniform(-1, 1, 7)
    # A joint state at the sample's stamp, then one 1 ms later (the sample propagated: w
    # and f change by up to 0.3 % of themselves in 1 ms here; dw is held).
    for dt, tolerance in ((0.0, 1e-5), (1e-3, 2e-3)):
        t = times[-1] + dt
        got = estimator.motion(t, model.gravity, q, qd)
        assert isinstance(got, rc.BaseMotion)
        true = base.motion(t)
        np.testing.assert_allclose(got.angular_velocity, true.angular_velocity, rtol=0,
                                   atol=3e-6)
        np.testing.assert_allclose(got.orientation, true.orientation, rtol=0, atol=1e-8)
        for ours, want in ((rc.gravity_torques(model, q, base_motion=got),
                            rc.gravity_torques(model, q, base_motion=true)),
                           (rc.rnea(model, q, qd, qdd, base_motion=got),
                            rc.rnea(model, q, qd, qdd, base_motion=true))):
            assert np.abs(ours - want).max() < tolerance * np.abs(want).max(), (dt, ours, want)
    assert estimator.state == "ok" and estimator.accepted == 61


def test_an_arm_on_a_5_degree_slope_gets_the_rotated_gravity() -> None:
    """The issue's case: a base tilted by 5 deg, measured by a resting IMU."""
    slope = RockingBase(roll_offset=math.radians(5.0))
    sensor = ImuSensor(PinocchioOracle(sample_urdf("arm7"), ARM7), "world", ARM7.gravity)
    estimator = ImuEstimator(ARM7, config())
    q = np.linspace(-1.0, 1.0, 7)
    feed(estimator, sensor, slope, q, np.zeros(7), np.arange(5) * 0.01)
    got = rc.gravity_torques(ARM7, q, base_motion=estimator.motion(0.04, ARM7.gravity, q, q))
    R = slope.pose(0.0)[0]
    np.testing.assert_allclose(got, rc.gravity_torques(ARM7, q, gravity=R.T @ ARM7.gravity),
                               rtol=0, atol=1e-12)
    assert np.abs(got - rc.gravity_torques(ARM7, q)).max() > 0.1  # what a fixed base gets wrong


@pytest.mark.parametrize("missing", ["orientation", "gyro", "accelerometer"])
def test_rep145_fields_marked_not_provided(missing: str) -> None:
    """Covariance element 0 at -1: that field is not used. Without orientation the
    specific force alone is RNEA's a0 (same torques); without accelerometer the tilt
    comes from the orientation and the model's gravity (no heave); without gyro
    w = dw = 0."""
    base = RockingBase(roll_offset=0.05, pitch_offset=-0.04, heave_amplitude=0.05,
                       heave_frequency=0.5)
    if missing == "gyro":  # a base that does not rotate: nothing lost
        sensor_base = base
    else:
        sensor_base = dataclasses.replace(
            ROCKING, heave_amplitude=0.0 if missing == "accelerometer" else 0.05)
    sensor = ImuSensor(PinocchioOracle(sample_urdf("arm7"), ARM7), "world", ARM7.gravity)
    estimator = ImuEstimator(ARM7, config())
    q = np.linspace(-1.0, 1.0, 7)
    feed(estimator, sensor, sensor_base, q, np.zeros(7), 0.3 + np.arange(50) * 1e-3,
         **{missing: False})
    got = estimator.motion(0.349, ARM7.gravity, q, q)
    assert isinstance(got, rc.BaseMotion)
    want = rc.gravity_torques(ARM7, q, base_motion=sensor_base.motion(0.349))
    np.testing.assert_allclose(rc.gravity_torques(ARM7, q, base_motion=got), want, rtol=0,
                               atol=1e-4 * np.abs(want).max())
    if missing == "gyro":
        assert not got.angular_velocity.any() and not got.angular_acceleration.any()


def test_provided_follows_rep145() -> None:
    assert provided(np.zeros(9)) and provided(np.full(9, 0.01)) and provided([])
    assert not provided(np.r_[-1.0, np.zeros(8)])


def test_the_differentiator_is_exact_for_cubics_on_irregular_stamps() -> None:
    from collections import deque

    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, 60))
    c = rng.normal(size=(4, 3))
    x = c[0] + np.outer(t, c[1]) + np.outer(t**2, c[2]) + np.outer(t**3, c[3])
    history = deque(zip(t, x, strict=True))
    slope = derivative_at_newest(history, 0.04)
    tn = t[-1]
    np.testing.assert_allclose(slope, c[1] + 2 * c[2] * tn + 3 * c[3] * tn**2, rtol=1e-7)
    assert all(tn - s <= 0.04 + 1e-12 for s, _ in history) and len(history) < 60
    assert not derivative_at_newest(deque([(0.0, np.ones(3))]), 0.04).any()


def test_the_differentiator_lowers_its_degree_for_bursts_of_samples() -> None:
    """Stamps that sit at two times (a burst, then one sample): a cubic is not determined.
    These are the stamps an IMU flood gave (test_fuzz_imu), whose cubic normal equations
    were singular (LinAlgError in the node's IMU callback); a line is exact here."""
    from collections import deque

    t0 = 1795424492.2088594
    t = t0 + np.array([0.0, 4.1e-6, 8.1e-6, 1.2e-5, 0.028])
    slope = np.array([0.5, -2.0, 3.0])
    history = deque((s, np.array([1.0, 2.0, 3.0]) + slope * (s - t0)) for s in t)
    np.testing.assert_allclose(derivative_at_newest(history, 0.04), slope, rtol=1e-6)
    # Three clusters: a parabola is exact, and is what the fit keeps (a cubic is not).
    t = t0 + np.array([0.0, 3e-6, 0.01, 0.010003, 0.02])
    c = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 2.0], [30.0, 10.0, -20.0]])
    x = c[0] + np.outer(t - t0, c[1]) + np.outer((t - t0) ** 2, c[2])
    history = deque(zip(t, x, strict=True))
    np.testing.assert_allclose(derivative_at_newest(history, 0.04),
                               c[1] + 2 * c[2] * (t[-1] - t0), rtol=1e-6)


# -------------------------------------------------------------------- rejections
def sample(t: float = 1.0, frame_id: str = "imu", quat=(0.0, 0.0, 0.0, 1.0),
           w=(0.0, 0.0, 0.0), f=(0.0, 0.0, 9.81)) -> ImuSample:
    return ImuSample(t, frame_id, None if quat is None else np.array(quat, dtype=float),
                     None if w is None else np.array(w, dtype=float),
                     None if f is None else np.array(f, dtype=float))


REJECTIONS = {
    "nan orientation": (sample(quat=(math.nan, 0, 0, 1)), "non_finite"),
    "inf angular velocity": (sample(w=(0, math.inf, 0)), "non_finite"),
    "-inf acceleration": (sample(f=(0, 0, -math.inf)), "non_finite"),
    "nan stamp": (sample(t=math.nan), "non_finite"),
    "zero quaternion": (sample(quat=(0, 0, 0, 0)), "bad_quaternion"),
    "quaternion norm 1.1": (sample(quat=(0, 0, 0, 1.1)), "bad_quaternion"),
    "gyro 1e3 rad/s": (sample(w=(1e3, 0, 0)), "out_of_range"),
    "accelerometer 1e308": (sample(f=(1e308, 0, 0)), "out_of_range"),
    "no orientation, no accelerometer": (sample(quat=None, f=None), "no_data"),
    "wrong frame": (sample(frame_id="base_imu"), "wrong_frame"),
    "backwards stamp": (sample(t=0.4), "time_backwards"),
    "future stamp": (sample(t=3600.0), "time_future"),
    "stale stamp": (sample(t=0.55), "stale"),
}


@pytest.mark.parametrize("case", list(REJECTIONS))
def test_bad_samples_are_rejected_counted_and_leave_the_estimate(case: str) -> None:
    bad, reason = REJECTIONS[case]
    estimator = ImuEstimator(ARM7, config(**{"imu.frame_id": "imu"}))
    z = np.zeros(7)
    assert estimator.update(sample(t=0.5), z, z, 0.5, True, 0.0).reason is None
    before = estimator.estimate
    stamp = 0.7 if reason == "stale" else 0.5  # the newest joint state
    result = estimator.update(bad, z, z, stamp, True, 0.001)
    assert result.reason == reason, result
    assert estimator.rejected == {reason: 1} and estimator.estimate is before
    assert estimator.update(sample(t=0.6), z, z, 0.6, True, 0.1).reason is None  # recovers


def test_a_repeated_stamp_replaces_the_sample_and_keeps_the_derivative() -> None:
    """A sender repeating itself (the simulator with its brakes on publishes its t = 0
    state until the first command): like the joint states, not an error."""
    estimator = ImuEstimator(ARM7, config())
    z = np.zeros(7)
    for k in range(10):
        estimator.update(sample(t=0.001 * k, w=(0.1 * k, 0.0, 0.0)), z, z, 0.0, True, 0.0)
    dw = estimator.estimate.dw.copy()
    np.testing.assert_allclose(dw, [100.0, 0.0, 0.0], rtol=1e-9)
    result = estimator.update(sample(t=0.001 * 9, w=(0.9, 0.0, 0.0), quat=(0, 0, 0.6, 0.8)),
                              z, z, 0.0, True, 0.0)
    assert result.reason is None and not estimator.rejected and estimator.accepted == 11
    assert estimator.estimate.R_wb[0, 1] != 0.0  # the new orientation
    np.testing.assert_array_equal(estimator.estimate.dw, dw)


def test_ignore_without_orientation_is_no_data() -> None:
    estimator = ImuEstimator(ARM7, config(**{"imu.linear_acceleration": "ignore"}))
    z = np.zeros(7)
    assert estimator.update(sample(quat=None), z, z, 1.0, True, 0.0).reason == "no_data"


def test_a_clock_reset_of_the_imu_resynchronises() -> None:
    estimator = ImuEstimator(ARM7, config())
    z = np.zeros(7)
    assert estimator.update(sample(t=100.0), z, z, -math.inf, True, 0.0).reason is None
    reasons = [estimator.update(sample(t=0.001 * k), z, z, -math.inf, True, 0.0).reason
               for k in range(1, 6)]
    assert reasons == ["time_backwards"] * 4 + [None]
    assert estimator.clock.resets == 1 and estimator.estimate.stamp == 0.005


@pytest.mark.parametrize(("values", "message"), [
    ({"imu.link": "hand"}, "parameter 'imu.link': unknown link 'hand' in model 'arm7'; valid "
                           "links: 'world', 'link0', 'link1'"),
    ({"imu.link": "flange", "imu.linear_acceleration": "measured"}, "moves with the joints"),
    ({"imu.timeout": 0.0}, "'imu.timeout' must be > 0"),
    ({"imu.fallback": "panic"}, "valid: 'fixed_gravity', 'hold'"),
    ({"imu.linear_acceleration": "both"}, "valid: 'auto', 'measured', 'ignore'"),
    ({"imu.angular_acceleration_window": -1.0}, "must be >= 0 s"),
    ({"imu.linear_acceleration_cutoff": math.nan}, "must be >= 0 Hz"),
])
def test_bad_imu_parameters_name_the_parameter(values: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=None) as error:
        config(**values)
    assert message in str(error.value)


def test_no_topic_no_imu_and_elastic_mode_refuses_one() -> None:
    assert imu_config(default_values(), ARM7) is None
    from rnea_ros.control.config import load_elastic, load_model

    values = {**default_values(), "urdf_path": str(sample_urdf("mixed_3dof")),
              "inertia_check": "warn", "mode": "elastic", "imu.topic": "imu",
              "elastic_file": "package://rnea_ros/config/mixed_3dof_elastic.yaml"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(values)
    with pytest.raises(ParameterError, match="'elastic' does not support an IMU"):
        controller_config(values, model, load_elastic(values, model))


# -------------------------------------------------------- the controller's use of it
def controller(fallback: str = "fixed_gravity", mode: str = "gravity") -> TorqueController:
    values = {**default_values(), "imu.topic": "imu", "imu.fallback": fallback, "mode": mode,
              "slew_limit.enable": False, "imu.timeout": 0.05}
    return TorqueController(ARM7, controller_config(values, ARM7))


def imu_at(c: TorqueController, t: float, roll: float) -> None:
    R = RockingBase(roll_offset=roll).pose(0.0)[0]
    quat = pin.Quaternion(R).coeffs()
    f = -R.T @ ARM7.gravity
    assert c.imu_sample(ImuSample(t, "", np.array(quat), np.zeros(3), f)).reason is None


@pytest.mark.parametrize("fallback", ["fixed_gravity", "hold"])
def test_fallback_while_stale_then_recovery(fallback: str) -> None:
    """Gravity mode on a 5 deg slope: with the IMU, the slope's torques; the IMU stops
    (older than imu.timeout), the fallback; it resumes, the slope's torques again."""
    c = controller(fallback)
    names = list(ARM7.joint_names)
    q = np.linspace(-1.0, 1.0, 7)
    roll = math.radians(5.0)
    slope = rc.gravity_torques(ARM7, q, gravity=RockingBase(roll_offset=roll).pose(0.0)[0].T
                               @ ARM7.gravity)
    level = rc.gravity_torques(ARM7, q)
    assert np.allclose(c.joint_state(names, q, [], 0.0, now=0.0).command, level)  # none yet
    assert c.imu.state == "waiting" and c.imu.status()[0] == \
        ("error" if fallback == "hold" else "warn")
    for k in range(1, 6):
        imu_at(c, k * 0.01, roll)
        result = c.joint_state(names, q + 0.01 * k * (fallback == "hold"), [], k * 0.01,
                               now=k * 0.01)
        np.testing.assert_allclose(result.command, rc.gravity_torques(
            ARM7, q + 0.01 * k * (fallback == "hold"),
            gravity=RockingBase(roll_offset=roll).pose(0.0)[0].T @ ARM7.gravity), atol=1e-9)
    assert c.imu.state == "ok" and c.imu.status()[0] == "ok"
    q_last = q + 0.05 * (fallback == "hold")
    for k in range(6, 20):  # no IMU after 0.05 s: stale once a state is 0.05 s newer
        result = c.joint_state(names, q_last, [], k * 0.01, now=k * 0.01)
        assert np.all(np.isfinite(result.command))
        fresh = k * 0.01 - 0.05 <= 0.05 + 1e-12
        if fresh:
            assert not np.allclose(result.command, level, atol=1e-3)
        elif fallback == "hold":  # the watchdog's stale command: g at the pose, fixed base
            np.testing.assert_allclose(result.command, c.stale_torque(), atol=1e-12)
        else:
            np.testing.assert_allclose(result.command, rc.gravity_torques(ARM7, q_last),
                                       atol=1e-12)
    assert c.imu.state == "stale" and c.imu.stale_events == 1
    assert c.imu.fallback_steps >= 9
    imu_at(c, 0.2, roll)
    result = c.joint_state(names, q, [], 0.2, now=0.2)
    np.testing.assert_allclose(result.command, slope, atol=1e-9)
    assert c.imu.state == "ok" and c.commands == 21


def test_inverse_dynamics_uses_the_base_motion() -> None:
    c = controller(mode="inverse_dynamics")
    names = list(ARM7.joint_names)
    q = np.linspace(-1.0, 1.0, 7)
    roll = math.radians(5.0)
    imu_at(c, 1.0, roll)
    result = c.joint_state(names, q, np.zeros(7), 1.0, now=0.0)  # reference: hold q
    R = RockingBase(roll_offset=roll).pose(0.0)[0]
    np.testing.assert_allclose(result.command, rc.gravity_torques(ARM7, q, gravity=R.T @
                                                                  ARM7.gravity), atol=1e-9)


def test_imu_samples_without_an_imu_configured_are_refused() -> None:
    c = TorqueController(ARM7, controller_config(default_values(), ARM7))
    assert c.imu_sample(sample()).reason == "no_imu"


def test_runtime_changes_keep_the_estimate_and_hold_is_returned() -> None:
    c = controller()
    imu_at(c, 1.0, 0.0)
    estimate = c.imu.estimate
    values = {**default_values(), "imu.topic": "imu", "imu.fallback": "hold",
              "imu.timeout": 0.05}
    c.configure(controller_config(values, ARM7))
    assert c.imu.estimate is estimate and c.imu.config.fallback == "hold"
    assert c.imu.motion(2.0, ARM7.gravity, np.zeros(7), np.zeros(7)) == HOLD
