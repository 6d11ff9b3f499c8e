"""Where raw messages come from: ``rosbags`` (rosbag2 MCAP/sqlite3, ROS 1 ``.bag``), or a
truncated MCAP read record by record up to the cut.

A source gives its topics (:class:`Topic`: name, message type, serialisation
``"cdr"`` or ``"ros1"``), its raw messages ``(topic, receive time [ns], bytes)``
in time order, and ``deserialize(raw, topic)`` for the general case.

A recording stopped by a crash or a power loss leaves an MCAP without its
summary and footer (and a rosbag2 directory without ``metadata.yaml``).
``rosbags`` refuses it ("File end magic is invalid"); :class:`McapStreamSource`
reads it as ``mcap recover`` does: record after record with the ``mcap``
library's stream reader, then the whole messages of an uncompressed chunk cut
short, and says how much it read (:attr:`McapStreamSource.recovered`).
"""

from __future__ import annotations

import functools
import io
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from rnea_ros.tools.bag.errors import BagDecodeError, BagError


@dataclass(frozen=True)
class Topic:
    name: str
    msgtype: str
    encoding: str  # "cdr" (ROS 2) or "ros1"


RULE = "=" * 80 + "\nMSG: "  # between the types of a concatenated definition
# The message types rnea-bag deserialises, as a bag carries their definitions
# (``Typestore.generate_msgdef``; the same in every ROS 2 distribution): the joint
# states, the commands and ``/robot_description``.
MESSAGES = {
    "sensor_msgs/msg/JointState": (
        "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\n"
        f"float64[] effort\n{RULE}std_msgs/Header\nbuiltin_interfaces/Time stamp\n"
        f"string frame_id\n{RULE}builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"),
    "std_msgs/msg/Float64MultiArray": (
        f"std_msgs/MultiArrayLayout layout\nfloat64[] data\n{RULE}std_msgs/MultiArrayLayout\n"
        f"std_msgs/MultiArrayDimension[] dim\nuint32 data_offset\n{RULE}"
        "std_msgs/MultiArrayDimension\nstring label\nuint32 size\nuint32 stride\n"),
    "std_msgs/msg/String": "string data\n",
}


@functools.cache
def _message_types() -> dict[str, Any]:
    """The field definitions of :data:`MESSAGES` and the types they use (parsed once)."""
    from rosbags.typesys import get_types_from_msg

    types: dict[str, Any] = {}
    for name, text in MESSAGES.items():
        types.update(get_types_from_msg(text, name))
    return types


def typestore() -> Any:
    """A type store of :data:`MESSAGES` (a new one each call: a truncated MCAP's source
    registers its schemas into it). rosbags decodes with it only what a bag carries no
    definition of (a rosbag2 sqlite3 file before Iron); a whole distribution's store
    (``Stores.ROS2_KILTED``, 163 types, its module importing those of seven earlier
    distributions) cost each fresh process 0.07-0.09 s of CPU in its first bag
    (docs/performance.md)."""
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.EMPTY)
    store.register(_message_types())
    return store


class RosbagsSource:
    """What ``rosbags`` opens: a rosbag2 directory, an ``.mcap``/``.db3`` file, a ROS 1 ``.bag``."""

    recovered: str | None = None

    def __init__(self, path: Path) -> None:
        from rosbags.highlevel import AnyReader

        self.reader = AnyReader([path], default_typestore=typestore())
        self.reader.open()
        encoding = "cdr" if self.reader.is2 else "ros1"
        self.topics = {c.topic: Topic(c.topic, c.msgtype, encoding)
                       for c in self.reader.connections}
        self.counts: dict[str, int] = {}
        for c in self.reader.connections:
            self.counts[c.topic] = self.counts.get(c.topic, 0) + c.msgcount

        files = mcap_files(path)
        self.fast = _chunk_plan(files[0]) if self.reader.is2 and len(files) == 1 else None
        self.file = files[0] if self.fast is not None else None

    def messages(self, topics: Sequence[str]) -> Iterator[tuple[str, int, bytes]]:
        if self.fast is not None and self.file is not None:
            yield from _chunk_messages(self.file, *self.fast, set(topics))
            return
        wanted = [c for c in self.reader.connections if c.topic in topics]
        for connection, stamp_ns, raw in self.reader.messages(connections=wanted):
            yield connection.topic, stamp_ns, raw

    def deserialize(self, raw: bytes, topic: str) -> Any:
        return self.reader.deserialize(raw, self.topics[topic].msgtype)

    def close(self) -> None:
        self.reader.close()


def _chunk_plan(file: Path) -> tuple[list[Any], dict[int, str]] | None:
    """The chunks of an indexed MCAP in file order and its channels' topics, when reading
    them in file order gives rosbags' order; None otherwise.

    rosbags yields an MCAP's messages by receive time, ties in file order (a heap merge of
    the chunks, each sorted stably). When no chunk starts before the previous one ends,
    that is each chunk in turn, sorted stably: what :func:`_chunk_messages` does.
    """
    from mcap.reader import make_reader

    try:
        with open(file, "rb") as stream:
            summary = make_reader(stream).get_summary()
    except Exception:  # no usable summary: rosbags' reader decides
        return None
    if summary is None or not summary.chunk_indexes:
        return None
    chunks = sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
    if any(a.message_end_time > b.message_start_time for a, b in pairwise(chunks)):
        return None
    return chunks, {cid: channel.topic for cid, channel in summary.channels.items()}


def _chunk_messages(file: Path, chunks: list[Any], topics: dict[int, str], wanted: set[str]
                    ) -> Iterator[tuple[str, int, bytes]]:
    """``(topic, log time, data)`` of the wanted topics, chunk by chunk (MCAP spec: Chunk
    record, op 0x06; Message, op 0x05), about 4 times faster than rosbags' reader."""
    ids = {cid: topic for cid, topic in topics.items() if topic in wanted}
    record = struct.Struct("<BQ").unpack_from
    message = struct.Struct("<HIQ").unpack_from
    with open(file, "rb") as stream:
        for chunk in chunks:
            if chunk.message_index_offsets and not any(c in ids for c in
                                                       chunk.message_index_offsets):
                continue
            stream.seek(chunk.chunk_start_offset)
            data = _chunk_records(stream.read(chunk.chunk_length))
            low, high = chunk.message_start_time, chunk.message_end_time
            out = []
            at, size = 0, len(data)
            while at < size:
                opcode, length = record(data, at)
                if opcode == 0x05:
                    channel, _, log_time = message(data, at + 9)
                    topic = ids.get(channel)
                    if topic is not None and low <= log_time <= high:
                        out.append((topic, log_time, data[at + 31:at + 9 + length]))
                at += 9 + length
            if any(a[1] > b[1] for a, b in pairwise(out)):
                out.sort(key=lambda m: m[1])  # stable, as rosbags sorts a chunk
            yield from out


def _chunk_records(chunk: bytes) -> bytes:
    """The records of a Chunk record, decompressed and checked as rosbags does."""
    import zlib

    # opcode, record length, message start and end times, then these:
    size, crc, name = struct.unpack_from("<QII", chunk, 25)
    compression = chunk[41:41 + name].decode()
    at = 41 + name
    (length,) = struct.unpack_from("<Q", chunk, at)
    data = chunk[at + 8:at + 8 + length]
    if compression == "zstd":
        import zstandard

        data = zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    elif compression == "lz4":
        import lz4.frame  # type: ignore[import-untyped]

        data = lz4.frame.decompress(data)
    elif compression:
        raise BagDecodeError(f"unsupported chunk compression '{compression}'")
    if len(data) != size or (crc and zlib.crc32(data) != crc):
        raise BagDecodeError("chunk size or checksum mismatch")
    return data


def mcap_files(path: Path) -> list[Path]:
    """The MCAP files of ``path`` (a file or a rosbag2 directory), in name order."""
    if path.is_dir():
        return sorted(path.glob("*.mcap"))
    return [path] if path.suffix == ".mcap" else []


class McapStreamSource:
    """An MCAP without (valid) summary or footer, read record by record up to its cut.

    A first pass learns the topics and counts the messages; :meth:`messages`
    streams the files again (memory does not grow with the bag), in their
    written order, which is the receive order of a recording.
    """

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.typestore = typestore()
        self.topics: dict[str, Topic] = {}
        self.counts: dict[str, int] = {}
        notes = []
        for file in files:
            read, position, cut, first, last = 0, 0, False, None, None
            for item in self._records(file):
                if isinstance(item, int):
                    position, cut = item, True
                elif item[0] is not None:
                    self.counts[item[0]] = self.counts.get(item[0], 0) + 1
                    read += 1
                    first = item[1] if first is None else first
                    last = item[1]
            if cut:
                span = "" if first is None or last is None else \
                    f" ({(last - first) * 1e-9:.2f} s of recording)"
                notes.append(f"'{file.name}' is truncated (no footer: a recording cut short): "
                             f"read {read} whole messages{span} from its "
                             f"{_mib(file.stat().st_size)}, up to byte {position}")
        if not self.topics:
            size = sum(f.stat().st_size for f in files)
            raise BagError(f"cut short after {_mib(size)}, before its first channel: "
                           "no message to read")
        self.recovered = "; ".join(notes) or None

    def _records(self, file: Path) -> Iterator[Any]:
        """``(topic, log time, data)`` per message, then the byte offset of a cut, if any."""
        from mcap.data_stream import ReadDataStream
        from mcap.exceptions import McapError
        from mcap.records import Channel, Message, Schema
        from mcap.stream_reader import StreamReader

        schemas: dict[int, Schema] = {}
        channels: dict[int, str] = {}

        def learn(record: Any) -> None:
            if isinstance(record, Schema):
                schemas[record.id] = record
            elif isinstance(record, Channel) and record.schema_id in schemas:
                schema = schemas[record.schema_id]
                self._register(schema.name, schema.encoding, schema.data)
                channels[record.id] = record.topic
                self.topics[record.topic] = Topic(record.topic, schema.name, "cdr")

        with open(file, "rb") as stream:
            position = 0
            try:
                reader = StreamReader(stream, record_size_limit=file.stat().st_size)
                for record in reader.records:
                    if isinstance(record, Message):
                        yield channels.get(record.channel_id), record.log_time, record.data
                        continue
                    learn(record)
                    position = stream.tell()
            except (McapError, ValueError, EOFError, OSError, struct.error):
                stream.seek(position)
                cut = position
                for opcode, body, end in _partial_chunk(stream.read()):
                    data = ReadDataStream(io.BytesIO(body))
                    if opcode == 0x05:
                        message = Message.read(data, len(body))
                        yield channels.get(message.channel_id), message.log_time, message.data
                    elif opcode in (0x03, 0x04):
                        learn((Schema if opcode == 0x03 else Channel).read(data))
                    cut = position + end
                yield cut

    def _register(self, name: str, encoding: str, data: bytes) -> None:
        if name in self.typestore.types or encoding != "ros2msg":
            return
        from rosbags.typesys import get_types_from_msg

        try:
            self.typestore.register(get_types_from_msg(data.decode(), name))
        except Exception:  # an unparsable schema: its topic cannot be decoded, others can
            return

    def messages(self, topics: Sequence[str]) -> Iterator[tuple[str, int, bytes]]:
        wanted = set(topics)
        for file in self.files:
            for item in self._records(file):
                if not isinstance(item, int) and item[0] in wanted:
                    yield item

    def deserialize(self, raw: bytes, topic: str) -> Any:
        return self.typestore.deserialize_cdr(raw, self.topics[topic].msgtype)

    def close(self) -> None:
        pass


def _partial_chunk(tail: bytes) -> Iterator[tuple[int, bytes, int]]:
    """The whole records of an uncompressed chunk cut short: ``(opcode, body, bytes
    consumed)`` each (MCAP spec: Chunk, op 0x06, holds Schema 0x03, Channel 0x04 and
    Message 0x05 records)."""
    if len(tail) < 41 or tail[0] != 0x06:
        return
    at = 1 + 8 + 8 + 8 + 8 + 4  # opcode, length, start/end times, uncompressed size, CRC
    (size,) = struct.unpack_from("<I", tail, at)
    if size:  # compressed: a cut stream cannot be decompressed reliably
        return
    at += 4 + 8  # compression (empty), records length
    while at + 9 <= len(tail):
        opcode, length = tail[at], struct.unpack_from("<Q", tail, at + 1)[0]
        end = at + 9 + length
        if end > len(tail):
            return
        yield opcode, tail[at + 9:end], end
        at = end


def _mib(size: int) -> str:
    return f"{size / 2**20:.2f} MiB" if size >= 2**20 else f"{size} bytes"


def _starts_with(path: Path, magic: bytes) -> bool:
    with open(path, "rb") as stream:
        return stream.read(len(magic)) == magic


def _is_mcap(path: Path) -> bool:
    return _starts_with(path, b"\x89MCAP0\r\n")


def open_source(path: Path) -> RosbagsSource | McapStreamSource:
    """A source for ``path``; :class:`BagError` with one line when nothing can read it."""
    if not path.exists():
        raise BagError(f"bag '{path}' does not exist")
    try:
        return RosbagsSource(path)
    except Exception as exc:  # rosbags raises several types for unreadable bags
        error = exc
    files = mcap_files(path)
    if files and all(_is_mcap(f) for f in files):
        try:
            return McapStreamSource(files)
        except Exception as exc:  # whatever the cause: one line
            raise BagError(f"cannot read bag '{path}' as an MCAP file: {exc}") from None
    kinds = {".bag": "a ROS 1 bag", ".mcap": "an MCAP file", ".db3": "an sqlite3 rosbag2 file"}
    kind = "a rosbag2 directory" if path.is_dir() else kinds.get(path.suffix)
    if kind is None:
        raise BagError(f"cannot read bag '{path}': not a bag (expected a rosbag2 directory, or "
                       "an .mcap, .db3 or ROS 1 .bag file)")
    detail = str(error).strip().rstrip(".") or type(error).__name__
    if path.suffix == ".bag" and not _starts_with(path, b"#ROSBAG V2.0"):
        detail = "no '#ROSBAG V2.0' header"
    elif path.suffix == ".bag":
        detail += " (a ROS 1 recording cut short needs `rosbag reindex`)"
    raise BagError(f"cannot read bag '{path}' as {kind}: {detail}")
