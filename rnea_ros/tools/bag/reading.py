"""Reading a bag: joint states in model order, commands held and aligned on receive time.

Messages are read raw, a batch at a time, and decoded by layout
(:mod:`~rnea_ros.tools.bag.decoding`); a batch gives arrays of samples. The
command held for a state is the last well-formed command before it in the
bag's (receive-time) order.

Mimic joints: the model's coordinates are its independent joints; a follower
(URDF ``<mimic>``) is never required in the joint states. When one is
recorded with its leader, its position is compared with ``multiplier *
q_leader + offset`` (:mod:`rnea_ros.mimic`): samples checked, samples beyond
``--mimic-tolerance`` and the largest deviation, per follower, in
``stats["followers"]``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.model.joints import MimicJoint
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.core.model.urdf import load_urdf
from rnea_ros.mimic import FollowerCheck, follower_check, follower_deviation
from rnea_ros.tools.bag.decoding import Template, decode
from rnea_ros.tools.bag.errors import BagError
from rnea_ros.tools.bag.options import Options
from rnea_ros.tools.bag.sources import open_source
from rnea_ros.tools.bag.statistics import sequential_sum

Array = NDArray[np.float64]
BATCH = 4096  # raw messages decoded together


FIELDS = ("t", "q", "qd", "effort", "command", "optional")


@dataclass
class Samples:
    """Joint-state samples (model order) with the aligned command: arrays of equal length;
    ``optional`` holds the positions of the optional joints (NaN where a message lacks
    them; closed loops: the passive joints)."""

    t: Array
    q: Array
    qd: Array
    effort: Array
    command: Array
    optional: Array | None = None  # None: no optional joints

    def __post_init__(self) -> None:
        if self.optional is None:
            self.optional = np.zeros((len(self.t), 0))

    def __len__(self) -> int:
        return len(self.t)

    def take(self, index: slice | NDArray[np.intp]) -> Samples:
        return Samples(*(getattr(self, k)[index] for k in FIELDS))

    @staticmethod
    def join(parts: list[Samples]) -> Samples:
        if len(parts) == 1:
            return parts[0]
        return Samples(*(np.concatenate([getattr(p, k) for p in parts]) for k in FIELDS))


class Joints(Protocol):
    """What the reader, the analysis and the report need of a robot: its analysed joints
    (a :class:`RobotModel`; for a closed-loop robot, its active joints)."""

    @property
    def name(self) -> str: ...
    @property
    def joint_names(self) -> tuple[str, ...]: ...
    @property
    def joint_types(self) -> tuple[str, ...]: ...
    @property
    def effort_limit(self) -> Array: ...
    @property
    def nv(self) -> int: ...
    @property
    def mimic_joints(self) -> Mapping[str, MimicJoint]: ...
    def joint_index(self, name: str) -> int: ...


def read_states(bag: Path, model: RobotModel, states_topic: str = "/joint_states",
                time_base: str = "header") -> tuple[Samples | None, dict[str, Any]]:
    """Every valid joint state of ``bag`` on ``states_topic``, in ``model``'s joint order
    and joined (``None``: none), and the reader's statistics (``bag_joints``,
    ``skipped_nan``, ``skipped_missing``, ...): ``rnea-bag``'s reader for the other
    tools (``rnea-config --bag``, ``rnea-identify``)."""
    reader = BagReader(Options(bag=Path(bag), out=Path("."), states_topic=states_topic,
                               time_base=time_base))
    stats: dict[str, Any] = {}
    try:
        batches = list(reader.samples(model, np.arange(model.nv, dtype=np.int64), stats))
    finally:
        reader.close()
    return (Samples.join(batches) if batches else None), stats


class BagReader:
    """Joint states (model order) and held commands from a bag, in time order."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.source = open_source(options.bag)
        topics = self.source.topics
        if options.states_topic not in topics:
            self.source.close()
            raise BagError(f"topic '{options.states_topic}' is not in the bag; topics: "
                           f"{', '.join(sorted(topics)) or 'none'}")
        self.ros1 = topics[options.states_topic].encoding == "ros1"
        self.has_commands = options.commands_topic in topics
        self.state_count = self.source.counts.get(options.states_topic, 0)
        self.recovered = self.source.recovered
        self.description = None
        if "/robot_description" in topics:
            with self._decoding():
                for _, _, raw in self.source.messages(["/robot_description"]):
                    self.description = str(self.source.deserialize(raw, "/robot_description"
                                                                   ).data)
                    break
        self._templates: dict[str, dict[int, Template | None]] = {"joint_state": {},
                                                                  "multi_array": {}}

    def close(self) -> None:
        self.source.close()

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        """Any failure to decode a message becomes one :class:`BagError` line."""
        try:
            yield
        except BagError:
            raise
        except Exception as exc:
            raise BagError(f"cannot decode bag '{self.options.bag}': {exc}") from None

    def _decode(self, raws: list[bytes], topic: str, kind: str) -> Any:
        return decode(raws, kind, self.ros1, lambda raw: self.source.deserialize(raw, topic),
                      self._templates[kind])

    def _state_fields(self, raws: list[bytes]) -> list[tuple[Any, ...]]:
        """Per layout: ``(indices, names, stamp sec, nanosec, {field: values})``."""
        decoded = self._decode(raws, self.options.states_topic, "joint_state")
        parts = []
        for index, t, rows in decoded.groups:
            assert t.stamp is not None
            at, dtype = t.stamp
            sec = rows[:, at:at + 4].copy().view(dtype)[:, 0]
            nsec = rows[:, at + 4:at + 8].copy().view("<u4")[:, 0]
            parts.append((index, t.names, sec, nsec,
                          {f: t.values(rows, f) for f in ("position", "velocity", "effort")}))
        for i, msg in decoded.others:
            if msg is None:
                continue
            values = {f: np.asarray(getattr(msg, f), dtype=np.float64)[None, :]
                      for f in ("position", "velocity", "effort")}
            parts.append((np.array([i]), tuple(msg.name), np.array([msg.header.stamp.sec]),
                          np.array([msg.header.stamp.nanosec]), values))
        return parts

    def first_names(self) -> list[str]:
        """The joint names of the first joint state."""
        with self._decoding():
            for _, _, raw in self.source.messages([self.options.states_topic]):
                return list(self.source.deserialize(raw, self.options.states_topic).name)
        return []

    def nominal_period(self) -> float:
        """Median period of the first 200 joint states (from the chosen time base)."""
        with self._decoding():
            return self._nominal_period()

    def _nominal_period(self) -> float:
        raws, stamps = [], []
        for _, stamp_ns, raw in self.source.messages([self.options.states_topic]):
            raws.append(raw)
            stamps.append(stamp_ns)
            if len(raws) > 200:
                break
        if self.options.time_base == "header":
            times = np.zeros(len(raws))
            for index, _, sec, nsec, _ in self._state_fields(raws):
                times[index] = sec.astype(np.float64) + 1e-9 * nsec.astype(np.float64)
        else:
            times = np.asarray(np.array(stamps, dtype=np.int64) * 1e-9, dtype=np.float64)
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
                         drives=self.options.drives, inertia_check="warn")

    def urdf_joint_types(self) -> dict[str, str]:
        """Every ``<joint>`` of the robot's URDF by name, with its type (``fixed`` ones
        too, which the model merges away); empty if the text cannot be read again."""
        import xml.etree.ElementTree as ET

        try:
            text = (self.options.urdf.read_text(encoding="utf-8")
                    if self.options.urdf is not None else str(self.description))
            root = ET.fromstring(text)
        except (OSError, ET.ParseError):
            return {}
        return {str(e.get("name")): str(e.get("type")) for e in root.findall("joint")
                if e.get("name")}

    def samples(self, model: Joints, command_index: NDArray[np.int64],
                stats: dict[str, Any], optional: tuple[str, ...] = ()) -> Iterator[Samples]:
        """Batches of valid joint states with their held command; invalid ones are counted.
        ``optional`` joints' positions are read where a message has them."""
        self._optional = optional
        stats.update(states=0, skipped_nan=0, skipped_missing=0, skipped_undecodable=0,
                     commands=0,
                     skipped_commands=0, command_periods=[0, 0.0, 0.0], command_max_period=0.0,
                     bag_joints=[], followers={})
        self._held = np.full(model.nv, np.nan)
        self._follower_cache: dict[tuple[str, ...], FollowerCheck] = {}
        self._last_command: int | None = None
        self._index_cache: dict[tuple[str, ...], NDArray[np.intp] | None] = {}
        self._optional_cache: dict[tuple[str, ...], tuple[NDArray[np.intp],
                                                          NDArray[np.intp]]] = {}
        topics = [self.options.states_topic] + ([self.options.commands_topic]
                                                if self.has_commands else [])
        batch: list[tuple[str, int, bytes]] = []
        with self._decoding():
            for message in self.source.messages(topics):
                batch.append(message)
                if len(batch) == BATCH:
                    yield self._batch(batch, model, command_index, stats)
                    batch = []
            if batch:
                yield self._batch(batch, model, command_index, stats)

    def _commands(self, raws: list[bytes], stamps: NDArray[np.int64], n: int,
                  command_index: NDArray[np.int64], stats: dict[str, Any]
                  ) -> tuple[NDArray[np.bool_], Array]:
        """Which commands are well formed, and their values in model order."""
        now = stamps * 1e-9  # commands carry no stamp: receive time
        previous = [] if self._last_command is None else [self._last_command * 1e-9]
        periods = np.diff(np.concatenate([previous, now]))
        sums = stats["command_periods"]
        sums[0] += len(periods)
        sums[1] = sequential_sum(sums[1], periods)
        sums[2] = sequential_sum(sums[2], periods * periods)
        if periods.size:
            stats["command_max_period"] = max(stats["command_max_period"], float(periods.max()))
        self._last_command = int(stamps[-1])
        good = np.zeros(len(raws), dtype=bool)
        values = np.full((len(raws), n), np.nan)
        decoded = self._decode(raws, self.options.commands_topic, "multi_array")
        pieces = [(index, t.values(rows, "data")) for index, t, rows in decoded.groups]
        pieces += [(np.array([i]), np.asarray(msg.data, dtype=np.float64)[None, :])
                   for i, msg in decoded.others if msg is not None]
        for index, data in pieces:
            if data.shape[1] == command_index.shape[0]:
                good[index] = True
                values[np.ix_(index, command_index)] = data
        stats["commands"] += int(good.sum())
        stats["skipped_commands"] += int((~good).sum())
        return good, values

    def _check_followers(self, model: Joints, names: tuple[str, ...], position: Array,
                         stats: dict[str, Any]) -> None:
        """Count the recorded followers (with their leader) off their coupling."""
        if not isinstance(model, RobotModel):  # closed loops: active joints, no followers
            return
        check = self._follower_cache.get(names)
        if check is None:
            check = self._follower_cache[names] = follower_check(model, names)
        if not len(check):
            return
        deviation = np.abs(follower_deviation(check, position))
        beyond = ~(deviation <= self.options.mimic_tolerance)  # NaN too
        for k, name in enumerate(check.names):
            entry = stats["followers"].setdefault(name, [0, 0, 0.0])
            entry[0] += deviation.shape[0]
            entry[1] += int(beyond[:, k].sum())
            finite = deviation[:, k][np.isfinite(deviation[:, k])]
            if finite.size:
                entry[2] = max(entry[2], float(finite.max()))

    def _batch(self, batch: list[tuple[str, int, bytes]], model: Joints,
               command_index: NDArray[np.int64], stats: dict[str, Any]) -> Samples:
        n = model.nv
        states_topic = self.options.states_topic
        is_state = np.fromiter((m[0] == states_topic for m in batch), dtype=bool,
                               count=len(batch))
        stamps = np.fromiter((m[1] for m in batch), dtype=np.int64, count=len(batch))
        state_at = np.flatnonzero(is_state)
        command_at = np.flatnonzero(~is_state)
        # The command held at each state: the last well-formed one before it.
        held = np.tile(self._held, (len(state_at), 1))
        if command_at.size:
            good, values = self._commands([batch[i][2] for i in command_at], stamps[command_at],
                                          n, command_index, stats)
            good_at, values = command_at[good], values[good]
            if good_at.size:
                last = np.searchsorted(good_at, state_at) - 1
                held[last >= 0] = values[last[last >= 0]]
                self._held = values[-1]
        stats["states"] += len(state_at)
        status = np.full(len(state_at), 2, dtype=np.int8)  # 2 undecodable, 1 missing, 0 ok
        q, qd, effort = (np.full((len(state_at), n), np.nan) for _ in range(3))
        optional = np.full((len(state_at), len(self._optional)), np.nan)
        t = np.zeros(len(state_at))
        parts = self._state_fields([batch[i][2] for i in state_at]) if state_at.size else []
        if parts and not stats["bag_joints"]:  # the joints of the first joint state
            stats["bag_joints"] = list(min(parts, key=lambda part: part[0][0])[1])
        for index, names, sec, nsec, values in parts:
            status[index] = 1
            mapping = self._index_cache.get(names, ())
            if isinstance(mapping, tuple):
                where = {name: k for k, name in enumerate(names)}
                mapping = self._index_cache[names] = (
                    np.array([where[j] for j in model.joint_names])
                    if all(j in where for j in model.joint_names) else None)
                self._optional_cache[names] = (
                    np.array([k for k, j in enumerate(self._optional) if j in where],
                             dtype=np.intp),
                    np.array([where[j] for j in self._optional if j in where], dtype=np.intp))
            if mapping is None or values["position"].shape[1] != len(names):
                continue
            status[index] = 0
            self._check_followers(model, names, values["position"], stats)
            q[index] = values["position"][:, mapping]
            columns, found = self._optional_cache[names]
            if columns.size:
                optional[np.ix_(index, columns)] = values["position"][:, found]
            if values["velocity"].shape[1] == len(names):
                qd[index] = values["velocity"][:, mapping]
            if values["effort"].shape[1] == len(names):
                effort[index] = values["effort"][:, mapping]
            if self.options.time_base == "header":
                t[index] = sec.astype(np.float64) + 1e-9 * nsec.astype(np.float64)
        if self.options.time_base != "header":
            t = np.asarray(stamps[state_at] * 1e-9, dtype=np.float64)
        finite = np.isfinite(q).all(axis=1)
        stats["skipped_missing"] += int((status == 1).sum())
        stats["skipped_undecodable"] += int((status == 2).sum())
        stats["skipped_nan"] += int(((status == 0) & ~finite).sum())
        keep = (status == 0) & finite
        return Samples(t[keep], q[keep], qd[keep], effort[keep], held[keep], optional[keep])
