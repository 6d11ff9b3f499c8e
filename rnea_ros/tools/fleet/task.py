"""One bag, one task: ``rnea-bag``'s reading and analysis, reduced to a per-joint summary.

The task runs :func:`rnea_ros.tools.bag.analyse` (no series CSV, no report unless
asked) with :class:`SummaryAnalysis`, which adds running sums to it; it returns
rows (plain dicts, one per joint), never the samples, so a worker holds one chunk
of one bag at a time and sends back a few hundred bytes.

Fitted extra friction (the wear signal): per joint, the least-squares fit of
``effort_measured - tau_model = viscous * q_dot + coulomb * sign(q_dot) + c`` over
the bag (normal equations summed chunk by chunk; ``c`` absorbs a constant bias, and is
left out when ``q_dot`` keeps one sign all along, so that ``sign(q_dot)`` is it). A
positive ``viscous``/``coulomb`` is torque the joint needs beyond the model.
"""

from __future__ import annotations

import math
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.errors import RneaError
from rnea_ros.tools.bag import Analysis, Options, analyse
from rnea_ros.tools.bag.analysis import analyse_into
from rnea_ros.tools.bag.report import effort_unit

Array = NDArray[np.float64]
PARTIAL = "; analysed what was read"  # rnea-bag's warning for a bag read up to its cut


@dataclass
class Job:
    """What a worker needs for one bag (picklable, small)."""

    robot: str
    bag: str
    urdf: str
    key: str
    drives: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    report_dir: str | None = None  # write rnea-bag's report.md + plots there
    size: int = 0  # the bag's bytes: the engines start the largest first


class SummaryAnalysis(Analysis):
    """:class:`Analysis` plus what the fleet table needs, summed per chunk."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        n = self.model.nv
        self.normal = np.zeros((n, 3, 3))  # X^T X per joint, X = [v, sign v, 1]
        self.moment = np.zeros((n, 3))  # X^T y, y = measured - model
        self.yy = np.zeros(n)  # y^T y
        self.v2 = np.zeros(n)
        self.v_count = np.zeros(n)
        self.peak_effort = np.zeros(n)
        self.peak_rate = np.zeros(n)
        self.t_last = math.nan

    def observe(self, t: Array, qd: Array, tau: Array, effort: Array, subject: Array,
                rate: Array) -> None:
        if len(t):
            self.t_last = float(t[-1])
        y = effort - tau
        ok = np.isfinite(y) & np.isfinite(qd)
        v = np.where(ok, qd, 0.0)
        y = np.where(ok, y, 0.0)
        s = np.sign(v)
        one = ok.astype(np.float64)
        X = np.stack([v, s, one], axis=2)  # (N, n, 3)
        self.normal += np.einsum("kji,kjl->jil", X, X)
        self.moment += np.einsum("kji,kj->ji", X, y)
        self.yy += (y * y).sum(axis=0)
        self.v2 += (v * v).sum(axis=0)
        self.v_count += one.sum(axis=0)
        with np.errstate(invalid="ignore"):
            if len(t):
                self.peak_effort = np.fmax(self.peak_effort, np.nanmax(np.abs(subject), axis=0))
                self.peak_rate = np.fmax(self.peak_rate, np.nanmax(np.abs(rate), axis=0))

    def friction(self) -> tuple[Array, Array, Array, Array]:
        """``(viscous, coulomb)`` per joint [N m s/rad, N m] and their standard errors
        (``s^2 (X^T X)^-1``, ``s^2`` the fit's residual variance); NaN without motion."""
        n = self.model.nv
        fit, se = np.full((n, 2), np.nan), np.full((n, 2), np.nan)
        for j in range(n):
            A, b, count = self.normal[j], self.moment[j], self.v_count[j]
            if np.linalg.cond(A) > 1e10:  # v never changes sign: sign v is the constant
                A, b = A[:2, :2], b[:2]
            if count < 10 or np.linalg.cond(A) > 1e10:
                continue
            x = np.linalg.solve(A, b)
            variance = max(float(self.yy[j] - x @ b), 0.0) / (count - len(b))
            fit[j] = x[:2]
            se[j] = np.sqrt(variance * np.diag(np.linalg.inv(A))[:2])
        return fit[:, 0], fit[:, 1], se[:, 0], se[:, 1]


def options_for(job: Job) -> Options:
    """rnea-bag's options for the job: summaries only, unless a report is asked for."""
    report = job.report_dir is not None
    out = Path(job.report_dir) if job.report_dir is not None else Path(".")
    return Options(bag=Path(job.bag), out=out, urdf=Path(job.urdf),
                   drives=Path(job.drives) if job.drives else None, series=False,
                   report=report, plots=report, progress=False, force=report,
                   **job.options)


def run(job: Job) -> dict[str, Any]:
    """Analyse one bag: ``{"robot", "bag", "key", "status", "message", "rows"}``; never
    raises for a bad bag (its status is ``error`` with a one-line reason)."""
    result: dict[str, Any] = {"robot": job.robot, "bag": job.bag, "key": job.key,
                              "status": "ok", "message": "", "rows": [],
                              "report": job.report_dir}
    try:
        options = options_for(job)
        # A per-bag report goes through rnea-bag's staged, atomic output (replacing the
        # report of an earlier version of the bag); summaries alone write nothing.
        analysis, stats = (analyse if options.report else analyse_into)(options,
                                                                         SummaryAnalysis)
    except RneaError as exc:
        return _error(result, str(exc))
    except Exception as exc:  # a bag that breaks a library: an error row, not a crash
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return _error(result, f"{type(exc).__name__}: {exc} ({Path(last.filename).name}:"
                      f"{last.lineno})")
    assert isinstance(analysis, SummaryAnalysis)
    cut = [w for w in stats["warnings"] if w.endswith(PARTIAL)]
    if cut:
        result["status"], result["message"] = "partial", _line(cut[0])
    result["rows"] = rows(analysis)
    return result


def rows(a: SummaryAnalysis) -> list[dict[str, Any]]:
    """One summary row per joint; ``unit`` is its effort's: ``N m`` (revolute,
    continuous) or ``N`` (prismatic). ``contacts``: the contacts isolated at this joint
    (rnea-bag's ``contacts.csv`` rows of its ``joint``; their sum over the joints is the
    bag's count; ``None`` when the bag has no velocities or efforts), ``contact_peak``
    their largest ``peak_nm`` (NaN: none)."""
    table = a.model_vs_measured.table()
    viscous, coulomb, viscous_se, coulomb_se = a.friction()
    violations = a.effort_violations.close() + a.rate_violations.close()
    limit = np.asarray(a.model.effort_limit, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        effort_ratio = np.where(limit > 0, a.peak_effort / limit, np.nan)
        rate_ratio = a.peak_rate / a.rate_limits
        v_rms = np.sqrt(a.v2 / np.maximum(a.v_count, 1))
    observed = a.contacts.tracker is not None and a.contacts.tracker.samples > 0
    out = []
    for j, name in enumerate(a.model.joint_names):
        peaks = [c.peak for c in a.contacts.rows if c.joint == name]
        out.append({
            "joint": name, "start": a.t0, "duration": a.t_last - a.t0,
            "samples": int(table["samples"][j]), "rms": float(table["rms"][j]),
            "bias": float(table["bias"][j]), "max_abs": float(table["max"][j]),
            "peak_effort_ratio": float(effort_ratio[j]), "peak_rate_ratio": float(rate_ratio[j]),
            "violations": sum(1 for v in violations if v.joint == name),
            "viscous": float(viscous[j]), "coulomb": float(coulomb[j]),
            "viscous_se": float(viscous_se[j]), "coulomb_se": float(coulomb_se[j]),
            "velocity_rms": float(v_rms[j]),
            "contacts": len(peaks) if observed else None,
            "contact_peak": max(peaks) if peaks else math.nan,
            "unit": effort_unit(a.model.joint_types[j]),
        })
    return out


def _line(text: str) -> str:
    return " ".join(text.split())


def _error(result: dict[str, Any], message: str) -> dict[str, Any]:
    result["status"], result["message"] = "error", _line(message)
    return result
