"""``rnea-bag``: model torques, torque rates and limit violations from a recorded bag.

Reads a rosbag2 (MCAP or sqlite3) with ``rosbags`` (no ROS install needed),
takes the robot from ``--urdf`` or the bag's ``/robot_description``, and for
every valid ``sensor_msgs/JointState`` sample computes, on the batch core:
``q_dot`` (recorded, or differentiated), ``q_ddot`` and ``q_dddot`` by
Savitzky-Golay differentiation, the model torque ``tau = ID(q, q_dot,
q_ddot)``, gravity ``g(q)`` and ``tau_dot`` (our recursive derivative). The
measured effort (the JointState ``effort`` field) and the commanded effort
(``std_msgs/Float64MultiArray`` in ``--joints`` order, held until the next
command, aligned on receive time) are compared with the model.

Savitzky-Golay: a centred window of ``--window`` seconds and polynomial order
``--order`` (>= 3 for the jerk). It has no lag inside the data (the fit is
centred); the first and last half-window are fitted one-sidedly. Noise gain:
a white noise of deviation ``s`` on ``q`` gives about ``s * c_k / (W dt)^k``
on the k-th derivative (``c_k`` of order 1-10 for orders 3-4), so widen the
window for noisy encoders. Sampling is assumed near-uniform: a hole of more
than 1.5 nominal periods (a lost or skipped message) splits the data into
segments differentiated apart; gaps of more than 5 periods are reported.

Memory stays bounded: samples are processed in chunks (``--chunk``) with
overlap for the filter, series are appended to the CSV as they come, and the
statistics are running sums; plots use at most ``--plot-points`` points.

Outputs in ``--out``: ``series.csv`` (every sample), ``joint_<name>.png``
(measured vs model vs command, residual, ``tau_dot`` with limits),
``report.md`` (tables and plots).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.signal import savgol_filter

from rnea_ros.core.errors import RneaError
from rnea_ros.core.gfd import rnea_derivative_batch
from rnea_ros.core.model import RobotModel
from rnea_ros.core.rnea import gravity_batch, rnea_batch
from rnea_ros.core.urdf import load_urdf

Array = NDArray[np.float64]
PROG = "rnea-bag"


class BagError(RneaError):
    """A bag, topic or robot that cannot be analysed (one clear message)."""


@dataclass
class Options:
    bag: Path
    out: Path
    urdf: Path | None = None
    states_topic: str = "/joint_states"
    commands_topic: str = "/effort_controller/commands"
    joints: list[str] | None = None
    time_base: str = "header"
    window: float = 0.05
    order: int = 4
    recorded_velocity: bool = True
    effort_rate_limits: list[float] = field(default_factory=lambda: [1000.0])
    chunk: int = 20000
    plot_points: int = 4000
    plots: bool = True
    progress: bool = True


# ----------------------------------------------------------------- statistics
class PairStats:
    """Running residual statistics of ``a - b`` per joint, and the correlation of a and b."""

    def __init__(self, n: int) -> None:
        self.count = np.zeros(n)
        self.sums = {k: np.zeros(n) for k in ("r", "r2", "abs", "a", "b", "ab", "a2", "b2")}
        self.max = np.zeros(n)

    def add(self, a: Array, b: Array) -> None:
        ok = np.isfinite(a) & np.isfinite(b)
        a, b = np.where(ok, a, 0.0), np.where(ok, b, 0.0)
        r = a - b
        self.count += ok.sum(axis=0)
        for key, value in (("r", r), ("r2", r * r), ("abs", np.abs(r)), ("a", a), ("b", b),
                           ("ab", a * b), ("a2", a * a), ("b2", b * b)):
            self.sums[key] += value.sum(axis=0)
        if len(r):
            self.max = np.maximum(self.max, np.abs(r).max(axis=0))

    def table(self) -> dict[str, Array]:
        n = np.maximum(self.count, 1)
        s = self.sums
        cov = s["ab"] / n - s["a"] * s["b"] / n**2
        var_a = s["a2"] / n - (s["a"] / n) ** 2
        var_b = s["b2"] / n - (s["b"] / n) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            corr = cov / np.sqrt(var_a * var_b)
        return {"samples": self.count, "rms": np.sqrt(s["r2"] / n), "mae": s["abs"] / n,
                "max": self.max, "bias": s["r"] / n, "correlation": corr}


@dataclass
class Violation:
    joint: str
    kind: str  # "effort" or "effort_rate"
    start: float
    end: float
    peak: float
    limit: float


class ViolationTracker:
    """Time ranges where ``|x| > limit``, per joint, with the peak value."""

    def __init__(self, joints: Sequence[str], limits: Array, kind: str) -> None:
        self.joints, self.limits, self.kind = list(joints), limits, kind
        self.open: dict[int, Violation] = {}
        self.done: list[Violation] = []

    def add(self, t: Array, x: Array) -> None:
        over = np.abs(x) > self.limits
        last = len(t) - 1
        for j in range(len(self.joints)):
            edges = np.diff(np.concatenate([[0], over[:, j].astype(np.int8), [0]]))
            starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
            if len(starts) == 0 or starts[0] != 0:
                self._finish(j)  # a run open from the previous chunk ended at its edge
            for s, e in zip(starts, ends, strict=True):
                segment = x[s:e + 1, j]
                peak = float(segment[np.argmax(np.abs(segment))])
                v = self.open.get(j) if s == 0 else None
                if v is None:
                    self._finish(j)
                    v = self.open[j] = Violation(self.joints[j], self.kind, float(t[s]),
                                                 float(t[e]), peak, float(self.limits[j]))
                v.end = float(t[e])
                if abs(peak) > abs(v.peak):
                    v.peak = peak
                if e != last:
                    self._finish(j)

    def _finish(self, j: int) -> None:
        if j in self.open:
            self.done.append(self.open.pop(j))

    def close(self) -> list[Violation]:
        self.done.extend(self.open.values())
        self.open.clear()
        return sorted(self.done, key=lambda v: (v.start, v.joint))


# -------------------------------------------------------------------- reading
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


# ------------------------------------------------------------------ analysis
class Analysis:
    """Chunked differentiation, model evaluation, statistics and outputs."""

    def __init__(self, model: RobotModel, options: Options, joints: Sequence[str]) -> None:
        self.model, self.options = model, options
        self.joints = list(joints)
        n = model.nv
        self.model_vs_measured = PairStats(n)
        self.command_vs_measured = PairStats(n)
        rates = np.array(options.effort_rate_limits, dtype=np.float64)
        self.rate_limits = np.full(n, rates[0]) if rates.size == 1 else rates
        if self.rate_limits.shape != (n,):
            raise BagError(f"--effort-rate-limits needs 1 or {n} values")
        self.effort_violations = ViolationTracker(model.joint_names, model.effort_limit,
                                                  "effort")
        self.rate_violations = ViolationTracker(model.joint_names, self.rate_limits,
                                                "effort_rate")
        self.dt: float | None = None
        self.period_sums = [0, 0.0, 0.0]  # count, sum, sum of squares: the jitter
        self.gaps = 0
        self.holes = 0
        self.segments = 0
        self.written = 0
        self.plot: dict[str, list[Array]] = {k: [] for k in
                                             ("t", "tau", "effort", "command", "tau_dot")}
        self.stride = 1
        options.out.mkdir(parents=True, exist_ok=True)
        self.csv_file = open(options.out / "series.csv", "w", newline="", encoding="utf-8")
        self.csv = csv.writer(self.csv_file)
        columns = ["t"]
        for kind in ("q", "qd", "qdd", "qddd", "tau_model", "gravity", "tau_dot_model",
                     "effort_measured", "effort_command", "residual"):
            columns += [f"{kind}.{j}" for j in model.joint_names]
        self.csv.writerow(columns)

    def window_samples(self) -> int:
        assert self.dt is not None  # set from BagReader.nominal_period() before run()
        w = max(round(self.options.window / self.dt) | 1, self.options.order + 2)
        return w if w % 2 else w + 1

    def process(self, chunk: Samples, head: int, tail: int) -> None:
        """Differentiate ``chunk`` and evaluate samples ``[head, len - tail)``."""
        t, q, qd_rec, effort, command = chunk.arrays()
        if len(t) == 0:
            return
        w = min(self.window_samples(), len(t) if len(t) % 2 else len(t) - 1)
        order = min(self.options.order, w - 1)
        derivative = []
        for k in (1, 2, 3):
            if w > order and order >= k:
                derivative.append(savgol_filter(q, w, order, deriv=k, delta=self.dt, axis=0,
                                                mode="interp"))
            else:
                derivative.append(np.zeros_like(q))
        qd = qd_rec if (self.options.recorded_velocity and np.isfinite(qd_rec).all()) \
            else derivative[0]
        sl = slice(head, len(t) - tail)
        t, q, qd, effort, command = t[sl], q[sl], qd[sl], effort[sl], command[sl]
        qdd, qddd = derivative[1][sl], derivative[2][sl]
        if len(t) == 0:
            return
        tau = rnea_batch(self.model, q, qd, qdd)
        g = gravity_batch(self.model, q)
        _, tau_dot = rnea_derivative_batch(self.model, q, qd, qdd, qddd)
        self.model_vs_measured.add(tau, effort)
        self.command_vs_measured.add(command, effort)
        measured = np.asarray(np.isfinite(effort).all(axis=1))
        assert self.dt is not None
        subject = np.where(measured[:, None], effort, tau)
        self.effort_violations.add(t, subject)
        rate = np.where(measured[:, None], np.gradient(effort, self.dt, axis=0)
                        if len(t) > 1 else 0.0, tau_dot)
        self.rate_violations.add(t, rate)
        rows = np.column_stack([t, q, qd, qdd, qddd, tau, g, tau_dot, effort, command,
                                tau - effort])
        self.csv.writerows(rows.tolist())
        keep = slice((-self.written) % self.stride, None, self.stride)
        for key, value in (("t", t), ("tau", tau), ("effort", effort), ("command", command),
                           ("tau_dot", tau_dot)):
            self.plot[key].append(value[keep])
        self.written += len(t)

    def run(self, samples: Iterator[tuple[float, Array, Array, Array, Array]], total: int
            ) -> None:
        self.stride = max(1, total // max(self.options.plot_points, 1))
        chunk = Samples()
        pending_head = 0  # samples at the chunk start already evaluated (overlap)
        progress = _progress(total, self.options.progress)
        last_t = None
        for t, q, qd, effort, command in samples:
            progress(1)
            if last_t is not None:
                period = t - last_t
                sums = self.period_sums
                sums[0] += 1
                sums[1] += period
                sums[2] += period * period
                if self.dt is not None and (period > 1.5 * self.dt or period <= 0):
                    # Savitzky-Golay needs uniform samples: a hole (a skipped or lost
                    # message) starts a new segment, differentiated on its own.
                    self.gaps += period > 5 * self.dt
                    self.holes += 1
                    self._flush(chunk, pending_head, final=True)
                    chunk, pending_head = Samples(), 0
            last_t = t
            chunk.t.append(t)
            chunk.q.append(q)
            chunk.qd.append(qd)
            chunk.effort.append(effort)
            chunk.command.append(command)
            if self.dt is not None and len(chunk) >= self.options.chunk:
                pending_head = self._flush(chunk, pending_head, final=False)
        self._flush(chunk, pending_head, final=True)
        progress(0, close=True)
        self.csv_file.close()

    def _flush(self, chunk: Samples, head: int, final: bool) -> int:
        """Evaluate what the chunk can; keep an overlap for the next. Returns the new head."""
        if len(chunk) == 0:
            return 0
        if final:
            self.segments += 1
            self.process(chunk, head, 0)
            return 0
        half = self.window_samples() // 2
        self.process(chunk, head, half)
        chunk.keep_last(2 * half)
        return half


def _progress(total: int, enabled: bool) -> Any:
    """A tqdm progress bar on stderr (or nothing)."""
    if not enabled:
        return lambda *_, **__: None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="msg", file=sys.stderr, disable=None, mininterval=0.5)

    def update(n: int, close: bool = False) -> None:
        bar.update(n)
        if close:
            bar.close()
    return update


# -------------------------------------------------------------------- outputs
def plot_joints(analysis: Analysis) -> list[Path]:
    """One PNG per joint: measured vs model vs command, residual, tau_dot with limits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = {k: np.concatenate(v) if v else np.zeros((0, analysis.model.nv))
            for k, v in analysis.plot.items()}
    t = data["t"].ravel()
    paths = []
    model = analysis.model
    for j, name in enumerate(model.joint_names):
        fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
        axes[0].plot(t, data["effort"][:, j], label="measured", lw=0.8)
        axes[0].plot(t, data["tau"][:, j], label="model", lw=0.8)
        if np.isfinite(data["command"][:, j]).any():
            axes[0].plot(t, data["command"][:, j], label="command", lw=0.8)
        axes[0].set_ylabel("effort")
        axes[0].legend(loc="upper right")
        axes[1].plot(t, data["tau"][:, j] - data["effort"][:, j], lw=0.8)
        axes[1].set_ylabel("model - measured")
        axes[2].plot(t, data["tau_dot"][:, j], lw=0.8, label="model tau_dot")
        for sign in (-1, 1):
            axes[2].axhline(sign * analysis.rate_limits[j], color="r", ls="--", lw=0.8)
        axes[2].set_ylabel("effort rate")
        axes[2].set_xlabel("time [s]")
        fig.suptitle(f"{model.name}: {name}")
        fig.tight_layout()
        path = analysis.options.out / f"joint_{name}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def write_report(analysis: Analysis, stats: dict[str, Any], plots: list[Path]) -> Path:
    """``report.md``: message statistics, residual tables, violations, plots."""
    model, opt = analysis.model, analysis.options
    lines = [f"# rnea-bag report: {opt.bag.name}", "",
             f"Robot **{model.name}** ({model.nv} joints), states `{opt.states_topic}` "
             f"(time base: {opt.time_base}), commands `{opt.commands_topic}`.", "",
             "## Messages", "", "| quantity | value |", "|---|---|"]
    def rate_and_jitter(sums: Sequence[float]) -> tuple[float, float]:
        count, total, squares = sums
        if not count:
            return math.nan, math.nan
        mean = total / count
        return 1.0 / mean, math.sqrt(max(squares / count - mean**2, 0.0))

    _, jitter = rate_and_jitter(analysis.period_sums)
    command_rate, command_jitter = rate_and_jitter(stats["command_periods"])
    rate = 1.0 / analysis.dt if analysis.dt else float("nan")
    for key, value in (("joint states", stats["states"]), ("samples analysed", analysis.written),
                       ("skipped: NaN", stats["skipped_nan"]),
                       ("skipped: missing joints", stats["skipped_missing"]),
                       ("commands", stats["commands"]),
                       ("skipped commands (wrong length)", stats["skipped_commands"]),
                       ("command rate [Hz] (receive time)", f"{command_rate:.1f}"),
                       ("command jitter [ms]", f"{1e3 * command_jitter:.3f}"),
                       ("longest command gap [ms]", f"{1e3 * stats['command_max_period']:.1f}"),
                       ("rate [Hz]", f"{rate:.1f}"),
                       ("jitter (std of the period) [ms]", f"{1e3 * jitter:.3f}"),
                       ("gaps (> 5 periods)", analysis.gaps),
                       ("holes (> 1.5 periods: new segment)", analysis.holes),
                       ("segments", analysis.segments)):
        lines.append(f"| {key} | {value} |")
    for title, pair in (("Model - measured effort", analysis.model_vs_measured),
                        ("Command - measured effort", analysis.command_vs_measured)):
        table = pair.table()
        lines += ["", f"## {title}", "", "| joint | samples | RMS | MAE | max | bias | "
                  "correlation |", "|---|---|---|---|---|---|---|"]
        for j, name in enumerate(model.joint_names):
            lines.append(f"| {name} | {int(table['samples'][j])} | {table['rms'][j]:.4g} | "
                         f"{table['mae'][j]:.4g} | {table['max'][j]:.4g} | "
                         f"{table['bias'][j]:.4g} | {table['correlation'][j]:.4f} |")
    violations = analysis.effort_violations.close() + analysis.rate_violations.close()
    lines += ["", "## Limit violations", ""]
    if violations:
        lines += ["| joint | kind | start [s] | end [s] | peak | limit |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {v.joint} | {v.kind} | {v.start:.4f} | {v.end:.4f} | {v.peak:.4g} | "
                  f"{v.limit:.4g} |" for v in violations]
    else:
        lines.append("None.")
    analysis.violations = violations  # type: ignore[attr-defined]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    lines += ["", f"Savitzky-Golay window {opt.window} s, order {opt.order}; velocities "
              f"{'recorded' if opt.recorded_velocity else 'differentiated'}. Every sample: "
              "`series.csv`."]
    path = opt.out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def analyse(options: Options) -> tuple[Analysis, dict[str, Any]]:
    """Run the whole analysis; raises :class:`BagError` on bad input."""
    if options.time_base not in ("header", "receive"):
        raise BagError(f"--time-base '{options.time_base}' must be 'header' or 'receive'")
    reader = BagReader(options)
    try:
        model = reader.model()
        joints = options.joints or list(model.joint_names)
        unknown = [j for j in joints if j not in model.joint_names]
        if unknown:
            raise BagError(f"--joints {', '.join(unknown)} not in the robot; joints: "
                           f"{', '.join(model.joint_names)}")
        index = np.array([model.joint_index(j) for j in joints], dtype=np.int64)
        analysis = Analysis(model, options, joints)
        analysis.dt = reader.nominal_period()
        stats: dict[str, Any] = {}
        samples = reader.samples(model, index, stats)
        analysis.run(samples, reader.state_count)
        if analysis.written == 0:
            names = _names_in_bag(reader)
            raise BagError(f"no usable joint state: the bag's joints ({names}) do not cover "
                           f"the robot's ({', '.join(model.joint_names)})")
    finally:
        reader.close()
    plots = plot_joints(analysis) if options.plots else []
    write_report(analysis, stats, plots)
    return analysis, stats


def _names_in_bag(reader: BagReader) -> str:
    for connection, _, raw in reader.reader.messages(connections=reader.states):
        message: Any = reader.reader.deserialize(raw, connection.msgtype)
        return ", ".join(message.name)
    return "none"


def parse(argv: Sequence[str] | None) -> Options:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("bag", type=Path, help="rosbag2 directory or .mcap/.db3 file")
    p.add_argument("--urdf", type=Path, help="robot URDF (default: /robot_description in the bag)")
    p.add_argument("--out", type=Path, default=Path("rnea_bag_report"), help="output directory")
    p.add_argument("--states-topic", default="/joint_states")
    p.add_argument("--commands-topic", default="/effort_controller/commands")
    p.add_argument("--joints", nargs="+", help="joint order of the command arrays")
    p.add_argument("--time-base", default="header", help="'header' stamps or 'receive' time")
    p.add_argument("--window", type=float, default=0.05, help="Savitzky-Golay window [s]")
    p.add_argument("--order", type=int, default=4, help="Savitzky-Golay polynomial order")
    p.add_argument("--differentiate-velocity", action="store_true",
                   help="differentiate positions even when velocities are recorded")
    p.add_argument("--effort-rate-limits", type=float, nargs="+", default=[1000.0],
                   help="per joint or one [N m/s]")
    p.add_argument("--chunk", type=int, default=20000, help="samples per processing chunk")
    p.add_argument("--plot-points", type=int, default=4000)
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    if a.order < 3 or a.window <= 0 or a.chunk < 100:
        p.error("--order must be >= 3 (jerk), --window > 0, --chunk >= 100")
    return Options(bag=a.bag, out=a.out, urdf=a.urdf, states_topic=a.states_topic,
                   commands_topic=a.commands_topic, joints=a.joints, time_base=a.time_base,
                   window=a.window, order=a.order, recorded_velocity=not a.differentiate_velocity,
                   effort_rate_limits=a.effort_rate_limits, chunk=a.chunk,
                   plot_points=a.plot_points, plots=not a.no_plots, progress=not a.quiet)


def main(argv: Sequence[str] | None = None) -> int:
    """Analyse a bag; 0 on success, 1 with one message on bad input."""
    options = parse(argv)
    try:
        analysis, stats = analyse(options)
    except RneaError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    table = analysis.model_vs_measured.table()
    print(f"{PROG}: {analysis.written} samples of {analysis.model.name}; report in "
          f"{options.out / 'report.md'}")
    for j, name in enumerate(analysis.model.joint_names):
        print(f"  {name:<20} model - measured: RMS {table['rms'][j]:.4g}, bias "
              f"{table['bias'][j]:.4g}")
    violations = getattr(analysis, "violations", [])
    print(f"  limit violations: {len(violations)}; skipped samples: "
          f"{stats['skipped_nan'] + stats['skipped_missing']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
