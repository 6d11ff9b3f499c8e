"""Closed kinematic loops: a spanning tree plus cut joints (Khalil 2010 §2.2).

A mechanism with closed chains is described as its *equivalent tree* (a
:class:`~rnea_ros.core.model.robot_model.RobotModel`, e.g. from a URDF, which
can only describe trees) and one *cut joint* per independent loop (``B = L -
n`` loops): the joint virtually cut open to obtain the tree. A cut joint ``k``
between links ``i`` and ``j`` is described by two frames (Khalil's Figure 2):

* frame 1 on link ``i`` (``link1``): Khalil's ``R_k`` at ``q_k = 0``, its
  ``z`` along the cut joint's axis;
* frame 2 on link ``j`` (``link2``): Khalil's ``R_{k+B}``, aligned with
  frame 1 when the loop is closed (eq. 3).

What "closed" means depends on the cut joint's ``type`` (one record per type in
:mod:`.cut_kinds`):
``spherical`` -- the frame origins coincide (3 constraints); ``revolute`` --
origins coincide and the ``z`` axes are aligned, rotation about ``z`` free (5);
``prismatic`` -- equal orientations, relative translation along ``z`` only
(5); ``weld`` -- the frames coincide (6). Each frame is given by ``xyz`` [m]
and ``rpy`` [rad] (URDF's roll-pitch-yaw) in its link's frame.

The tree joints are split into ``active`` (actuated, independent coordinates
``q_a``) and passive ones ``q_p``, ``q_tr = [q_a; q_p]`` (eq. 2, in the tree's
joint order here). :class:`ClosedLoopModel` is plain data (like Pinocchio's
``Model``): it checks that links and joints exist and packs the loops for the
kernels, nothing numerical. Its builders (:func:`~.loop_build.build_loops`,
``rc.load_loops``, ``rc.from_mdh_loops``) check what needs the kinematics: every
loop closes at the reference configuration (``q = 0`` unless given), the active
joints are exactly as many as the mechanism's mobility and determine the passive
ones there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core import spatial
from rnea_ros.core.coupling import _loop_jit as kj
from rnea_ros.core.coupling.cut_kinds import CUT_KINDS, LOOP_TYPES, ROWS, cut_code
from rnea_ros.core.errors import LoopError, options
from rnea_ros.core.model.robot_model import RobotModel, _frozen

Array = NDArray[np.float64]
IntArray = NDArray[np.int64]

CLOSURE_TOLERANCE = 1e-6  # [m], [rad]: how far from closed the reference configuration may be
TREE_JOINTS = ("revolute", "continuous", "prismatic")


def _triple(value: object, what: str) -> tuple[float, float, float]:
    try:
        a = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise LoopError(f"{what} must be 3 numbers, got {value!r}") from None
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise LoopError(f"{what} must be 3 finite numbers, got {value!r}")
    return float(a[0]), float(a[1]), float(a[2])


@dataclass(frozen=True)
class Loop:
    """One cut joint closing a loop of the tree (see the module docstring).

    ``xyz1``/``rpy1`` place frame 1 in ``link1``'s frame, ``xyz2``/``rpy2``
    frame 2 in ``link2``'s frame [m, rad]. For ``revolute`` and ``prismatic``
    cuts the joint axis is ``z`` of frame 1 (== ``z`` of frame 2 when closed).
    """

    name: str
    type: str
    link1: str
    link2: str
    xyz1: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy1: tuple[float, float, float] = (0.0, 0.0, 0.0)
    xyz2: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy2: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise LoopError(f"a loop needs a non-empty name, got {self.name!r}")
        if self.type not in LOOP_TYPES:
            raise LoopError(f"loop '{self.name}': type '{self.type}' is not one of "
                            f"{options(LOOP_TYPES)}")
        for key in ("link1", "link2"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise LoopError(f"loop '{self.name}': {key} must be a link name")
        for key in ("xyz1", "rpy1", "xyz2", "rpy2"):
            object.__setattr__(self, key, _triple(getattr(self, key),
                                                  f"loop '{self.name}': {key}"))

    @property
    def constraints(self) -> int:
        """Number of constraint equations of this cut joint (3, 5 or 6)."""
        return LOOP_TYPES[self.type]

    def placement(self, side: int) -> tuple[Array, Array]:
        """``(R, p)`` of frame ``side`` (1 or 2) in its link's frame."""
        xyz, rpy = (self.xyz1, self.rpy1) if side == 1 else (self.xyz2, self.rpy2)
        return spatial.rpy_matrix(*rpy), np.array(xyz, dtype=np.float64)

    @property
    def frame1(self) -> tuple[Array, Array]:
        """``(R, p)`` of frame 1 in ``link1``'s frame (the loop file's ``frame1``)."""
        return self.placement(1)

    @property
    def frame2(self) -> tuple[Array, Array]:
        """``(R, p)`` of frame 2 in ``link2``'s frame (the loop file's ``frame2``)."""
        return self.placement(2)


def rpy_from_matrix(R: Array) -> tuple[float, float, float]:
    """URDF roll-pitch-yaw of rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    pitch = float(np.arcsin(np.clip(-R[2, 0], -1.0, 1.0)))
    if abs(R[2, 0]) < 1.0 - 1e-12:
        roll = float(np.arctan2(R[2, 1], R[2, 2]))
        yaw = float(np.arctan2(R[1, 0], R[0, 0]))
    else:  # gimbal lock: put everything in yaw
        roll = 0.0
        yaw = float(np.arctan2(-R[0, 1], R[1, 1]))
    return roll, pitch, yaw


@dataclass(frozen=True, eq=False)
class ClosedLoopModel:
    """Immutable closed-loop mechanism: ``tree`` + ``loops`` (cut joints) + ``active`` joints.

    Plain data: build it with :func:`~.loop_build.build_loops` (or
    ``rc.load_loops``, ``rc.from_mdh_loops``), which closes the reference, measures
    the mobility and finds the planar loops; constructed directly it checks only
    that the links and joints exist.

    ``reference`` is a closed tree configuration (mapping joint name -> value,
    or an (n,) array; unlisted joints 0) near which the loops are solved by
    default and at which the builder checks the description; ``None`` means
    ``q = 0``. ``q_reference`` (n,) is that configuration closed to machine
    precision (the builder's; empty, the default: ``reference`` as given).
    ``mobility`` is the mechanism's degrees of freedom ``n - rank K`` at the
    reference (the builder's; ``None``: not measured). ``planar``: the revolute
    cuts whose loop is planar, which keep only their 2 in-plane rows (the builder's).

    Derived (read-only): ``n`` tree joints, ``n_active`` (N), ``n_constraints``
    (m, rows of eq. 4 over all loops, loop after loop: :data:`LOOP_TYPES` rows per
    cut, but only the 2 in-plane rows for a ``planar`` revolute cut, whose
    other rows vanish identically), ``active_index`` (N,)
    and ``passive_index`` (n - N,) into the tree's joint order,
    ``constraint_rows`` (B + 1,) row offsets of each loop, ``active_period`` (N,)
    ``2 pi`` for a continuous active joint (its angle is taken modulo a turn), else 0.
    """

    tree: RobotModel
    loops: tuple[Loop, ...]
    active: tuple[str, ...]
    reference: Mapping[str, float] | Array | None = None
    q_reference: Array = field(default_factory=lambda: np.empty(0), repr=False)
    mobility: int | None = None
    planar: tuple[int, ...] = ()
    name: str = field(init=False)
    n: int = field(init=False)
    n_active: int = field(init=False)
    n_constraints: int = field(init=False)
    active_index: IntArray = field(init=False, repr=False)
    passive_index: IntArray = field(init=False, repr=False)
    permutation: IntArray = field(init=False, repr=False)
    active_period: Array = field(init=False, repr=False)
    constraint_rows: IntArray = field(init=False, repr=False)
    loop_floats: Array = field(init=False, repr=False)
    passive_blocks: IntArray = field(init=False, repr=False)
    kernel_arrays: tuple[Array, Array, IntArray, Array] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        tree = self.tree
        if not isinstance(tree, RobotModel):
            raise LoopError(f"tree must be a RobotModel, got {type(tree).__name__}")
        set_(self, "loops", tuple(self.loops))
        if isinstance(self.active, str):
            set_(self, "active", (self.active,))
        set_(self, "active", tuple(self.active))
        if isinstance(self.reference, Mapping):
            set_(self, "reference", dict(self.reference))  # a copy: later edits change nothing
        elif self.reference is not None:
            try:
                set_(self, "reference", _frozen(self.reference))
            except (TypeError, ValueError):
                raise LoopError(f"reference must map joint names to positions or be a "
                                f"({tree.nv},) vector, got {self.reference!r}") from None
        set_(self, "name", tree.name)
        set_(self, "n", tree.nv)
        self._check_tree()
        active = self._check_active()
        set_(self, "n_active", len(active))
        passive = [j for j in range(tree.nv) if j not in active]
        set_(self, "active_index", _frozen(active, np.int64))
        set_(self, "passive_index", _frozen(passive, np.int64))
        set_(self, "permutation", _frozen(active + passive, np.int64))
        set_(self, "active_period", _frozen([2 * math.pi if tree.joint_types[j] == "continuous"
                                             else 0.0 for j in active], np.float64))
        q = (reference_vector(tree, self.reference) if np.size(self.q_reference) == 0
             else reference_vector(tree, self.q_reference))
        set_(self, "q_reference", _frozen(q))
        set_(self, "planar", self._check_planar())
        self._pack(self.planar)

    # ---------------------------------------------------------------- checks
    def _check_tree(self) -> None:
        tree = self.tree
        if tree.nq != tree.nv or tree.nv != len(tree.joint_names):
            raise LoopError(f"model '{tree.name}': closed loops need one coordinate per joint")
        bad = [j for j, t in zip(tree.joint_names, tree.joint_types, strict=True)
               if t not in TREE_JOINTS]
        if bad:
            raise LoopError(f"model '{tree.name}': closed loops support tree joints of types "
                            f"{options(TREE_JOINTS)}; joints {options(bad)} are not")
        if not self.loops:
            raise LoopError(f"model '{tree.name}': a closed-loop model needs at least one loop")
        seen: set[str] = set()
        for loop in self.loops:
            if not isinstance(loop, Loop):
                raise LoopError(f"loops must be Loop objects, got {type(loop).__name__}")
            if loop.name in seen:
                raise LoopError(f"loop '{loop.name}' is defined twice")
            seen.add(loop.name)
            for key in ("link1", "link2"):
                link = getattr(loop, key)
                if link not in tree.frames:
                    raise LoopError(f"loop '{loop.name}': {key} '{link}' is not a link of model "
                                    f"'{tree.name}'; links: {options(tree.frames)}")
            b1 = tree.frames[loop.link1].body
            b2 = tree.frames[loop.link2].body
            if b1 == b2:
                what = "the base" if b1 < 0 else f"body '{tree.body_names[b1]}'"
                raise LoopError(f"loop '{loop.name}': links '{loop.link1}' and '{loop.link2}' "
                                f"are both rigidly part of {what}: the cut joint closes nothing")

    def _check_active(self) -> list[int]:
        tree = self.tree
        if not self.active:
            raise LoopError(f"model '{tree.name}': no active joint given; joints: "
                            f"{options(tree.joint_names)}")
        index: list[int] = []
        for name in self.active:
            if name not in tree.joint_names:
                raise LoopError(f"active joint '{name}' is not a joint of model '{tree.name}'; "
                                f"joints: {options(tree.joint_names)}")
            k = tree.joint_names.index(name)
            if k in index:
                raise LoopError(f"active joint '{name}' is listed twice")
            index.append(k)
        if len(index) == tree.nv:
            raise LoopError(f"model '{tree.name}': every joint is active; a closed loop needs "
                            "passive joints")
        return index

    def _check_planar(self) -> tuple[int, ...]:
        planar = tuple(int(l) for l in self.planar)
        for l in planar:
            if not 0 <= l < len(self.loops) or CUT_KINDS[self.loops[l].type].planar is None:
                revolute = [str(k) for k, loop in enumerate(self.loops)
                            if CUT_KINDS[loop.type].planar is not None]
                raise LoopError(f"model '{self.tree.name}': planar loop {l} is not the index of "
                                f"a revolute cut; revolute cuts: {options(revolute)}")
        return planar

    def _pack(self, planar: tuple[int, ...]) -> None:
        """``loop_floats`` (B, L_COLS + n), see :mod:`._loop_jit`; the loops ``planar``
        keep only their in-plane rows."""
        tree, n = self.tree, self.tree.nv
        lp = np.zeros((len(self.loops), kj.L_COLS + n))
        row = 0
        rows = [0]
        for l, loop in enumerate(self.loops):
            for side, link in ((1, loop.link1), (2, loop.link2)):
                frame = tree.frames[link]
                R, p = spatial.compose((frame.rotation, frame.translation),
                                       loop.placement(side))
                lp[l, kj.L_BODY1 + side - 1] = frame.body
                lp[l, (kj.L_R1, kj.L_R2)[side - 1]:][:9] = R.ravel()
                lp[l, kj.L_IDENTITY + side - 1] = float(np.array_equal(R, np.eye(3)))
                lp[l, (kj.L_P1, kj.L_P2)[side - 1]:][:3] = p
            code = cut_code(loop.type, l in planar)
            lp[l, kj.L_TYPE] = code
            lp[l, kj.L_ROW] = row
            lp[l, kj.L_NROWS] = len(ROWS[code])
            row += len(ROWS[code])
            rows.append(row)
            lp[l, kj.L_SUPPORT:] = (_support(tree, frame_body(tree, loop.link2))
                                    - _support(tree, frame_body(tree, loop.link1)))
        object.__setattr__(self, "loop_floats", _frozen(lp))
        object.__setattr__(self, "kernel_arrays", (tree.kernel_floats, self.loop_floats,
                                                   self.permutation, tree.gravity))
        object.__setattr__(self, "constraint_rows", _frozen(rows, np.int64))
        object.__setattr__(self, "n_constraints", row)
        object.__setattr__(self, "passive_blocks", _frozen(
            passive_blocks(lp[:, kj.L_COLS:], rows, self.passive_index), np.int64))

    # ------------------------------------------------------------- helpers
    @property
    def active_names(self) -> tuple[str, ...]:
        """Active joint names in the order of ``q_a`` (as given)."""
        return tuple(self.tree.joint_names[j] for j in self.active_index)

    @property
    def passive_names(self) -> tuple[str, ...]:
        """Passive joint names in the order of ``q_p`` (tree order)."""
        return tuple(self.tree.joint_names[j] for j in self.passive_index)

    def loop_index(self, name: str) -> int:
        """Index of loop ``name``."""
        names = [loop.name for loop in self.loops]
        if name not in names:
            raise LoopError(f"no loop '{name}' in model '{self.name}'; loops: {options(names)}")
        return names.index(name)

    def cut_frame(self, l: int, side: int) -> tuple[int, Array, Array]:
        """``(body, R, p)``: loop ``l``'s frame ``side`` (1 or 2) placed in the frame of the
        body carrying it (-1: the base), its link's placement included."""
        lp = self.loop_floats[l]
        k = side - 1
        R = lp[(kj.L_R1, kj.L_R2)[k]:][:9].reshape(3, 3).copy()
        return int(lp[kj.L_BODY1 + k]), R, lp[(kj.L_P1, kj.L_P2)[k]:][:3].copy()

    def loop_joints(self, l: int) -> tuple[str, ...]:
        """Tree joints of loop ``l`` (those moving one of its frames but not both)."""
        support = self.loop_floats[l, kj.L_COLS:]
        return tuple(self.tree.joint_names[j] for j in np.flatnonzero(support))


def frame_body(tree: RobotModel, link: str) -> int:
    """Body carrying ``link`` (-1: the base)."""
    return tree.frames[link].body


def branch(tree: RobotModel, body: int) -> list[int]:
    """The bodies (and so the joints) from the base to ``body``, base first (empty for
    the base, -1)."""
    path: list[int] = []
    while body >= 0:
        path.insert(0, body)
        body = int(tree.parent[body])
    return path


def _support(tree: RobotModel, body: int) -> Array:
    """1 for the joints between the base and ``body``, else 0 (n,)."""
    s = np.zeros(tree.nv)
    s[branch(tree, body)] = 1.0
    return s


def passive_blocks(support: Array, rows: Sequence[int], passive: IntArray) -> list[int]:
    """``blk`` of :mod:`._loop_jit` (:func:`~._loop_jit.factor_pairs`): ``[B, ro, co]``, the
    loops ordered so that each, of 2 rows, moves exactly 2 of the passive joints the
    earlier loops left (its joints: non-zero ``support`` (B, n)); then ``K_p[ro, co]`` is
    block lower triangular with 2 x 2 diagonal blocks, one per loop. Greedy, loop by
    loop; when there is no such order, ``B = 0`` (``K_p`` by its QR).

    ``rows`` (B + 1,) are the loops' row offsets, ``passive`` (p,) the passive joints."""
    loops, m, p = support.shape[0], int(rows[-1]), len(passive)
    done: list[int] = []
    ro: list[int] = []
    left = list(range(loops))
    while left:
        for l in left:
            new = [c for c in range(p) if support[l, passive[c]] != 0.0 and c not in done]
            if rows[l + 1] - rows[l] == 2 and len(new) == 2:
                done += new
                ro += [rows[l], rows[l] + 1]
                left.remove(l)
                break
        else:
            return [0, *range(m), *range(p)]
    if len(done) != p:
        return [0, *range(m), *range(p)]
    return [loops, *ro, *done]


def reference_vector(tree: RobotModel,
                     reference: Mapping[str, float] | Array | Sequence[float] | None) -> Array:
    """The reference configuration as a tree vector (n,)."""
    q = np.zeros(tree.nv)
    if reference is None:
        return q
    if isinstance(reference, Mapping):
        for name, value in reference.items():
            if name not in tree.joint_names:
                raise LoopError(f"reference: '{name}' is not a joint of model '{tree.name}'; "
                                f"joints: {options(tree.joint_names)}")
            try:
                q[tree.joint_names.index(name)] = float(value)
            except (TypeError, ValueError):
                raise LoopError(f"reference: joint '{name}' = {value!r} is not a number"
                                ) from None
    else:
        a = np.asarray(reference, dtype=np.float64)
        if a.shape != (tree.nv,):
            raise LoopError(f"reference has shape {a.shape}, expected ({tree.nv},)")
        q = a.copy()
    if not np.all(np.isfinite(q)):
        raise LoopError("reference configuration is not finite")
    return q


__all__ = ["CLOSURE_TOLERANCE", "LOOP_TYPES", "ClosedLoopModel", "Loop", "rpy_from_matrix"]
