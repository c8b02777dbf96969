"""Plain renderings of the step table for the ``parse`` command."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import BinaryIO

import polars as pl

from logdoctor import sanitize
from logdoctor.errors import ConfigError
from logdoctor.model import Run
from logdoctor.renderers.output import Writer

#: Output file extension -> table format written by ``logdoctor parse``.
TABLE_FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


def table_format(dest: str, explicit: str | None = None) -> str:
    """The table format for an output path (by extension) or an explicit name; stdout is CSV.

    Raises:
        ConfigError: unknown extension or format name.
    """
    if explicit:
        if explicit not in set(TABLE_FORMATS.values()):
            raise ConfigError(f"unknown table format {explicit!r} (known: parquet, csv, jsonl)")
        return explicit
    if dest == "-":
        return "csv"
    suffix = PurePath(dest).suffix.lower()
    if suffix not in TABLE_FORMATS:
        raise ConfigError(
            f"{dest}: cannot tell the table format from {suffix or 'no extension'!r} (use .parquet, .csv or .jsonl)"
        )
    return TABLE_FORMATS[suffix]


_OS_ERROR = re.compile(r"(?:underlying IO error: )?([^:]*?) \(os error (\d+)\)")


def _parquet_writer(table: pl.DataFrame) -> Writer:
    def write(fh: BinaryIO) -> None:
        try:  # zstd level 1: the size of the default level, 25% faster
            table.write_parquet(fh, compression="zstd", compression_level=1)
        except pl.exceptions.PolarsError as err:
            # polars reports the stream's failures (disk full, a closed pipe) as its own errors:
            # as the OSError they are, the caller's handling of output errors applies
            found = _OS_ERROR.search(str(err))
            raise (OSError(int(found.group(2)), found.group(1)) if found else OSError(str(err))) from None

    return write


#: what a spreadsheet reads as the start of a formula (OWASP's CSV injection list)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str | None, csv: bool) -> str | None:
    if text is None:
        return None
    text = sanitize.redact(text, hashes=False)
    return "'" + text if csv and text.startswith(FORMULA_START) else text


def safe_table(table: pl.DataFrame, *, csv: bool) -> pl.DataFrame:
    """``table`` with no credential in a column name or a text cell (``sanitize.redact``) and, for
    CSV, every text cell that a spreadsheet would run as a formula prefixed with ``'`` (numbers,
    negative ones included, stay numbers)."""
    names = {c: sanitize.redact(c) for c in table.columns}
    texts = [c for c, dtype in table.schema.items() if dtype == pl.String]
    if texts:
        table = table.with_columns(
            pl.col(c).map_elements(lambda v: _cell(v, csv), return_dtype=pl.String, skip_nulls=True) for c in texts
        )
    if any(k != v for k, v in names.items()):
        table = table.rename(names)
    return table


def render_table(run: Run, fmt: str) -> str | Writer:
    """The run's step table as CSV text, JSON-lines text, or (parquet) a Writer of its bytes that
    polars streams into the output file, with no copy of them in memory."""
    table = safe_table(run.table, csv=fmt == "csv")
    if fmt == "parquet":
        return _parquet_writer(table)
    if fmt == "jsonl":
        return table.write_ndjson()
    return table.write_csv()
