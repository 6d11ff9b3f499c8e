"""The compiled layer's public API, for numba kernels written outside ``rnea_ros.core``.

``rnea_ros.control`` (the fused command kernels, the joint-state and rate-limit
kernels, time scaling) and ``rnea_ros.nodes`` compile their own kernels on top of
the core's. They import from here, never from the private ``_compile``,
``_layout``, ``_algebra`` or ``_X_jit`` modules, so that this list is the whole
contract between the core's kernels and their callers (docs/design.md, "Compiled
layer"). Every name is re-exported unchanged from where it is defined:

* compile policy (:mod:`rnea_ros.core._compile`): :func:`jit`, :func:`jit_entry`,
  :func:`scratch` (per-call work array on the stack), :class:`FastCall`;
* layouts (:mod:`rnea_ros.core._layout`): the packed model's ``F_*`` columns and
  joint kinds, :func:`kind` / :func:`parent`, RNEA's work array ``RW_COLS`` and the
  gravity-and-derivatives work array ``GW_*``;
* tuple and spatial algebra (:mod:`rnea_ros.core._algebra`): 3-vectors, spatial
  motions/forces as ``(angular, linear)`` tuple pairs, :func:`joint_transform`,
  :func:`fixed_base`;
* algorithm kernels: :func:`rnea_pass`, :func:`rnea_drive_pass` (the per-call RNEA
  with drive terms of ``rc.rnea``) and :func:`gravity_call`
  (:mod:`rnea_ros.core.dynamics._rnea_jit`, face :mod:`rnea_ros.core.dynamics.rnea`),
  :func:`gfd_pass` (:mod:`rnea_ros.core.dynamics._gfd_jit`, face
  :mod:`rnea_ros.core.dynamics.gfd`).
"""

from __future__ import annotations

from rnea_ros.core._algebra import (
    Motion,
    dot3,
    fcross,
    fixed_base,
    joint_motion,
    joint_transform,
    madd,
    mat3,
    mcross,
    mget,
    minertia,
    mput,
    to_child,
    to_parent,
    vec3,
)
from rnea_ros.core._compile import FastCall, jit, jit_entry, scratch
from rnea_ros.core._layout import (
    F_ARMATURE,
    F_AXIS,
    GW_COLS,
    GW_F,
    GW_FD,
    GW_G,
    GW_GD,
    GW_P,
    GW_R,
    PRISMATIC,
    RW_COLS,
    kind,
    parent,
)
from rnea_ros.core.dynamics._gfd_jit import gfd_pass
from rnea_ros.core.dynamics._rnea_jit import gravity_call, rnea_drive_pass, rnea_pass

__all__ = [
    "F_ARMATURE",
    "F_AXIS",
    "GW_COLS",
    "GW_F",
    "GW_FD",
    "GW_G",
    "GW_GD",
    "GW_P",
    "GW_R",
    "PRISMATIC",
    "RW_COLS",
    "FastCall",
    "Motion",
    "dot3",
    "fcross",
    "fixed_base",
    "gfd_pass",
    "gravity_call",
    "jit",
    "jit_entry",
    "joint_motion",
    "joint_transform",
    "kind",
    "madd",
    "mat3",
    "mcross",
    "mget",
    "minertia",
    "mput",
    "parent",
    "rnea_drive_pass",
    "rnea_pass",
    "scratch",
    "to_child",
    "to_parent",
    "vec3",
]
