"""Reading a bag: joint states in model order, commands held and aligned on receive time."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import BagError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.tools.bag.options import Options

Array = NDArray[np.float64]


@dataclass
class Samples:
    """A chunk of joint-state samples (model order) with the aligned command."""

    t: list[float] = field(default_factory=list)
    q: list[Array] = field(default_factory=list)
    qd: list[Array] = field(default_factory=list)
    effort: list[Array] = field(default_factory=list)
    command: list[Array] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.t)

    def arrays(self) -> tuple[Array, Array, Array, Array, Array]:
        return (np.array(self.t), np.array(self.q), np.array(self.qd), np.array(self.effort),
                np.array(self.command))

    def keep_last(self, count: int) -> None:
        for name in ("t", "q", "qd", "effort", "command"):
            values = getattr(self, name)
            del values[:len(values) - count]


class BagReader:
    """Joint states (model order) and held commands from a bag, in time order."""

    def __init__(self, options: Options) -> None:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore

        if not options.bag.exists():
            raise BagError(f"bag '{options.bag}' does not exist")
        try:
            self.reader = AnyReader([options.bag],
                                    default_typestore=get_typestore(Stores.ROS2_KILTED))
            self.reader.open()
        except Exception as exc:  # rosbags raises several types for unreadable bags
            raise BagError(f"cannot read bag '{options.bag}': {exc}") from None
        topics = {c.topic: c for c in self.reader.connections}
        if options.states_topic not in topics:
            raise BagError(f"topic '{options.states_topic}' is not in the bag; topics: "
                           f"{', '.join(sorted(topics)) or 'none'}")
        self.options = options
        self.states = [c for c in self.reader.connections if c.topic == options.states_topic]
        self.commands = [c for c in self.reader.connections
                         if c.topic == options.commands_topic]
        self.state_count = sum(c.msgcount for c in self.states)
        self.description = None
        described = [c for c in self.reader.connections if c.topic == "/robot_description"]
        if described:
            for connection, _, raw in self.reader.messages(connections=described):
                message: Any = self.reader.deserialize(raw, connection.msgtype)
                self.description = str(message.data)
                break

    def close(self) -> None:
        self.reader.close()

    def nominal_period(self) -> float:
        """Median period of the first 200 joint states (from the chosen time base)."""
        times = []
        header = self.options.time_base == "header"
        for connection, stamp_ns, raw in self.reader.messages(connections=self.states):
            if header:
                msg: Any = self.reader.deserialize(raw, connection.msgtype)
                times.append(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)
            else:
                times.append(stamp_ns * 1e-9)
            if len(times) > 200:
                break
        periods = np.diff(times)
        periods = periods[periods > 0]
        if periods.size == 0:
            raise BagError(f"topic '{self.options.states_topic}' has fewer than two timed "
                           "messages")
        return float(np.median(periods))

    def model(self) -> RobotModel:
        urdf = self.options.urdf
        if urdf is None and self.description is None:
            raise BagError("no robot: pass --urdf FILE (the bag has no /robot_description)")
        return load_urdf(urdf if urdf is not None else str(self.description),
                         inertia_check="warn")

    def samples(self, model: RobotModel, command_index: NDArray[np.int64],
                stats: dict[str, Any]) -> Iterator[tuple[float, Array, Array, Array, Array]]:
        """``(t, q, qd, effort, command)`` per valid joint state; invalid ones are counted."""
        n = model.nv
        command = np.full(n, np.nan)
        cache: dict[tuple[str, ...], NDArray[np.int64] | None] = {}
        header = self.options.time_base == "header"
        stats.update(states=0, skipped_nan=0, skipped_missing=0, commands=0,
                     skipped_commands=0, command_periods=[0, 0.0, 0.0], command_max_period=0.0)
        last_command: float | None = None
        try:
            messages = self.reader.messages(connections=self.states + self.commands)
            for connection, stamp_ns, raw in messages:
                msg: Any = self.reader.deserialize(raw, connection.msgtype)
                if connection.topic != self.options.states_topic:
                    now = stamp_ns * 1e-9  # commands carry no stamp: receive time
                    if last_command is not None:
                        period, sums = now - last_command, stats["command_periods"]
                        sums[0] += 1
                        sums[1] += period
                        sums[2] += period * period
                        stats["command_max_period"] = max(stats["command_max_period"], period)
                    last_command = now
                    data = np.asarray(msg.data, dtype=np.float64)
                    if data.shape != command_index.shape:
                        stats["skipped_commands"] += 1
                        continue
                    command = np.full(n, np.nan)
                    command[command_index] = data
                    stats["commands"] += 1
                    continue
                stats["states"] += 1
                key = tuple(msg.name)
                if key not in cache:
                    position = {name: k for k, name in enumerate(key)}
                    cache[key] = (np.array([position[j] for j in model.joint_names])
                                  if all(j in position for j in model.joint_names) else None)
                index = cache[key]
                if index is None or len(msg.position) != len(key):
                    stats["skipped_missing"] += 1
                    continue
                q = np.asarray(msg.position, dtype=np.float64)[index]
                qd = (np.asarray(msg.velocity, dtype=np.float64)[index]
                      if len(msg.velocity) == len(key) else np.full(n, np.nan))
                effort = (np.asarray(msg.effort, dtype=np.float64)[index]
                          if len(msg.effort) == len(key) else np.full(n, np.nan))
                if not np.isfinite(q).all():
                    stats["skipped_nan"] += 1
                    continue
                t = (msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec) if header \
                    else stamp_ns * 1e-9
                yield t, q, qd, effort, command
        except BagError:
            raise
        except Exception as exc:
            raise BagError(f"cannot decode bag '{self.options.bag}': {exc}") from None


def names_in_bag(reader: BagReader) -> str:
    for connection, _, raw in reader.reader.messages(connections=reader.states):
        message: Any = reader.reader.deserialize(raw, connection.msgtype)
        return ", ".join(message.name)
    return "none"
