"""Read a dataset's sequence lengths: text, CSV, JSONL, Parquet, Arrow or standard input."""

from __future__ import annotations

import io
import re

import numpy as np
import polars as pl
from numpy.typing import NDArray

from logdoctor.errors import InputError
from logdoctor.ingest.parsers import ndjson
from logdoctor.ingest.sources import Source, open_source

#: Column names taken as the length column without asking (compared case-insensitively).
LENGTH_NAMES = (
    "length",
    "len",
    "lengths",
    "num_tokens",
    "n_tokens",
    "ntokens",
    "seq_len",
    "seq_length",
    "sequence_length",
    "token_count",
    "tokens",
    "input_length",
)
_INT_LINE = re.compile(rb"^\s*[+-]?\d+\s*$")


def _frame(source: Source) -> tuple[pl.DataFrame, bool]:
    """The content as a frame, and whether it is a headerless one-number-per-line text file."""
    data = source.read_bytes()
    if not data.strip():
        raise InputError(f"{source.name}: file is empty")
    buf = io.BytesIO(data)
    try:
        if data.startswith(b"PAR1"):
            return pl.read_parquet(buf), False
        if data.startswith(b"ARROW1"):
            return pl.read_ipc(buf), False
        if data.startswith(b"\xff\xff\xff\xff"):  # Arrow IPC stream
            return pl.read_ipc_stream(buf), False
        first = data.lstrip()[:1]
        if first in (b"{", b"["):
            # JSON lines: the schema of every line (a key or a float first seen late is kept)
            return (ndjson.read_document(data) if first == b"{" else pl.read_json(buf)), False
        head = data.lstrip().split(b"\n", 1)[0]
        if _INT_LINE.match(head):
            return pl.read_csv(
                buf, has_header=False, new_columns=["length"], schema_overrides={"length": pl.Int64}
            ), True
        return _read_csv(buf), False
    except (pl.exceptions.PolarsError, OSError, ValueError) as err:
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise InputError(f"{source.name}: cannot read lengths ({msg})") from None


def _read_csv(buf: io.BytesIO) -> pl.DataFrame:
    """A CSV with the types of its first 10,000 rows; when a later value does not fit them (an ``x``
    in an id column, a float length), with the types of every row instead."""
    try:
        return pl.read_csv(buf, infer_schema_length=10_000)
    except pl.exceptions.ComputeError:
        buf.seek(0)
        return pl.read_csv(buf, infer_schema_length=None)


def pick_column(frame: pl.DataFrame, column: str | None, name: str) -> str:
    """The length column: ``column`` when given, else the only integer column or a known name."""
    if column is not None:
        if column not in frame.columns:
            raise InputError(f"{name}: no column {column!r} (columns: {', '.join(frame.columns)})")
        return column
    lower = {c.lower(): c for c in frame.columns}
    for known in LENGTH_NAMES:
        if known in lower:
            return lower[known]
    ints = [c for c, t in frame.schema.items() if t.is_integer()]
    if len(ints) == 1:
        return ints[0]
    raise InputError(
        f"{name}: cannot tell which column holds the lengths (columns: {', '.join(frame.columns)}); pass --column"
    )


def read_lengths(name: str, column: str | None = None) -> NDArray[np.int64]:
    """Sequence lengths from a file (``-`` for standard input), as a 1-D int64 array.

    Args:
        name: path, or ``-`` for standard input (compressed input is accepted).
        column: the length column of a tabular file; guessed when there is an obvious one.

    Raises:
        InputError: unreadable, empty, no length column, or values that are not positive integers.
    """
    source = open_source(name)
    frame, _ = _frame(source)
    col = pick_column(frame, column, source.name)
    series = frame[col]
    if not (series.dtype.is_integer() or series.dtype.is_float()):
        series = series.cast(pl.Float64, strict=False)
    values = series.cast(pl.Float64).to_numpy()
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < 1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        seen = series[first]
        raise InputError(
            f"{source.name}: column {col!r} row {first + 1}: expected a positive integer length, "
            f"saw {seen!r} ({int(bad.sum())} bad values)"
        )
    if values.size == 0:
        raise InputError(f"{source.name}: no lengths found")
    return values.astype(np.int64)
