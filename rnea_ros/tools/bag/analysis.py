"""Chunked differentiation and model evaluation on the batch core; the whole run."""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.coupling.loop_file import loop_file_path
from rnea_ros.core.dynamics.gfd import rnea_time_derivative_batch
from rnea_ros.core.dynamics.rnea import gravity_batch, rnea_batch
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.mimic import unfold
from rnea_ros.tools.bag.contact_report import write_contacts
from rnea_ros.tools.bag.contacts import THRESHOLDS_FILE, BagContacts
from rnea_ros.tools.bag.differentiation import (
    RATE_NOISE_SIGMAS,
    derivatives,
    effort_rate,
    noise_sigma,
    rate_gain,
    window_samples,
)
from rnea_ros.tools.bag.errors import BagError
from rnea_ros.tools.bag.loops import ActiveJoints, LoopEvaluator, bag_loops
from rnea_ros.tools.bag.options import Options, check
from rnea_ros.tools.bag.reading import BagReader, Joints, Samples
from rnea_ros.tools.bag.report import (
    plot_joints,
    provenance,
    write_report,
    write_violations,
)
from rnea_ros.tools.bag.series import SeriesWriter, write_rows  # noqa: F401 (re-exported)
from rnea_ros.tools.bag.statistics import PairStats, Violation, ViolationTracker, sequential_sum
from rnea_ros.tools.files import OutputError, check_outputs, staged_directory

Array = NDArray[np.float64]
NOISE_SAMPLES = 200  # a chunk shorter than this uses the noise estimated before it


class Analysis:
    """Chunked differentiation, model evaluation, statistics and outputs."""

    def __init__(self, model: Joints, options: Options, joints: Sequence[str],
                 dynamics: RobotModel | LoopEvaluator | None = None) -> None:
        """``model``: the analysed joints; ``dynamics``: the tree model (default:
        ``model``) or, for a closed-loop robot, its :class:`LoopEvaluator`."""
        self.model, self.options = model, options
        if dynamics is None:
            assert isinstance(model, RobotModel)
            dynamics = model
        self.dynamics = dynamics
        self.joints = list(joints)
        # tau_dot of a mimic model: G^T tau_dot of its unfolded tree (the core's
        # rnea_time_derivative refuses mimic models for now; see rnea_ros.mimic).
        self.unfolded = (unfold(model) if isinstance(model, RobotModel) and model.mimic_joints
                         else None)
        n = model.nv
        self.model_vs_measured = PairStats(n)
        self.command_vs_measured = PairStats(n)
        rates = np.array(options.effort_rate_limits, dtype=np.float64)
        self.rate_limits = np.full(n, rates[0]) if rates.size == 1 else rates
        if self.rate_limits.shape != (n,):
            raise BagError(f"--effort-rate-limits needs 1 or {n} values")
        merge = options.window  # runs closer than a filter window are one interval
        self.effort_violations = ViolationTracker(model.joint_names, model.effort_limit,
                                                  "effort", merge)
        self.rate_violations = ViolationTracker(model.joint_names, self.rate_limits,
                                                "effort_rate", merge)
        # The measured effort's noise per joint: sums of count and count * sigma^2 of the
        # chunks' estimates (their mean is the report's), and the rate noise of a full window.
        self.noise_sums = np.zeros((2, n))
        self.dt: float | None = None
        self.has_commands = True
        self.t0 = 0.0  # time of the first analysed sample [s]: the plots' and report's origin
        self.violations: list[Violation] = []
        self.period_sums = [0, 0.0, 0.0]  # count, sum, sum of squares: the jitter
        self.gaps = 0
        self.holes = 0
        self.backwards = 0  # steps whose stamp goes back: samples not in time order
        self.segments = 0
        self.written = 0
        self.plot: dict[str, list[Array]] = {k: [] for k in ("t", "tau", "effort", "command",
                                                             "tau_dot", "rate")}
        self.stride = 1
        self.contacts = BagContacts(dynamics, options)  # bad thresholds: refused here
        if options.report or options.series:
            options.out.mkdir(parents=True, exist_ok=True)
        columns = ["t"]
        for kind in ("q", "qd", "qdd", "qddd", "tau_model", "gravity", "tau_dot_model",
                     "effort_measured", "effort_command", "residual"):
            columns += [f"{kind}.{j}" for j in model.joint_names]
        if isinstance(dynamics, LoopEvaluator):  # the solved passive joints
            columns += [f"q_passive.{j}" for j in dynamics.loops.passive_names]
        # What made the outputs (version, command line, input digests): once, if any.
        self.provenance = provenance(options) if options.series or options.report else {}
        self.series = (SeriesWriter(options.out, columns, options.series_format,
                                    self.provenance) if options.series else None)
        self.csv_file = self.series.csv_file if self.series is not None else None

    def contact_summary(self) -> str:
        """One line on the contacts (:meth:`BagContacts.summary`)."""
        return self.contacts.summary()

    def window_samples(self) -> int:
        assert self.dt is not None  # set from BagReader.nominal_period() before run()
        return window_samples(self.options.window, self.dt, self.options.order)

    def process(self, chunk: Samples, head: int, tail: int) -> None:
        """Differentiate ``chunk`` and evaluate samples ``[head, len - tail)``."""
        t, q, qd_rec, effort, command = chunk.t, chunk.q, chunk.qd, chunk.effort, chunk.command
        if len(t) == 0:
            return
        assert self.dt is not None
        derivative = derivatives(q, self.dt, self.window_samples(), self.options.order)
        qd = qd_rec if (self.options.recorded_velocity and np.isfinite(qd_rec).all()) \
            else derivative[0]
        sl = slice(head, len(t) - tail)
        if len(t[sl]) == 0:
            return
        measured_rate, rate_noise = self.measured_rate(effort)
        more: list[Array] = []
        if isinstance(self.dynamics, LoopEvaluator):  # every sample: tau_dot from tau
            assert chunk.optional is not None
            tau, g, tau_dot, q_passive = self.dynamics(
                q, qd, derivative[1], chunk.optional, self.dt, self.window_samples(),
                self.options.order, sl)
            more.append(q_passive)
        t, q, qd, effort, command = t[sl], q[sl], qd[sl], effort[sl], command[sl]
        qdd, qddd = derivative[1][sl], derivative[2][sl]
        if self.written == 0:
            self.t0 = float(t[0])
        if isinstance(self.dynamics, RobotModel):
            tau = rnea_batch(self.dynamics, q, qd, qdd)
            g = gravity_batch(self.dynamics, q)
            if self.unfolded is None:
                _, tau_dot = rnea_time_derivative_batch(self.dynamics, q, qd, qdd, qddd)
            else:
                u = self.unfolded
                _, tau_dot_tree = rnea_time_derivative_batch(u.tree, u.configuration(q),
                                                             u.tangent(qd), u.tangent(qdd),
                                                             u.tangent(qddd))
                tau_dot = u.forces(tau_dot_tree)
        self.model_vs_measured.add(tau, effort)
        self.command_vs_measured.add(command, effort)
        measured = np.asarray(np.isfinite(effort).all(axis=1))
        subject = np.where(measured[:, None], effort, tau)
        self.effort_violations.add(t, subject)
        measured_rate = measured_rate[sl]
        use = measured[:, None] & np.isfinite(measured_rate)
        rate = np.where(use, measured_rate, tau_dot)
        margin = np.where(use, RATE_NOISE_SIGMAS * np.nan_to_num(rate_noise), 0.0)
        self.rate_violations.add(t, rate, self.rate_limits + margin)
        self.observe(t, qd, tau, effort, subject, rate)
        keep = slice((-self.written) % self.stride, None, self.stride)
        self.contacts.add(t, q, chunk.qd[sl], effort, self.dt, keep, self.effort_noise)
        if self.series is not None:
            self.series.write(np.column_stack([t, q, qd, qdd, qddd, tau, g, tau_dot, effort,
                                               command, tau - effort, *more]))
        for key, value in (("t", t), ("tau", tau), ("effort", effort), ("command", command),
                           ("tau_dot", tau_dot), ("rate", rate)):
            self.plot[key].append(value[keep].copy())  # a copy: a view would keep the chunk
        self.written += len(t)

    def measured_rate(self, effort: Array) -> tuple[Array, Array]:
        """The measured effort's rate (samples, joints) over a whole chunk (filtered like
        ``q``, :func:`effort_rate`) and its noise per joint (n,): the effort's noise
        (:func:`noise_sigma` of this chunk; of the chunks so far when this one has fewer
        than :data:`NOISE_SAMPLES` samples) times the filter's noise gain."""
        assert self.dt is not None
        sigma = noise_sigma(effort)
        ok = np.isfinite(sigma)
        self.noise_sums[0] += np.where(ok, len(effort), 0)
        self.noise_sums[1] += np.where(ok, len(effort) * np.nan_to_num(sigma) ** 2, 0.0)
        if len(effort) < NOISE_SAMPLES:
            sigma = np.where(self.noise_sums[0] > 0, self.effort_noise, sigma)
        w = min(self.window_samples(), len(effort) if len(effort) % 2 else len(effort) - 1)
        order = min(self.options.order, w - 1)
        gain = rate_gain(w, order, self.dt) if w > order >= 1 else np.nan
        return effort_rate(effort, self.dt, self.window_samples(), self.options.order), \
            sigma * gain

    @property
    def effort_noise(self) -> Array:
        """(n,) the measured effort's estimated noise [N m or N] (NaN: none measured)."""
        count, squares = self.noise_sums
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(np.sqrt(squares / count), dtype=np.float64)

    @property
    def rate_noise(self) -> Array:
        """(n,) the noise [N m/s or N/s] of its rate filtered over a full window."""
        assert self.dt is not None
        return self.effort_noise * rate_gain(self.window_samples(), self.options.order,
                                             self.dt)

    def observe(self, t: Array, qd: Array, tau: Array, effort: Array, subject: Array,
                rate: Array) -> None:
        """Hook for subclasses (rnea-fleet's summaries), per evaluated chunk (N, n):
        time, velocity, model torque, measured effort, the effort checked against the limits
        (measured, else model) and its rate."""

    def run(self, batches: Iterator[Samples], total: int) -> None:
        """Split the stream at holes and into chunks of ``--chunk`` samples (with a
        half-window of overlap each side) and evaluate them."""
        assert self.dt is not None
        self.stride = max(1, total // max(self.options.plot_points, 1))
        pending: list[Samples] = []  # the current chunk, in pieces
        size = 0
        pending_head = 0  # samples at the chunk start already evaluated (overlap)
        progress = _progress(total, self.options.progress)
        last_t: float | None = None
        for batch in batches:
            progress(len(batch))
            if len(batch) == 0:
                continue
            periods = np.diff(batch.t, prepend=batch.t[0] if last_t is None else last_t)
            if last_t is None:
                periods = periods[1:]
            sums = self.period_sums
            sums[0] += len(periods)
            sums[1] = sequential_sum(sums[1], periods)
            sums[2] = sequential_sum(sums[2], periods * periods)
            offset = len(batch) - len(periods)  # 1 for the very first sample, else 0
            # Savitzky-Golay needs uniform samples: a hole (a skipped or lost message)
            # starts a new segment, differentiated on its own.
            holes = np.flatnonzero((periods > 1.5 * self.dt) | (periods <= 0)) + offset
            self.gaps += int((periods > 5 * self.dt).sum())
            self.backwards += int((periods < 0).sum())
            self.holes += len(holes)
            last_t = float(batch.t[-1])
            starts = np.concatenate([[0], holes]).astype(np.intp)
            ends = np.concatenate([holes, [len(batch)]]).astype(np.intp)
            for k, (begin, end) in enumerate(zip(starts, ends, strict=True)):
                if k > 0:  # a hole before this piece
                    self._flush(Samples.join(pending) if pending else None, pending_head,
                                final=True)
                    pending, size, pending_head = [], 0, 0
                piece = batch.take(slice(begin, end))
                while len(piece):
                    room = max(self.options.chunk - size, 1)
                    pending.append(piece.take(slice(0, room)))
                    size += min(room, len(piece))
                    piece = piece.take(slice(room, None))
                    if size >= self.options.chunk:
                        chunk = Samples.join(pending)
                        pending_head = self._flush(chunk, pending_head, final=False)
                        kept = chunk.take(slice(max(len(chunk) - 2 * pending_head, 0), None))
                        pending, size = [kept], len(kept)
        self._flush(Samples.join(pending) if pending else None, pending_head, final=True)
        progress(0, close=True)
        if self.series is not None:
            self.series.close()

    def _flush(self, chunk: Samples | None, head: int, final: bool) -> int:
        """Evaluate what the chunk can; keep an overlap for the next. Returns the new head."""
        if chunk is None or len(chunk) == 0:
            return 0
        if final:
            self.segments += 1
            self.process(chunk, head, 0)
            return 0
        half = self.window_samples() // 2
        self.process(chunk, head, half)
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


def _names(names: Sequence[str], most: int = 10) -> str:
    """``a, b, c`` -- at most ``most`` names, then how many more."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def joint_check(model: Joints, bag_joints: Sequence[str], urdf_joints: dict[str, str],
                options: Options, stats: dict[str, Any], passive: Sequence[str] = ()) -> None:
    """What the bag's joint names say about the URDF: followers (checked against their
    coupling, never required), joints the URDF has as fixed ones (a note), joints it
    lacks (a warning: is it the right URDF?); ``passive`` joints of a closed-loop robot
    are expected (read where present)."""
    warnings_, notes = stats["warnings"], stats["notes"]
    followers = [j for j in bag_joints if j in model.mimic_joints]
    known = set(model.joint_names) | set(followers) | set(passive)
    fixed = [j for j in bag_joints if j not in known and urdf_joints.get(j) == "fixed"]
    absent = [j for j in bag_joints if j not in known and j not in fixed]
    if absent:
        warnings_.append(f"the bag's joint states have {len(absent)} "
                         f"joint{'s' if len(absent) > 1 else ''} the robot "
                         f"'{model.name}' lacks ({_names(absent)}): is it the right URDF? "
                         f"Only the robot's {model.nv} joints were analysed")
    if fixed:
        notes.append(f"{len(fixed)} joint{'s' if len(fixed) > 1 else ''} of the bag "
                     f"{'are' if len(fixed) > 1 else 'is'} fixed in the URDF "
                     f"({_names(fixed)}): not analysed")
    if not followers:
        return
    checked = stats.get("followers", {})
    unchecked = [f for f in followers if f not in checked]
    tolerance = options.mimic_tolerance
    bad = {f: v for f, v in checked.items() if v[1]}
    for f, (samples, beyond, worst) in bad.items():
        m = model.mimic_joints[f]
        warnings_.append(f"mimic follower '{f}' is off its coupling {m.multiplier:g} * "
                         f"'{m.leader}' + {m.offset:g} in {beyond} of {samples} samples "
                         f"(up to {worst:.4g}; tolerance {tolerance:g}): check the URDF's "
                         "<mimic> (the analysis uses the leaders only)")
    good = [f for f in checked if f not in bad]
    if good:
        worst = max(checked[f][2] for f in good)
        notes.append(f"{len(good)} mimic follower{'s' if len(good) > 1 else ''} in the bag "
                     f"({_names(good)}) agree with their leaders within {worst:.3g} "
                     f"(tolerance {tolerance:g}); followers are not coordinates: analysed "
                     "through their leaders")
    if unchecked:
        notes.append(f"mimic follower{'s' if len(unchecked) > 1 else ''} {_names(unchecked)} "
                     "recorded without their leader in the same message: not checked")


OUT_OF_ORDER = 0.01  # fraction of backward stamp steps above which the order is not time


def output_files(out: Path) -> list[Path]:
    """What a previous run left in ``out`` that this one would replace."""
    names = [out / name for name in ("report.md", "report.html", "violations.csv",
                                      "series.csv", "series.parquet", "contacts.csv",
                                      "contacts.png", THRESHOLDS_FILE)]
    return names + (sorted(out.glob("joint_*.png")) if out.is_dir() else [])


def order_check(analysis: Analysis, options: Options, stats: dict[str, Any]) -> None:
    """Stamps that go backwards: a warning when few (each starts a new segment), a
    :class:`BagError` above :data:`OUT_OF_ORDER` of the steps (shuffled stamps: the
    derivatives of samples out of time order are meaningless; nothing is sorted)."""
    steps = max(int(analysis.period_sums[0]), 1)
    if not analysis.backwards:
        return
    what = (f"{analysis.backwards} of {steps} steps of the {options.time_base} stamps "
            f"of '{options.states_topic}' go back in time")
    if analysis.backwards > OUT_OF_ORDER * steps:
        hint = ("; --time-base receive uses the order of recording" if
                options.time_base == "header" else "")
        raise BagError(f"{what} (more than {100 * OUT_OF_ORDER:g} %: the samples are not in "
                       f"time order, refused, not sorted){hint}")
    stats["warnings"].append(f"{what}: each starts a new segment (not sorted)")


def analyse(options: Options, kind: type[Analysis] = Analysis
            ) -> tuple[Analysis, dict[str, Any]]:
    """The whole analysis (:func:`analyse_into`) written to ``options.out``: refused when
    it would replace an input, or earlier outputs unless ``options.force``; written to a
    temporary directory and renamed into place, so an error leaves no partial output."""
    check(options)
    if options.out.exists() and not options.out.is_dir():
        raise OutputError(f"--out: '{options.out}' exists and is not a directory")
    inputs = [options.bag, options.urdf, Path(options.loops) if options.loops else None]
    check_outputs([options.out, *output_files(options.out)], inputs, force=options.force)
    with staged_directory(options.out) as stage:
        analysis, stats = analyse_into(dataclasses.replace(options, out=stage), kind)
    analysis.options = options
    return analysis, stats


def analyse_into(options: Options, kind: type[Analysis] = Analysis
                 ) -> tuple[Analysis, dict[str, Any]]:
    """Run the whole analysis; raises :class:`BagError` on bad input.

    Warnings (a truncated bag read up to its cut, bag joints the URDF lacks,
    recorded mimic followers off their coupling, non-physical inertias) are in
    ``stats["warnings"]``, once each; notes (the mimic followers checked, bag
    joints that are fixed in the URDF) in ``stats["notes"]``. Writes into
    ``options.out`` as it is (:func:`analyse` stages it); nothing when neither
    ``options.series`` nor ``options.report``.
    """
    check(options)
    reader = BagReader(options)
    warnings_: list[str] = [f"{reader.recovered}; analysed what was read"] \
        if reader.recovered else []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tree = reader.model()
        for w in caught:
            if str(w.message) not in warnings_:
                warnings_.append(str(w.message))
        loops = bag_loops(tree, options.loops, options.urdf)
        evaluator = LoopEvaluator(loops) if loops is not None else None
        model: Joints = ActiveJoints(loops) if loops is not None else tree
        joints = options.joints or list(model.joint_names)
        followers = [f"{j} (follows {model.mimic_joints[j].leader})" for j in joints
                     if j in model.mimic_joints]
        if followers:
            raise BagError(f"--joints {', '.join(followers)}: a mimic follower is not a "
                           "coordinate and is never commanded; joints: "
                           f"{', '.join(model.joint_names)}")
        unknown = [j for j in joints if j not in model.joint_names]
        if unknown:
            what = ("not active joints of the closed-loop robot (passive joints take no "
                    "command); active joints: " if loops is not None else
                    "not in the robot; joints: ")
            raise BagError(f"--joints {', '.join(unknown)} {what}{', '.join(model.joint_names)}")
        index = np.array([model.joint_index(j) for j in joints], dtype=np.int64)
        analysis = kind(model, options, joints, evaluator or tree)
        analysis.has_commands = reader.has_commands
        analysis.dt = reader.nominal_period()
        stats: dict[str, Any] = {"warnings": warnings_, "notes": []}
        samples = reader.samples(model, index, stats,
                                 loops.passive_names if loops is not None else ())
        analysis.run(samples, reader.state_count)
        bag_joints = stats["bag_joints"] or reader.first_names()
        missing = [j for j in model.joint_names if j not in bag_joints]
        if analysis.written == 0:
            if missing:
                raise BagError(f"no usable joint state: the bag's joint states lack "
                               f"{len(missing)} of the robot's {model.nv} joints: "
                               f"{_names(missing)} (the bag has {_names(bag_joints)})")
            raise BagError(f"no usable joint state in '{options.states_topic}' "
                           f"({stats['states']} messages, {stats['skipped_nan']} with NaN "
                           f"positions, {stats['skipped_missing']} incomplete, "
                           f"{stats['skipped_undecodable']} undecodable)")
        joint_check(model, bag_joints, reader.urdf_joint_types(), options, stats,
                    loops.passive_names if loops is not None else ())
        order_check(analysis, options, stats)
    finally:
        reader.close()
    if evaluator is not None:
        source = options.loops or str(loop_file_path(options.urdf) if options.urdf else "")
        stats["sections"] = evaluator.report_lines(source)
        if evaluator.not_closed:
            warnings_.append(f"{evaluator.not_closed} samples at which the loops do not close "
                             f"(NaN model torques): {evaluator.first_failure}")
    counted = analysis.model_vs_measured.count
    silent = [name for j, name in enumerate(model.joint_names) if not counted[j]]
    if silent:
        warnings_.append(f"no efforts recorded for {len(silent)} of {model.nv} joints "
                         f"({_names(silent)}): all missing or NaN in {analysis.written} "
                         "samples; model - measured not computed for them")
    analysis.violations = sorted(analysis.effort_violations.close()
                                 + analysis.rate_violations.close(),
                                 key=lambda v: (v.start, v.joint, v.kind))
    if analysis.contacts.finish(options.out, options.report) and options.report:
        write_contacts(options.out / "contacts.csv", analysis.contacts.rows, analysis.t0)
    if options.report:
        plots = plot_joints(analysis) if options.plots else []
        write_violations(analysis)
        write_report(analysis, stats, plots)
    return analysis, stats
