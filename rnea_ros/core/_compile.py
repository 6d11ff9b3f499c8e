"""Compile policy of the numba kernels: decorators, per-call scratch, :class:`FastCall`.

Every kernel of the package is compiled through one of the decorators here
(:func:`jit`, :func:`jit_fma`, :func:`jit_entry`, :func:`jit_entry_fma`,
:func:`inline`), so the options (on-disk cache, GIL, error model, contraction)
are decided in one place. :func:`scratch` / :func:`tree_scratch` give a per-call
entry point its work array on the stack; :class:`FastCall` calls a kernel
through its compiled entry point (see docs/design.md, "Compiled layer").

Layout of the packed arrays: :mod:`rnea_ros.core._layout`; the tuple and spatial
helpers the kernels share: :mod:`rnea_ros.core._algebra`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba.core import cgutils, errors, types
from numba.core.caching import FunctionCache
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numpy.typing import NDArray

from rnea_ros.core.errors import JitDisabledError

Fn = TypeVar("Fn", bound=Callable[..., Any])

if numba.config.DISABLE_JIT:  # type: ignore[attr-defined]  # decorators: plain functions
    raise JitDisabledError("NUMBA_DISABLE_JIT")


def _cache_available() -> bool:
    """Whether numba can keep this package's kernels on disk: not when
    ``RNEA_ROS_NO_JIT_CACHE=1``, nor when it finds no writable directory (a read-only
    install, a user without a writable home, no ``NUMBA_CACHE_DIR``) -- numba would then
    refuse to import the package; it compiles at every start instead, with a warning."""
    if os.environ.get("RNEA_ROS_NO_JIT_CACHE", "") == "1":
        return False
    try:
        FunctionCache(_cache_available)  # type: ignore[no-untyped-call]  # numba picks, as @jit
    except RuntimeError:
        warnings.warn(
            "numba finds no writable directory for its cache (the package's __pycache__ "
            "and the user's ~/.cache are not writable): every start compiles the kernels "
            "again (seconds to a minute). Set NUMBA_CACHE_DIR to a writable directory.",
            RuntimeWarning, stacklevel=2)
        return False
    return True


# The on-disk cache makes start-up cheap after the first run; RNEA_ROS_NO_JIT_CACHE=1 disables it.
_CACHE = _cache_available()

# Options of every kernel. No C-ABI wrapper: numba otherwise compiles one beside each
# function (for ``numba.cfunc`` callers and first-class function values, which nothing
# here uses); Python calls go through the CPython wrapper, compiled calls through the
# function itself. It was ~20 % of a small helper's cold compile (20 tuple helpers:
# 2.9 -> 2.2 s CPU; a 7-DoF gravity controller's start 7.4 -> 6.5 s CPU).
_OPTIONS: dict[str, Any] = {"cache": _CACHE, "error_model": "numpy", "no_cfunc_wrapper": True}


def _load_without_refresh(cache_class: type) -> type | None:
    """A subclass of numba's ``FunctionCache`` whose loads skip the typing and target
    contexts' ``refresh()``; ``None`` when this numba lacks the internals it builds on
    (then the kernels load as numba loads them).

    numba's ``Cache.load_overload`` refreshes both contexts before it rebuilds a cached
    kernel: the first load in a process imports ~75 of numba's implementation modules
    and installs their typing and lowering registries, ~0.1 s of CPU (0.16 s in a fresh
    process of the test machine), which a rnea-fleet pool worker, a Dask worker, a node
    and every CLI pay once. A cached kernel needs none of it: rebuilding links its
    machine code (``CompileResult._rebuild``: the codegen, the environments, the
    ``reload_init`` hooks) and only the runtime (NRT) that its code calls must be up,
    which this load initialises. A compilation still refreshes both contexts first
    (numba's ``CompilerBase``), so a kernel compiled later in the process (a cache miss,
    a caller of a loaded kernel) types and lowers as before. Objmode code would need
    the refreshed contexts (numba PR 9806): none of this package's kernels uses it, and
    only they get this loader (:func:`_lean_loads`)."""
    from numba.core.runtime import nrt

    needed = ("_guard_against_spurious_io_errors", "_load_overload", "load_overload")
    if not all(hasattr(cache_class, name) for name in needed) or not hasattr(nrt, "rtsys"):
        return None

    class LeanLoadCache(cache_class):  # type: ignore[misc]
        def load_overload(self, sig: Any, target_context: Any) -> Any:
            nrt.rtsys.initialize(target_context)  # idempotent: the runtime the code calls
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
            return None  # an I/O error the guard swallowed: numba compiles instead

    LeanLoadCache.__name__ = LeanLoadCache.__qualname__ = "LeanLoadCache"
    return LeanLoadCache


_LEAN_CACHE = _load_without_refresh(FunctionCache) if _CACHE else None


def _lean_loads(dispatcher: Any) -> Any:
    """``dispatcher`` with its on-disk cache loading through :data:`_LEAN_CACHE`
    (:func:`_load_without_refresh`); unchanged when the cache is off or numba's
    internals differ."""
    cache = getattr(dispatcher, "_cache", None)
    if _LEAN_CACHE is not None and type(cache) is _LEAN_CACHE.__base__:
        cache.__class__ = _LEAN_CACHE
    return dispatcher


def _plain_int(t: Any) -> Any:
    """An integer literal type as its plain integer type; any other type as it is."""
    if isinstance(t, types.IntegerLiteral):
        return types.unliteral(t)  # type: ignore[no-untyped-call]
    return t


def _by_type(dispatcher: Any) -> Any:
    """Have a compiled caller's call of ``dispatcher`` compile (or load) one specialisation
    per integer argument *type*, not one per constant.

    numba types a constant argument of a call between kernels as its literal value
    (``vec3(fp, i, F_AXIS)``: ``Literal[int](12)``) and compiles the callee once per
    value: ``vec3`` 21 times, ``put3`` 15 times for one node of the elastic robot, each a
    module of its own (~50 ms cold). LLVM inlines such helpers into their callers and
    folds the constants there either way. Boolean flags keep their literal
    specialisations (few, and numba prunes the branches they decide in kernels too large
    to inline). A callee whose body types only with a literal (a heterogeneous tuple
    indexed by an argument) falls back to the literal specialisation.
    """
    typed = dispatcher.get_call_template

    def get_call_template(args: Any, kws: Any) -> Any:
        plain = tuple(_plain_int(a) for a in args)
        plain_kws = {k: _plain_int(v) for k, v in kws.items()}
        if plain == tuple(args) and plain_kws == kws:
            return typed(args, kws)
        try:
            return typed(plain, plain_kws)
        except errors.TypingError:
            return typed(args, kws)

    dispatcher.get_call_template = get_call_template
    return _lean_loads(dispatcher)


def jit(fn: Fn) -> Fn:
    """``numba.njit`` with the project's options (cached, no GIL, numpy error model)."""
    return cast(Fn, _by_type(numba.njit(nogil=True, **_OPTIONS)(fn)))


def jit_fma(fn: Fn) -> Fn:
    """:func:`jit` with fused multiply-add contraction (numba's ``contract`` fast-math flag only).

    Each ``a * b + c`` may become one FMA, rounded once: results move by a few
    ulp (~1e-16 relative), nothing else changes -- NaN and inf still propagate,
    so a kernel can still report a non-finite result. Helpers called from such
    a kernel keep their own flags unless inlined with :func:`inline`.
    """
    return cast(Fn, _by_type(numba.njit(nogil=True, fastmath={"contract"},
                                        **_OPTIONS)(fn)))


def jit_entry(fn: Fn) -> Fn:
    """:func:`jit` for a per-call entry point: the GIL is kept, since releasing and
    re-taking it costs ~35 ns, more than a microsecond call can gain by it."""
    return cast(Fn, _by_type(numba.njit(**_OPTIONS)(fn)))


def jit_entry_fma(fn: Fn) -> Fn:
    """:func:`jit_entry` with :func:`jit_fma`'s contraction, for entries whose
    kernels are FMA-compiled (contraction can reach the passes LLVM inlines)."""
    return cast(Fn, _by_type(numba.njit(fastmath={"contract"}, **_OPTIONS)(fn)))


def inline(helper: Any) -> Any:
    """A copy of ``helper`` (jitted or plain) that numba inlines into its callers
    (IR level), so it is compiled with the caller's flags (e.g. :func:`jit_fma`'s)."""
    return numba.njit(inline="always")(getattr(helper, "py_func", helper))


STACK_ROWS = 32  # bodies that fit the per-call scratch on the stack
TREE_STACK_ROWS = 80  # kernel-tree rows that fit :func:`tree_scratch` (a free-flyer humanoid)


def _stack_intrinsic(capacity: int, ndim: int) -> Callable[[int, int], NDArray[np.float64]]:
    """An intrinsic ``(rows, cols)`` -> float64 array with ``ndim`` dimensions in the
    calling kernel's stack frame (``capacity * cols`` doubles reserved in its entry
    block); ``cols`` a literal (1 for a vector)."""

    @intrinsic
    def stack_array(typingctx: Any, rows: Any, cols: Any) -> Any:
        if not isinstance(cols, types.IntegerLiteral) or not isinstance(rows, types.Integer):
            return None
        ncols = cols.literal_value
        aryty = types.Array(types.float64, ndim, "C")

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            data = cgutils.alloca_once(  # type: ignore[no-untyped-call]
                builder, ir.DoubleType(), size=capacity * ncols)
            intp = context.get_value_type(types.intp)
            nrows = context.cast(builder, args[0], signature.args[0], types.intp)
            ary = make_array(aryty)(context, builder)  # type: ignore[no-untyped-call]
            shape = [nrows, ir.Constant(intp, ncols)] if ndim == 2 else [nrows]
            strides = ([ir.Constant(intp, 8 * ncols), ir.Constant(intp, 8)] if ndim == 2
                       else [ir.Constant(intp, 8)])
            populate_array(  # type: ignore[no-untyped-call]
                ary, data=data, shape=shape, strides=strides,
                itemsize=ir.Constant(intp, 8), meminfo=None)
            return ary._getvalue()

        return aryty(rows, cols), codegen

    return cast(Callable[[int, int], NDArray[np.float64]], stack_array)


_stack_matrix = _stack_intrinsic(STACK_ROWS, 2)
_tree_matrix = _stack_intrinsic(TREE_STACK_ROWS, 2)
_tree_vector = _stack_intrinsic(TREE_STACK_ROWS, 1)


@numba.njit(inline="always")  # inlined, so the stack is the calling kernel's
def scratch(rows: int, cols: int) -> NDArray[np.float64]:
    """Uninitialised ``(rows, cols)`` work array for a per-call entry point: on the
    calling kernel's stack when ``rows <= STACK_ROWS`` (no heap allocation, ~60 ns
    less), else ``np.empty``. Valid until that kernel returns: never return it or
    keep it. ``cols`` must be a compile-time constant (a module-level int).

    The kernel must write every entry before reading it (unwritten stack memory
    is undefined to the optimiser; ``np.empty``'s garbage is merely stale).
    """
    if rows <= STACK_ROWS:
        return _stack_matrix(rows, cols)
    return np.empty((rows, cols))


@numba.njit(inline="always")
def tree_scratch(rows: int, cols: int) -> NDArray[np.float64]:
    """:func:`scratch` for the kernel-tree entries (multi-DoF and mimic joints), on
    the stack up to ``TREE_STACK_ROWS`` rows."""
    if rows <= TREE_STACK_ROWS:
        return _tree_matrix(rows, cols)
    return np.empty((rows, cols))


@numba.njit(inline="always")
def tree_vector(rows: int) -> NDArray[np.float64]:
    """An uninitialised ``(rows,)`` vector, as :func:`tree_scratch`."""
    if rows <= TREE_STACK_ROWS:
        return _tree_vector(rows, 1)
    return np.empty(rows)


class FastCall:
    """Call a jitted kernel through its compiled entry point, skipping numba's
    per-call type dispatch (about 0.07 us per array argument).

    Use ``fast.call(*args)``. Only for wrappers that always pass the same
    argument types: float64 or int64 C-contiguous arrays of fixed dimensions
    and Python scalars of fixed type (the read-only flag may vary: it does not
    change the machine code). The first call goes through the dispatcher, which
    compiles (or loads from the cache) the specialisation; ``call`` then
    becomes its entry point.
    """

    def __init__(self, dispatcher: Any) -> None:
        self.dispatcher = dispatcher
        self.call: Callable[..., Any] = self._first_call

    def _first_call(self, *args: Any) -> Any:
        result = self.dispatcher(*args)
        types = tuple(numba.typeof(a) for a in args)  # type: ignore[no-untyped-call]
        self.call = self.dispatcher.overloads[types].entry_point
        return result
