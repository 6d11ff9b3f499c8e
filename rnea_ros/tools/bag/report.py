"""Outputs: one PNG per joint and ``report.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rnea_ros.tools.bag.options import Options
from rnea_ros.tools.bag.reading import Joints
from rnea_ros.tools.bag.statistics import PairStats, Violation, ViolationTracker, rate_and_jitter

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


def effort_unit(joint_type: str) -> str:
    """``N m`` for a revolute joint, ``N`` for a prismatic one."""
    return "N" if joint_type == "prismatic" else "N m"


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
        self.rate = bottom.plot([], [], lw=0.8, label="model τ̇")[0]
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
             rate: Array, limit: float) -> None:
        top, middle, bottom = self.axes
        self.measured.set_data(t, effort)
        self.model.set_data(t, tau)
        has_command = bool(np.isfinite(command).any())
        self.command.set_data(t, command)
        self.command.set_visible(has_command)
        top.legend(handles=[self.measured, self.model] + ([self.command] if has_command else []),
                   loc="upper right", fontsize=8)
        self.residual.set_data(t, tau - effort)
        self.rate.set_data(t, rate)
        for ax in (top, middle):
            ax.relim(visible_only=True)
            ax.autoscale_view()
        if len(t):
            bottom.set_xlim(float(t[0]), float(t[-1]) if t[-1] > t[0] else float(t[0]) + 1.0)
        self.rate_limits(rate, limit, unit)
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
        bottom.legend(handles=[self.rate] + (self.limits[:1] if shown else []),
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
    try:
        for j, name in enumerate(model.joint_names):
            figure.draw(f"{model.name}: {name} ({model.joint_types[j]})",
                        effort_unit(model.joint_types[j]), t, data["effort"][:, j],
                        data["tau"][:, j], data["command"][:, j], data["tau_dot"][:, j],
                        float(analysis.rate_limits[j]))
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
             f"(time base: {opt.time_base}), {commands}. Times are from the first analysed "
             f"sample, t0 = {analysis.t0:.6f} s ({opt.time_base} time); efforts in {unit}.",
             ""]
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
    violations = analysis.effort_violations.close() + analysis.rate_violations.close()
    lines += ["", "## Limit violations", ""]
    if violations:
        lines += ["| joint | kind | start [s] | end [s] | peak | limit | unit |",
                  "|---|---|---|---|---|---|---|"]
        for v in violations:
            u = effort_unit(model.joint_types[model.joint_index(v.joint)])
            u = u if v.kind == "effort" else f"{u}/s"
            lines.append(f"| {v.joint} | {v.kind} | {v.start - analysis.t0:.4f} | "
                         f"{v.end - analysis.t0:.4f} | {v.peak:.4g} | {v.limit:.4g} | {u} |")
    else:
        lines.append("None.")
    analysis.violations = violations
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    lines += ["", f"Savitzky-Golay window {opt.window} s, order {opt.order}; velocities "
              f"{'recorded' if opt.recorded_velocity else 'differentiated'}. Every sample: "
              "`series.csv`."]
    path = opt.out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
