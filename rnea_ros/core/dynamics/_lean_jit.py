"""Lean per-call entries: the 1 kHz entries of RNEA, gravity, ABA and ``(tau, tau_dot)``
on borrowed arrays.

Each takes :mod:`~rnea_ros.core._lean` borrowed arrays (checked and unboxed without a
reference count), makes them plain arrays (:func:`~rnea_ros.core._lean.plain`, no
copy) and calls the existing entry, whose compiled code it shares; shapes and return
values are that entry's. Compiled per signature by :class:`~rnea_ros.core._lean.LeanCall`
(the faces' ``_lean_*`` objects).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rnea_ros.core._compile import jit_entry
from rnea_ros.core._lean import plain
from rnea_ros.core.dynamics._aba_jit import aba_call, aba_tree_call
from rnea_ros.core.dynamics._gfd_jit import gfd_call
from rnea_ros.core.dynamics._rnea_expanded_jit import tree_gravity_call, tree_rnea_call
from rnea_ros.core.dynamics._rnea_jit import gravity_call, rnea_call

Array = NDArray[np.float64]


@jit_entry
def rnea_lean(fp: Array, q: Array, qd: Array, qdd: Array, g: Array, tau: Array) -> bool:
    """:func:`~._rnea_jit.rnea_call` on borrowed arrays."""
    return rnea_call(plain(fp), plain(q), plain(qd), plain(qdd), plain(g), plain(tau))


@jit_entry
def gravity_lean(fp: Array, q: Array, g: Array, tau: Array) -> bool:
    """:func:`~._rnea_jit.gravity_call` on borrowed arrays."""
    return gravity_call(plain(fp), plain(q), plain(g), plain(tau))


@jit_entry
def tree_rnea_lean(fp: Array, km: Array, q: Array, v: Array, a: Array, g: Array,
                   tau: Array) -> bool:
    """:func:`~._rnea_expanded_jit.tree_rnea_call` on borrowed arrays."""
    return tree_rnea_call(plain(fp), plain(km), plain(q), plain(v), plain(a), plain(g),
                          plain(tau))


@jit_entry
def tree_gravity_lean(fp: Array, km: Array, q: Array, g: Array, tau: Array) -> bool:
    """:func:`~._rnea_expanded_jit.tree_gravity_call` on borrowed arrays."""
    return tree_gravity_call(plain(fp), plain(km), plain(q), plain(g), plain(tau))


@jit_entry
def aba_lean(fp: Array, q: Array, qd: Array, tau: Array, g: Array, none: Array,
             qdd: Array) -> bool:
    """:func:`~._aba_jit.aba_call` on borrowed arrays, no external wrenches (``none``
    is an empty (0, 6) array; the flag is computed from it, not a literal, so
    ``aba_call`` keeps its one specialisation)."""
    return aba_call(plain(fp), plain(q), plain(qd), plain(tau), plain(g), plain(none),
                    none.shape[0] != 0, plain(qdd))


@jit_entry
def aba_tree_lean(fp: Array, km: Array, body_row: NDArray[np.int64], q: Array, qd: Array,
                  tau: Array, g: Array, none: Array, qdd: Array) -> int:
    """:func:`~._aba_jit.aba_tree_call` on borrowed arrays, no external wrenches."""
    return aba_tree_call(plain(fp), plain(km), plain(body_row), plain(q), plain(qd),
                         plain(tau), plain(g), plain(none), none.shape[0] != 0, plain(qdd))


@jit_entry
def gfd_lean(fp: Array, q: Array, qd: Array, qdd: Array, qddd: Array, g: Array, tau: Array,
             tau_dot: Array) -> bool:
    """:func:`~._gfd_jit.gfd_call` on borrowed arrays."""
    return gfd_call(plain(fp), plain(q), plain(qd), plain(qdd), plain(qddd), plain(g),
                    plain(tau), plain(tau_dot))


__all__ = ["aba_lean", "aba_tree_lean", "gfd_lean", "gravity_lean", "rnea_lean",
           "tree_gravity_lean", "tree_rnea_lean"]
