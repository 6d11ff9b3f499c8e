"""Measurements for identification: read a bag, filter, differentiate, decimate.

Gautier's data processing (Gautier 1997, "Dynamic identification of robots
with power model"; Khalil & Dombre 2002, ch. 14): the positions are low-pass
filtered **without phase shift** (a Butterworth filter run forward and
backward, ``scipy.signal.sosfiltfilt``), velocities and accelerations are
central differences of the filtered positions (``numpy.gradient``), the
torques get the same zero-phase filter, and both are **decimated** (the
filter already removed what lies above the new Nyquist frequency, so keeping
every ``d``-th sample is the decimation). The default ``rate = 1.5 cutoff``
keeps samples far enough apart that their (filtered) noise is nearly
independent, as the least-squares covariance assumes: on the synthetic arm7
tests the standard deviations are then honest (median ``|error| / sigma``
about 0.67, as for a Gaussian); at ``2.5 cutoff`` they are about 20 % too
small.

A recording splits into segments at time gaps (> 1.5 nominal periods) and at
unusable samples (non-finite position or effort); each segment is filtered on
its own and loses ``2/cutoff`` seconds at both ends (filter transients).
Saturated efforts (``|tau| >= 0.995`` of the URDF effort limit, or a
plateau: the joint's extreme value held by more than 0.5 % of the samples,
but not by half of them: a constant signal is not clipping)
are excluded per joint, with the filter's support around them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.signal
from numpy.typing import NDArray

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification.errors import IdentificationError
from rnea_ros.identification.parameters import smoothed_sign

Array = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass
class Recording:
    """Raw samples in model order: ``t`` (N,) [s], ``q``, ``effort`` (N, n); ``skipped``
    counts what the reader dropped (``nan``: non-finite position, ``missing`` joints)."""

    t: Array
    q: Array
    effort: Array
    skipped: dict[str, int] = field(default_factory=dict)


def read_bag(bag: Path, model: RobotModel, *, states_topic: str = "/joint_states",
             time_base: str = "header") -> Recording:
    """Joint states of ``bag`` (ROS 1 ``.bag``, ROS 2 MCAP or sqlite3) in model order.

    The one place that uses the bag reader of ``rnea-bag``
    (:func:`rnea_ros.tools.bag.reading.read_states`).
    """
    from rnea_ros.tools.bag.reading import read_states

    samples, stats = read_states(bag, model, states_topic, time_base)
    skipped = {"nan": int(stats.get("skipped_nan", 0)),
               "missing": int(stats.get("skipped_missing", 0))}
    if samples is None:
        empty = np.zeros((0, model.nv))
        return Recording(np.zeros(0), empty, empty.copy(), skipped)
    return Recording(samples.t, samples.q, samples.effort, skipped)


@dataclass
class Prepared:
    """Filtered, differentiated, decimated samples (M of them).

    ``q, qd, qdd`` (M, n) from the filtered positions, ``tau`` (M, n) the
    filtered effort, ``tau_raw`` (M, n) the recorded effort at the same
    instants, ``coulomb`` (M, n) the Coulomb column ``sgn_band(qd)`` computed at the
    full rate and filtered like the torques (Gautier's parallel filtering: the
    sign jumps, the filtered torque does not), ``valid`` (M, n) usable
    (sample, joint) rows, ``t`` (M,).
    """

    t: Array
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    tau_raw: Array
    coulomb: Array
    valid: BoolArray
    period: float
    decimation: int
    saturated: NDArray[np.int64]
    notes: list[str] = field(default_factory=list)


def saturation(effort: Array, limit: Array) -> BoolArray:
    """Saturated samples per joint (N, n): at the effort limit, or on a clipping plateau."""
    mask = np.abs(effort) >= 0.995 * limit
    for j in range(effort.shape[1]):
        column = effort[:, j]
        finite = np.isfinite(column)
        if finite.sum() < 100:
            continue
        for extreme in (column[finite].max(), column[finite].min()):
            held = column == extreme
            # Clipping holds the extreme for a while; a constant signal is not clipping.
            if extreme != 0.0 and 0.005 * finite.sum() < held.sum() < 0.5 * finite.sum():
                mask[:, j] |= held
    return mask


MAX_EFFORT = 1e9  # [N m | N]: no actuator comes near; beyond, sums of squares lose meaning


def plausible_efforts(effort: Array, names: tuple[str, ...] | list[str]) -> None:
    """:class:`IdentificationError` (one line) for efforts that are no torque measurement:
    a joint whose every finite effort is 0 (the field left empty), magnitudes beyond
    :data:`MAX_EFFORT`."""
    finite = np.isfinite(effort)
    zero = [names[j] for j in range(effort.shape[1])
            if finite[:, j].any() and not np.any(effort[finite[:, j], j])]
    if zero:
        raise IdentificationError(f"joints {', '.join(zero)}: every recorded effort is 0: no "
                                  "torque was measured (is the effort field filled?)")
    big = np.abs(np.where(finite, effort, 0.0)).max(axis=0)
    huge = [f"{names[j]} ({big[j]:.3g})" for j in range(effort.shape[1]) if big[j] > MAX_EFFORT]
    if huge:
        raise IdentificationError(f"implausible efforts beyond {MAX_EFFORT:g} N m (or N): "
                                  f"{', '.join(huge)}: not torque measurements")


def widen(mask: BoolArray, half: int) -> BoolArray:
    """``mask`` (N, n) widened by ``half`` samples on both sides (a moving-window any)."""
    out = np.zeros_like(mask)
    for j in np.flatnonzero(mask.any(axis=0)):
        count = np.concatenate(([0], np.cumsum(mask[:, j], dtype=np.int64)))
        index = np.arange(mask.shape[0])
        hi = np.minimum(index + half + 1, mask.shape[0])
        lo = np.maximum(index - half, 0)
        out[:, j] = count[hi] - count[lo] > 0
    return out


SLOW_FRACTION = 0.1  # of a joint's peak speed: below, its rows are not fitted (near_rest)
MIN_MOTION = 0.01  # rad (m): a joint whose filtered range is below never moves


def near_rest(qd: Array, fraction: float, moving: BoolArray | None = None) -> BoolArray:
    """Rows (M, n) where a joint moves slower than ``fraction`` of its peak speed ``|qd|``.

    There the Coulomb + viscous model does not hold: a joint at or near rest sticks
    (static friction takes any value in ``[-Fc, Fc]``), slips and sticks again at a
    reversal, and the zero-phase filter spreads the sign's jump over ``1/cutoff``
    (Khalil & Dombre, ch. 14: samples at low velocity are left out of the friction fit).
    On a plant whose friction is ``Fc sign(qd)`` integrated explicitly, a joint that
    should stick chatters instead, by up to ``Fc dt / I`` per step (arm7's wrist in the
    closed-loop demo: sign flips at up to 0.17 rad/s, 1.5 rad/s peak). Only the joints
    in ``moving`` (n,) (default: any speed at all) lose rows: one that never moves keeps
    them (nothing to fit of its friction, its torque still carries gravity)."""
    speed = np.abs(qd)
    peak = speed.max(axis=0) if speed.size else np.zeros(qd.shape[1])
    moving = peak > 0 if moving is None else moving & (peak > 0)
    return np.asarray((speed < fraction * peak) & moving, dtype=bool)


def prepare(rec: Recording, model: RobotModel, *, cutoff: float = 10.0,
            rate: float = 15.0, band: float = 0.01,
            slow_fraction: float = SLOW_FRACTION) -> Prepared:
    """Filter (zero phase, ``cutoff`` Hz), differentiate and decimate to about ``rate`` Hz;
    the rows of a joint near rest (:func:`near_rest`, ``slow_fraction``) are not valid."""
    names = model.joint_names
    N = rec.t.size
    if N < 3:
        raise IdentificationError(f"the recording has {N} joint states: nothing to identify")
    steps = np.diff(rec.t)
    positive = steps[steps > 0]
    if positive.size == 0:
        raise IdentificationError("the joint-state time stamps never increase")
    dt = float(np.median(positive))
    fs = 1.0 / dt
    if cutoff >= 0.45 * fs:
        raise IdentificationError(
            f"cutoff {cutoff:g} Hz must be below 0.45 x the sampling rate {fs:.4g} Hz")
    if rate > fs * (1 + 1e-6):
        raise IdentificationError(
            f"rate {rate:g} Hz is above the recording's sampling rate {fs:.4g} Hz: "
            f"decimation cannot raise the rate; choose a rate <= {fs:.4g} Hz (about 1.5 x "
            "the cutoff)")
    decimation = max(1, int(fs / rate))
    trim = int(np.ceil(2.0 * fs / cutoff))  # filter transients at the ends of a segment
    usable = np.asarray(np.isfinite(rec.q).all(axis=1) & np.isfinite(rec.effort).all(axis=1))
    notes = []
    bad = int((~usable).sum())
    if bad:
        no_effort = [names[j] for j in range(model.nv) if not np.isfinite(rec.effort[:, j]).any()]
        if no_effort:
            raise IdentificationError(
                f"joints {', '.join(no_effort)} have no finite effort in the recording: "
                "identification needs measured torques")
        notes.append(f"{bad} samples with a non-finite position or effort were dropped "
                     "(segments are cut there)")
    plausible_efforts(rec.effort, names)
    saturated = saturation(np.where(np.isfinite(rec.effort), rec.effort, 0.0),
                           model.effort_limit)
    spread = widen(saturated, trim)
    cuts = np.flatnonzero((steps > 1.5 * dt) | (steps <= 0)) + 1
    edges = np.concatenate(([0], cuts, [N]))
    sos = scipy.signal.butter(4, cutoff, fs=fs, output="sos")
    parts: dict[str, list[Any]] = {k: [] for k in ("t", "q", "qd", "qdd", "tau", "raw",
                                                    "coulomb", "valid")}
    for a, b in itertools.pairwise(edges):
        good = np.flatnonzero(usable[a:b]) + a  # runs of usable samples inside the segment
        if good.size == 0:
            continue
        runs = np.split(good, np.flatnonzero(np.diff(good) > 1) + 1)
        for run in runs:
            if run.size <= 2 * trim + 3 * decimation:
                continue
            s, e = int(run[0]), int(run[-1]) + 1
            pad = min(e - s - 1, 3 * trim)
            qf = scipy.signal.sosfiltfilt(sos, rec.q[s:e], axis=0, padlen=pad)
            tf = scipy.signal.sosfiltfilt(sos, rec.effort[s:e], axis=0, padlen=pad)
            qd = np.gradient(qf, dt, axis=0)
            qdd = np.gradient(qd, dt, axis=0)
            coulomb = scipy.signal.sosfiltfilt(sos, smoothed_sign(qd, band), axis=0, padlen=pad)
            keep = np.arange(trim, e - s - trim, decimation)
            parts["t"].append(rec.t[s:e][keep])
            parts["q"].append(qf[keep])
            parts["qd"].append(qd[keep])
            parts["qdd"].append(qdd[keep])
            parts["tau"].append(tf[keep])
            parts["raw"].append(rec.effort[s:e][keep])
            parts["coulomb"].append(coulomb[keep])
            parts["valid"].append(~spread[s:e][keep])
    if not parts["t"]:
        raise IdentificationError(
            f"the recording is too short: {N} samples over {rec.t[-1] - rec.t[0]:.3g} s leave "
            f"no segment longer than 2/cutoff = {2.0 / cutoff:.3g} s once filter transients "
            "are removed")
    out = {k: np.concatenate(v) for k, v in parts.items()}
    span = out["q"].max(axis=0) - out["q"].min(axis=0)
    slow = near_rest(out["qd"], slow_fraction, span >= MIN_MOTION) & out["valid"]
    out["valid"] &= ~slow
    if slow.any():
        notes.append(f"rows near rest (slower than {slow_fraction:g} x the joint's peak speed: "
                     "stiction, not the Coulomb + viscous model) not fitted nor validated: "
                     + ", ".join(f"{names[j]} {100.0 * slow[:, j].mean():.2g} %"
                                 for j in range(model.nv)))
    counts = saturated.sum(axis=0)
    for j in np.flatnonzero(counts):
        notes.append(f"joint '{names[j]}': {counts[j]} saturated effort samples excluded "
                     f"({100.0 * counts[j] / N:.2g} %)")
    return Prepared(out["t"], out["q"], out["qd"], out["qdd"], out["tau"], out["raw"],
                    out["coulomb"], out["valid"], dt, decimation, counts, notes)
