"""Chunked differentiation and model evaluation on the batch core; the whole run."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.gfd import rnea_derivative_batch
from rnea_ros.core.dynamics.rnea import gravity_batch, rnea_batch
from rnea_ros.core.errors import BagError
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.tools.bag.differentiation import derivatives, window_samples
from rnea_ros.tools.bag.options import Options
from rnea_ros.tools.bag.reading import BagReader, Samples, names_in_bag
from rnea_ros.tools.bag.report import plot_joints, write_report
from rnea_ros.tools.bag.statistics import PairStats, ViolationTracker

Array = NDArray[np.float64]


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
        return window_samples(self.options.window, self.dt, self.options.order)

    def process(self, chunk: Samples, head: int, tail: int) -> None:
        """Differentiate ``chunk`` and evaluate samples ``[head, len - tail)``."""
        t, q, qd_rec, effort, command = chunk.arrays()
        if len(t) == 0:
            return
        assert self.dt is not None
        derivative = derivatives(q, self.dt, self.window_samples(), self.options.order)
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
            names = names_in_bag(reader)
            raise BagError(f"no usable joint state: the bag's joints ({names}) do not cover "
                           f"the robot's ({', '.join(model.joint_names)})")
    finally:
        reader.close()
    plots = plot_joints(analysis) if options.plots else []
    write_report(analysis, stats, plots)
    return analysis, stats
