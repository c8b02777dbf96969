"""Plain renderings of the step table for the ``parse`` command."""

from __future__ import annotations

import io
from pathlib import PurePath

import polars as pl

from logdoctor.errors import ConfigError
from logdoctor.model import Run

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


def render_table(run: Run, fmt: str) -> str | bytes:
    """The run's step table as parquet bytes, CSV text or JSON-lines text."""
    table: pl.DataFrame = run.table
    if fmt == "parquet":
        buf = io.BytesIO()
        table.write_parquet(buf, compression="zstd", compression_level=1)  # same size, 25% faster
        return buf.getvalue()
    if fmt == "jsonl":
        return table.write_ndjson()
    return table.write_csv()
