"""JSON lines into one polars frame, the schema inferred from a sample when the input is large.

``pl.read_ndjson(..., infer_schema_length=None)`` reads every line once to infer the schema, in one
thread, before it decodes them: on a 1M-line log of nested step records (bench/shapes.py's
``jsonl_nested``, 188 MB) that pass is ~1.4 of the 3.2 CPU-s the read costs. A schema inferred from
the first ``SAMPLE`` lines decodes the same frame unless a later line holds a value of another type
(polars then raises) or a key the sample never saw (polars then drops it without a word). The second
is checked, exactly: every key in JSON text is a string followed by blanks and a colon, so the
matches of ``"\\s*:`` are at least the keys; every value the frame holds (not null, structs and
their fields counted as values) came from a key of its line. The two counts are equal only when no
key was dropped (nor held a null, nor a string ended in ``"`` + colon). The count does not see inside
lists, whose items have no keys: a list that is empty (or all null) in the sample is typed
``List(Null)``, and polars then decodes a later line's items as nulls without a word, so a sampled
schema that holds the Null type anywhere is not used either. Then the frame is the one the full
inference gives, and otherwise the full inference is run, as it always is below ``LARGE`` lines.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from polars._typing import PolarsDataType

#: Lines whose keys and types decide the schema of a large input.
SAMPLE = 1_000
#: Inputs with fewer lines are decoded with the schema of every line (the check costs more there).
LARGE = 50_000
#: Where a key ends: its closing quote, blanks, the colon (a superset of JSON's keys).
KEY_MARK = r'"\s*:'

Readable = bytes | IO[str] | IO[bytes]


def read(source: Callable[[], Readable], lines: pl.Series) -> pl.DataFrame:
    """The records of ``lines`` (one JSON object each) as ``pl.read_ndjson`` with a schema inferred
    over all of them gives them; ``source`` makes a fresh readable of the same text on each call.

    Raises:
        pl.exceptions.PolarsError: the text is not JSON lines polars can decode.
    """
    if lines.len() >= LARGE:
        frame = _sampled(source)
        if (
            frame is not None
            and frame.height == lines.len()
            and not any(map(holds_null, frame.dtypes))
            and values(frame) == key_marks(lines)
        ):
            return frame
    return pl.read_ndjson(source(), infer_schema_length=None)


def read_document(data: bytes) -> pl.DataFrame:
    """``read`` of a whole JSON-lines document (a file's bytes, blank lines allowed); its lines are
    split (for the key count) only when it is large.

    Raises:
        pl.exceptions.PolarsError: the text is not JSON lines polars can decode.
    """
    if data.count(b"\n") + 1 < LARGE or b"\x1f" in data:
        return pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
    lines = split_lines(data)
    return read(lambda: io.BytesIO(data), lines.filter(lines != ""))


def split_lines(data: bytes) -> pl.Series:
    """The lines of UTF-8 ``data`` without 0x1f bytes, stripped, in one vectorised split (no Python string
    per line: ~5x faster at 1M lines).

    Raises:
        pl.exceptions.PolarsError: ``data`` is not UTF-8.
    """
    frame = pl.read_csv(
        data,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        schema={"line": pl.String},
        truncate_ragged_lines=True,
        encoding="utf8",
    )
    return frame["line"].fill_null("").str.strip_chars()


def _sampled(source: Callable[[], Readable]) -> pl.DataFrame | None:
    try:
        return pl.read_ndjson(source(), infer_schema_length=SAMPLE)
    except pl.exceptions.PolarsError:  # a later value of another type than the sample's
        return None


def holds_null(dtype: PolarsDataType) -> bool:
    """Whether ``dtype`` is, or holds at any depth (list items, array items, struct fields), the Null type:
    what polars infers from a value seen only empty or null, and decodes any later value of as null."""
    if isinstance(dtype, pl.Struct):
        return any(holds_null(fld.dtype) for fld in dtype.fields)
    if isinstance(dtype, pl.List | pl.Array):
        return holds_null(dtype.inner)
    return dtype == pl.Null


def key_marks(lines: pl.Series) -> int:
    """How many places in ``lines`` look like the end of a JSON key (``"`` + blanks + ``:``)."""
    return int(lines.str.count_matches(KEY_MARK).sum() or 0)


def values(frame: pl.DataFrame) -> int:
    """How many values ``frame`` holds: non-null cells, and inside each struct its fields' (each came
    from one key of the record's text)."""
    exprs = [e for name, dtype in frame.schema.items() for e in _present(pl.col(name), dtype)]
    if not exprs:
        return 0
    return int(frame.select(pl.sum_horizontal(exprs)).to_series().sum())


def _present(expr: pl.Expr, dtype: PolarsDataType) -> list[pl.Expr]:
    out = [expr.is_not_null().cast(pl.Int64).sum()]
    if isinstance(dtype, pl.Struct):
        for fld in dtype.fields:
            out += _present(expr.struct.field(fld.name), fld.dtype)
    return out
