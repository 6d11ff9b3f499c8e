"""Batch decoding of ``sensor_msgs/JointState`` and ``std_msgs/Float64MultiArray``.

Deserialising message after message with ``rosbags`` costs ~15 µs each. A
recording's messages on one topic nearly always share one *layout*: the same
length, frame id, joint names and array lengths; only the stamp and the
float64 values change. A layout is learnt from one message (a *template*,
parsed here and checked field by field against ``rosbags``' own decoding of
the same message), then every message of a batch with the template's length
and the template's bytes outside the stamp and the float arrays is read in
one numpy view: the same bytes, so the same numbers. Any other message
(another layout, a big-endian CDR, a template that does not check) goes
through ``rosbags``.

Serialisations: CDR (ROS 2: a 4-byte encapsulation header, then fields
aligned to their size from there) and ROS 1 (packed, no alignment).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.tools.bag.errors import BagDecodeError

Array = NDArray[np.float64]
Deserialize = Callable[[bytes], Any]

MAX_TEMPLATES = 8  # layouts tried per batch before the rest goes through rosbags


class _Cursor:
    """Reads fields of a CDR (little-endian) or ROS 1 message, tracking byte offsets."""

    def __init__(self, raw: bytes, ros1: bool) -> None:
        self.raw, self.ros1 = raw, ros1
        self.origin = 0 if ros1 else 4
        if not ros1 and raw[:2] != b"\x00\x01":  # CDR_LE; anything else: rosbags
            raise BagDecodeError("not little-endian CDR")
        self.pos = self.origin

    def align(self, size: int) -> None:
        if not self.ros1:
            self.pos += -(self.pos - self.origin) % size

    def u32(self) -> int:
        self.align(4)
        (value,) = struct.unpack_from("<I", self.raw, self.pos)
        self.pos += 4
        return int(value)

    def string(self) -> str:
        size = self.u32()
        text = self.raw[self.pos:self.pos + size]
        self.pos += size
        if len(text) != size:
            raise BagDecodeError("short string")
        return text[:-1].decode() if not self.ros1 and size else text.decode()

    def floats(self) -> tuple[int, int]:
        """A float64 sequence: ``(offset, count)``."""
        count = self.u32()
        if count:
            self.align(8)
        offset = self.pos
        self.pos += 8 * count
        if self.pos > len(self.raw):
            raise BagDecodeError("short array")
        return offset, count


@dataclass
class Template:
    """One message's layout: the bytes that must match, and where the values are."""

    raw: NDArray[np.uint8]
    fixed: NDArray[np.intp]  # byte offsets that every message of the layout shares
    arrays: dict[str, tuple[int, int]]  # field -> (offset, count)
    names: tuple[str, ...] = ()
    stamp: tuple[int, str] | None = None  # offset of sec, its dtype ("<i4" CDR, "<u4" ROS 1)

    def matches(self, rows: NDArray[np.uint8]) -> NDArray[np.bool_]:
        return np.asarray((rows[:, self.fixed] == self.raw[self.fixed]).all(axis=1))

    def values(self, rows: NDArray[np.uint8], field: str) -> Array:
        offset, count = self.arrays[field]
        block = np.ascontiguousarray(rows[:, offset:offset + 8 * count])
        return block.view("<f8").reshape(len(rows), count)


def _template(raw: bytes, arrays: dict[str, tuple[int, int]], variable: list[tuple[int, int]],
              **extra: Any) -> Template:
    mask = np.ones(len(raw), dtype=bool)
    for offset, count in arrays.values():
        mask[offset:offset + 8 * count] = False
    for offset, size in variable:
        mask[offset:offset + size] = False
    return Template(np.frombuffer(raw, dtype=np.uint8), np.flatnonzero(mask), arrays, **extra)


def joint_state_template(raw: bytes, ros1: bool) -> Template:
    c = _Cursor(raw, ros1)
    if ros1:
        c.u32()  # seq: varies
    stamp = c.pos
    c.u32()
    c.u32()
    c.string()  # frame_id
    names = tuple(c.string() for _ in range(c.u32()))
    arrays = {field: c.floats() for field in ("position", "velocity", "effort")}
    if c.pos != len(raw) and not (len(raw) - c.pos < 4 and not ros1):
        raise BagDecodeError("trailing bytes")
    variable = [(stamp, 8)] + ([(c.origin, 4)] if ros1 else [])
    return _template(raw, arrays, variable, names=names,
                     stamp=(stamp, "<u4" if ros1 else "<i4"))


def multi_array_template(raw: bytes, ros1: bool) -> Template:
    c = _Cursor(raw, ros1)
    for _ in range(c.u32()):  # layout.dim: label, size, stride
        c.string()
        c.u32()
        c.u32()
    c.u32()  # data_offset
    arrays = {"data": c.floats()}
    if c.pos != len(raw) and not (len(raw) - c.pos < 4 and not ros1):
        raise BagDecodeError("trailing bytes")
    return _template(raw, arrays, [])


def _same(a: Array, b: Any) -> bool:
    b = np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _safe(deserialize: Deserialize, raw: bytes) -> Any:
    """rosbags' message, or None if it cannot decode it (a corrupt message)."""
    try:
        return deserialize(raw)
    except Exception:  # rosbags raises several types for corrupt data
        return None


def _checked_joint_state(raw: bytes, ros1: bool, deserialize: Deserialize) -> Template | None:
    """The template of ``raw`` if it decodes exactly as rosbags does, else None."""
    try:
        t = joint_state_template(raw, ros1)
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    msg = _safe(deserialize, raw)
    if msg is None or not hasattr(msg, "name"):
        return None
    row = t.raw[None, :]
    assert t.stamp is not None
    sec = row[:, t.stamp[0]:t.stamp[0] + 4].copy().view(t.stamp[1])[0, 0]
    ok = (tuple(msg.name) == t.names and int(sec) == msg.header.stamp.sec
          and all(_same(t.values(row, f)[0], getattr(msg, f)) for f in t.arrays))
    return t if ok else None


def _checked_multi_array(raw: bytes, ros1: bool, deserialize: Deserialize) -> Template | None:
    try:
        t = multi_array_template(raw, ros1)
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    msg = _safe(deserialize, raw)
    if msg is None or not hasattr(msg, "data"):
        return None
    return t if _same(t.values(t.raw[None, :], "data")[0], msg.data) else None


@dataclass
class Decoded:
    """A batch of messages decoded by layout.

    ``groups``: ``(indices into the batch, template, rows)`` per layout;
    ``others``: ``(index, rosbags message or None if undecodable)`` for the rest.
    """

    groups: list[tuple[NDArray[np.intp], Template, NDArray[np.uint8]]]
    others: list[tuple[int, Any]]


def decode(raws: Sequence[bytes], kind: str, ros1: bool, deserialize: Deserialize,
           cache: dict[int, Template | None]) -> Decoded:
    """Split a batch of raw messages of one type (``kind``: "joint_state" or
    "multi_array") into layouts read by numpy and messages left to rosbags.

    ``cache`` keeps the last template per message length across batches.
    """
    checked = _checked_joint_state if kind == "joint_state" else _checked_multi_array
    lengths = np.fromiter(map(len, raws), dtype=np.intp, count=len(raws))
    remaining = np.arange(len(raws))
    groups, tried = [], 0
    while remaining.size and tried < MAX_TEMPLATES:
        tried += 1
        first = raws[remaining[0]]
        template = cache.get(len(first))
        row = np.frombuffer(first, dtype=np.uint8)[None, :]
        if template is None or not template.matches(row)[0]:
            template = cache[len(first)] = checked(first, ros1, deserialize)
        if template is None:
            break
        same = remaining[lengths[remaining] == len(first)]
        rows = np.frombuffer(b"".join([raws[i] for i in same]), dtype=np.uint8)
        rows = rows.reshape(len(same), len(first))
        match = template.matches(rows)
        groups.append((same[match], template, rows[match]))
        remaining = np.setdiff1d(remaining, same[match], assume_unique=True)
    others = [(i, _safe(deserialize, raws[i])) for i in remaining.tolist()]
    return Decoded(groups, others)
