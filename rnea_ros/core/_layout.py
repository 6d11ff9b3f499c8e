"""Every array layout the compiled kernels share, declared once.

**The packed model** ``fp`` (n, 31) float64, built once by :func:`pack_model`: one
row per joint/body, columns given by the ``F_*`` offsets below: placement rotation
(row-major) and translation, joint axis, mass ``m``, first moment ``h = m c``,
rotational inertia about the body origin ``I_o`` (xx, yy, zz, xy, xz, yz),
armature, Coulomb and viscous friction, then the parent index and the joint
kind (small integers stored exactly as floats, so a kernel takes a single
model argument: numba's per-argument unboxing is a large part of a call), then the
Coulomb band (:func:`rnea_ros.core._algebra.coulomb_sign`).
The kind is ``PRISMATIC``, ``REVOLUTE`` (any axis) or ``REVOLUTE_X/Y/Z`` for
an axis along ``+-x/y/z`` of the joint frame, whose rotation costs a third of
the general one (as Pinocchio's ``JointModelRX/RY/RZ``).

**The kernel map** ``km`` (nk, K_COLS) of a model with multi-DoF or mimic joints
(:mod:`rnea_ros.core.model.kernel_tree` builds it, :mod:`rnea_ros.core.expansion`
reads it): columns ``K_*``, row kinds :data:`OWN`, :data:`INNER` and the anchors
:data:`FREE_FLYER`, :data:`PLANAR`, :data:`SPHERICAL` (see ``expansion``).

**Work arrays** shared by more than one kernel module (one row per body):

* ``RW_*`` (n, RW_COLS = 30): RNEA's (:mod:`rnea_ros.core.dynamics._rnea_jit`;
  also the batch, expanded-tree, parallel-robot and closed-loop kernels and
  :mod:`rnea_ros.control.command`): pose ``R`` (9) ``p`` (3), velocity ``w, v``,
  acceleration ``dw, a``, then the body force ``n, f`` (Featherstone Table 5.1).
* ``GW_*`` (n, GW_COLS = 72): the gravity-and-derivatives pass of
  :mod:`rnea_ros.core.dynamics.gfd` (also :mod:`rnea_ros.control._rate_limit_jit`
  and :mod:`rnea_ros.core.dynamics.derivatives`): pose, ``V``, ``A``, ``J``, ``K``
  and the forces ``G, Gd, Gdd, F, Fd, Fdd`` as 6-vectors (angular, linear).
* ``CW_*`` (composite rigid body, CRBA and the floating-base kernels): pose, then
  the composite mass, first moment and inertia ``I_o`` (3x3).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit

PRISMATIC = 0
REVOLUTE = 1
REVOLUTE_X = 2
REVOLUTE_Y = 3
REVOLUTE_Z = 4

F_R = 0  # placement rotation, 9 (row-major)
F_P = 9  # placement translation, 3
F_AXIS = 12  # joint axis, 3
F_MASS = 15  # mass, 1
F_H = 16  # first moment m*c, 3
F_IO = 19  # inertia about the body origin, 6: xx yy zz xy xz yz
F_ARMATURE = 25
F_COULOMB = 26
F_VISCOUS = 27
F_PARENT = 28  # parent body index, -1 for the base
F_KIND = 29  # joint kind
F_BAND = 30  # Coulomb velocity band b [rad/s or m/s] (0: the exact sign), see coulomb_sign
N_FLOATS = 31

# ---- the kernel map km (multi-DoF and mimic joints), see rnea_ros.core.expansion
K_KIND, K_IQ, K_IV, K_MULT, K_OFFSET, K_NQ, K_NV = 0, 1, 2, 3, 4, 5, 6
K_COLS = 7
# Row kinds; the anchors' codes are named by the joint-kind records
# (rnea_ros.core.model.joints.JOINT_KINDS, which derives SUB_COUNT and ANCHOR_KINDS).
OWN, INNER, FREE_FLYER, PLANAR, SPHERICAL = 0, 1, 2, 3, 4

# ---- RNEA's work array (Featherstone Table 5.1): pose, motion, body force
RW_R, RW_P, RW_W, RW_V, RW_DW, RW_A, RW_N, RW_F = 0, 9, 12, 15, 18, 21, 24, 27
RW_COLS = 30

# ---- the gravity-and-derivatives pass (gfd.py): 6-vectors (angular, linear)
GW_R, GW_P, GW_V, GW_A, GW_J, GW_K = 0, 9, 12, 18, 24, 30
GW_G, GW_GD, GW_GDD, GW_F, GW_FD, GW_FDD = 36, 42, 48, 54, 60, 66
GW_COLS = 72

# ---- composite rigid bodies (crba.py, floating_base.py): pose; composite m, h, I_o (3x3)
CW_R, CW_P, CW_M, CW_H, CW_IO = 0, 9, 12, 13, 16
CW_COLS = 25


def joint_kind(prismatic: bool, axis: NDArray[np.float64]) -> int:
    """Kernel joint kind for a joint with unit ``axis``."""
    if prismatic:
        return PRISMATIC
    for k, kind in enumerate((REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)):
        if abs(axis[k]) == 1.0 and np.count_nonzero(axis) == 1:  # exactly +-e_k
            return kind
    return REVOLUTE


def pack_model(
    parent: NDArray[np.int64], kind: NDArray[np.int64], R: NDArray[np.float64],
    p: NDArray[np.float64], axis: NDArray[np.float64], mass: NDArray[np.float64],
    com: NDArray[np.float64], inertia: NDArray[np.float64], armature: NDArray[np.float64],
    coulomb: NDArray[np.float64], viscous: NDArray[np.float64], band: float = 0.0,
) -> NDArray[np.float64]:
    """Pack a model into ``fp`` (see the module docstring)."""
    n = parent.shape[0]
    fp = np.zeros((n, N_FLOATS))
    fp[:, F_R:F_R + 9] = R.reshape(n, 9)
    fp[:, F_P:F_P + 3] = p
    fp[:, F_AXIS:F_AXIS + 3] = axis
    fp[:, F_MASS] = mass
    fp[:, F_H:F_H + 3] = mass[:, None] * com
    for i in range(n):
        c = com[i]
        Io = inertia[i] + mass[i] * (float(c @ c) * np.eye(3) - np.outer(c, c))
        fp[i, F_IO:F_IO + 6] = (Io[0, 0], Io[1, 1], Io[2, 2], Io[0, 1], Io[0, 2], Io[1, 2])
    fp[:, F_ARMATURE] = armature
    fp[:, F_COULOMB] = coulomb
    fp[:, F_VISCOUS] = viscous
    fp[:, F_PARENT] = parent
    fp[:, F_KIND] = kind
    fp[:, F_BAND] = band
    return fp


@jit
def parent(fp: NDArray[np.float64], i: int) -> int:
    """Parent body of body ``i`` (-1: the base)."""
    return int(fp[i, F_PARENT])


@jit
def kind(fp: NDArray[np.float64], i: int) -> int:
    """Joint kind of joint ``i``."""
    return int(fp[i, F_KIND])
