"""Cut-joint types of a closed loop: one record per type, from which every table is derived.

A cut joint (Khalil 2010 §2.2, eq. 3-4) blocks some components of the relative
motion ``V_rel = [v; w]`` of its frame 2 with respect to frame 1 (in frame 2,
at its origin; components numbered 0..5 = ``v_x v_y v_z w_x w_y w_z``):

=================  ====  ==================  ===========  ================  ==============
type               code  blocked rows        free in      rotation rows     reversed when
                                             ``V_rel``
=================  ====  ==================  ===========  ================  ==============
spherical          0     ``v``               ``w``        --                never
revolute           1     ``v, w_x, w_y``     ``w_z``      ``z`` axis        ``z`` flipped
prismatic          2     ``v_x, v_y, w``     ``v_z``      ``sin(a) u``      turned > 90°
weld               3     ``v, w``            --           ``sin(a) u``      turned > 90°
planar revolute    4     ``v_x, v_y``        ``w_z``      --                ``z`` flipped
=================  ====  ==================  ===========  ================  ==============

``planar revolute`` is no type of the loop file: the builder gives it to a
``revolute`` cut whose loop is planar (every loop joint revolute about an axis
parallel to the cut's, or prismatic normal to it), where ``v_z, w_x, w_y``
vanish identically and only the in-plane rows remain.

The codes are the compiled kernels' (:mod:`._loop_jit`), which branch on each
of them explicitly (``component``, ``residual``, ``reversed_loop``,
``_loop_kinematics_jit.relative_acceleration``) and raise
:class:`~rnea_ros.core.errors.LoopError` on any other code.
"""

from __future__ import annotations

from dataclasses import dataclass

from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.errors import LoopError

ROTATION_ROWS = ("none", "axis", "angle")  # how a type's rotation rows are measured
REVERSALS = ("never", "axis", "turn")  # when a closed cut counts as closed upside down


@dataclass(frozen=True)
class CutKind:
    """Everything the package knows about one cut-joint type, in one record.

    ``code``: the kernels' type code (``_loop_jit``). ``rows``: the blocked
    components of ``[v; w]`` (0..5), in constraint-row order; their count is the
    number of constraint equations. ``free``: the components of ``V_rel`` the
    cut leaves free at a consistent velocity, those that enter ``V2 x V_rel`` in
    the acceleration constraint. ``rotation``: how the residual's rotation rows
    (eq. 3) are measured -- ``"axis"``: the misalignment ``(R[2,1], -R[2,0])``
    of ``z1`` seen from frame 2, ``"angle"``: ``sin(angle) * axis`` of ``R_rel``,
    ``"none"``: no rotation row. ``reversed``: when a closed cut closed upside
    down -- ``"axis"``: ``z`` flipped (``R_rel[2,2] < 0``), ``"turn"``: turned by
    more than 90° (``trace R_rel < 1``), ``"never"``. ``public``: a loop file
    may name it (else the builder derives it: ``planar``).
    """

    name: str
    code: int
    rows: tuple[int, ...]
    free: tuple[int, ...]
    rotation: str
    reversed: str
    public: bool = True
    planar: str | None = None  # the type this one becomes in a planar loop

    def __post_init__(self) -> None:
        if not set(self.rows).isdisjoint(self.free) or \
                not set(self.rows) | set(self.free) <= set(range(6)):
            raise LoopError(f"cut kind '{self.name}': rows {self.rows} and free "
                            f"{self.free} must be disjoint components 0..5")
        if self.rotation not in ROTATION_ROWS or self.reversed not in REVERSALS:
            raise LoopError(f"cut kind '{self.name}': rotation '{self.rotation}' must be "
                            f"one of {', '.join(ROTATION_ROWS)}, reversed "
                            f"'{self.reversed}' one of {', '.join(REVERSALS)}")

    @property
    def constraints(self) -> int:
        """Number of constraint equations (rows of ``K``)."""
        return len(self.rows)


# The one table of cut-joint types; every other table below is derived from it.
CUT_KINDS: dict[str, CutKind] = {k.name: k for k in (
    CutKind("spherical", kj.SPHERICAL, (0, 1, 2), (3, 4, 5), "none", "never"),
    CutKind("revolute", kj.REVOLUTE, (0, 1, 2, 3, 4), (5,), "axis", "axis",
            planar="planar revolute"),
    CutKind("prismatic", kj.PRISMATIC_CUT, (0, 1, 3, 4, 5), (2,), "angle", "turn"),
    CutKind("weld", kj.WELD, (0, 1, 2, 3, 4, 5), (), "angle", "turn"),
    CutKind("planar revolute", kj.PLANAR_REVOLUTE, (0, 1), (5,), "none", "axis",
            public=False),
)}

# The loop file's types and their constraint counts.
LOOP_TYPES = {k.name: k.constraints for k in CUT_KINDS.values() if k.public}
# Blocked rows per kernel code.
ROWS = {k.code: k.rows for k in CUT_KINDS.values()}


def cut_code(type_: str, planar: bool) -> int:
    """The kernel code of a loop file's cut ``type_``, in a planar loop if ``planar``
    (a type without a planar variant keeps its code)."""
    kind = CUT_KINDS[type_]
    if planar and kind.planar is not None:
        kind = CUT_KINDS[kind.planar]
    return kind.code


__all__ = ["CUT_KINDS", "LOOP_TYPES", "REVERSALS", "ROTATION_ROWS", "ROWS", "CutKind",
           "cut_code"]
