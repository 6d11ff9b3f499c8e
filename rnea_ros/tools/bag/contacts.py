"""Contacts in a bag: the momentum observer and detector of
:mod:`rnea_ros.control.contact` (docs/contacts.md) run over the recorded joint states,
chunk by chunk, for ``contacts.csv`` and the report's contact section (docs/bag.md,
"Contacts").

**Inputs.** The observer needs the recorded velocities ``q̇`` and efforts ``τ`` of every
joint (``joint_states.velocity``, ``.effort``): ``τ[k]`` is taken as held over
``[t_k, t_k+1)`` (eq. (5) of :mod:`rnea_ros.control.contact.observer`). Differentiated
velocities are not used (their filter lag would read as a contact). A sample lacking
either, a step back in time or a gap longer than :data:`GAP_PERIODS` nominal periods
restarts the observer (``r = 0``) and the detector; a contact open there ends at the
last sample before it.

**Streaming.** Memory stays bounded like the rest of ``rnea-bag``: each evaluated chunk
(N, n) continues the observer from the previous chunk's last sample (its ``p``,
``β + τ_f``, ``τ`` and ``r``) and the detector from its state; the contacts are the
same as one :func:`rnea_ros.control.contact.episodes` over the whole recording.

**Thresholds** (per joint, N m or N): ``--contact-thresholds`` (one value, one per
joint, or a controller parameter file with ``contact.thresholds``), else the default
rule :func:`default_thresholds`: :data:`DEFAULT_FRACTION` of the joint's URDF effort
limit (:data:`DEFAULT_NO_LIMIT` without one), raised to :data:`NOISE_SIGMAS` deviations
of the residual's noise where the measured effort is noisier. ``--propose-contact-thresholds``
writes ``contact_thresholds.yaml`` in ``--out``: the worst ``|r_j|`` of this
(contact-free) recording times ``--contact-margin``, never below :data:`FLOOR`
(:func:`rnea_ros.control.contact.propose_thresholds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.control.contact import DetectionSettings, propose_thresholds, write_thresholds
from rnea_ros.control.contact.detection import ContactDetector, coordinate_link
from rnea_ros.control.contact.observer import (
    COULOMB_BAND,
    checked_band,
    friction,
    observer_gains,
    observer_model,
    residual_rows,
)
from rnea_ros.core.errors import BagError

Array = NDArray[np.float64]

DEFAULT_FRACTION = 0.05  # default threshold: this fraction of the joint's effort limit
DEFAULT_NO_LIMIT = 1.0  # [N m or N] default threshold of a joint without an effort limit
NOISE_SIGMAS = 10.0  # default threshold: at least this many deviations of r's noise
FLOOR = 0.05  # [N m or N] the smallest proposed threshold
GAP_PERIODS = 5.0  # a longer step (in nominal periods) restarts the observer
THRESHOLDS_FILE = "contact_thresholds.yaml"


@dataclass(frozen=True)
class Row:
    """One contact: times [s since the epoch] (``end`` nan: open at the bag's end), the
    isolated link and joint, the largest ``|r_j|`` over joints during it [N m or N]."""

    start: float
    end: float
    link: str
    joint: str
    peak: float


def read_thresholds(values: list[str], model: rc.RobotModel) -> tuple[Array, str]:
    """``--contact-thresholds``: one number, one per joint, or one parameter file
    (``<node>: ros__parameters: contact.thresholds: [...]``, the fragment
    ``--propose-contact-thresholds`` writes); returns (nv,) and where they came from."""
    if len(values) == 1 and not _is_number(values[0]):
        path = Path(values[0])
        if not path.is_file():
            raise BagError(f"--contact-thresholds '{path}': neither numbers nor a parameter "
                           "file")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise BagError(f"--contact-thresholds '{path}': not YAML ({exc})") from exc
        found = _find_thresholds(data)
        if found is None:
            raise BagError(f"--contact-thresholds '{path}': no 'contact.thresholds' under a "
                           "node's ros__parameters (the file --propose-contact-thresholds "
                           "writes has one)")
        numbers, source = found, f"`{path}`"
    else:
        bad = [v for v in values if not _is_number(v)]
        if bad:
            raise BagError(f"--contact-thresholds {' '.join(bad)}: not numbers (give one "
                           "value, one per joint, or one parameter file)")
        numbers, source = [float(v) for v in values], "`--contact-thresholds`"
    th = np.asarray(numbers, dtype=np.float64)
    th = np.full(model.nv, float(th[0])) if th.size == 1 else th
    if th.shape != (model.nv,):
        raise BagError(f"--contact-thresholds: {th.size} values for the {model.nv} joints of "
                       f"'{model.name}' ({', '.join(model.joint_names)}): give 1 or {model.nv}")
    return th, source


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _find_thresholds(data: Any) -> list[float] | None:
    """``contact.thresholds`` (or ``contact: thresholds:``) under any node's
    ``ros__parameters``."""
    if not isinstance(data, dict):
        return None
    for node in data.values():
        params = node.get("ros__parameters") if isinstance(node, dict) else None
        if not isinstance(params, dict):
            continue
        value = params.get("contact.thresholds")
        nested = params.get("contact")
        if value is None and isinstance(nested, dict):
            value = nested.get("thresholds")
        if value is not None:
            try:
                return [float(v) for v in (value if isinstance(value, list) else [value])]
            except (TypeError, ValueError) as exc:
                raise BagError(f"contact.thresholds {value!r}: not numbers") from exc
    return None


def default_thresholds(model: rc.RobotModel, effort_noise: Array, gain: float,
                       dt: float) -> Array:
    """The default rule, per joint: the larger of :data:`DEFAULT_FRACTION` of its effort
    limit (:data:`DEFAULT_NO_LIMIT` where the URDF gives none: 0 or infinite) and
    :data:`NOISE_SIGMAS` deviations of the residual's noise. White effort noise of
    deviation ``s`` enters eq. (5) as ``(1 - a) s`` with ``a = exp(-K_O dt)``, filtered
    by ``1 / (1 - a z^-1)``: the residual's deviation is ``s sqrt((1 - a) / (1 + a))``
    (about ``s sqrt(K_O dt / 2)``). ``effort_noise`` (nv,) [N m or N]: the measured
    effort's estimated noise (NaN: unknown, the limit rule alone)."""
    limit = np.asarray(model.effort_limit, dtype=np.float64)
    known = np.isfinite(limit) & (limit > 0.0)
    base = np.where(known, DEFAULT_FRACTION * np.where(known, limit, 0.0), DEFAULT_NO_LIMIT)
    a = math.exp(-gain * dt)
    noise = NOISE_SIGMAS * np.nan_to_num(effort_noise) * math.sqrt((1.0 - a) / (1.0 + a))
    return np.asarray(np.maximum(base, noise), dtype=np.float64)


class ContactTracker:
    """The observer and detector over the evaluated chunks of a bag (module docstring).

    ``model``: the analysed tree; ``thresholds`` (nv,); ``gain`` ``K_O`` [1/s];
    ``release``, ``min_duration`` [s] as :class:`DetectionSettings`; ``dt`` the nominal
    state period [s]; ``band`` [rad/s or m/s] of the Coulomb sign (:func:`friction`, the
    controller's ``friction.coulomb_band``)."""

    def __init__(self, model: rc.RobotModel, thresholds: Array, *, gain: float,
                 release: float, min_duration: float, dt: float,
                 band: float = COULOMB_BAND) -> None:
        self.model = observer_model(model)  # ModelError for closed loops, elastic models
        self.band = checked_band(band)
        nv = self.model.nv
        self.gains = observer_gains(self.model, gain)
        self.detector = ContactDetector(self.model, DetectionSettings(
            thresholds, np.zeros(nv), np.zeros(nv), release, min_duration))
        self.settings = self.detector.settings
        self.max_gap = GAP_PERIODS * dt
        self.last: tuple[float, Array, Array, Array, Array] | None = None  # t, p, w, tau, r
        self.open: list[Any] | None = None  # [start, peak, coordinate] of a contact
        self.rows: list[Row] = []
        self.worst = np.zeros(nv)  # max |r_j| over the recording
        self.samples = 0  # observed samples
        self.restarts = 0
        self.plot: dict[str, list[Array]] = {"t": [], "r": []}

    def add(self, t: Array, q: Array, qd: Array, tau: Array, keep: slice) -> None:
        """Evaluated samples ``t`` (N,), ``q`` (N, nq), recorded ``qd`` and ``tau``
        (N, nv); ``keep``: the rows plotted."""
        ok = np.asarray(np.isfinite(qd).all(axis=1) & np.isfinite(tau).all(axis=1))
        r_all = np.full((len(t), self.model.nv), np.nan)
        edges = np.flatnonzero(np.diff(np.r_[0, ok.astype(np.int8), 0]))
        for begin, end in zip(edges[::2], edges[1::2], strict=True):
            if begin > 0:  # samples lacking q̇ or τ before: the observer starts again
                self._restart()
            r_all[begin:end] = self._run(t[begin:end], q[begin:end], qd[begin:end],
                                         tau[begin:end])
        if len(ok) and not ok[-1]:
            self._restart()
        self.plot["t"].append(t[keep].copy())
        self.plot["r"].append(r_all[keep].copy())

    def _restart(self) -> None:
        """Forget the observer's past; a contact open ends at the last sample."""
        if self.last is not None:
            self.restarts += 1
            self._close(self.last[0])
        self.last = None
        self.detector.reset()

    def _run(self, t: Array, q: Array, qd: Array, tau: Array) -> Array:
        """Consecutive complete samples: observe, detect; returns ``r`` (N, nv). A gap
        longer than ``max_gap`` or a step back in time restarts the observer there."""
        P, B = rc.momentum_and_bias_batch(self.model, q, qd)
        W = B + friction(self.model, qd, self.band)
        R = np.empty_like(P)
        steps = np.diff(t)
        breaks = np.r_[np.flatnonzero((steps > self.max_gap) | ~(steps > 0.0)) + 1, len(t)]
        begin = 0
        for finish in breaks:
            while begin < finish:
                begin = self._piece(t, P, W, tau, R, begin, int(finish))
        return R

    def _piece(self, t: Array, P: Array, W: Array, tau: Array, R: Array, begin: int,
               finish: int) -> int:
        """Rows ``[begin, finish)`` with no gap between them, continued from ``last`` when
        it is within ``max_gap`` before; returns the row reached."""
        last = self.last
        if last is not None and not 0.0 < t[begin] - last[0] <= self.max_gap:
            self._restart()
            last = None
        head = 0 if last is None else 1
        sl = slice(begin, finish)
        times = np.ascontiguousarray(t[sl] if last is None else np.r_[last[0], t[sl]],
                                     dtype=np.float64)
        Pe = P[sl] if last is None else np.vstack([last[1], P[sl]])
        We = W[sl] if last is None else np.vstack([last[2], W[sl]])
        Te = tau[sl] if last is None else np.vstack([last[3], tau[sl]])
        r0 = np.zeros(self.model.nv) if last is None else last[4]
        Re, bad = residual_rows(times, Pe, We, Te, self.gains, r0)
        stop = len(times) if bad < 0 else bad + 1  # rows valid: [0, stop)
        rows = slice(begin, begin + stop - head)
        R[rows] = Re[head:stop]
        self._detect(t[rows], R[rows])
        end = rows.stop
        if end > begin:
            self.last = (float(t[end - 1]), P[end - 1], W[end - 1], tau[end - 1],
                         R[end - 1].copy())
            self.samples += end - begin
        if bad >= 0:  # a non-finite residual: start again after it
            self._restart()
        return end

    def _detect(self, t: Array, R: Array) -> None:
        """The detector over rows, and the contacts they open, extend or close."""
        n = len(t)
        if n == 0:
            return
        np.maximum(self.worst, np.abs(R).max(axis=0), out=self.worst)
        flag, joint, start = self.detector.rows(t, R)
        inside = flag > 0.5
        peak = np.abs(R).max(axis=1)
        edges = np.flatnonzero(np.diff(np.r_[int(self.open is not None),
                                             inside.astype(np.int8)]))
        pos = 0
        for k in edges:
            if self.open is not None:
                self._extend(peak[pos:k], joint[k - 1] if k > pos else -1)
                self._close(float(t[k]))
            else:
                self.open = [float(start[k]), 0.0, -1]
            pos = int(k)
        if self.open is not None and pos < n:
            self._extend(peak[pos:], joint[n - 1])

    def _extend(self, peak: Array, coordinate: int) -> None:
        assert self.open is not None
        if peak.size:
            self.open[1] = max(self.open[1], float(peak.max()))
        if coordinate >= 0:
            self.open[2] = int(coordinate)

    def _close(self, end: float) -> None:
        if self.open is None:
            return
        start, peak, j = self.open
        m = self.model
        self.rows.append(Row(start, end, coordinate_link(m, j) if j >= 0 else "",
                             m.joint_of_coordinate(j) if j >= 0 else "", peak))
        self.open = None

    def close(self) -> list[Row]:
        """The contacts, one still open at the end with ``end`` nan."""
        if self.open is not None:
            self._close(math.nan)
        return self.rows

    def proposal(self, margin: float) -> Array:
        """Thresholds (nv,) from this recording: worst ``|r_j|`` times ``margin``, at
        least :data:`FLOOR`."""
        return propose_thresholds(self.worst[None, :], margin, floor=FLOOR)


def write_proposal(out: Path, thresholds: Array, margin: float, source: str) -> Path:
    """``out/contact_thresholds.yaml``: the proposed thresholds as a controller
    parameter fragment."""
    return write_thresholds(out / THRESHOLDS_FILE, thresholds, force=True, comment=(
        f"contact thresholds proposed by rnea-bag from {source}: worst |r| x {margin:g}, "
        f"at least {FLOOR:g}\n(the recording must be contact-free and cover the real work)"))


class BagContacts:
    """What ``rnea-bag`` does about contacts for one run: the thresholds (checked before
    any work), a :class:`ContactTracker` once the state period is known, why there is
    none (``reason``), and the outputs (``contacts.csv``, the proposal)."""

    def __init__(self, model: object, options: Any) -> None:
        self.options = options
        self.tracker: ContactTracker | None = None
        self.rows: list[Row] = []
        self.seen = {"velocity": False, "effort": False}
        self.proposed: Array | None = None
        self.reason = ""
        self.model: rc.RobotModel | None = None
        if not options.contacts:
            self.reason = "not observed (`--no-contacts`)"
            return
        if not isinstance(model, rc.RobotModel):
            self.reason = ("not observed: a closed-loop robot's momentum is in its active "
                           "coordinates, which the observer does not build (docs/contacts.md)")
            return
        try:
            self.model = observer_model(model)
        except rc.ModelError as exc:
            self.reason = f"not observed: {exc}"
            return
        self.thresholds = np.full(self.model.nv, DEFAULT_NO_LIMIT)  # checked only
        self.source = ""
        if options.contact_thresholds:
            self.thresholds, self.source = read_thresholds(options.contact_thresholds,
                                                           self.model)
        zero = np.zeros(self.model.nv)
        DetectionSettings(self.thresholds, zero, zero, options.contact_release,
                          options.contact_min_duration).checked(self.model)

    def add(self, t: Array, q: Array, qd: Array, effort: Array, dt: float,
            keep: slice, effort_noise: Array) -> None:
        """One evaluated chunk (recorded ``qd``; ``effort`` measured); ``effort_noise``
        (nv,) its estimated noise so far (for the default thresholds, fixed at the first
        chunk)."""
        if self.model is None:
            return
        self.seen["velocity"] |= bool(np.isfinite(qd).all(axis=1).any())
        self.seen["effort"] |= bool(np.isfinite(effort).all(axis=1).any())
        if self.tracker is None:
            o = self.options
            if not self.source:
                self.thresholds = default_thresholds(self.model, effort_noise,
                                                     o.contact_gain, dt)
                self.source = (f"the default rule (the larger of {100 * DEFAULT_FRACTION:g}"
                               f" % of each joint's effort limit, {DEFAULT_NO_LIMIT:g} "
                               f"without one, and {NOISE_SIGMAS:g} deviations of the "
                               "residual's noise from the measured effort's)")
            self.tracker = ContactTracker(self.model, self.thresholds, gain=o.contact_gain,
                                          release=o.contact_release,
                                          min_duration=o.contact_min_duration, dt=dt,
                                          band=o.contact_band)
        self.tracker.add(t, q, qd, effort, keep)

    def finish(self, out: Path, write: bool) -> bool:
        """Close the contacts (and write the proposal); whether they were observed
        (``contacts.csv`` is then :func:`~.contact_report.write_contacts`'s)."""
        tracker = self.tracker
        if tracker is None or tracker.samples == 0:
            if self.model is not None:
                missing = [plural for k, plural in (("velocity", "velocities"),
                                                    ("effort", "efforts")) if not self.seen[k]]
                self.reason = ("not observed: the joint states have no "
                               + (" and no ".join(missing) if missing else
                                  "sample with both velocities and efforts")
                               + " of every joint (the observer needs the recorded q̇ and τ)")
            if self.options.propose_contact_thresholds:
                raise BagError(f"--propose-contact-thresholds: contacts {self.reason}")
            return False
        self.rows = tracker.close()
        if self.options.propose_contact_thresholds:
            self.proposed = tracker.proposal(self.options.contact_margin)
            if write:
                write_proposal(out, self.proposed, self.options.contact_margin,
                               f"'{self.options.bag.name}' ({tracker.samples} samples)")
        return True

    def summary(self) -> str:
        """One line: how many contacts and the worst, or why none were observed."""
        if self.reason or self.tracker is None:
            return self.reason or "not observed"
        worst = max((c.peak for c in self.rows), default=0.0)
        return (f"{len(self.rows)} (worst peak {worst:.4g}) in {self.tracker.samples} "
                f"samples; thresholds from {self.source}")


__all__ = ["BagContacts", "ContactTracker", "Row", "default_thresholds", "read_thresholds",
           "write_proposal"]
