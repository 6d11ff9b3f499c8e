"""Contact detection and isolation from the momentum observer's residual ``r``
(Haddadin, De Luca & Albu-Schaeffer, T-RO 2017: thresholds on ``r``,
isolation by the chain structure of ``J^T``).

**Thresholds.** Per velocity coordinate ``j`` and sample::

    th_j = thresholds_j + velocity_j |qd_j| + acceleration_j |qdd_j|

the constant part (sensor noise, observer error at rest) plus terms proportional to the
speed and the acceleration, where friction and inertial-parameter errors grow (the
survey's "dynamic thresholds"). ``qdd`` is what the caller has (the reference
acceleration, or a filtered derivative); the observer itself needs none.

**Hysteresis and duration.** A contact starts when some ``|r_j| > th_j`` has held for
``min_duration`` [s], and ends when every ``|r_j| < release th_j`` (``0 < release <= 1``)
has held for ``min_duration``: a single noisy sample neither starts nor ends one.

**Isolation.** For one contact wrench ``F`` on link ``c``, ``tau_ext = J_c(q)^T F`` and
column ``j`` of ``J_c`` is zero for every joint that is not an ancestor of ``c``: on a
serial chain ``r`` is zero beyond the contact. The link is that of the deepest joint
(most ancestors) whose ``|r_j| > th_j``, the deepest seen during the contact (the onset
level, not the release level: noise stays below it by the calibration margin).
A force whose moment about the contact link's own joint axis is zero (pushing along
that axis, or through it) leaves that joint's residual at zero: the contact is then
isolated one link closer to the base -- the method's limit, not the detector's.

**Wrench.** At the isolated link, ``F = pinv(J_c^T) r``: the least-squares (minimum
norm when ``J_c^T`` has fewer rows than 6) wrench ``[force; moment about the link
origin]``, in world axes (``LOCAL_WORLD_ALIGNED``) by default (:func:`contact_wrench`).
With fewer than six joints up to the link, only the part of ``F`` the joints can feel
is identified, and the minimum-norm wrench is mostly moment (a 30 N push on arm7's
link4 came back as 8.8 N). Given a contact ``point`` (link frame), the contact is a
pure force there (the survey's point-contact model): ``f = pinv(J_p^T) r`` with ``J_p``
the point's linear Jacobian, three unknowns that four or more joints identify.

The per-sample :class:`ContactDetector` (a node's) and the batch :func:`detect`
(``rnea-bag``'s ``contacts.csv``: :func:`episodes`) share one compiled state machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

import rnea_ros.core as rc
from rnea_ros.control.contact._detection_jit import (
    S_IN,
    S_JOINT,
    S_PEAK,
    S_START,
    detect_rows,
    new_state,
)
from rnea_ros.core.errors import StateError
from rnea_ros.parameter_errors import ParameterError

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class DetectionSettings:
    """The detector's parameters (their ranges and defaults: the controller's parameter
    table, ``contact.*``). Vectors (nv,) [N m or N per coordinate]; ``velocity`` [N m
    s/rad], ``acceleration`` [N m s^2/rad]; ``release`` in (0, 1]; ``min_duration`` [s]."""

    thresholds: Array
    velocity: Array
    acceleration: Array
    release: float
    min_duration: float

    def checked(self, model: rc.RobotModel) -> DetectionSettings:
        """A copy with float arrays of the model's size; :class:`ParameterError` naming
        the parameter and the joint otherwise."""
        vectors = {}
        for name, lowest in (("thresholds", "> 0"), ("velocity", ">= 0"),
                             ("acceleration", ">= 0")):
            v = np.asarray(getattr(self, name), dtype=np.float64)
            v = np.full(model.nv, float(v)) if v.ndim == 0 else v
            if v.shape != (model.nv,):
                raise ParameterError(f"contact.{name}: {v.size} values for the {model.nv} "
                                     f"joint velocities of '{model.name}'")
            ok = np.isfinite(v) & ((v > 0.0) if lowest == "> 0" else (v >= 0.0))
            if not ok.all():
                j = int(np.flatnonzero(~ok)[0])
                raise ParameterError(f"contact.{name} of joint '{model.joint_of_coordinate(j)}'"
                                     f" is {v[j]}: must be finite and {lowest}")
            vectors[name] = v
        if not (math.isfinite(self.release) and 0.0 < self.release <= 1.0):
            raise ParameterError(f"contact.release {self.release} must be in (0, 1]")
        if not (math.isfinite(self.min_duration) and self.min_duration >= 0.0):
            raise ParameterError(f"contact.min_duration {self.min_duration} s must be "
                                 "finite and >= 0")
        return DetectionSettings(vectors["thresholds"], vectors["velocity"],
                                 vectors["acceleration"], float(self.release),
                                 float(self.min_duration))


@dataclass(frozen=True)
class ContactEvent:
    """One contact: ``start_s``/``end_s`` [s] (``end_s`` nan if still open at the end of
    the data), the isolated ``link`` and ``joint`` (coordinate's joint name), and
    ``peak_nm``, the largest ``|r_j|`` during it [N m, or N on a prismatic joint]."""

    start_s: float
    end_s: float
    link: str
    joint: str
    peak_nm: float


def coordinate_depth(model: rc.RobotModel) -> IntArray:
    """Per velocity coordinate, the number of ancestors of its joint's body."""
    depth_body = np.zeros(model.nbodies, dtype=np.int64)
    for b in range(model.nbodies):
        par = int(model.parent[b])
        depth_body[b] = 0 if par < 0 else depth_body[par] + 1
    out = np.empty(model.nv, dtype=np.int64)
    for j in range(model.njoints):
        start, size = int(model.idx_v[j]), int(model.joint_nv[j])
        out[start:start + size] = depth_body[int(model.joint_body[j])]
    return out


def coordinate_link(model: rc.RobotModel, coordinate: int) -> str:
    """The link (body) moved by the joint owning velocity coordinate ``coordinate``."""
    joint = model.joint_index(model.joint_of_coordinate(coordinate))
    return str(model.body_names[int(model.joint_body[joint])])


def threshold_rows(settings: DetectionSettings, qd: Array, qdd: Array | None) -> Array:
    """``th`` (N, nv) (or (nv,)) for the rows of ``qd`` (and ``qdd``; ``None``: no
    acceleration term)."""
    th = settings.thresholds + settings.velocity * np.abs(qd)
    if qdd is not None:
        th = th + settings.acceleration * np.abs(qdd)
    return np.asarray(th, dtype=np.float64)


def _rows(model: rc.RobotModel, name: str, x: object, n: int) -> Array:
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.shape != (n, model.nv) or not np.all(np.isfinite(a)):
        raise StateError(f"{name} must be finite and of shape ({n}, {model.nv}) for "
                         f"'{model.name}', got shape {a.shape}")
    return a


def detect(model: rc.RobotModel, settings: DetectionSettings, t: object, r: object,
           qd: object, qdd: object | None = None) -> tuple[NDArray[np.bool_], IntArray]:
    """Batch detection: ``t`` (N,), ``r``, ``qd``, ``qdd`` (N, nv) give ``(in_contact
    (N,) bool, coordinate (N,) int)`` (-1 out of contact); see the module docstring."""
    flag, joint, _ = _detect(model, settings, t, r, qd, qdd)
    return flag > 0.5, joint


def _detect(model: rc.RobotModel, settings: DetectionSettings, t: object, r: object,
            qd: object, qdd: object | None) -> tuple[Array, IntArray, Array]:
    s = settings.checked(model)
    times = np.ascontiguousarray(t, dtype=np.float64)
    n = times.shape[0]
    R = _rows(model, "r", r, n)
    QD = _rows(model, "qd", qd, n)
    QDD = None if qdd is None else _rows(model, "qdd", qdd, n)
    flag, joint, start = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
    detect_rows(times, R, np.ascontiguousarray(threshold_rows(s, QD, QDD)), s.release,
                s.min_duration, coordinate_depth(model), new_state(), flag, joint, start)
    return flag, joint, start


def episodes(model: rc.RobotModel, settings: DetectionSettings, t: object, r: object,
             qd: object, qdd: object | None = None) -> list[ContactEvent]:
    """:func:`detect` as a list of contacts (``rnea-bag``'s ``contacts.csv`` rows:
    ``start_s, end_s, link, peak_nm``). ``start_s`` is when the onset condition began
    (``min_duration`` before the contact was declared), ``end_s`` the sample its release
    was declared; ``peak_nm`` the largest ``|r_j|`` from declaration to release."""
    flag, coordinate, start = _detect(model, settings, t, r, qd, qdd)
    times, R = np.asarray(t, dtype=np.float64), np.asarray(r, dtype=np.float64)
    events = []
    edges = np.flatnonzero(np.diff(np.r_[0, (flag > 0.5).astype(np.int8), 0]))
    for first, stop in zip(edges[::2], edges[1::2], strict=True):
        j = int(coordinate[stop - 1])
        end = float(times[stop]) if stop < len(times) else math.nan
        events.append(ContactEvent(float(start[first]), end,
                                   coordinate_link(model, j) if j >= 0 else "",
                                   model.joint_of_coordinate(j) if j >= 0 else "",
                                   float(np.abs(R[first:stop]).max())))
    return events


@dataclass(frozen=True)
class Contact:
    """What :meth:`ContactDetector.update` reports while in contact."""

    since: float  # [s] start of the onset condition
    link: str
    joint: str
    coordinate: int
    peak: float  # largest |r_j| so far [N m]


class ContactDetector:
    """:func:`detect` sample by sample: :meth:`update` returns a :class:`Contact` while
    in contact, else ``None``."""

    def __init__(self, model: rc.RobotModel, settings: DetectionSettings) -> None:
        self.model = model
        self.settings = settings.checked(model)
        self.depth = coordinate_depth(model)
        self.state = new_state()
        self._t, self._flag = np.empty(1), np.empty(1)
        self._joint, self._start = np.empty(1, dtype=np.int64), np.empty(1)

    def reset(self) -> None:
        """Out of contact, nothing pending."""
        self.state = new_state()

    def rows(self, t: Array, r: Array, thresholds: Array | None = None
             ) -> tuple[Array, IntArray, Array]:
        """Consecutive samples, continuing from the detector's state (``rnea-bag``'s
        chunks): ``t`` (N,) [s], ``r`` (N, nv) finite, ``thresholds`` (N, nv) ``th``
        (:func:`threshold_rows`; ``None``: the constant ``settings.thresholds``). Returns
        per sample ``in_contact`` (1.0 / 0.0), the isolated coordinate (-1 out of contact)
        and the start time [s] of the contact it is in."""
        s = self.settings
        times = np.ascontiguousarray(t, dtype=np.float64)
        R = _rows(self.model, "r", r, times.shape[0])
        th = np.ascontiguousarray(np.broadcast_to(s.thresholds, R.shape) if thresholds is None
                                  else thresholds, dtype=np.float64)
        n = times.shape[0]
        flag, joint, start = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
        detect_rows(times, R, th, s.release, s.min_duration, self.depth, self.state, flag,
                    joint, start)
        return flag, joint, start

    def update(self, t: float, r: Array, qd: Array, qdd: Array | None = None
               ) -> Contact | None:
        """One sample: time ``t`` [s], residual ``r``, ``qd`` (and ``qdd``) (nv,)."""
        s, m = self.settings, self.model
        rows = [np.asarray(x, dtype=np.float64).reshape(1, -1) for x in (r, qd)]
        acc = None if qdd is None else np.asarray(qdd, dtype=np.float64).reshape(1, -1)
        if any(x.shape != (1, m.nv) or not np.all(np.isfinite(x))
               for x in rows + ([] if acc is None else [acc])) or not math.isfinite(t):
            raise StateError(f"contact detector: t, r, qd (qdd) must be finite, (nv,) = "
                             f"({m.nv},) for '{m.name}'")
        self._t[0] = t
        detect_rows(self._t, rows[0], np.ascontiguousarray(threshold_rows(s, rows[1], acc)),
                    s.release, s.min_duration, self.depth, self.state, self._flag,
                    self._joint, self._start)
        if self.state[S_IN] < 0.5:
            return None
        j = int(self.state[S_JOINT])
        return Contact(float(self.state[S_START]), coordinate_link(m, j) if j >= 0 else "",
                       m.joint_of_coordinate(j) if j >= 0 else "", j,
                       float(self.state[S_PEAK]))


def contact_wrench(model: rc.RobotModel, q: object, link: str, r: object,
                   reference: str = "LOCAL_WORLD_ALIGNED", point: object = None) -> Array:
    """The contact wrench (6,) ``[force; moment]`` [N, N m] on ``link`` whose joint
    torques ``J^T F`` best match ``r`` (nv,), axes and moment point of ``reference``
    (:func:`rnea_ros.core.frame_jacobian`: the link origin for ``LOCAL`` and
    ``LOCAL_WORLD_ALIGNED``, the world origin for ``WORLD``).

    ``point`` ``None``: ``F = pinv(J^T) r``, the least-squares (minimum-norm) wrench.
    ``point`` (3,) [m] in the link frame: a pure force ``f`` at that point,
    ``f = pinv(J_p^T) r`` with ``J_p = J_lin - [c]x J_ang`` the point's linear Jacobian
    (``c`` the point in ``reference``'s frame, from its origin), returned as
    ``[f; c x f]``."""
    J = rc.frame_jacobian(model, q, link, reference)
    rv = np.asarray(r, dtype=np.float64)
    if rv.shape != (model.nv,) or not np.all(np.isfinite(rv)):
        raise StateError(f"r must be {model.nv} finite values, got {rv!r}")
    if point is None:
        F, *_ = np.linalg.lstsq(J.T, rv, rcond=1e-9)
        return np.asarray(F, dtype=np.float64)
    p = np.asarray(point, dtype=np.float64)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise StateError(f"contact point on '{link}' must be 3 finite values [m], got {p!r}")
    c = _point_in(model, q, link, reference, p)
    cross = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    f, *_ = np.linalg.lstsq((J[:3] - cross @ J[3:]).T, rv, rcond=1e-9)
    return np.concatenate([f, np.cross(c, f)])


def _point_in(model: rc.RobotModel, q: object, link: str, reference: str, p: Array
              ) -> Array:
    """Point ``p`` (link frame) in ``reference``'s frame, from its origin (3,) [m]."""
    if reference == "LOCAL":
        return p
    body = model.body_names.index(link)
    R, x = rc.body_poses(model, np.asarray(q, dtype=np.float64))
    c = R[body] @ p
    return np.asarray(c + x[body] if reference == "WORLD" else c, dtype=np.float64)


__all__ = ["Contact", "ContactDetector", "ContactEvent", "DetectionSettings",
           "contact_wrench", "coordinate_depth", "coordinate_link", "detect", "episodes",
           "threshold_rows"]
