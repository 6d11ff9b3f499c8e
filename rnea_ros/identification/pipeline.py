"""Identification from recorded joint states and efforts: the whole method.

1. data (:mod:`~rnea_ros.identification.data`): zero-phase filtering,
   differentiation, decimation; saturated and non-finite samples excluded;
2. the last ``validation`` fraction of the time is set aside (never fitted);
3. base parameters (:mod:`~rnea_ros.identification.base`) and weighted least
   squares (:mod:`~rnea_ros.identification.estimation`) on the fitting part;
4. what the data cannot determine is named (a joint that never moves or
   never reverses, a combination not excited), not estimated;
5. physically consistent standard parameters
   (:mod:`~rnea_ros.identification.consistency`), the URDF as prior;
6. torque residuals per joint on the validation part, before (the URDF and
   drive file) and after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.identification import parameters
from rnea_ros.identification.base import BaseParameters, base_parameters
from rnea_ros.identification.consistency import consistent_parameters
from rnea_ros.identification.data import (
    MIN_MOTION,
    SLOW_FRACTION,
    Prepared,
    Recording,
    prepare,
)
from rnea_ros.identification.errors import IdentificationError
from rnea_ros.identification.estimation import Accumulator, Estimate, estimate
from rnea_ros.identification.parameters import IDENTIFICATION
from rnea_ros.identification.writers import fixed_parts

Array = NDArray[np.float64]


@dataclass
class Settings:
    """How to identify: filter ``cutoff`` [Hz], decimated ``rate`` [Hz], the
    ``validation`` fraction (last part of the time), the Coulomb smoothing
    ``band`` [rad/s or m/s], the rank tolerance, the regressor chunk size, the
    ``slow_fraction`` of a joint's peak speed below which its rows are left out
    (:func:`~rnea_ros.identification.data.near_rest`)."""

    cutoff: float = 10.0
    rate: float = 15.0
    validation: float = 0.2
    band: float = 0.01
    rank_tol: float = 1e-7
    chunk: int = 4000
    min_motion: float = MIN_MOTION  # rad (m): a joint whose filtered range is below never moves
    slow_fraction: float = SLOW_FRACTION


@dataclass
class Identification:
    """Everything ``rnea-identify`` reports and writes."""

    prior: RobotModel
    base: BaseParameters
    estimate: Estimate
    theta_prior: Array
    theta: Array  # physically consistent standard parameters (14 n,)
    data: Prepared
    fit: NDArray[np.bool_]  # (M,) samples used for fitting; the others validate
    unidentified: dict[str, str]  # base-parameter expression -> why
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the model may be wrong: say so loudly
    noise: Array = field(default_factory=lambda: np.zeros(0))  # effort noise estimate (n,)
    rms_before: Array = field(default_factory=lambda: np.zeros(0))
    rms_after: Array = field(default_factory=lambda: np.zeros(0))
    rms_base: Array = field(default_factory=lambda: np.zeros(0))
    fit_rms_after: Array = field(default_factory=lambda: np.zeros(0))

    @property
    def offsets(self) -> Array:
        n = self.prior.nv
        return self.theta[10 * n + 3::4]

    def predict(self, theta: Array, rows: NDArray[np.bool_] | None = None,
                band: float = 0.01) -> Array:
        """Model torques (M, n) at the prepared samples for standard parameters ``theta``."""
        d = self.data
        keep = np.ones(d.t.size, dtype=bool) if rows is None else rows
        out = np.empty((int(keep.sum()), self.prior.nv))
        idx = np.flatnonzero(keep)
        for s in range(0, idx.size, 4000):
            k = idx[s:s + 4000]
            out[s:s + k.size] = parameters.regressor(self.prior, d.q[k], d.qd[k], d.qdd[k],
                                                     band) @ theta
        return out


def _rms(residual: Array, valid: NDArray[np.bool_]) -> Array:
    r = np.where(valid, residual, 0.0)
    count = np.maximum(valid.sum(axis=0), 1)
    return np.asarray(np.sqrt((r**2).sum(axis=0) / count), dtype=np.float64)


def _why(model: RobotModel, expression: str, still: list[int], one_way: list[int]) -> str:
    """A reason for an unidentifiable base parameter, from the joints it involves."""
    involved = set()
    for term in expression.replace(" - ", " + ").split(" + "):
        name = term.split("·")[-1].split("@")[-1]
        if name in model.joint_names:
            involved.add(model.joint_index(name))
        elif name in model.body_names:
            involved.add(model.body_names.index(name))
    for i in sorted(involved):
        if i in still:
            return f"joint '{model.joint_names[i]}' never moves"
    for i in sorted(involved):
        if i in one_way and ("Fc@" in expression or "off@" in expression):
            return (f"joint '{model.joint_names[i]}' never reverses: Coulomb friction and "
                    "offset cannot be told apart")
    return "not excited by this motion (no component in the observation matrix)"


def identify_prepared(model: RobotModel, data: Prepared, settings: Settings,
                      prior_theta: Array | None = None, urdf: str | None = None,
                      base: BaseParameters | None = None) -> Identification:
    """Steps 2-6 on prepared samples; ``urdf`` (the prior's text) for welded links."""
    model.require_one_dof(IDENTIFICATION)
    n, M = model.nv, data.t.size
    base = base if base is not None else base_parameters(model)
    prior = prior_theta if prior_theta is not None else parameters.from_model(model)
    t_split = data.t[0] + (1.0 - settings.validation) * (data.t[-1] - data.t[0])
    fit = data.t < t_split if settings.validation > 0 else np.ones(M, dtype=bool)
    needed = 3 * base.rank // max(n, 1) + 10
    if int(fit.sum()) < needed or int((~fit).sum()) < (10 if settings.validation > 0 else 0):
        raise IdentificationError(
            f"the recording is too short: {M} usable samples at "
            f"{1.0 / (data.period * data.decimation):.3g} Hz ({data.t[-1] - data.t[0]:.3g} s); "
            f"{base.rank} base parameters need at least "
            f"{needed} fitting samples and 10 validation samples")
    acc = Accumulator(n, base.rank)
    idx = np.flatnonzero(fit)
    with threadpool_limits(1):  # small dense QRs: threads only contend
        for s in range(0, idx.size, settings.chunk):
            k = idx[s:s + settings.chunk]
            W = base.columns(parameters.regressor(model, data.q[k], data.qd[k], data.qdd[k],
                                                  coulomb=data.coulomb[k]))
            acc.add(W, data.tau[k], data.valid[k])
        est = estimate(acc, settings.rank_tol)
    span = data.q[fit].max(axis=0) - data.q[fit].min(axis=0)
    still = [i for i in range(n) if span[i] < settings.min_motion]
    moving = data.qd[fit] if fit.any() else data.qd
    one_way = [i for i in range(n) if i not in still
               and not ((moving[:, i] > settings.band).any()
                        and (moving[:, i] < -settings.band).any())]
    relations = base.relations(4)
    unidentified = {relations[k]: _why(model, relations[k], still, one_way)
                    for k in est.unidentifiable}
    for i in still:
        unidentified.setdefault(f"joint '{model.joint_names[i]}'",
                                f"never moves (range {span[i]:.3g}): its friction, armature "
                                "and the inertia only it would reveal are not identified")
    fixed = fixed_parts(model, urdf) if urdf is not None else {}
    with threadpool_limits(1):
        theta = consistent_parameters(model, base.K, est.R, est.x, prior, fixed=fixed)
    result = Identification(model, base, est, prior, theta, data, fit, unidentified,
                            list(data.notes))
    valid = ~fit
    if valid.any():
        measured = data.tau_raw[valid]
        ok = data.valid[valid] & np.isfinite(measured)
        result.rms_before = _rms(measured - result.predict(prior, valid, settings.band), ok)
        result.rms_after = _rms(measured - result.predict(theta, valid, settings.band), ok)
        x_std = np.zeros_like(theta)
        x_std[base.independent] = est.x
        result.rms_base = _rms(measured - result.predict(x_std, valid, settings.band), ok)
    result.fit_rms_after = _rms(data.tau_raw[fit] - result.predict(theta, fit, settings.band),
                                data.valid[fit])
    result.warnings.extend(plausibility(result))
    return result


NOISE_RATIO = 3.0  # residual RMS / noise RMS above which the model leaves torque unexplained
SCALE_RATIO = 0.05  # residual RMS / effort RMS above which the fit is poor


def plausibility(result: Identification) -> list[str]:
    """Warnings when the identified model does not explain the measured torques (the
    wrong URDF, a closed loop fitted as a tree, a load not in the model...).

    Per joint, the torque residual RMS after identification (the validation segment, or
    the fitted samples without one) is compared with (a) the effort noise, estimated as
    the RMS of the recorded effort minus its zero-phase low-pass at the same instants
    (what lies above the cutoff: white noise of sigma gives sigma (1 - 2 cutoff/fs)^0.5)
    and (b) the RMS of the measured effort. A right model leaves at most about the noise
    (the synthetic arm7 bag of the tests: 0.16-0.99 of the estimate, which also holds the
    Coulomb steps' high frequencies; 0.3-1.8 % of the effort); the same bag identified with
    two_link_rr leaves 9-13 times the noise, 36-42 % of the effort, with stanford_arm
    (joint 3 prismatic) 12-36 times at joints 1-4, 3.3 and 2.4 at joints 5-6 (11-88 %).
    Warned when both exceed :data:`NOISE_RATIO` (3: the unexplained part
    then carries 8 times the noise's power, far beyond chance for hundreds of samples) and
    :data:`SCALE_RATIO` (5 % of the effort: a noise-free recording, e.g. a simulator,
    makes (a) alone meaningless).
    """
    d, model = result.data, result.prior
    ok = d.valid & np.isfinite(d.tau_raw) & np.isfinite(d.tau)
    result.noise = _rms(np.where(ok, d.tau_raw - d.tau, 0.0), ok)
    rows = ~result.fit if result.rms_after.size else result.fit
    residual = result.rms_after if result.rms_after.size else result.fit_rms_after
    where = "validation" if result.rms_after.size else "fitted (no validation segment)"
    measured = np.where(ok[rows], d.tau_raw[rows], 0.0)
    scale = _rms(measured, ok[rows])
    bad = [j for j in range(model.nv)
           if residual[j] > NOISE_RATIO * result.noise[j] and residual[j] > SCALE_RATIO * scale[j]]
    if not bad:
        return []
    detail = ", ".join(f"{model.joint_names[j]} {residual[j]:.3g} (noise {result.noise[j]:.3g}, "
                       f"effort {scale[j]:.3g})" for j in bad)
    return [f"the model does not explain the measured torques: {where} residual RMS above "
            f"{NOISE_RATIO:g} x the effort noise and {100 * SCALE_RATIO:g} % of the effort RMS "
            f"at {len(bad)} of {model.nv} joints: {detail}. Is it the right URDF (joint "
            "types, links, loops)? A right model leaves about the noise"]


def identify(model: RobotModel, recording: Recording, settings: Settings | None = None, *,
             urdf: str | None = None, prior_theta: Array | None = None) -> Identification:
    """Identify ``model``'s parameters from a raw ``recording`` (1-6 of the module docstring)."""
    settings = settings or Settings()
    data = prepare(recording, model, cutoff=settings.cutoff, rate=settings.rate,
                   band=settings.band, slow_fraction=settings.slow_fraction)
    return identify_prepared(model, data, settings, prior_theta, urdf)


def read_and_identify(bag: Path, model: RobotModel, settings: Settings, *, urdf: str,
                      states_topic: str = "/joint_states",
                      time_base: str = "header") -> Identification:
    """:func:`identify` on the joint states of ``bag``."""
    from rnea_ros.identification.data import read_bag

    model.require_one_dof(IDENTIFICATION)  # before reading the bag
    recording = read_bag(bag, model, states_topic=states_topic, time_base=time_base)
    result = identify(model, recording, settings, urdf=urdf)
    for key, count in recording.skipped.items():
        if count:
            result.notes.append(f"{count} joint states skipped by the reader ({key})")
    return result
