"""The per-sample series of ``rnea-bag``: ``series.parquet`` (zstd) or ``series.csv``.

One row per analysed sample, the columns named ``<kind>.<joint>`` (``t`` first), every
value a float64: Parquet stores them exactly, typed and compressed, a row group per
chunk; CSV writes each in its shortest exact form (read back, the same double).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rnea_ros.tools.bag.errors import BagError

Array = NDArray[np.float64]
FORMATS = ("parquet", "csv", "none")  # --series; "none": not written


class SeriesWriter:
    """Appends rows (samples, columns) to ``out/series.<format>`` as they come."""

    def __init__(self, out: Path, columns: list[str], form: str,
                 stamp: dict[str, Any] | None = None) -> None:
        """``stamp``: what made the series (version, command, input digests), kept as the
        Parquet file's ``rnea_bag`` metadata (JSON); a CSV has no place for it (the
        report has it)."""
        if form not in FORMATS[:2]:
            raise BagError(f"--series '{form}': must be one of {', '.join(FORMATS)}")
        self.columns, self.form = columns, form
        self.csv_file: Any = None
        self.parquet: Any = None
        self.path = out / f"series.{form}"
        if form == "csv":
            self.csv_file = open(self.path, "w", newline="", encoding="utf-8")
            csv.writer(self.csv_file, lineterminator="\n").writerow(columns)
        else:
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                raise BagError("--series parquet needs pyarrow (pip install pyarrow, or "
                               "the 'fleet' extra); --series csv needs nothing more") from None

            self.schema = pa.schema([(c, pa.float64()) for c in columns],
                                    metadata={"rnea_bag": json.dumps(stamp or {})})
            self.parquet = pq.ParquetWriter(self.path, self.schema, compression="zstd")

    def write(self, rows: Array) -> None:
        """Append ``rows`` (samples, len(columns))."""
        if self.csv_file is not None:
            write_rows(self.csv_file, rows)
            return
        import pyarrow as pa

        arrays = [pa.array(np.ascontiguousarray(rows[:, k])) for k in range(rows.shape[1])]
        self.parquet.write_table(pa.Table.from_arrays(arrays, schema=self.schema))

    def close(self) -> None:
        if self.csv_file is not None:
            self.csv_file.close()
        if self.parquet is not None:
            self.parquet.close()
            self.parquet = None


def write_rows(stream: Any, rows: Array, block: int = 2048) -> None:
    """Append ``rows`` as CSV lines: every float in its shortest exact form (read back, the
    same double), NaN as ``nan``. ``orjson`` formats a row in C (~25 ns a number, ~20 times
    the csv module), ``block`` rows at a time; a block with an infinity (JSON has none) goes
    through ``csv``."""
    import orjson

    dumps, numpy = orjson.dumps, orjson.OPT_SERIALIZE_NUMPY
    stream.flush()
    for start in range(0, len(rows), block):
        part = np.ascontiguousarray(rows[start:start + block])
        if np.isinf(part).any():
            stream.flush()
            csv.writer(stream, lineterminator="\n").writerows(part.tolist())
            stream.flush()
            continue
        nan: list[bool] = np.asarray(np.isnan(part).any(axis=1), dtype=bool).tolist()
        lines = [dumps(row, option=numpy)[1:-1] if not has_nan
                 else dumps(row, option=numpy)[1:-1].replace(b"null", b"nan")
                 for row, has_nan in zip(part, nan, strict=True)]
        lines.append(b"")
        stream.buffer.write(b"\n".join(lines))
