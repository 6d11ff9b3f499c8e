"""Closed-loop mechanisms from modified-DH tables with cut joints (Khalil 2010 §2.2).

Khalil's description of a mechanism with ``L`` joints, ``n + 1`` links and
``B = L - n`` loops: the table of the equivalent tree (rows ``j = 1..n``, eq.
1, see :mod:`rnea_ros.core.model.mdh`), then for each cut joint ``k = n+1..n+B``

* row ``k``: the cut joint itself, ``sigma_k`` = 0 (revolute) or 1
  (prismatic), antecedent ``a(k) = i`` (one of the two links it joins): frame
  ``R_k`` placed on link ``i`` by ``gamma_k, b_k, alpha_k, d_k, theta_k, r_k``
  (its variable eliminated: ``z_k`` is the joint axis);
* row ``k + B``: frame ``R_{k+B}``, ``sigma = 2``, antecedent ``a(k+B) = j``
  (the other link), aligned with ``R_k`` when the loop is closed (constant
  parameters; Khalil takes ``theta_{k+B} = r_{k+B} = 0``).

The loop closes when ``^{k+B}T_j ... ^iT_k = I`` (eq. 3) up to the cut joint's
own motion: a revolute cut joint's frames share origin and ``z``, a prismatic
one's share orientation and ``z`` line. Active joints are given by name or
by 1-based row number (Khalil's ``mu_j = 1``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rnea_ros.core import spatial
from rnea_ros.core.coupling.loop_build import build_loops
from rnea_ros.core.coupling.loops import ClosedLoopModel, Loop, rpy_from_matrix
from rnea_ros.core.errors import LoopError
from rnea_ros.core.model.mdh import MDHLink, from_mdh
from rnea_ros.core.model.robot_model import STANDARD_GRAVITY

CUT_TYPES = {0: "revolute", 1: "prismatic"}


def _frame(row: MDHLink) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """``(xyz, rpy)`` of ``Rot(z,gamma) Tran(z,b) Rot(x,alpha) Tran(x,d) Rot(z,theta)
    Tran(z,r)`` (eq. 1)."""
    T = spatial.identity()
    for step in (spatial.rotation(spatial.rot_z(row.gamma)), spatial.translation(0.0, 0.0, row.b),
                 spatial.rotation(spatial.rot_x(row.alpha)), spatial.translation(row.d, 0.0, 0.0),
                 spatial.rotation(spatial.rot_z(row.theta)), spatial.translation(0.0, 0.0, row.r)):
        T = spatial.compose(T, step)
    p = T[1]
    return (float(p[0]), float(p[1]), float(p[2])), rpy_from_matrix(T[0])


def from_mdh_loops(links: Sequence[MDHLink], *, loops: int, active: Sequence[str | int],
                   name: str = "mdh_robot", base: str = "link0",
                   gravity: Sequence[float] = STANDARD_GRAVITY, inertia_check: str = "strict",
                   reference: Mapping[str, float] | None = None) -> ClosedLoopModel:
    """:class:`ClosedLoopModel` from Khalil's table: ``n`` tree rows, then ``loops`` (B)
    cut-joint rows ``k`` and B closing-frame rows ``k + B`` (see the module docstring).

    Arguments as in Conventions: ``name``, ``base`` ([loading models](core.md#loading-models));
    ``gravity``, ``inertia_check`` ([rigid robots](core.md#rigid-robots)); ``reference``
    ([closed loops](core.md#closed-loops)).

    Parameters
    ----------
    links : sequence of MDHLink
        ``n`` tree rows, then ``loops`` cut-joint rows and ``loops`` closing-frame rows.
    loops : int
        Number of loops B.
    active : sequence of str or int
        The active (actuated) joints, by name or row index.

    Returns
    -------
    ClosedLoopModel
        The closed-loop model.
    """
    B = int(loops)
    n = len(links) - 2 * B
    if B < 1 or n < 1:
        raise LoopError(f"a closed-loop modified-DH table needs n >= 1 tree rows and 2 B rows "
                        f"for B = loops >= 1 cut joints; got {len(links)} rows and loops = {loops}")
    tree_rows = list(links[:n])
    tree = from_mdh(tree_rows, name=name, base=base, gravity=gravity, inertia_check=inertia_check)
    link_names = [base] + [row.link_name or f"link{j}" for j, row in enumerate(tree_rows, 1)]
    joint_names = [row.name or f"joint{j}" for j, row in enumerate(tree_rows, 1)]
    cut_loops: list[Loop] = []
    for c in range(B):
        k = n + 1 + c
        cut, closing = links[k - 1], links[k - 1 + B]
        label = cut.name or f"joint{k}"
        where = f"MDH row {k} (cut joint '{label}')"
        if cut.sigma not in CUT_TYPES:
            raise LoopError(f"{where}: sigma = {cut.sigma!r} must be 0 (revolute) or 1 "
                            "(prismatic)")
        if closing.sigma != 2:
            raise LoopError(f"MDH row {k + B} (frame R_{k + B} of cut joint '{label}'): sigma = "
                            f"{closing.sigma!r} must be 2 (a frame fixed on link a({k + B}))")
        antecedents: list[int] = []
        for row_k, row in ((k, cut), (k + B, closing)):
            ante = row.antecedent
            if ante is None or not 0 <= ante <= n:
                raise LoopError(f"MDH row {row_k} (cut joint '{label}'): antecedent {ante!r} "
                                f"must be a tree row 0..{n} (0 = the base)")
            if row.mass != 0.0:
                raise LoopError(f"MDH row {row_k} (cut joint '{label}') has mass {row.mass:g}: "
                                "cut-joint frames carry no body; put it on the link's row")
            antecedents.append(int(ante))
        xyz1, rpy1 = _frame(cut)
        xyz2, rpy2 = _frame(closing)
        cut_loops.append(Loop(label, CUT_TYPES[cut.sigma], link_names[antecedents[0]],
                              link_names[antecedents[1]], xyz1=xyz1, rpy1=rpy1,
                              xyz2=xyz2, rpy2=rpy2))
    names: list[str] = []
    for a in active:
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            if not 1 <= int(a) <= n:
                raise LoopError(f"active row {a} is not a tree row 1..{n}")
            names.append(joint_names[int(a) - 1])
        else:
            names.append(str(a))
    return build_loops(tree, tuple(cut_loops), tuple(names), reference)


__all__ = ["from_mdh_loops"]
