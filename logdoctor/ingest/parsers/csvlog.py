"""CSV/TSV tables with a header row (Lightning metrics.csv, Keras CSVLogger, exported tables)."""

from __future__ import annotations

import io
import re

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.records import normalize_records
from logdoctor.ingest.sources import Source
from logdoctor.model import LINE_NO

_HEADER_FIELD = re.compile(r"^[A-Za-z_][\w .:/()\[\]%-]*$")
_CELL = re.compile(
    r"^\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf|Inf|-Inf|)\s*$"
)


def _end_of_line(data: bytes, n: int) -> int:
    """Offset just past the ``n``-th newline of ``data`` (its length when it has fewer)."""
    end = -1
    for _ in range(n):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return len(data)
    return end + 1


def _separator(header: str) -> str | None:
    """The field separator of a header line (tab, comma or semicolon), or None."""
    for sep in ("\t", ",", ";"):
        if header.count(sep) >= 1:
            return sep
    return None


def _looks_like_table(lines: list[str]) -> str | None:
    """The separator when ``lines`` are a header plus mostly numeric rows of the same width."""
    if len(lines) < 2:
        return None
    sep = _separator(lines[0])
    if sep is None:
        return None
    header = [h.strip().strip('"') for h in lines[0].split(sep)]
    if len(header) < 2 or not all(_HEADER_FIELD.match(h) for h in header):
        return None
    rows = [ln.split(sep) for ln in lines[1:]]
    same = [r for r in rows if len(r) == len(header)]
    if len(same) * 2 < len(rows):
        return None
    numeric = sum(1 for r in same for c in r if _CELL.match(c.strip('"')))
    return sep if numeric >= 0.8 * sum(len(r) for r in same) else None


class CsvParser(Parser):
    """A header row naming the metrics, then one row per record; empty cells are missing values.

    Rows that carry a training loss are steps; rows that carry only validation (``val_*``) or
    epoch-aggregate (``*_epoch``) values go to the evals table.
    """

    name = "csv"
    description = "CSV/TSV with a header (Lightning metrics.csv, Keras CSVLogger, exported tables)"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        lines = [ln for ln in source.head_text().splitlines() if ln.strip()][:30]
        if len(source.head_bytes()) >= 64 * 1024 and len(lines) > 2:
            lines = lines[:-1]
        return _looks_like_table(lines) is not None

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        data = source.read_bytes()
        # without carriage returns polars reads the bytes as they are (no decoded copy of the file)
        text = data.decode("utf-8", errors="replace") if b"\r" in data else ""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        # the first lines only: splitting the whole buffer would copy all but them
        head = text.split("\n", 50) if text else data[: _end_of_line(data, 50)].split(b"\n", 50)[:50]
        lines = (ln if isinstance(ln, str) else ln.decode("utf-8", errors="replace") for ln in head[:50])
        first = next((ln for ln in lines if ln.strip()), "")
        sep = _separator(first)
        if sep is None:
            raise ParseError(f"{source.name}: no CSV header found (first line: {first[:80]!r})")
        try:
            frame = pl.read_csv(
                io.StringIO(text) if text else data,
                separator=sep,
                infer_schema=False,
                truncate_ragged_lines=True,
                encoding="utf8-lossy",
            )
        except pl.exceptions.PolarsError as err:
            first_line = (str(err).strip().splitlines() or [""])[0][:160]  # polars adds advice lines
            raise ParseError(f"{source.name}: not a readable CSV table ({first_line})") from None
        frame = frame.rename({c: c.strip() for c in frame.columns})
        frame = frame.with_row_index(LINE_NO, offset=2).with_columns(pl.col(LINE_NO).cast(pl.Int64))
        return normalize_records(frame, fields, source.name, frame.height + 1)
