"""``rnea-identify``'s report: Markdown tables and PNG plots of an identification."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.identification import parameters
from rnea_ros.identification.pipeline import Identification
from rnea_ros.identification.writers import Inertial

Array = NDArray[np.float64]


def _g(x: float) -> str:
    return f"{x:.4g}" if np.isfinite(x) else "—"


def plot_validation(result: Identification, path: Path, band: float) -> None:
    """Measured vs predicted torques (before and after) on the validation segment."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, d, rows = result.prior, result.data, ~result.fit
    t = d.t[rows]
    before = result.predict(result.theta_prior, rows, band)
    after = result.predict(result.theta, rows, band)
    fig, axes = plt.subplots(model.nv, 1, figsize=(10, 2.0 * model.nv), sharex=True,
                             squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(t, d.tau_raw[rows, j], color="0.6", lw=0.8, label="measured")
        ax.plot(t, before[:, j], color="tab:red", lw=0.8, label="URDF model (before)")
        ax.plot(t, after[:, j], color="tab:blue", lw=0.9, label="identified (after)")
        ax.set_ylabel(f"{model.joint_names[j]}\n[N m]", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(loc="upper right", fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("time [s] (validation segment, not used for fitting)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def markdown(result: Identification, links: dict[str, Inertial], *, bag: str, urdf: str,
             band: float, plots: list[str], written: list[str]) -> str:
    """The report text."""
    model, est, base, d = result.prior, result.estimate, result.base, result.data
    n = model.nv
    relations = base.relations(4)
    consistent = base.of(result.theta)
    prior = base.of(result.theta_prior)
    fit_rows, val_rows = int(result.fit.sum()), int((~result.fit).sum())
    rate = 1.0 / (d.period * d.decimation)
    out = [f"# Identification of `{model.name}`", ""]
    if result.warnings:  # first: the files below may be wrong
        out += [f"## Warnings ({len(result.warnings)})", ""]
        out += [f"* **{w}**" for w in result.warnings] + [""]
    out += [f"* bag: `{bag}`; URDF (prior): `{urdf}`",
           f"* {d.t.size} samples at {rate:.4g} Hz after zero-phase filtering and decimation "
           f"by {d.decimation} (recorded period {1e3 * d.period:.4g} ms), "
           f"{d.t[-1] - d.t[0]:.4g} s; fitting {fit_rows}, validation {val_rows} "
           "(the last part of the recording, never fitted)",
           f"* {base.rank} base parameters of {len(base.names)} standard ones; "
           f"condition number of the weighted observation matrix {est.cond:.4g} "
           f"({est.cond_scaled:.4g} with unit-norm columns)",
           "* per-joint noise deviation (weights 1/σ): "
           + ", ".join(f"{model.joint_names[i]} {_g(est.sigma[i])}" for i in range(n)),
           f"* Coulomb sign smoothed over |q̇| < {band:g}", ""]
    if written:
        out += ["Written: " + ", ".join(f"`{w}`" for w in written), ""]
    if result.unidentified:
        out += ["## Not identified from these data", "",
                "Kept from the prior (URDF / drive file) in the written files:", ""]
        out += [f"* `{what}`: {why}" for what, why in result.unidentified.items()]
        out.append("")
    if result.notes:
        out += ["## Data notes", ""] + [f"* {note}" for note in result.notes] + [""]
    out += ["## Torque residual RMS on the validation segment", ""]
    if result.rms_before.size == 0:
        out += ["No validation segment (`--validation 0`): residual RMS on the fitted data: "
                + ", ".join(f"{model.joint_names[j]} {_g(result.fit_rms_after[j])}"
                            for j in range(n)), ""]
    else:
        out += ["| joint | before (URDF) | after (identified, consistent) | after / before | "
                "least squares (base) |", "|---|---|---|---|---|"]
    for j in range(result.rms_before.size):
        ratio = result.rms_after[j] / result.rms_before[j] if result.rms_before[j] else np.nan
        out.append(f"| {model.joint_names[j]} | {_g(result.rms_before[j])} | "
                   f"{_g(result.rms_after[j])} | {_g(ratio)} | {_g(result.rms_base[j])} |")
    out += ["", *[f"![{p}]({p})" for p in plots], ""]
    out += ["## Base parameters", "",
            "Each is a combination of standard parameters (`name@link` about the link "
            "origin, in SI units; `Ia, Fv, Fc, off` per joint).", "",
            "| # | base parameter | least squares | σ | σ % | consistent | prior |",
            "|---|---|---|---|---|---|---|"]
    for k, rel in enumerate(relations):
        out.append(f"| {k + 1} | `{rel}` | {_g(est.x[k])} | {_g(est.std[k])} | "
                   f"{_g(est.relative_std[k])} | {_g(consistent[k])} | {_g(prior[k])} |")
    gone = base.without_effect()
    if gone:
        out += ["", "No effect on the torques (not identifiable by any motion): "
                + ", ".join(f"`{g}`" for g in gone)]
    out += ["", "## Drive parameters", "",
            "| joint | armature Ia | viscous Fv | Coulomb Fc | offset | Fc+ | Fc- |",
            "|---|---|---|---|---|---|---|"]
    alone = set(base.independent[~np.any(base.beta != 0.0, axis=1)].tolist())
    marked = False
    for i, joint in enumerate(model.joint_names):
        cell: dict[str, str] = {}
        for key in parameters.DRIVE_NAMES:
            index = parameters.drive_index(model, i, key)
            cell[key] = _g(float(result.theta[index]))
            if index not in alone:
                cell[key] += "*"
                marked = True
        fc, off = (float(result.theta[parameters.drive_index(model, i, key)])
                   for key in ("Fc", "off"))
        out.append(f"| {joint} | {cell['Ia']} | {cell['Fv']} | {cell['Fc']} | {cell['off']} | "
                   f"{_g(fc + off)} | {_g(fc - off)} |")
    if marked:
        out += ["", "\\* identifiable only in a combination with other parameters (see the "
                "base parameters): the split between its terms follows the prior."]
    out += ["", "Link inertials: most standard inertial parameters enter the torques only "
            "through the base parameters above; the data fix those combinations, the URDF "
            "prior (closest in a scaled norm, physically consistent) fixes the rest."]
    out += ["", "## Link inertials written", "",
            "| link | mass [kg] (prior) | COM [m] | principal moments about the COM [kg m²] |",
            "|---|---|---|---|"]
    for j, link in enumerate(model.body_names):
        if link not in links:
            continue
        m, c, Ic = links[link]
        moments = np.linalg.eigvalsh(Ic)
        out.append(f"| {link} | {m:.4g} ({model.mass[j]:.4g}) | "
                   f"{' '.join(f'{v:.4g}' for v in c)} | "
                   f"{' '.join(f'{v:.4g}' for v in moments)} |")
    return "\n".join(out) + "\n"
