"""Inputs the lean path's unboxer refuses (core/_lean.py): each must take a face's checked
path and give the same bits as the same values passed as a C-contiguous float64 vector.
Shared by test/core/dynamics/test_lean_path*.py and test/core/elastic/test_lean_path_elastic.py,
with the helpers that count a face's conversions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from rnea_ros.core.errors import StateError


def refused_variants(x: np.ndarray) -> dict[str, Any]:
    """``x`` (a float64 vector) as inputs the unboxer refuses, by kind."""
    swapped = x.astype(x.dtype.newbyteorder(">"))
    raw = np.zeros(x.size * 8 + 1, np.uint8)
    unaligned = raw[1:].view(np.float64)
    unaligned[:] = x
    wide = np.zeros(2 * x.size)
    wide[::2] = x
    return {"list": list(x), "float32": x.astype(np.float32), "strided": wide[::2],
            "byte-swapped": swapped, "unaligned": unaligned,
            "longdouble": x.astype(np.longdouble), "tuple": tuple(x)}


def as_lean(x: Any) -> np.ndarray:
    """The same values as a C-contiguous float64 vector: what the lean path accepts."""
    return np.ascontiguousarray(x, np.float64)


def replaced_at(state: Sequence[np.ndarray], k: int) -> Iterator[tuple[str, list[Any], list[Any]]]:
    """For each refused variant of input ``k`` of ``state``: its kind, the arguments with
    it, and the arguments with the same values as a lean vector."""
    for kind, x in refused_variants(state[k]).items():
        yield (kind, [*state[:k], x, *state[k + 1:]],
               [*state[:k], as_lean(x), *state[k + 1:]])


def count_conversions(monkeypatch: pytest.MonkeyPatch, *faces: ModuleType) -> list[int]:
    """Each face module's ``_asc`` (``np.ascontiguousarray``) counted: the returned list
    grows by one per conversion (main's faces converted every input on every call)."""
    calls: list[int] = []

    def counting(x: Any, dtype: Any = None) -> Any:
        calls.append(1)
        return np.ascontiguousarray(x, dtype)

    for face in faces:
        monkeypatch.setattr(face, "_asc", counting)
    return calls


def read_only(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Read-only copies of ``arrays`` (the lean path accepts them too)."""
    copies = [x.copy() for x in arrays]
    for x in copies:
        x.flags.writeable = False
    return copies


def bad_values(x: np.ndarray) -> list[np.ndarray]:
    """Float64 vectors a face must refuse in place of ``x``: one longer, and (``x`` not
    empty) one shorter and ``x`` with its last entry NaN."""
    bads = [np.zeros(x.size + 1)]
    if x.size:
        nan = x.copy()
        nan[-1] = np.nan
        bads += [np.zeros(x.size - 1), nan]
    return bads


def same_refusal(face: Callable[..., Any], model: Any, args: Sequence[Any]) -> str:
    """The :class:`StateError` message of ``face(model, *args)`` (float64 vectors: the lean
    path), checked equal to that of the same values as lists (the checked path)."""
    with pytest.raises(StateError) as lean_err:
        face(model, *args)
    with pytest.raises(StateError) as checked_err:
        face(model, *(list(x) for x in args))
    assert str(lean_err.value) == str(checked_err.value)
    return str(lean_err.value)
