"""Building a closed-loop model: the checks that need its kinematics (Khalil 2010 §2.2).

A :class:`~rnea_ros.core.coupling.loops.ClosedLoopModel` is plain data (like
Pinocchio's ``Model``). :func:`build_loops` (behind ``rc.load_loops`` and
``rc.from_mdh_loops`` too) makes one from a description and checks it:

1. every loop closes at the reference configuration (constraint error at most
   :data:`~rnea_ros.core.coupling.loops.CLOSURE_TOLERANCE`, eq. 3), which Newton
   then closes to machine precision;
2. the mobility ``n - rank K`` (``K`` the constraint Jacobian of eq. 4 at the
   reference, rank from its singular values) equals the number of active joints,
   and those determine the passive ones (``K_p`` of full column rank);
3. a revolute cut whose loop is planar keeps only its 2 in-plane rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.coupling.loop_kinematics import (
    loop_constraint_jacobian,
    loop_residual,
    polish_closure,
)
from rnea_ros.core.coupling.loops import CLOSURE_TOLERANCE, Array, ClosedLoopModel, Loop
from rnea_ros.core.dynamics.kinematics import body_poses
from rnea_ros.core.errors import LoopError, options
from rnea_ros.core.model.robot_model import RobotModel

RANK_TOLERANCE = 1e-9  # singular values below this fraction of the largest are zero


def build_loops(tree: RobotModel, loops: Sequence[Loop], active: Sequence[str] | str,
                reference: Mapping[str, float] | Array | None = None
                ) -> ClosedLoopModel:
    """The checked :class:`ClosedLoopModel` of ``tree`` closed by the cut joints ``loops``
    and driven by the ``active`` joints (names), its reference configuration
    ``reference`` (joint name -> value, or (n,); ``None``: ``q = 0``) closed to machine
    precision. :class:`LoopError` if a loop does not close at the reference or the
    active joints are not the mechanism's independent coordinates.

    Arguments as in Conventions: ``reference`` ([closed loops](core.md#closed-loops)).

    Parameters
    ----------
    tree : RobotModel
        The spanning tree.
    loops : sequence of Loop
        The cut joints closing the tree.
    active : sequence of str or str
        The active joints' names.

    Returns
    -------
    ClosedLoopModel
        The checked closed-loop model.
    """
    names = (active,) if isinstance(active, str) else tuple(active)
    draft = ClosedLoopModel(tree, tuple(loops), names, reference)
    check_closure(draft, given=reference is not None)
    q = polish_closure(draft, draft.q_reference)
    mobility = check_mobility(draft, q)
    return dataclasses.replace(draft, q_reference=q, mobility=mobility,
                               planar=planar_loops(draft, q))


def check_closure(model: ClosedLoopModel, given: bool) -> None:
    """:class:`LoopError` naming the first loop that ``model.q_reference`` does not close
    (``given``: the reference was given, else it is ``q = 0``)."""
    e = loop_residual(model, model.q_reference)
    for l, loop in enumerate(model.loops):
        err = float(np.abs(e[model.constraint_rows[l]:model.constraint_rows[l + 1]]).max())
        if not err <= CLOSURE_TOLERANCE:
            where = ("at the given reference configuration" if given else
                     "at q = 0 (give a closed configuration as 'reference')")
            raise LoopError(
                f"loop '{loop.name}' ({loop.type} cut joint between '{loop.link1}' and "
                f"'{loop.link2}') does not close {where}: constraint error "
                f"{err:.3g} (m or rad), tolerance {CLOSURE_TOLERANCE:g}")


def check_mobility(model: ClosedLoopModel, q: Array) -> int:
    """The mobility ``n - rank K`` at the closed ``q``; :class:`LoopError` unless it is
    the number of active joints and they determine the passive ones."""
    tree = model.tree
    K = loop_constraint_jacobian(model, q)
    s = np.linalg.svd(K, compute_uv=False)
    rank = int(np.sum(s > RANK_TOLERANCE * max(float(s[0]), 1e-300))) if s.size else 0
    mobility = tree.nv - rank
    N = model.n_active
    active_names = options(model.active_names)
    if N > mobility:
        raise LoopError(
            f"model '{tree.name}': {N} active joints ({active_names}) but the mechanism's "
            f"mobility is {mobility} ({tree.nv} tree joints, {rank} independent loop "
            f"constraints of {model.n_constraints})")
    Kp = K[:, model.passive_index]
    sp = np.linalg.svd(Kp, compute_uv=False)
    if N < mobility or sp[-1] <= kj.SINGULAR_RATIO * max(float(sp[0]), 1e-300):
        # A passive joint the actives do not determine: the null direction of K_p.
        _, _, vt = np.linalg.svd(Kp)
        free = np.abs(vt[-1]) > 1e-6 * np.abs(vt[-1]).max()
        names = [tree.joint_names[j] for j in model.passive_index[free]]
        why = (f"{N} active joints for a mobility of {mobility}" if N < mobility else
               "the reference configuration is singular or the active joints are dependent")
        raise LoopError(
            f"model '{tree.name}': the active joints ({active_names}) do not determine the "
            f"passive joints {options(names)} ({why}); make one of them active")
    return mobility


def planar_loops(model: ClosedLoopModel, q: Array) -> tuple[int, ...]:
    """Revolute cuts whose loop is planar at ``q``: every loop joint revolute about an
    axis parallel to the cut's, or prismatic normal to it."""
    tree = model.tree
    R, _ = body_poses(tree, q)
    planar = []
    for l, loop in enumerate(model.loops):
        if loop.type != "revolute":
            continue
        lp = model.loop_floats[l]
        b = int(lp[kj.L_BODY1])
        z = lp[kj.L_R1:kj.L_R1 + 9].reshape(3, 3)[:, 2]
        z = R[b] @ z if b >= 0 else z
        ok = True
        for j in np.flatnonzero(lp[kj.L_COLS:]):
            along = abs(float((R[j] @ tree.axis[j]) @ z))
            ok &= abs(along - (0.0 if tree.joint_types[j] == "prismatic" else 1.0)) <= 1e-12
        if ok:
            planar.append(l)
    return tuple(planar)


__all__ = ["build_loops"]
