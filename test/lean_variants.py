"""Inputs the lean path's unboxer refuses (core/_lean.py): each must take a face's checked
path and give the same bits as the same values passed as a C-contiguous float64 vector.
Shared by test/core/dynamics/test_lean_path*.py and test/core/elastic/test_lean_path_elastic.py."""

from __future__ import annotations

from typing import Any

import numpy as np


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
