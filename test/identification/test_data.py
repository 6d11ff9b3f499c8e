"""Data for identification: bag reading (ROS 1 too), filtering, differentiation, gaps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synthetic import fourier_motion, write_states_bag

import rnea_ros.core as rc
from rnea_ros.identification.data import Recording, prepare, read_bag, saturation
from rnea_ros.samples import load_robot


def write_ros1_bag(path: Path, names, t, q, effort) -> None:
    from rosbags.rosbag1 import Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS1_NOETIC)
    JointState = ts.types["sensor_msgs/msg/JointState"]
    Header = ts.types["std_msgs/msg/Header"]
    Time = ts.types["builtin_interfaces/msg/Time"]
    with Writer(path) as writer:
        conn = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        for k in range(t.size):
            stamp = 1.0 + float(t[k])
            sec = int(stamp)
            msg = JointState(header=Header(seq=k, stamp=Time(sec=sec, nanosec=round(
                (stamp - sec) * 1e9)), frame_id=""), name=list(names), position=q[k],
                velocity=np.zeros(0), effort=effort[k])
            writer.write(conn, round(stamp * 1e9), ts.serialize_ros1(msg, JointState.__msgtype__))


@pytest.mark.parametrize("kind", ["ros1", "mcap", "sqlite3"])
def test_read_bag_gives_model_order_samples(tmp_path: Path, kind: str) -> None:
    model = load_robot("two_link_rr")
    t = np.arange(200) * 1e-3
    q = np.column_stack([np.sin(t), np.cos(t)])
    effort = np.column_stack([t, -t])
    names = list(reversed(model.joint_names))  # the bag's order differs from the model's
    if kind == "ros1":
        path = tmp_path / "run.bag"
        write_ros1_bag(path, names, t, q[:, ::-1].copy(), effort[:, ::-1].copy())
    else:
        path = tmp_path / "run"
        write_states_bag(path, names, t, q[:, ::-1].copy(), effort[:, ::-1].copy(),
                         storage=kind)
    rec = read_bag(path, model)
    assert np.allclose(rec.t - rec.t[0], t, atol=1e-9)
    assert np.array_equal(rec.q, q) and np.array_equal(rec.effort, effort)


def test_missing_bag_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(rc.BagError, match="does not exist"):
        read_bag(tmp_path / "nope", load_robot("two_link_rr"))


def test_filtered_derivatives_match_the_motion_and_gaps_split_segments() -> None:
    model = load_robot("arm7")
    t = np.arange(0.0, 30.0, 1e-3)
    q, qd, qdd = fourier_motion(model, t, seed=3)
    keep = (t < 12.0) | (t > 12.5)  # a half-second hole: two segments
    # Efforts: any smooth torque (all-zero efforts are refused: no torque was measured).
    effort = 10.0 * np.sin(np.outer(t[keep], 0.3 + 0.1 * np.arange(7)))
    rec = Recording(t[keep], q[keep], effort)
    data = prepare(rec, model, cutoff=10.0, rate=15.0, slow_fraction=0.0)
    idx = np.round(data.t / 1e-3).astype(int)
    assert np.abs(data.q - q[idx]).max() <= 1e-6
    assert np.abs(data.qd - qd[idx]).max() <= 1e-4 * np.abs(qd).max()
    assert np.abs(data.qdd - qdd[idx]).max() <= 2e-3 * np.abs(qdd).max()  # worst at the ends
    # Nothing within 2/cutoff of the hole (filter transients are trimmed).
    assert not np.any((data.t > 12.0 - 0.2) & (data.t < 12.5 + 0.2))
    assert data.decimation == 66 and np.all(data.valid)
    # By default the rows of a joint slower than 0.1 x its peak speed are left out (near
    # rest the Coulomb + viscous model does not hold), and only those.
    default = prepare(rec, model, cutoff=10.0, rate=15.0)
    slow = np.abs(default.qd) < 0.1 * np.abs(default.qd).max(axis=0)
    assert slow.any() and np.array_equal(default.valid, ~slow)
    assert any("near rest" in note for note in default.notes)


def test_saturation_finds_limits_and_clipping_plateaus() -> None:
    rng = np.random.default_rng(0)
    effort = rng.normal(0.0, 10.0, (10_000, 4))
    effort[:, 3] = 5.0  # a constant signal is not clipping
    effort[:, 1] = np.clip(effort[:, 1], -12.0, 12.0)  # clipped drive
    effort[:50, 2] = 87.0  # at the limit
    mask = saturation(effort, np.array([np.inf, np.inf, 87.0, np.inf]))
    assert not mask[:, 0].any()
    assert mask[:, 1].sum() == np.sum(np.abs(effort[:, 1]) == 12.0) > 500
    assert mask[:50, 2].all() and mask[:, 2].sum() == 50
    assert not mask[:, 3].any()


def test_widen_is_a_moving_window_any() -> None:
    from rnea_ros.identification.data import widen

    mask = np.zeros((20, 2), dtype=bool)
    mask[[0, 10], 0] = True
    out = widen(mask, 2)
    assert np.flatnonzero(out[:, 0]).tolist() == [0, 1, 2, 8, 9, 10, 11, 12]
    assert not out[:, 1].any()
