"""``rnea-config --bag BAG``: effort and effort-rate limits and joint friction proposed
from a recording of the robot (the part of ``rnea-config`` that reads a bag).

Rules (docs/nodes.md, "A starting configuration"):

* **effort limit** of joint i: ``min(margin · max_t |τ_i(t)|, τ_URDF,i)`` -- the largest
  recorded effort times ``--margin`` (default 1.2), never above the URDF's ``<limit
  effort>``;
* **effort-rate limit**: ``margin · max_t |τ̇_i(t)|``, the rate being the Savitzky-Golay
  first derivative of the recorded effort (window 0.05 s, order 4, as ``rnea-bag``
  checks it: a raw difference would measure the noise, ``√2 σ / dt``), at least the
  controller table's lower bound;
* **friction** ``τ_f,i = Fv,i q̇_i + Fc,i sign(q̇_i)`` (Khalil eq. 31): per joint, the
  least-squares fit of the residual ``τ_i − RNEA_i(q, q̇, q̈)`` (the URDF's rigid body
  model without friction; ``q̇``, ``q̈`` the recorded velocity, else the Savitzky-Golay
  derivatives of ``q``) on the samples moving faster than :data:`MIN_SPEED` -- at least
  :data:`MIN_SAMPLES` of them each way; a negative estimate within 3 standard errors
  of zero is zero. A joint that does not move both ways, or whose fit gives a
  significantly negative coefficient (the URDF's inertias disagree with the recording
  more than friction explains), keeps the URDF's ``<dynamics>``, and the reason is
  stated. The fit takes the URDF's inertias as true: with a wrong URDF, identify first
  (``rnea-identify``).

A bag whose joint states lack the URDF's joints, or carry no efforts, is refused with a
:class:`~rnea_ros.tools.bag.errors.BagError` naming what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core.dynamics.rnea import rnea_batch
from rnea_ros.core.errors import options as listed
from rnea_ros.core.model.robot_model import RobotModel
from rnea_ros.tools.bag.errors import BagError

Array = NDArray[np.float64]
MARGIN = 1.2         # observed maxima times this
MIN_SPEED = 0.05     # [rad/s or m/s] samples slower than this do not enter the friction fit
MIN_SAMPLES = 50     # samples needed each way for a friction fit
WINDOW, ORDER = 0.05, 4  # Savitzky-Golay window [s] and order (rnea-bag's defaults)
RATE_FLOOR = 1e-3    # [N m/s] the controller table's lower bound of effort_rate_limits
SIGNIFICANCE = 3.0   # standard errors: a negative friction estimate within them is zero


@dataclass
class Recording:
    """Joint states of a bag in the model's order: ``t`` (N,) [s]; ``q``, ``qd``,
    ``effort`` (N, n); ``qd`` NaN where the bag has no velocities."""

    t: Array
    q: Array
    qd: Array
    effort: Array


@dataclass
class Proposal:
    """What a recording proposes, per joint (n,): the observed maxima, the limits, the
    friction and where each joint's friction comes from (``"bag"`` or ``"urdf: why"``)."""

    effort_max: Array
    rate_max: Array
    effort_limits: Array
    rate_limits: Array
    viscous: Array
    coulomb: Array
    friction_source: list[str]
    margin: float
    duration: float
    samples: int
    notes: list[str] = field(default_factory=list)


def read_recording(bag: Path, model: RobotModel, states_topic: str = "/joint_states"
                   ) -> Recording:
    """The joint states of ``bag`` in ``model``'s joint order (the bag reader of
    ``rnea-bag``). :class:`BagError` when no state carries every joint of the model (the
    missing joints and the bag's joints named) or when none carries efforts."""
    from rnea_ros.tools.bag.reading import read_states

    samples, stats = read_states(bag, model, states_topic)
    bag_joints = list(stats.get("bag_joints") or [])
    if samples is None or len(samples) == 0:
        missing = [j for j in model.joint_names if j not in bag_joints]
        raise BagError(f"bag '{bag}': no joint state on '{states_topic}' carries every joint "
                       f"of '{model.name}'" + (f"; missing: {listed(missing)}; the bag's "
                                               f"joints: {listed(bag_joints)}" if missing
                                               else ""))
    has_effort: NDArray[np.bool_] = np.asarray(np.isfinite(samples.effort).any(axis=0))
    if not has_effort.any():
        raise BagError(f"bag '{bag}': the joint states on '{states_topic}' carry no efforts "
                       "(JointState.effort empty): limits and friction need the measured "
                       "joint torques")
    if not has_effort.all():
        lacking = [j for j, ok in zip(model.joint_names, has_effort, strict=True) if not ok]
        raise BagError(f"bag '{bag}': no effort recorded for joints {listed(lacking)}")
    return Recording(samples.t, samples.q, samples.qd, samples.effort)


def _derivatives(rec: Recording, dt: float) -> tuple[Array, Array, Array]:
    """``q̇``, ``q̈`` (recorded velocity when there is one) and the effort rate."""
    from rnea_ros.tools.bag.differentiation import derivatives, effort_rate, window_samples

    w = window_samples(WINDOW, dt, ORDER)
    if np.isfinite(rec.qd).all():
        qd = rec.qd
        (qdd,) = derivatives(qd, dt, w, ORDER, (1,))
    else:
        qd, qdd = derivatives(rec.q, dt, w, ORDER, (1, 2))
    return qd, qdd, effort_rate(rec.effort, dt, w, ORDER)


def _least_squares(a: Array, b: Array) -> tuple[Array, Array]:
    """Coefficients of ``a x ≈ b`` and their standard errors (residual variance times
    the diagonal of ``(aᵀa)⁻¹``)."""
    x, *_ = np.linalg.lstsq(a, b, rcond=None)
    dof = max(len(b) - a.shape[1], 1)
    sigma2 = float(np.sum((b - a @ x) ** 2)) / dof
    se = np.sqrt(sigma2 * np.diag(np.linalg.pinv(a.T @ a)))
    return np.asarray(x, dtype=np.float64), np.asarray(se, dtype=np.float64)


def fit_friction(qd: Array, residual: Array) -> tuple[float, float] | str:
    """``(Fv, Fc)`` of one joint from its velocity and the residual torque (N,), or why
    the recording cannot tell (a sentence). A negative coefficient within
    :data:`SIGNIFICANCE` standard errors of zero is zero (no such friction seen; the
    other one refitted alone); one beyond is a model that disagrees with the recording."""
    moving = np.abs(qd) > MIN_SPEED
    ahead, back = int(np.sum(qd > MIN_SPEED)), int(np.sum(qd < -MIN_SPEED))
    if min(ahead, back) < MIN_SAMPLES:
        return (f"it moved faster than {MIN_SPEED:g} rad/s (m/s) in {ahead} samples ahead "
                f"and {back} back, fewer than {MIN_SAMPLES} each way")
    a = np.column_stack([qd[moving], np.sign(qd[moving])])
    b = residual[moving]
    x, se = _least_squares(a, b)
    if np.any(x < -SIGNIFICANCE * se):
        return (f"the fit gave Fv {x[0]:.3g} ± {se[0]:.2g}, Fc {x[1]:.3g} ± {se[1]:.2g} "
                "(negative: the URDF's rigid-body model disagrees with the recording; "
                "identify it with rnea-identify)")
    keep = x >= 0
    if not keep.all():  # a negative one indistinguishable from 0: the other one alone
        x = np.zeros(2)
        if keep.any():
            x[keep] = np.maximum(_least_squares(a[:, keep], b)[0], 0.0)
    return float(x[0]), float(x[1])


def propose(model: RobotModel, rec: Recording, margin: float = MARGIN) -> Proposal:
    """Limits and friction from recording ``rec`` of ``model`` (module rules)."""
    if len(rec.t) < 2 * ORDER + 3:
        raise BagError(f"{len(rec.t)} joint states: too few to differentiate")
    periods = np.diff(rec.t)
    dt = float(np.median(periods[periods > 0]))
    qd, qdd, rate = _derivatives(rec, dt)
    effort_max = np.nanmax(np.abs(rec.effort), axis=0)
    rate_max = np.nanmax(np.abs(rate), axis=0)
    urdf_effort = model.effort_limit
    effort_limits = np.minimum(margin * effort_max, urdf_effort)
    notes = [f"'{j}': {margin:g} x {m:.4g} above the URDF's {u:.4g}: the URDF's"
             for j, m, u in zip(model.joint_names, effort_max, urdf_effort, strict=True)
             if margin * m > u]
    rigid = model.replace(coulomb=np.zeros(model.nv), viscous=np.zeros(model.nv))
    residual = rec.effort - rnea_batch(rigid, rec.q, qd, qdd)
    viscous, coulomb = model.viscous.copy(), model.coulomb.copy()
    sources = []
    for i, name in enumerate(model.joint_names):
        fit = fit_friction(qd[:, i], residual[:, i])
        if isinstance(fit, str):
            sources.append(f"urdf: {fit}")
            notes.append(f"'{name}' friction from the URDF: {fit}")
        else:
            viscous[i], coulomb[i] = fit
            sources.append("bag")
    return Proposal(effort_max=effort_max, rate_max=rate_max, effort_limits=effort_limits,
                    rate_limits=np.maximum(margin * rate_max, RATE_FLOOR), viscous=viscous,
                    coulomb=coulomb, friction_source=sources, margin=margin,
                    duration=float(rec.t[-1] - rec.t[0]), samples=len(rec.t), notes=notes)


def _float(x: float) -> str:
    """``x`` to 6 significant digits, written as a float (``0.0``, never ``0``)."""
    return repr(float(f"{float(x):.6g}"))


def drives_text(model: RobotModel, proposal: Proposal, header: list[str]) -> str:
    """The drive side file (``drives_file``, :mod:`rnea_ros.core.model.drives`) with the
    proposed friction, each joint's source in a comment."""
    lines = [*(f"# {h}" for h in header), "joints:"]
    for i, name in enumerate(model.joint_names):
        lines += [f"  {name}:  # {proposal.friction_source[i]}",
                  f"    coulomb: {_float(proposal.coulomb[i])}  # N m (N)",
                  f"    viscous: {_float(proposal.viscous[i])}  # N m s/rad (N s/m)"]
    return "\n".join(lines) + "\n"


__all__ = ["MARGIN", "Proposal", "Recording", "drives_text", "fit_friction", "propose",
           "read_recording"]
