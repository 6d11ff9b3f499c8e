"""The *kernel tree*: a model as 1-DoF rows for the compiled kernels.

Each 1-DoF joint and each mimic follower is one row, as it always was; a
multi-DoF joint becomes its chain of sub-joints (its record's ``subs`` in
:data:`~.joints.JOINT_KINDS`): the first (the *anchor*) at the joint's
placement, which the kernels' callers replace by ``placement o pose(q)`` at every call
(:func:`~rnea_ros.core._expansion_jit.write_anchor`), the others at the identity;
intermediate bodies are massless and the last row carries the body's inertia.
Rows are in body order, a joint's sub-joints consecutive, so ``parent[k] < k``
still holds. A model of 1-DoF joints only packs exactly as before (one row per
joint, nothing rewritten per call).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import _layout
from rnea_ros.core._layout import (
    INNER,
    K_COLS,
    K_IQ,
    K_IV,
    K_KIND,
    K_MULT,
    K_NQ,
    K_NV,
    K_OFFSET,
    OWN,
)
from rnea_ros.core.model.joints import JOINT_KINDS

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class KernelTree:
    """``floats`` (nk, 30) and ``map`` (nk, 7) for the kernels (see
    :mod:`~rnea_ros.core.expansion`); ``first_row``/``last_row`` (nbodies,): each
    body's joint's first kernel row and the row carrying its inertia."""

    floats: Array
    map: Array
    first_row: IntArray
    last_row: IntArray


@dataclass(frozen=True)
class BodyMotion:
    """What moves one body: its joint's type, where its coordinates start and the
    mimic coupling (``multiplier`` 1 and ``offset`` 0 for a coordinate joint)."""

    type: str
    idx_q: int
    idx_v: int
    multiplier: float = 1.0
    offset: float = 0.0
    follower: bool = False


def build_kernel_tree(
    motions: Sequence[BodyMotion], nq: int, nv: int, parent: IntArray, R: Array, p: Array,
    axis: Array, mass: Array, com: Array, inertia: Array, armature: Array, coulomb: Array,
    viscous: Array, coulomb_band: float = 0.0,
) -> KernelTree:
    """Pack the bodies (in order; ``motions[b]`` moves body ``b``) into kernel rows."""
    nb = len(motions)
    first_row = np.empty(nb, dtype=np.int64)
    last_row = np.empty(nb, dtype=np.int64)
    eye = np.eye(3)
    rows: list[_Row] = []
    for b, motion in enumerate(motions):
        parent_row = -1 if parent[b] < 0 else int(last_row[parent[b]])
        first_row[b] = len(rows)
        kind = JOINT_KINDS[motion.type]
        if not kind.multi_dof:
            body = _Row(parent_row, kind.prismatic, R[b], p[b], axis[b], b)
            body.drive = -1 if motion.follower else motion.idx_v
            body.map = (OWN, motion.idx_q, motion.idx_v, motion.multiplier, motion.offset)
            rows.append(body)
        else:
            subs = kind.subs
            for k, (prismatic, ax) in enumerate(subs):
                sub = _Row(parent_row if k == 0 else len(rows) - 1, prismatic,
                           R[b] if k == 0 else eye, p[b] if k == 0 else np.zeros(3), eye[ax],
                           b if k == len(subs) - 1 else -1, motion.idx_v + k)
                sub.map = (kind.code if k == 0 else INNER, motion.idx_q,
                           motion.idx_v + k, 1.0, 0.0)
                rows.append(sub)
        last_row[b] = len(rows) - 1
    nk = len(rows)
    has_body = np.array([r.body >= 0 for r in rows])
    has_drive = np.array([r.drive >= 0 for r in rows])
    body_of = np.array([max(r.body, 0) for r in rows], dtype=np.int64)
    drive_of = np.array([max(r.drive, 0) for r in rows], dtype=np.int64)
    axes = np.array([r.axis for r in rows], dtype=np.float64)
    floats = _layout.pack_model(
        np.array([r.parent for r in rows], dtype=np.int64),
        np.array([_layout.joint_kind(r.prismatic, u) for r, u in zip(rows, axes, strict=True)],
                 dtype=np.int64),
        np.array([r.R for r in rows], dtype=np.float64),
        np.array([r.p for r in rows], dtype=np.float64), axes,
        np.where(has_body, mass[body_of], 0.0),
        np.where(has_body[:, None], com[body_of], 0.0),
        np.where(has_body[:, None, None], inertia[body_of], 0.0),
        np.where(has_drive, armature[drive_of], 0.0),
        np.where(has_drive, coulomb[drive_of], 0.0),
        np.where(has_drive, viscous[drive_of], 0.0), float(coulomb_band),
    )
    km = np.zeros((nk, K_COLS))
    km[:, [K_KIND, K_IQ, K_IV, K_MULT, K_OFFSET]] = np.array([r.map for r in rows],
                                                             dtype=np.float64)
    km[:, K_NQ], km[:, K_NV] = nq, nv
    return KernelTree(floats, km, first_row, last_row)


@dataclass
class _Row:
    """One kernel row while packing: parent row, joint, placement and axis, the body
    whose inertia it carries (-1: massless) and the velocity coordinate whose drive
    parameters it carries (-1: none, a mimic follower)."""

    parent: int
    prismatic: bool
    R: Array
    p: Array
    axis: Array
    body: int
    drive: int = -1
    map: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 1.0, 0.0)

__all__ = ["BodyMotion", "KernelTree", "build_kernel_tree"]
