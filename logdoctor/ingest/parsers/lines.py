"""Read a text log into (line_no, line) rows: bad bytes replaced, CRLF/CR and tqdm handled."""

from __future__ import annotations

import re

import polars as pl

from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.textrules import ANSI, BAR_GLUED, GLUED_RECORD, LEVEL_PREFIX, RANK_PREFIX, WRAPPED

LINE_NO = "line_no"
LINE = "line"
#: Logs up to this size are split into lines by Python (``_split_small``), larger ones by polars' CSV reader.
SMALL_BYTES = 1 << 20


def read_lines(data: bytes) -> pl.DataFrame:
    """Split raw bytes into physical lines numbered from 1, without a Python loop per line.

    Undecodable bytes are replaced, ``\\r\\n`` ends a line, and a lone ``\\r`` (tqdm redrawing a
    progress bar) or a run of backspaces (``rewind``) splits a physical line into segments that keep
    its line number. A last line without a newline is kept.
    """
    if b"\x1f" in data:  # our column separator below: never part of a real log
        data = data.replace(b"\x1f", b" ")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    data = rewind(data)
    if not data or data.isspace():
        return pl.DataFrame(schema={LINE_NO: pl.Int64, LINE: pl.String})
    frame = _split_small(data) if len(data) <= SMALL_BYTES else None
    if frame is None:
        frame = pl.read_csv(
            data,
            has_header=False,
            separator="\x1f",
            quote_char=None,
            schema={LINE: pl.String},
            truncate_ragged_lines=True,
            encoding="utf8-lossy",
        )
        frame = frame.with_columns(pl.col(LINE).fill_null("")).with_row_index(LINE_NO, offset=1)
        frame = frame.with_columns(pl.col(LINE_NO).cast(pl.Int64))
    if b"\r" in data:
        frame = (
            frame.with_columns(pl.col(LINE).str.split("\r")).explode(LINE).filter(pl.col(LINE).str.strip_chars() != "")
        )
    if b"%|" in data and frame[LINE].str.contains(BAR_GLUED).any():
        glued = pl.col(LINE).str.replace(BAR_GLUED, "${1}\r${2}")
        frame = frame.with_columns(glued.str.split("\r")).explode(LINE)
    return frame


def rewind(data: bytes) -> bytes:
    """``data`` with each run of backspaces read as a carriage return: a progress bar that redraws
    itself without a terminal rewinds its line with backspaces (Keras 3 ``Progbar`` writes
    ``\\b`` x the last width, then ``\\r``, before each update), so the text after the run replaces
    the text before it, as a lone ``\\r`` does."""
    if b"\x08" not in data:
        return data
    return _BACKSPACES.sub(b"\r", data)


_BACKSPACES = re.compile(rb"\x08+")


def _split_small(data: bytes) -> pl.DataFrame | None:
    """The rows ``pl.read_csv`` makes of ``data`` (valid UTF-8), split by Python: for a small log its first
    call costs ~3-8 ms, this ~1 ms. None for invalid UTF-8 (polars' lossy decoding is left to decide)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.removeprefix("\ufeff")  # the CSV reader drops a leading byte-order mark
    if not text:
        return pl.DataFrame(schema={LINE_NO: pl.Int64, LINE: pl.String})
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    numbers = pl.Series(LINE_NO, range(1, len(lines) + 1), dtype=pl.Int64)
    return pl.DataFrame([numbers, pl.Series(LINE, lines, dtype=pl.String)])


#: A calendar date with a clock time, anywhere in a message.
DATETIME = r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b"


def clean(frame: pl.DataFrame) -> pl.DataFrame:
    """Strip ANSI colour codes, rank prefixes (``[rank0]:``, ``0: ``), numpy/torch scalar
    wrappers (``np.float64(2.5)`` -> ``2.5``), log-record prefixes up to the level name and a C++
    log record glued after a message (textrules.GLUED_RECORD), so that only the message is left
    to read.
    """
    line = pl.col(LINE)
    if frame.height == 0:  # every line was read by the fast path: keep the schema
        return frame.with_columns(line.alias("msg"))
    if frame[LINE].str.contains("\x1b", literal=True).any():
        frame = frame.with_columns(line.str.replace_all(ANSI, ""))
    text = Lines.of(frame[LINE])
    if text.contains(frame[LINE], RANK_PREFIX):
        frame = frame.with_columns(line.str.replace(RANK_PREFIX, ""))
        text = Lines.of(frame[LINE])
    if text.contains(frame[LINE], WRAPPED):
        frame = frame.with_columns(line.str.replace_all(WRAPPED, "${1}"))
        text = Lines.of(frame[LINE])
    message = line.str.replace(LEVEL_PREFIX, "") if text.may_match(LEVEL_PREFIX) else line  # no level name: all message
    frame = frame.with_columns(message.alias("msg"))
    if text.contains(frame["msg"], GLUED_RECORD):
        # a C++ log record written into a line that had no newline yet ends the line's own message
        frame = frame.with_columns(pl.col("msg").str.replace(GLUED_RECORD, ""))
    if text.contains(frame["msg"], DATETIME):
        # a date-time inside the message (Coqui ``--> TIME: 2025-08-19 14:22:56 -- STEP``) is no
        # value: read as one it became a ``time`` column of 2025.0
        frame = frame.with_columns(pl.col("msg").str.replace_all(DATETIME, "datetime"))
    return frame
