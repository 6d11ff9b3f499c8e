"""Outputs: one PNG per joint and ``report.md``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rnea_ros.tools.bag.statistics import rate_and_jitter

if TYPE_CHECKING:
    from rnea_ros.tools.bag.analysis import Analysis


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
