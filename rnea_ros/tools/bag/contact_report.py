"""The report's contact section: the estimated external joint torques ``r`` (the
momentum observer's residual, one curve per joint) with the contacts shaded and named
by their link (``contacts.png``), the contact table and the thresholds used (or
proposed); why there are none when the bag cannot give them."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.tools.bag.contacts import FLOOR, THRESHOLDS_FILE, BagContacts, Row
from rnea_ros.tools.bag.statistics import utc

Array = NDArray[np.float64]
MAX_ROWS = 200  # contacts listed in report.md (all of them in contacts.csv)
CONTACT_COLUMNS = ("start_s", "end_s", "duration_s", "link", "joint", "peak_nm", "start_utc")


def contact_rows(rows: list[Row], t0: float) -> list[dict[str, Any]]:
    """``contacts.csv``'s rows (:data:`CONTACT_COLUMNS`): times from ``t0`` [s]."""
    out = []
    for c in rows:
        out.append({"start_s": round(c.start - t0, 6),
                    "end_s": "" if math.isnan(c.end) else round(c.end - t0, 6),
                    "duration_s": "" if math.isnan(c.end) else round(c.end - c.start, 6),
                    "link": c.link, "joint": c.joint, "peak_nm": c.peak,
                    "start_utc": utc(c.start).split(" ")[0]})
    return out


def write_contacts(path: Path, rows: list[Row], t0: float) -> Path:
    """``contacts.csv``: a header even when there is no contact."""
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, CONTACT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(contact_rows(rows, t0))
    return path


def plot_contacts(contacts: BagContacts, out: Path, t0: float, unit: str) -> Path | None:
    """``out/contacts.png``: ``r`` (decimated like the joint plots) against time from
    ``t0`` [s], the thresholds dashed, each contact shaded and labelled with its link."""
    tracker = contacts.tracker
    if tracker is None or not tracker.plot["t"]:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.concatenate(tracker.plot["t"]) - t0
    r = np.concatenate(tracker.plot["r"])
    fig, ax = plt.subplots(figsize=(9, 4))
    try:
        names = tracker.model.joint_names
        for j in range(r.shape[1]):
            line = ax.plot(t, r[:, j], lw=0.8, label=names[j] if j < len(names) else str(j))[0]
            ax.axhline(contacts.thresholds[j], color=line.get_color(), ls=":", lw=0.6)
            ax.axhline(-contacts.thresholds[j], color=line.get_color(), ls=":", lw=0.6)
        end = float(t[-1]) if len(t) else 0.0
        for c in contacts.rows:
            stop = end if math.isnan(c.end) else c.end - t0
            ax.axvspan(c.start - t0, stop, color="r", alpha=0.15, lw=0)
            ax.text(c.start - t0, 0.97, c.link, transform=ax.get_xaxis_transform(),
                    fontsize=7, color="r", va="top", rotation=90)
        ax.set_xlabel("time from the bag's start [s]")
        ax.set_ylabel(f"estimated external torque r [{unit}]")
        ax.set_title(f"contacts: {len(contacts.rows)} (thresholds dotted)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=7, ncol=2)
        fig.tight_layout()
        path = out / "contacts.png"
        fig.savefig(path, dpi=80)
    finally:
        plt.close(fig)
    return path


def contact_section(contacts: BagContacts, t0: float, plot: Path | None) -> list[str]:
    """The report's ``## Contacts`` lines."""
    lines = ["", "## Contacts", ""]
    if contacts.reason or contacts.tracker is None:
        return [*lines, f"None: contacts {contacts.reason or 'not observed'}; no "
                "`contacts.csv`."]
    o, tracker = contacts.options, contacts.tracker
    model = tracker.model
    lines += [f"Momentum observer (K_O = {o.contact_gain:g}/s) on the recorded velocities "
              f"and efforts, {tracker.samples} samples ({tracker.restarts} restarts at "
              f"gaps or missing values); onset and release held {o.contact_min_duration:g} "
              f"s, release below {o.contact_release:g} x the thresholds, from "
              f"{contacts.source}: "
              + ", ".join(f"{n} {x:.4g}" for n, x in zip(model.joint_names,
                                                          contacts.thresholds, strict=True))
              + ".", ""]
    rows = contact_rows(contacts.rows, t0)
    if rows:
        lines += [f"{len(rows)} contacts (also in `contacts.csv`):", "",
                  "| link | joint | start [s] | end [s] | peak | start (UTC) |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {c['link']} | {c['joint']} | {c['start_s']:.4f} | "
                  f"{c['end_s'] if c['end_s'] == '' else format(c['end_s'], '.4f')} | "
                  f"{c['peak_nm']:.4g} | {c['start_utc']} |" for c in rows[:MAX_ROWS]]
        if len(rows) > MAX_ROWS:
            lines += ["", f"{len(rows) - MAX_ROWS} more in `contacts.csv`."]
    else:
        lines.append("No contact (`contacts.csv` has its header only).")
    if contacts.proposed is not None:
        lines += ["", f"Proposed thresholds (`{THRESHOLDS_FILE}`: worst |r| of this "
                  f"recording x {o.contact_margin:g}, at least {FLOOR:g}; the recording must "
                  "be contact-free and cover the real work): "
                  + ", ".join(f"{n} {x:.4g}" for n, x in zip(model.joint_names,
                                                              contacts.proposed, strict=True))
                  + "."]
        if contacts.rows:
            lines += ["", f"**Warning**: {len(contacts.rows)} contacts were detected in this "
                      "calibration recording with the thresholds above: if they were real, "
                      "the proposal is too high."]
    if plot is not None:
        lines += ["", f"![{plot.stem}]({plot.name})"]
    return lines
