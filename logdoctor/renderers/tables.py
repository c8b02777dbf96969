"""Plain renderings of the step table for the ``parse`` command."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import BinaryIO

import polars as pl

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
            f"{dest}: cannot tell the table format from {suffix or 'no extension'!r} "
            "(use .parquet, .csv or .jsonl)"
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


def render_table(run: Run, fmt: str) -> str | Writer:
    """The run's step table as CSV text, JSON-lines text, or (parquet) a Writer of its bytes that
    polars streams into the output file, with no copy of them in memory."""
    table: pl.DataFrame = run.table
    if fmt == "parquet":
        return _parquet_writer(table)
    if fmt == "jsonl":
        return table.write_ndjson()
    return table.write_csv()
