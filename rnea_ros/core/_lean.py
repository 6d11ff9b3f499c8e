"""The lean per-call path: borrowed arrays, checked while they are unboxed, and :class:`LeanCall`.

A compiled entry point called from Python unboxes each array argument with
``NRT_adapt_ndarray_from_python``: a heap-allocated reference-count record per
array, released after the call (~40-60 ns per array on this machine), and it trusts
the caller on dtype, dimensions and layout (numba's dispatcher checks those, at
~70 ns per argument; :class:`~rnea_ros.core._compile.FastCall` skips it, so the faces
made every input C-contiguous float64 with ``np.ascontiguousarray`` first).

:func:`borrowed` gives an array type whose unboxer does both jobs at once, in
compiled code: it accepts an ``ndarray`` of the type's dtype and number of
dimensions, C-contiguous, aligned, in native byte order -- the checks
``np.ascontiguousarray`` + ``ndim`` did -- and passes it *borrowed* (null
meminfo, as :func:`~rnea_ros.core.coupling._loop_dynamics_jit.borrow`: valid while
the caller holds the array, which it does for the call). Anything else (a list, a
float32 or strided array, a 2-D ``q``) raises ``TypeError`` from the unboxer, and
the face then takes its checked path, whose errors are unchanged.

A lean entry (``core/dynamics/_lean_jit.py``) takes borrowed arrays, turns them into
plain arrays with :func:`plain` (no copy, no code) and calls the existing compiled
entry, so no kernel compiles a second specialisation; :class:`LeanCall` compiles
(or loads from the cache) the one signature on the first call and then calls its
entry point. docs/performance.md, "Issue 40", has the numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import extending
from numba.core import cgutils, types
from numba.core.datamodel.models import ArrayModel

# numba's extension API is untyped; these names are Any, so strict mypy accepts the calls
cg: Any = cgutils
ext: Any = extending

# PyArrayObject_fields (numpy/ndarraytypes.h, the same in NumPy 1.x and 2.x on
# 64-bit): data at 16, nd at 24, descr at 56, flags at 64; PyArray_Descr: byteorder
# at 26, type_num at 28.
_ND, _DESCR, _FLAGS, _BYTEORDER, _TYPE_NUM = 24, 56, 64, 26, 28
_C_CONTIGUOUS, _ALIGNED = 0x1, 0x100
_MAXDIMS = 64  # NPY_MAXDIMS (NumPy 2; 32 in 1.x): room for the adaptor's shape copy


def _layout_matches() -> bool:
    """Whether this process's NumPy lays its array and dtype objects out at the offsets
    above (read back from live objects with ctypes); if not (another NumPy, a 32-bit
    build), :class:`LeanCall` refuses every call and the faces take their checked path."""
    import ctypes

    def at(address: int, offset: int, ctype: Any) -> Any:
        return ctype.from_address(address + offset).value

    try:
        for dtype, flags in ((np.float64, 0x1 | 0x100), (np.int64, 0x1 | 0x100)):
            a = np.zeros((2, 3), dtype)
            b = a.T.astype(a.dtype.newbyteorder(">"))
            for x in (a, b):
                descr = at(id(x), _DESCR, ctypes.c_void_p)
                if (at(id(x), _ND, ctypes.c_int32) != x.ndim or descr != id(x.dtype)
                        or at(descr, _TYPE_NUM, ctypes.c_int32) != x.dtype.num
                        or at(descr, _BYTEORDER, ctypes.c_char) != x.dtype.byteorder.encode()
                        or bool(at(id(x), _FLAGS, ctypes.c_int32) & flags == flags)
                        != (x.flags.c_contiguous and x.flags.aligned)):
                    return False
    except (ValueError, OverflowError, TypeError):  # pragma: no cover - exotic builds
        return False
    return ctypes.sizeof(ctypes.c_void_p) == 8


LAYOUT_OK = _layout_matches()


class BorrowedArray(types.Array):
    """A C-contiguous array argument unboxed without a reference count, its dtype,
    ``ndim``, layout and byte order checked by the unboxer. ``readonly`` is the type
    :func:`plain` gives the kernels (the model's frozen arrays are read-only, so the
    entries' cached specialisations take them so); the unboxer accepts either."""

    def __init__(self, dtype: Any, ndim: int, readonly: bool = False) -> None:
        name = f"borrowed({dtype}, {ndim}d, C{', readonly' if readonly else ''})"
        super().__init__(dtype, ndim, "C", readonly=readonly, name=name)


ext.register_model(BorrowedArray)(ArrayModel)


def borrowed(dtype: Any, ndim: int, readonly: bool = False) -> BorrowedArray:
    """The borrowed array type of ``dtype`` (a numba scalar type) and ``ndim``."""
    return BorrowedArray(dtype, ndim, readonly)


F64_1D = borrowed(types.float64, 1)  # the caller's vectors and the results
F64_2D = borrowed(types.float64, 2)
F64_1D_RO = borrowed(types.float64, 1, readonly=True)  # the model's arrays
F64_2D_RO = borrowed(types.float64, 2, readonly=True)
I64_1D_RO = borrowed(types.int64, 1, readonly=True)


def _field(builder: Any, base: Any, offset: int, ty: Any) -> Any:
    """The ``ty`` value at byte ``offset`` of the object at ``base`` (an ``i8*``)."""
    ptr = builder.gep(base, [ir.Constant(ir.IntType(64), offset)])
    return builder.load(builder.bitcast(ptr, ty.as_pointer()))


def _accepts(builder: Any, obj: Any, typ: BorrowedArray) -> Any:
    """``i1``: the ndarray ``obj`` has ``typ``'s ndim and dtype, native byte order, and
    is C-contiguous and aligned."""
    i8, i32 = ir.IntType(8), ir.IntType(32)
    base = builder.bitcast(obj, i8.as_pointer())
    nd = _field(builder, base, _ND, i32)
    flags = _field(builder, base, _FLAGS, i32)
    descr = _field(builder, base, _DESCR, i8.as_pointer())
    type_num = _field(builder, descr, _TYPE_NUM, i32)
    swapped = builder.icmp_signed("==", _field(builder, descr, _BYTEORDER, i8),
                                  ir.Constant(i8, ord(">")))
    need = _C_CONTIGUOUS | _ALIGNED
    tests = [builder.icmp_signed("==", nd, ir.Constant(i32, typ.ndim)),
             builder.icmp_signed("==", type_num,
                                 ir.Constant(i32, np.dtype(str(typ.dtype)).num)),
             builder.icmp_signed("==", builder.and_(flags, ir.Constant(i32, need)),
                                 ir.Constant(i32, need)),
             builder.not_(swapped)]
    ok = tests[0]
    for t in tests[1:]:
        ok = builder.and_(ok, t)
    return ok


@ext.unbox(BorrowedArray)  # type: ignore[untyped-decorator]
def _unbox_borrowed(typ: BorrowedArray, obj: Any, c: Any) -> Any:
    """numba's non-NRT adaptor (``numba_adapt_ndarray``: an ndarray test, then data,
    sizes, shape and strides, meminfo null) into room for any ndim, then the checks
    of :func:`_accepts`; on failure a ``TypeError`` (the face falls back)."""
    builder = c.builder
    wide = types.Array(typ.dtype, _MAXDIMS, "C")
    wide_ptr = cg.alloca_once(builder, c.context.get_value_type(wide))
    fnty = ir.FunctionType(ir.IntType(32), [c.pyapi.pyobj, c.pyapi.voidptr])
    adapt = c.pyapi._get_function(fnty, name="numba_adapt_ndarray")
    status = builder.call(adapt, (obj, builder.bitcast(wide_ptr, c.pyapi.voidptr)))
    ok_ptr = cg.alloca_once_value(builder, cg.false_bit)
    with builder.if_then(builder.icmp_signed("==", status, ir.Constant(ir.IntType(32), 0))):
        builder.store(_accepts(builder, obj, typ), ok_ptr)
    ok = builder.load(ok_ptr)
    src = c.context.make_array(wide)(c.context, builder, ref=wide_ptr)
    ary = c.context.make_array(typ)(c.context, builder)
    for name in ("meminfo", "parent", "nitems", "itemsize", "data"):
        setattr(ary, name, getattr(src, name))
    # The adaptor writes the array's own ndim sizes, then its ndim strides, from the
    # first size slot on: for an accepted array, slots [0, ndim) and [ndim, 2 ndim).
    packed = cg.unpack_tuple(builder, src.shape, _MAXDIMS)
    ary.shape = cg.pack_array(builder, packed[:typ.ndim])
    ary.strides = cg.pack_array(builder, packed[typ.ndim:2 * typ.ndim])
    failed = builder.not_(ok)
    with builder.if_then(failed, likely=False):
        c.pyapi.err_set_string("PyExc_TypeError",
                               f"expected a C-contiguous {typ.dtype} array of {typ.ndim} "
                               "dimension(s)")
    return ext.NativeValue(ary._getvalue(), is_error=failed)


@ext.intrinsic  # type: ignore[untyped-decorator]
def _plain(typingctx: Any, x: Any) -> Any:
    """A borrowed array as the plain C-contiguous array type (same data, no code), so
    the kernels it is passed to compile no second specialisation."""
    if not isinstance(x, BorrowedArray):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return args[0]

    return types.Array(x.dtype, x.ndim, "C", readonly=not x.mutable)(x), codegen


plain = cast(Callable[[Any], Any], _plain)


class LeanCall:
    """Call a lean entry (borrowed-array arguments) through its compiled entry point.

    ``LeanCall(dispatcher, (F64_2D, F64_1D, ...))``; ``lean.call(*args)``. The first call
    compiles (or loads from the cache) the signature ``argtypes``; ``call`` then becomes
    its entry point. Arguments of the wrong kind raise ``TypeError`` (see the module).
    """

    def __init__(self, dispatcher: Any, argtypes: tuple[Any, ...]) -> None:
        self.dispatcher = dispatcher
        self.argtypes = argtypes
        self.call: Callable[..., Any] = self._first_call if LAYOUT_OK else self._refuse

    @staticmethod
    def _refuse(*args: Any) -> Any:
        raise TypeError("the lean path is off: NumPy's object layout is not the expected one")

    def _first_call(self, *args: Any) -> Any:
        self.dispatcher.compile(self.argtypes)
        self.call = self.dispatcher.overloads[self.argtypes].entry_point
        return self.call(*args)


__all__ = ["F64_1D", "F64_1D_RO", "F64_2D", "F64_2D_RO", "I64_1D_RO", "BorrowedArray",
           "LeanCall", "borrowed", "plain"]
