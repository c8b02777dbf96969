"""CSV/TSV tables with a header row (Lightning metrics.csv, Keras CSVLogger, exported tables)."""

from __future__ import annotations

import csv
import io
import re

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.evalsections import eval_loss_columns
from logdoctor.ingest.parsers.losspick import refusal_hint
from logdoctor.ingest.parsers.objective import objective_of
from logdoctor.ingest.parsers.records import is_eval_key, normalize_records, resolve_key
from logdoctor.ingest.sources import Source
from logdoctor.model import LINE_NO, LOSS

_CELL = re.compile(r"^\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf|Inf|-Inf|)\s*$")


def _end_of_line(data: bytes, n: int) -> int:
    """Offset just past the ``n``-th newline of ``data`` (its length when it has fewer)."""
    end = -1
    for _ in range(n):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return len(data)
    return end + 1


_DEFAULT = FieldMap()


class UnreadableTable(ParseError):
    """A CSV table that can never yield a training step: polars cannot read it, or its header names
    no training loss. Its header is fixed, so a follower (tail) knows at once that waiting is futile."""


def _fields(line: str, sep: str) -> list[str]:
    """The fields of one CSV line as RFC 4180 reads them (quoted fields may hold the separator)."""
    try:
        return next(csv.reader([line], delimiter=sep, quotechar='"'), [])
    except csv.Error:  # a stray NUL or an unclosed quote: not a table line
        return []


def _is_header(fields: list[str]) -> bool:
    """Any names RFC 4180 allows, as long as they are not all numbers or blank (then the line is a
    data row). Whether the table is a training log is decided later, by its step and loss columns."""
    names = [f.strip() for f in fields]
    return len(names) >= 2 and any(names) and not all(_CELL.match(n) for n in names)


def _table_separator(lines: list[str]) -> str | None:
    """The separator (tab, comma, semicolon) under which ``lines`` are a header plus mostly numeric
    rows of the header's width, or None."""
    if len(lines) < 2:
        return None
    for sep in ("\t", ",", ";"):
        if sep not in lines[0] or not _is_header(header := _fields(lines[0], sep)):
            continue
        rows = [_fields(ln, sep) for ln in lines[1:]]
        same = [r for r in rows if len(r) == len(header)]
        if len(same) * 2 < len(rows):
            continue
        numeric = sum(1 for r in same for c in r if _CELL.match(c))
        if numeric >= 0.8 * sum(len(r) for r in same) or _numeric_loss(header, same):
            return sep
    return None


def _numeric_loss(header: list[str], rows: list[list[str]]) -> bool:
    """True when a header column is a training loss (by the default aliases) and its cells are
    numbers: a table with text columns (timestamps, tags) is still a training log."""
    losses = [i for i, name in enumerate(header) if not is_eval_key(name) and resolve_key(name, _DEFAULT) == LOSS]
    return bool(rows) and any(sum(1 for r in rows if _CELL.match(r[i])) >= 0.8 * len(rows) for i in losses)


def _head_lines(source: Source) -> list[str]:
    """Up to 30 non-blank lines from the head (the last one dropped when the head may cut it)."""
    lines = [ln for ln in source.head_text().splitlines() if ln.strip()][:30]
    if len(source.head_bytes()) >= 64 * 1024 and len(lines) > 2:
        lines = lines[:-1]
    return lines


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
        return _table_separator(_head_lines(source)) is not None

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        data = source.read_bytes()
        # without carriage returns polars reads the bytes as they are (no decoded copy of the file)
        text = data.decode("utf-8", errors="replace") if b"\r" in data else ""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        # the first lines only: splitting the whole buffer would copy all but them
        head = text.split("\n", 50) if text else data[: _end_of_line(data, 50)].split(b"\n", 50)[:50]
        lines = [ln if isinstance(ln, str) else ln.decode("utf-8", errors="replace") for ln in head[:50]]
        lines = [ln for ln in lines if ln.strip()]
        first = lines[0] if lines else ""
        sep = _table_separator(lines[:30]) or next((s for s in ("\t", ",", ";") if s in first), None)
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
            raise UnreadableTable(f"{source.name}: not a readable CSV table ({first_line})") from None
        frame = frame.rename({c: c.strip() for c in frame.columns})
        readable = objective_of(frame.columns) is not None or eval_loss_columns(
            [c for c in frame.columns if is_eval_key(c)]
        )
        if not readable and not any(resolve_key(c, fields) == LOSS for c in frame.columns if not is_eval_key(c)):
            names = ", ".join(repr(c) for c in frame.columns[:20])
            # loss parts only (YOLO ``train/box_loss``, ``train/cls_loss``): say so first, the
            # message is cut at 400 characters
            hint = refusal_hint(frame.columns)
            raise UnreadableTable(
                f"{source.name}: no record holds a training loss: {hint} (columns: {names})"
                if hint
                else f"{source.name}: no record holds a training loss: no column of the CSV header is one "
                f"(columns: {names}); name it with --map loss=COLUMN"
            )
        frame = frame.with_row_index(LINE_NO, offset=2).with_columns(pl.col(LINE_NO).cast(pl.Int64))
        return normalize_records(frame, fields, source.name, frame.height + 1)
