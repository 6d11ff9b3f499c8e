"""Outputs: one PNG per joint, ``violations.csv``, ``report.md`` (``page``: ``report.html``)."""

from __future__ import annotations

import csv
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.model.joints import JOINT_KINDS
from rnea_ros.tools.bag.contact_report import contact_section, plot_contacts
from rnea_ros.tools.bag.contacts import BagContacts
from rnea_ros.tools.bag.differentiation import RATE_NOISE_SIGMAS
from rnea_ros.tools.bag.options import Options
from rnea_ros.tools.bag.page import write_page
from rnea_ros.tools.bag.reading import Joints
from rnea_ros.tools.bag.statistics import (
    PairStats,
    Violation,
    ViolationTracker,
    rate_and_jitter,
    utc,
)
from rnea_ros.tools.provenance import digest

Array = NDArray[np.float64]


class Analysed(Protocol):
    """What the report reads of a finished analysis (an
    :class:`rnea_ros.tools.bag.analysis.Analysis`, which imports this module, not the
    other way round); it writes back only ``violations``."""

    model: Joints
    options: Options
    joints: list[str]
    plot: dict[str, list[Array]]
    t0: float  # [s] the first analysed sample: the plots' and report's time origin
    dt: float | None  # [s] the nominal state period
    rate_limits: Array  # (n,) [N m/s or N/s]

    @property
    def effort_noise(self) -> Array: ...  # (n,) the measured effort's noise [N m or N]

    @property
    def rate_noise(self) -> Array: ...  # (n,) its filtered rate's noise [N m/s or N/s]

    has_commands: bool
    period_sums: list[float]  # count, sum, sum of squares of the state periods
    written: int
    gaps: int
    holes: int
    segments: int
    model_vs_measured: PairStats
    command_vs_measured: PairStats
    effort_violations: ViolationTracker
    rate_violations: ViolationTracker
    violations: list[Violation]
    provenance: dict[str, Any]  # :func:`provenance` of the run
    contacts: BagContacts  # the contact observer's outcome


def effort_unit(joint_type: str) -> str:
    """``N`` for a joint whose coordinate is a displacement (its record's
    ``prismatic``), else ``N m`` (the package's one rule; ``rnea-fleet`` reads it too)."""
    return "N" if JOINT_KINDS[joint_type].prismatic else "N m"


def units(analysis: Analysed) -> str:
    """The robot's effort unit: ``N m``, ``N``, or ``N m / N`` for a mixed robot."""
    kinds = {effort_unit(t) for t in analysis.model.joint_types}
    return " / ".join(sorted(kinds, reverse=True))


class JointFigure:
    """One figure redrawn for every joint (new figures cost a third more): effort
    (measured, model, command), model - measured, and tau_dot with its limits."""

    def __init__(self) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        self.fig, self.axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
        top, middle, bottom = self.axes
        self.measured = top.plot([], [], label="measured", lw=0.8)[0]
        self.model = top.plot([], [], label="model", lw=0.8)[0]
        self.command = top.plot([], [], label="command", lw=0.8)[0]
        self.residual = middle.plot([], [], lw=0.8)[0]
        self.model_rate = bottom.plot([], [], lw=0.6, color="0.6", label="model τ̇")[0]
        self.rate = bottom.plot([], [], lw=0.8, color="C0", label="checked rate")[0]
        self.marks: list[Any] = []  # the violation spans and peaks of the joint drawn
        self.limits = [bottom.axhline(0.0, color="r", ls="--", lw=0.8, label=label)
                       for label in ("limit", None)]
        self.note = bottom.text(0.99, 0.95, "", transform=bottom.transAxes, ha="right",
                                va="top", fontsize=8, color="r",
                                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8})
        bottom.set_xlabel("time from the bag's start [s]")
        for ax in self.axes:
            ax.ticklabel_format(axis="x", useOffset=False, style="plain")
            ax.grid(alpha=0.3)
        self.fig.subplots_adjust(left=0.11, right=0.98, bottom=0.08, top=0.93, hspace=0.12)

    def draw(self, title: str, unit: str, t: Array, effort: Array, tau: Array, command: Array,
             rate: Array, model_rate: Array, limit: float,
             violations: Sequence[Violation] = ()) -> None:
        """``rate``: the rate checked against ``limit`` (filtered measured, else model);
        ``violations``: the joint's intervals (times from t0), shaded on the effort or rate
        panel with their peak marked (the plotted points are decimated, the peaks not)."""
        top, middle, bottom = self.axes
        for mark in self.marks:
            mark.remove()
        self.marks = []
        width = 0.004 * (float(t[-1] - t[0]) if len(t) else 1.0)  # visible when short
        for v in violations:
            ax = top if v.kind == "effort" else bottom
            middle_ = 0.5 * (v.start + v.end)
            half = max(0.5 * (v.end - v.start), 0.5 * width)
            self.marks.append(ax.axvspan(middle_ - half, middle_ + half, color="r",
                                         alpha=0.2, lw=0))
            self.marks += ax.plot([v.peak_time], [v.peak], "rx", ms=7)
        over = {v.limit for v in violations if v.kind == "effort"}
        for level in over:  # the effort limit, drawn when it was crossed
            self.marks += [top.axhline(sign * level, color="r", ls="--", lw=0.8)
                           for sign in (1, -1)]
        self.measured.set_data(t, effort)
        self.model.set_data(t, tau)
        has_command = bool(np.isfinite(command).any())
        self.command.set_data(t, command)
        self.command.set_visible(has_command)
        top.legend(handles=[self.measured, self.model] + ([self.command] if has_command else []),
                   loc="upper right", fontsize=8)
        self.residual.set_data(t, tau - effort)
        self.rate.set_data(t, rate)
        self.model_rate.set_data(t, model_rate)
        for ax in (top, middle):
            ax.relim(visible_only=True)
            ax.autoscale_view()
        if len(t):
            bottom.set_xlim(float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0)
        peaks = [abs(v.peak) for v in violations if v.kind == "effort_rate"]
        self.rate_limits(np.concatenate([rate, model_rate, peaks]), limit, unit)
        top.set_ylabel(f"effort [{unit}]")
        middle.set_ylabel(f"model − measured [{unit}]")
        bottom.set_ylabel(f"effort rate [{unit}/s]")
        self.fig.suptitle(title)

    def rate_limits(self, rate: Array, limit: float, unit: str) -> None:
        """tau_dot scaled to its data; the limits drawn when in view, else written in a
        corner."""
        bottom = self.axes[2]
        finite = rate[np.isfinite(rate)]
        peak = float(np.abs(finite).max()) if finite.size else 0.0
        shown = peak >= 0.5 * limit
        for line, sign in zip(self.limits, (1, -1), strict=True):
            line.set_ydata([sign * limit, sign * limit])
            line.set_visible(shown)
        self.limits[0].set_label(f"limit ±{limit:.4g}")
        self.note.set_visible(not shown)
        self.note.set_text(f"limit ±{limit:.4g} {unit}/s (off scale; peak {peak:.3g})")
        span = 1.1 * (max(peak, limit) if shown else peak) or 1.0
        bottom.set_ylim(-span, span)
        bottom.legend(handles=[self.rate, self.model_rate] + (self.limits[:1] if shown else []),
                      loc="upper left", fontsize=8)

    def save(self, path: Path) -> None:
        self.fig.savefig(path, dpi=80)

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.fig)


def plot_joints(analysis: Analysed) -> list[Path]:
    """One PNG per joint: measured vs model vs command, residual, tau_dot with limits.

    Time is from the first analysed sample (the bag's start), in seconds.
    """
    data = {k: np.concatenate(v) if v else np.zeros((0, analysis.model.nv))
            for k, v in analysis.plot.items()}
    t = data["t"].ravel() - analysis.t0
    paths = []
    model = analysis.model
    figure = JointFigure()
    t0 = analysis.t0
    try:
        for j, name in enumerate(model.joint_names):
            marked = [dataclasses.replace(v, start=v.start - t0, end=v.end - t0,
                                          peak_time=v.peak_time - t0)
                      for v in analysis.violations if v.joint == name]
            figure.draw(f"{model.name}: {name} ({model.joint_types[j]})",
                        effort_unit(model.joint_types[j]), t, data["effort"][:, j],
                        data["tau"][:, j], data["command"][:, j], data["rate"][:, j],
                        data["tau_dot"][:, j], float(analysis.rate_limits[j]), marked)
            path = analysis.options.out / f"joint_{name}.png"
            figure.save(path)
            paths.append(path)
    finally:
        figure.close()
    return paths


def write_report(analysis: Analysed, stats: dict[str, Any], plots: list[Path]) -> Path:
    """``report.md``: warnings, message statistics, residual tables, violations, plots."""
    model, opt = analysis.model, analysis.options
    unit = units(analysis)
    commands = (f"commands `{opt.commands_topic}`" if analysis.has_commands
                else f"no command topic (`{opt.commands_topic}` is not in the bag)")
    lines = [f"# rnea-bag report: {opt.bag.name}", "",
             f"Robot **{model.name}** ({model.nv} joints), states `{opt.states_topic}` "
             f"(time base: {opt.time_base}), {commands}. Times are in seconds from the first "
             f"analysed sample, t0 = {utc(analysis.t0)}; efforts in {unit}.", ""]
    warnings = stats.get("warnings", [])
    if warnings:
        lines += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    notes = stats.get("notes", [])
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    if model.mimic_joints:
        lines += ["Mimic followers (not coordinates, moved by their leaders): "
                  + ", ".join(f"{f} = {m.multiplier:g} {m.leader} + {m.offset:g}"
                              for f, m in model.mimic_joints.items()) + ".", ""]
    lines += ["## Messages", "", "| quantity | value |", "|---|---|"]
    _, jitter = rate_and_jitter(analysis.period_sums)
    rate = 1.0 / analysis.dt if analysis.dt else float("nan")
    rows: list[tuple[str, Any]] = [
        ("joint states", stats["states"]), ("samples analysed", analysis.written),
        ("skipped: NaN", stats["skipped_nan"]),
        ("skipped: missing joints", stats["skipped_missing"]),
        ("skipped: undecodable", stats["skipped_undecodable"])]
    if analysis.has_commands:
        command_rate, command_jitter = rate_and_jitter(stats["command_periods"])
        rows += [("commands", stats["commands"]),
                 ("skipped commands (wrong length or undecodable)", stats["skipped_commands"]),
                 ("command rate [Hz] (receive time)", f"{command_rate:.1f}"),
                 ("command jitter [ms]", f"{1e3 * command_jitter:.3f}"),
                 ("longest command gap [ms]", f"{1e3 * stats['command_max_period']:.1f}")]
    rows += [("rate [Hz]", f"{rate:.1f}"),
             ("jitter (std of the period) [ms]", f"{1e3 * jitter:.3f}"),
             ("gaps (> 5 periods)", analysis.gaps),
             ("holes (> 1.5 periods: new segment)", analysis.holes),
             ("segments", analysis.segments)]
    lines += [f"| {key} | {value} |" for key, value in rows]
    pairs = [("Model - measured effort", analysis.model_vs_measured)]
    if analysis.has_commands and stats["commands"]:
        pairs.append(("Command - measured effort", analysis.command_vs_measured))
    for title, pair in pairs:
        table = pair.table()
        lines += ["", f"## {title}", "", "| joint | unit | samples | RMS | MAE | max | bias | "
                  "correlation |", "|---|---|---|---|---|---|---|---|"]
        for j, name in enumerate(model.joint_names):
            if not table["samples"][j]:
                lines.append(f"| {name} | {effort_unit(model.joint_types[j])} | 0 | no efforts "
                             "recorded | | | | |")
                continue
            lines.append(f"| {name} | {effort_unit(model.joint_types[j])} | "
                         f"{int(table['samples'][j])} | {table['rms'][j]:.4g} | "
                         f"{table['mae'][j]:.4g} | {table['max'][j]:.4g} | "
                         f"{table['bias'][j]:.4g} | {table['correlation'][j]:.4f} |")
    if not analysis.has_commands:
        lines += ["", "## Command - measured effort", "",
                  f"None: the bag has no command topic `{opt.commands_topic}` "
                  "(pass `--commands-topic` if they were recorded under another name)."]
    elif not stats["commands"]:
        lines += ["", "## Command - measured effort", "",
                  f"None: no command on `{opt.commands_topic}` has the robot's "
                  f"{len(analysis.joints)} values."]
    sections = stats.get("sections", [])
    if sections:  # e.g. closed loops
        lines += ["", *sections]
    violations = analysis.violations
    lines += ["", "## Limit violations", ""]
    if violations:
        lines += [f"{len(violations)} intervals (also in `violations.csv`); an effort rate "
                  f"counts beyond its limit plus {RATE_NOISE_SIGMAS:g} times its noise.", "",
                  "| joint | kind | start [s] | end [s] | peak | limit | unit | start (UTC) |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in violation_rows(analysis)[:MAX_TABLE_ROWS]:
            lines.append(f"| {row['joint']} | {row['kind']} | {row['start_s']:.4f} | "
                         f"{row['end_s']:.4f} | {row['peak']:.4g} | {row['limit']:.4g} | "
                         f"{row['unit']} | {row['start_utc']} |")
        if len(violations) > MAX_TABLE_ROWS:
            lines += ["", f"{len(violations) - MAX_TABLE_ROWS} more in `violations.csv`."]
    else:
        lines.append("None.")
    contact_plot = (plot_contacts(analysis.contacts, opt.out, analysis.t0, unit)
                    if opt.plots else None)
    lines += contact_section(analysis.contacts, analysis.t0, contact_plot)
    noise, rate_noise = analysis.effort_noise, analysis.rate_noise
    if np.isfinite(noise).any():
        lines += ["", "## Measured effort noise", "", "Estimated from the data (MAD of second "
                  "differences); the effort rate is checked against limit + "
                  f"{RATE_NOISE_SIGMAS:g} sigma_rate.", "",
                  "| joint | sigma | sigma_rate | rate limit | threshold | unit |",
                  "|---|---|---|---|---|---|"]
        for j, name in enumerate(model.joint_names):
            if np.isfinite(noise[j]):
                limit = float(analysis.rate_limits[j])
                lines.append(f"| {name} | {noise[j]:.3g} | {rate_noise[j]:.3g} | {limit:.4g} | "
                             f"{limit + RATE_NOISE_SIGMAS * rate_noise[j]:.4g} | "
                             f"{effort_unit(model.joint_types[j])} (/s) |")
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    series = (f"`series.{'parquet' if opt.series_format == 'parquet' else 'csv'}`"
              if opt.series else "not written (`--series csv` or `parquet`)")
    stamp = analysis.provenance
    lines += ["", f"Savitzky-Golay window {opt.window} s, order {opt.order}; velocities "
              f"{'recorded' if opt.recorded_velocity else 'differentiated'}. Every sample: "
              f"{series}.", "", f"rnea-bag {stamp['version']}: `{stamp['command']}`; inputs "
              "(sha256): " + ", ".join(f"`{k}` {v}" for k, v in stamp["inputs"].items()) + "."]
    path = opt.out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_page(lines, opt.out, f"rnea-bag report: {opt.bag.name}")
    return path


MAX_TABLE_ROWS = 200  # report.md lists at most this many intervals (all in violations.csv)
VIOLATION_COLUMNS = ("joint", "kind", "start_s", "end_s", "peak", "limit", "unit",
                     "threshold", "peak_s", "start_utc")


def violation_rows(analysis: Analysed) -> list[dict[str, Any]]:
    """``analysis.violations`` as rows of :data:`VIOLATION_COLUMNS`: times in seconds from
    t0 (the first analysed sample), the start also in UTC; ``threshold``: what the peak
    was tested against (the limit, plus the noise margin for a measured effort rate)."""
    model, t0 = analysis.model, analysis.t0
    rows = []
    for v in analysis.violations:
        u = effort_unit(model.joint_types[model.joint_index(v.joint)])
        rows.append({"joint": v.joint, "kind": v.kind, "start_s": round(v.start - t0, 6),
                     "end_s": round(v.end - t0, 6), "peak": v.peak, "limit": v.limit,
                     "unit": u if v.kind == "effort" else f"{u}/s",
                     "threshold": v.threshold, "peak_s": round(v.peak_time - t0, 6),
                     "start_utc": utc(v.start).split(" ")[0]})
    return rows


def write_violations(analysis: Analysed) -> Path:
    """``violations.csv``: one row per interval (:func:`violation_rows`), a header even
    when there is none; every number in its shortest exact form."""
    path = analysis.options.out / "violations.csv"
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, VIOLATION_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(violation_rows(analysis))
    return path


def provenance(options: Options) -> dict[str, Any]:
    """What made the outputs: the version, the command line, sha256 of every input file
    (the bag's, the URDF, the loop file)."""
    from rnea_ros import __version__

    inputs = [options.bag, options.urdf, Path(options.loops) if options.loops
              and options.loops != "none" else None]
    return {"version": __version__, "command": " ".join(options.command or ["rnea-bag"]),
            "inputs": {str(p): digest(p) for p in inputs if p is not None and p.exists()}}
