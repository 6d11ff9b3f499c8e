"""rnea-bag on odd inputs: ROS 1 bags, truncated MCAPs, bags without commands, corrupt or
empty files, wrong URDFs, bad options; and the batch decoder against rosbags' own."""

from __future__ import annotations

import csv
import io
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rnea_ros.samples import load_robot, sample_urdf
from rnea_ros.tools.bag import Options, analyse, main
from rnea_ros.tools.bag.analysis import _names, write_rows
from rnea_ros.tools.bag.reading import BagReader, Samples
from rnea_ros.tools.synthetic_bag import write_bag

MODEL = load_robot("arm7")
URDF = str(sample_urdf("arm7"))


@pytest.fixture(scope="module")
def bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same 2 s run as MCAP, ROS 1, and MCAP without commands."""
    root = tmp_path_factory.mktemp("bags")
    paths = {"mcap": root / "run", "ros1": root / "run.bag", "nocmd": root / "nocmd"}
    description = Path(URDF).read_text()
    write_bag(paths["mcap"], MODEL, duration=2.0, storage="mcap", nan_samples=[300],
              robot_description=description)
    write_bag(paths["ros1"], MODEL, duration=2.0, storage="ros1", nan_samples=[300],
              robot_description=description)
    write_bag(paths["nocmd"], MODEL, duration=2.0, storage="mcap", commands=False)
    return paths


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([*argv, "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def reference_samples(bag: Path, model: Any, states: str = "/joint_states",
                      commands: str = "/effort_controller/commands") -> Samples:
    """Samples decoded message by message with rosbags, as rnea-bag did before batches."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    n = model.nv
    rows: list[tuple[Any, ...]] = []
    command = np.full(n, np.nan)
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_KILTED)) as reader:
        wanted = [c for c in reader.connections if c.topic in (states, commands)]
        for connection, _, raw in reader.messages(connections=wanted):
            try:
                msg = reader.deserialize(raw, connection.msgtype)
            except Exception:  # a corrupt message: skipped
                continue
            if connection.topic == commands:
                if len(msg.data) == n:
                    command = np.asarray(msg.data, dtype=np.float64).copy()
                continue
            where = {name: k for k, name in enumerate(msg.name)}
            if not all(j in where for j in model.joint_names) or \
                    len(msg.position) != len(msg.name):
                continue
            index = [where[j] for j in model.joint_names]
            q = np.asarray(msg.position, dtype=np.float64)[index]
            if not np.isfinite(q).all():
                continue
            qd = (np.asarray(msg.velocity, dtype=np.float64)[index]
                  if len(msg.velocity) == len(msg.name) else np.full(n, np.nan))
            effort = (np.asarray(msg.effort, dtype=np.float64)[index]
                      if len(msg.effort) == len(msg.name) else np.full(n, np.nan))
            rows.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, q, qd,
                         effort, command))
    return Samples(*(np.array([r[k] for r in rows]) for k in range(5)))


def batch_samples(bag: Path, tmp_path: Path) -> tuple[Samples, dict[str, Any]]:
    reader = BagReader(Options(bag=bag, out=tmp_path))
    stats: dict[str, Any] = {}
    index = np.arange(MODEL.nv, dtype=np.int64)
    try:
        return Samples.join(list(reader.samples(MODEL, index, stats))), stats
    finally:
        reader.close()


def assert_same(a: Samples, b: Samples) -> None:
    for key in ("t", "q", "qd", "effort", "command"):
        assert np.array_equal(getattr(a, key), getattr(b, key), equal_nan=True), key


@pytest.mark.parametrize("kind", ["mcap", "ros1"])
def test_batch_decoding_gives_rosbags_numbers_exactly(kind: str, bags: dict[str, Path],
                                                      tmp_path: Path) -> None:
    samples, stats = batch_samples(bags[kind], tmp_path)
    assert len(samples) == 1999 and stats["skipped_nan"] == 1 and stats["commands"] == 2000
    assert_same(samples, reference_samples(bags[kind], MODEL))


def test_mixed_layouts_and_malformed_messages_decode_as_rosbags_does(tmp_path: Path) -> None:
    """Joint orders, subsets, missing velocities, frame ids and wrong-length commands mixed
    on one topic: every message is read (the batch decoder's layouts or rosbags)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    T = ts.types
    JointState, Multi = T["sensor_msgs/msg/JointState"], T["std_msgs/msg/Float64MultiArray"]
    Header, Time = T["std_msgs/msg/Header"], T["builtin_interfaces/msg/Time"]
    Layout, Dim = T["std_msgs/msg/MultiArrayLayout"], T["std_msgs/msg/MultiArrayDimension"]
    rng = np.random.default_rng(3)
    names = list(MODEL.joint_names)
    path = tmp_path / "mixed"
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=ts)
        commands = writer.add_connection("/effort_controller/commands", Multi.__msgtype__,
                                         typestore=ts)
        for k in range(6000):
            order = names if k % 3 else names[::-1]
            if k % 7 == 0:
                order = [*names[:5], "gripper", *names[5:]]
            if k % 11 == 0:
                order = names[:4]  # missing joints
            n = len(order)
            velocity = rng.normal(size=n) if k % 5 else np.zeros(0)
            effort = rng.normal(size=n) if k % 13 else rng.normal(size=n + 1)
            msg = JointState(header=Header(stamp=Time(sec=10 + k // 1000,
                                                      nanosec=(k % 1000) * 1_000_000),
                                           frame_id="base" if k % 17 else "world_frame"),
                             name=order, position=rng.normal(size=n), velocity=velocity,
                             effort=effort)
            raw = ts.serialize_cdr(msg, JointState.__msgtype__)
            if k % 500 == 7:  # corrupt: cut short, or noise
                raw = raw[:len(raw) // 2] if k % 1000 == 7 else rng.bytes(len(raw))
            writer.write(states, 10**10 + k * 10**6, raw)
            if k % 2:
                size = MODEL.nv if k % 9 else 3
                dims = [] if k % 4 else [Dim(label="joints", size=size, stride=size)]
                command = Multi(layout=Layout(dim=dims, data_offset=0),
                                data=rng.normal(size=size))
                writer.write(commands, 10**10 + k * 10**6 + 1000,
                             ts.serialize_cdr(command, Multi.__msgtype__))
    samples, stats = batch_samples(path, tmp_path)
    expected = reference_samples(path, MODEL)
    assert 4000 < len(samples) < 6000 and stats["skipped_missing"] == 546 - 1
    assert stats["skipped_undecodable"] == 12  # k = 7, 507, ..., 5507
    assert stats["skipped_commands"] > 0
    assert_same(samples, expected)


def test_ros1_bag_gives_the_same_analysis_as_mcap(bags: dict[str, Path], tmp_path: Path) -> None:
    mcap, _ = analyse(Options(bag=bags["mcap"], out=tmp_path / "m", plots=False, progress=False))
    ros1, _ = analyse(Options(bag=bags["ros1"], out=tmp_path / "r", plots=False, progress=False))
    assert ros1.model.name == "arm7" and ros1.written == mcap.written == 1999  # robot from bag
    for a, b in ((mcap.model_vs_measured, ros1.model_vs_measured),
                 (mcap.command_vs_measured, ros1.command_vs_measured)):
        for key, value in a.table().items():
            assert np.array_equal(value, b.table()[key]), key
    assert (tmp_path / "m" / "series.csv").read_text() == (tmp_path / "r" / "series.csv"
                                                           ).read_text()


def test_truncated_mcap_is_read_up_to_its_cut(bags: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A recording cut by a crash: no summary, no footer, the last chunk cut short."""
    full = next(bags["mcap"].glob("*.mcap"))
    crashed = tmp_path / "crashed"  # a rosbag2 directory without metadata.yaml
    crashed.mkdir()
    size = full.stat().st_size
    (crashed / "crashed_0.mcap").write_bytes(full.read_bytes()[:int(0.6 * size)])
    code, out, err = run([str(crashed), "--urdf", URDF, "--out", str(tmp_path / "t"),
                          "--no-plots", "--series", "csv"], capsys)
    assert code == 0, err
    assert err.count("\n") == 1 and "'crashed_0.mcap' is truncated" in err
    read = int(err.split("read ")[1].split(" whole messages")[0])
    written = int(out.split(" samples")[0].split()[-1])
    assert 0.5 * 4000 < read < 0.7 * 4000 and written in (read // 2 - 2, read // 2 - 1)
    # The same numbers as the whole bag's, but for the last half-window (one-sided fit there).
    assert main([str(bags["mcap"]), "--urdf", URDF, "--out", str(tmp_path / "f"), "--no-plots",
                 "--quiet", "--series", "csv"]) == 0
    with open(tmp_path / "t" / "series.csv") as a, open(tmp_path / "f" / "series.csv") as b:
        cut, whole = list(csv.reader(a)), list(csv.reader(b))
    assert len(cut) == written + 1 and cut[:-30] == whole[:len(cut) - 30]
    # A lone .mcap file cut short, and one cut before its first channel.
    alone = tmp_path / "alone.mcap"
    alone.write_bytes(full.read_bytes()[:int(0.3 * size)])
    assert run([str(alone), "--urdf", URDF, "--out", str(tmp_path / "a"), "--no-plots"],
               capsys)[0] == 0
    alone.write_bytes(full.read_bytes()[:100])
    code, _, err = run([str(alone), "--urdf", URDF, "--out", str(tmp_path / "b")], capsys)
    assert code == 1 and "before its first channel" in err and err.count("\n") == 1


def test_bag_without_commands_says_so(bags: dict[str, Path], tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([str(bags["nocmd"]), "--urdf", URDF, "--out", str(tmp_path / "n"),
                        "--no-plots"], capsys)
    assert code == 0 and err == ""
    report = (tmp_path / "n" / "report.md").read_text()
    assert "no command topic (`/effort_controller/commands` is not in the bag)" in report
    assert "None: the bag has no command topic" in report
    assert "| command rate" not in report and report.count("| joint | unit |") == 1


def test_wrong_urdf_whose_joints_are_a_subset_is_warned(bags: dict[str, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    code, _, err = run([str(bags["mcap"]), "--urdf", str(sample_urdf("stanford_arm")),
                        "--out", str(tmp_path / "w"), "--no-plots"], capsys)
    assert code == 0
    assert err.count("\n") == 1 and "1 joint the robot 'stanford_arm' lacks (joint7)" in err
    assert "is it the right URDF?" in (tmp_path / "w" / "report.md").read_text()


def test_inertia_warning_is_one_plain_line(bags: dict[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    # hua-2024 table I as printed: its link 2/3 tensors break the triangle inequality
    # (the shipped mixed_3dof.urdf is consistent since issue 39)
    paper = Path(__file__).resolve().parents[1] / "data" / "hua_2024_table1.urdf"
    code, _, err = run([str(bags["nocmd"]), "--urdf", str(paper),
                        "--out", str(tmp_path / "i"), "--no-plots"], capsys)
    assert code == 0
    lines = err.splitlines()
    assert sum("link 'link2'" in line for line in lines) == 1
    assert all(line.startswith("rnea-bag: warning: ") for line in lines)
    assert "Warning" not in err and ".py:" not in err


def test_missing_joints_are_named(bags: dict[str, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    stanford = tmp_path / "stanford"
    write_bag(stanford, load_robot("stanford_arm"), duration=0.3)
    code, _, err = run([str(stanford), "--urdf", URDF, "--out", str(tmp_path / "s")], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "lack 1 of the robot's 7 joints: joint7 (the bag has joint1, joint2" in err
    assert _names([f"j{k}" for k in range(25)]) == ", ".join(f"j{k}" for k in range(10)) + \
        " and 15 more"


def _cut(path: Path, fraction: float) -> bytes:
    data = path.read_bytes()
    return data[:int(fraction * len(data))]


@pytest.mark.parametrize(("name", "make", "message"), [
    ("random.mcap", lambda b: np.random.default_rng(0).bytes(5000), "as an MCAP file: File magic"),
    ("random.db3", lambda b: np.random.default_rng(0).bytes(5000), "file is not a database"),
    ("random.bag", lambda b: np.random.default_rng(0).bytes(5000), "no '#ROSBAG V2.0' header"),
    ("empty.mcap", lambda b: b"", "seems to be empty"),
    ("empty.db3", lambda b: b"", "as an sqlite3 rosbag2 file"),
    ("empty.bag", lambda b: b"", "as a ROS 1 bag"),
    ("notes.txt", lambda b: b"not a bag\n", "not a bag (expected a rosbag2 directory"),
    ("cut.db3", lambda b: _cut(next(b["sqlite"].glob("*.db3")), 0.4), "malformed"),
    ("cut.bag", lambda b: _cut(b["ros1"], 0.4), "needs `rosbag reindex`"),
    ("emptydir", None, "as a rosbag2 directory"),
    ("missing", "absent", "does not exist"),
])
def test_unreadable_input_gives_one_clear_line(name: str, make: Any, message: str,
                                               bags: dict[str, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    if make is None:
        path.mkdir()
    elif callable(make):
        sources = dict(bags)
        if name == "cut.db3":
            sources["sqlite"] = tmp_path / "sq"
            write_bag(sources["sqlite"], MODEL, duration=1.0, storage="sqlite3")
        path.write_bytes(make(sources))
    code, out, err = run([str(path), "--urdf", URDF, "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and out == ""
    assert message in err and err.startswith("rnea-bag: error: ") and err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), [
    (["--order", "99"], "--order 99: must be 3"),
    (["--order", "2"], "--order 2: must be 3"),
    (["--effort-rate-limits", "-5"], "--effort-rate-limits -5.0: limits must be finite and > 0"),
    (["--effort-rate-limits", "100", "0"], "--effort-rate-limits 0.0"),
    (["--window", "0"], "--window 0.0: must be > 0"),
    (["--window", "nan"], "--window nan: must be > 0 s and finite"),
    (["--time-base", "wall"], "--time-base 'wall'"),
])
def test_bad_options_are_refused(args: list[str], message: str, bags: dict[str, Path],
                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with NoWarning():
        code, _, err = run([str(bags["mcap"]), "--out", str(tmp_path / "o"), *args], capsys)
    assert code == 1 and message in err and err.count("\n") == 1


class NoWarning:
    """Fails if any Python warning (e.g. numpy's polyfit RankWarning) is emitted."""

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self._caught = self._catch.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc: object) -> None:
        self._catch.__exit__(*exc)
        assert not self._caught, [str(w.message) for w in self._caught]


def test_csv_rows_read_back_to_the_same_doubles() -> None:
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(50, 9)) * 10.0 ** rng.integers(-300, 300, size=(50, 9))
    rows[3, 2], rows[7, 0], rows[9, 8] = np.nan, 0.0, -0.0
    fast, slow = io.TextIOWrapper(io.BytesIO(), newline=""), io.StringIO()
    write_rows(fast, rows)
    fast.flush()
    text = fast.buffer.getvalue().decode()  # type: ignore[attr-defined]
    csv.writer(slow, lineterminator="\n").writerows(rows.tolist())
    back = np.array([[float(x) for x in line] for line in csv.reader(io.StringIO(text))])
    assert np.array_equal(back, rows, equal_nan=True) and text.count("nan") == 1
    assert back.tobytes() == np.array([[float(x) for x in line] for line in
                                       csv.reader(io.StringIO(slow.getvalue()))]).tobytes()
    rows[0, 0] = np.inf  # JSON has no infinity: the csv module writes that chunk
    other = io.StringIO()
    write_rows(other, rows)
    assert other.getvalue().startswith("inf,")


def test_plots_use_time_from_the_start_units_and_data_scaled_rates(tmp_path: Path) -> None:
    from rnea_ros.tools.bag.report import JointFigure

    t = np.linspace(0.0, 2.0, 200)
    figure = JointFigure()
    try:
        effort = np.sin(t)
        figure.draw("quiet", "N m", t, effort, effort, np.full_like(t, np.nan), 50.0 * np.sin(t),
                    40.0 * np.sin(t), 1000.0)
        top, _, bottom = figure.axes
        assert bottom.get_ylim()[1] < 100.0  # scaled to the data, not to the limits
        assert not any(line.get_visible() for line in figure.limits)
        assert figure.note.get_visible() and "limit ±1000 N m/s (off scale" in \
            figure.note.get_text()
        assert not figure.command.get_visible() and top.get_ylabel() == "effort [N m]"
        assert bottom.get_xlabel() == "time from the bag's start [s]"
        figure.draw("loud", "N", t, effort, effort, effort + 0.1, 1500.0 * np.sin(3 * t),
                    1400.0 * np.sin(3 * t), 1000.0)
        assert all(line.get_visible() for line in figure.limits) and bottom.get_ylim()[1] > 1500
        assert not figure.note.get_visible() and figure.command.get_visible()
        assert bottom.get_ylabel() == "effort rate [N/s]" and bottom.get_xlim() == (0.0, 2.0)
    finally:
        figure.close()


def test_report_plots_and_units_on_a_mixed_robot(tmp_path: Path) -> None:
    model = load_robot("stanford_arm")  # one prismatic joint
    bag = tmp_path / "stanford"
    write_bag(bag, model, duration=0.5)
    analysis, _ = analyse(Options(bag=bag, out=tmp_path / "p", urdf=Path(sample_urdf(
        "stanford_arm")), progress=False, plot_points=500))
    report = (tmp_path / "p" / "report.md").read_text()
    assert "efforts in N m / N" in report and "| joint3 | N |" in report
    assert "| joint1 | N m |" in report and analysis.t0 == 1.0
    assert (tmp_path / "p" / "joint_joint3.png").stat().st_size > 10000


def test_memory_kept_per_chunk_is_bounded(tmp_path: Path) -> None:
    """What outlives a chunk is bounded: the plot buffers hold copies of at most
    --plot-points samples, not views that would keep every chunk's arrays alive."""
    bag = tmp_path / "long"
    write_bag(bag, MODEL, duration=3.0)
    analysis, _ = analyse(Options(bag=bag, out=tmp_path / "o", urdf=Path(URDF), chunk=500,
                                  plot_points=200, plots=False, progress=False))
    assert analysis.segments == 1 and analysis.written == 3000
    for key, parts in analysis.plot.items():
        assert len(parts) >= 6 and all(p.base is None for p in parts), key
        assert 200 <= sum(len(p) for p in parts) <= 201, key


def _rechunk(source: Path, target: Path, compression: str, shuffle: int, chunk: int) -> None:
    """``source``'s messages rewritten with the ``mcap`` library: chunks of ``chunk`` bytes,
    compressed, every ``shuffle``-th message moved 3 ms late (out of order)."""
    from mcap.reader import make_reader
    from mcap.writer import CompressionType, Writer

    kinds = {"zstd": CompressionType.ZSTD, "lz4": CompressionType.LZ4, "": CompressionType.NONE}
    with open(source, "rb") as src, open(target, "wb") as dst:
        writer = Writer(dst, chunk_size=chunk, compression=kinds[compression])
        writer.start(profile="ros2")
        schemas: dict[int, int] = {}
        channels: dict[int, int] = {}
        for k, (schema, channel, message) in enumerate(make_reader(src).iter_messages()):
            if schema.id not in schemas:
                schemas[schema.id] = writer.register_schema(schema.name, schema.encoding,
                                                            schema.data)
            if channel.id not in channels:
                channels[channel.id] = writer.register_channel(
                    channel.topic, channel.message_encoding, schemas[schema.id])
            late = 3_000_000 if shuffle and k % shuffle == 0 else 0
            writer.add_message(channels[channel.id], message.log_time + late, message.data,
                               message.publish_time)
        writer.finish()


@pytest.mark.parametrize(("compression", "shuffle", "chunk"), [
    ("zstd", 0, 20000), ("lz4", 0, 20000), ("", 0, 20000),
    ("zstd", 97, 10**9),  # one chunk, out of order inside: sorted as rosbags sorts it
    ("", 5, 20000),  # chunks overlapping in time: rosbags' own merge
])
def test_chunk_reader_gives_rosbags_messages_in_rosbags_order(
        compression: str, shuffle: int, chunk: int, bags: dict[str, Path],
        tmp_path: Path) -> None:
    from rnea_ros.tools.bag.sources import RosbagsSource

    target = tmp_path / "rechunked.mcap"
    _rechunk(next(bags["mcap"].glob("*.mcap")), target, compression, shuffle, chunk)
    source = RosbagsSource(target)
    topics = ["/joint_states", "/effort_controller/commands"]
    fast = list(source.messages(topics))
    used_fast = source.fast is not None
    source.fast = None  # rosbags' own reader
    assert fast == list(source.messages(topics)) and len(fast) == 4000
    assert used_fast == (shuffle != 5)
    assert all(a[1] <= b[1] for a, b in pairwise(fast))  # by receive time
    source.close()


def test_batches_give_the_numbers_of_the_sample_by_sample_pipeline(bags: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """rnea-bag before batches: rosbags' messages one at a time, a hole (here the NaN
    sample) flushing the chunk, a full chunk evaluated with a half-window of overlap. Its
    CSV and statistics are those of the batch pipeline, to the last bit."""
    from rnea_ros.tools.bag.analysis import Analysis
    from rnea_ros.tools.bag.statistics import sequential_sum

    options = Options(bag=bags["mcap"], out=tmp_path / "batch", urdf=Path(URDF), chunk=500,
                      plots=False, progress=False)
    batch, _ = analyse(options)
    reference = reference_samples(bags["mcap"], MODEL)
    old = Analysis(MODEL, Options(bag=bags["mcap"], out=tmp_path / "old", chunk=500,
                                  plots=False, progress=False), list(MODEL.joint_names))
    old.dt = batch.dt
    assert old.dt is not None
    old.stride = batch.stride
    chunk: list[int] = []
    head = 0

    def flush(final: bool) -> int:
        part = reference.take(np.array(chunk, dtype=np.intp))
        if final:
            old.segments += 1
            old.process(part, head, 0)
            return 0
        half = old.window_samples() // 2
        old.process(part, head, half)
        del chunk[:len(chunk) - 2 * half]
        return half

    for k in range(len(reference)):
        if k:
            period = float(reference.t[k] - reference.t[k - 1])
            old.period_sums[0] += 1
            old.period_sums[1] = sequential_sum(old.period_sums[1], np.array([period]))
            if period > 1.5 * old.dt or period <= 0:
                old.holes += 1
                if chunk:
                    flush(True)
                chunk, head = [], 0
        chunk.append(k)
        if len(chunk) >= 500:
            head = flush(False)
    flush(True)
    old.csv_file.close()
    assert (old.segments, old.holes) == (batch.segments, batch.holes) == (2, 1)
    assert old.period_sums[:2] == batch.period_sums[:2]
    for a, b in ((old.model_vs_measured, batch.model_vs_measured),
                 (old.command_vs_measured, batch.command_vs_measured)):
        for key, value in a.table().items():
            assert np.array_equal(value, b.table()[key], equal_nan=True), key
    assert (tmp_path / "old" / "series.csv").read_bytes() == \
        (tmp_path / "batch" / "series.csv").read_bytes()


def write_states(path: Path, t: np.ndarray, q: np.ndarray, effort: np.ndarray | None,
                 stamps: np.ndarray) -> None:
    """two_link_rr joint states recorded at times ``t`` with header ``stamps`` (effort
    ``None``: the field left empty)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_KILTED)
    state, header, time = (ts.types[f"{k}"] for k in ("sensor_msgs/msg/JointState",
                                                        "std_msgs/msg/Header",
                                                        "builtin_interfaces/msg/Time"))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        topic = writer.add_connection("/joint_states", state.__msgtype__, typestore=ts)
        for k in range(t.size):
            s = float(stamps[k]) + 1.0
            msg = state(header=header(stamp=time(sec=int(s), nanosec=round((s % 1) * 1e9)),
                                      frame_id=""), name=["joint1", "joint2"], position=q[k],
                        velocity=np.zeros(0),
                        effort=np.zeros(0) if effort is None else effort[k])
            writer.write(topic, round((t[k] + 1.0) * 1e9), ts.serialize_cdr(msg, state.__msgtype__))


RR = str(sample_urdf("two_link_rr"))
T = np.arange(0.0, 2.0, 0.005)
Q = np.column_stack([0.5 * np.sin(T), 0.4 * np.cos(1.3 * T)])


def test_shuffled_stamps_are_refused_and_few_backward_steps_warned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shuffled = np.random.default_rng(0).permutation(T)
    write_states(tmp_path / "shuffled", T, Q, np.ones_like(Q), shuffled)
    out = tmp_path / "o"
    code, _, err = run([str(tmp_path / "shuffled"), "--urdf", RR, "--out", str(out)], capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "steps of the header stamps of '/joint_states' go back in time" in err
    assert "refused, not sorted" in err and "--time-base receive" in err
    assert not out.exists()  # nothing written
    # The receive times are in order: that analysis runs.
    code, _, err = run([str(tmp_path / "shuffled"), "--urdf", RR, "--out", str(out),
                        "--time-base", "receive", "--no-plots"], capsys)
    assert code == 0, err
    swapped = T.copy()
    swapped[[100, 101]] = swapped[[101, 100]]  # one message out of order: warned
    write_states(tmp_path / "swapped", T, Q, np.ones_like(Q), swapped)
    code, out_text, err = run([str(tmp_path / "swapped"), "--urdf", RR, "--out",
                               str(tmp_path / "s"), "--no-plots"], capsys)
    assert code == 0 and "warning: 1 of 399 steps of the header stamps" in err
    assert "1 warning;" in out_text
    assert "1 of 399 steps" in (tmp_path / "s" / "report.md").read_text()


@pytest.mark.parametrize("effort", ["nan", "missing"])
def test_no_efforts_is_said_never_rms_0(effort: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_states(tmp_path / "b", T, Q, np.full_like(Q, np.nan) if effort == "nan" else None, T)
    code, out, err = run([str(tmp_path / "b"), "--urdf", RR, "--out", str(tmp_path / "o"),
                          "--no-plots"], capsys)
    assert code == 0, err
    assert "warning: no efforts recorded for 2 of 2 joints (joint1, joint2)" in err
    assert out.count("model - measured: no efforts recorded") == 2 and "RMS 0" not in out
    report = (tmp_path / "o" / "report.md").read_text()
    assert report.count("| 0 | no efforts recorded |") == 2


def test_outputs_are_never_overwritten_nor_an_input(bags: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    args = [str(bags["nocmd"]), "--urdf", URDF, "--no-plots", "--series", "csv"]
    assert run([*args, "--out", str(out)], capsys)[0] == 0
    before = (out / "series.csv").read_bytes()
    (out / "report.md").write_text("mine")
    code, _, err = run([*args, "--out", str(out)], capsys)
    assert code == 1 and err.count("\n") == 1 and "already exist" in err and "--force" in err
    assert (out / "report.md").read_text() == "mine"
    assert run([*args, "--out", str(out), "--force"], capsys)[0] == 0
    assert (out / "report.md").read_text() != "mine" and (out / "series.csv").read_bytes() == before
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no staging left
    code, _, err = run([*args, "--out", str(bags["nocmd"]), "--force"], capsys)
    assert code == 1 and "is the input" in err and err.count("\n") == 1
    assert not (bags["nocmd"] / "report.md").exists()


@pytest.mark.parametrize(("where", "message"), [
    ("/proc/x", "--out: cannot create directory '/proc/x'"),
    ("file", "exists and is not a directory"),
])
def test_unwritable_out_is_one_line(where: str, message: str, bags: dict[str, Path],
                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "file" if where == "file" else Path(where)
    if where == "file":
        out.write_text("keep")
    code, _, err = run([str(bags["nocmd"]), "--urdf", URDF, "--out", str(out)], capsys)
    assert code == 1 and message in err and err.count("\n") == 1, err
    assert where != "file" or out.read_text() == "keep"


def test_bad_metadata_yaml_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    """A hand-edited metadata.yaml that is not YAML (8 lines of parser message before)."""
    bag = tmp_path / "sq"
    write_bag(bag, MODEL, duration=0.2, storage="sqlite3")
    meta = bag / "metadata.yaml"
    meta.write_text(meta.read_text().replace("  files:", "  files: 3"))
    code, out, err = run([str(bag), "--urdf", URDF, "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert err.startswith("rnea-bag: error: cannot read bag") and "metadata.yaml" in err
