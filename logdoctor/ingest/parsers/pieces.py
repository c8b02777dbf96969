"""Line-aligned pieces of a log's bytes, and the text of chosen lines without reading every line."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO, read_lines

#: Bytes per piece the fast path tokenises at once: bounds its working memory (~4x a piece).
PIECE_BYTES = 24 * 1024 * 1024
#: Below this many lines the general path is fast enough (the fast path, textfast.py, is not loaded).
FAST_MIN_LINES = 20_000
_NL = 10


def line_count(data: bytes) -> int:
    """Physical lines in ``data`` (a last line without a newline counts)."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def fewer_lines(data: bytes, n: int) -> bool:
    """True when ``data`` has fewer than ``n`` lines (without counting the newlines of a big log)."""
    return len(head(data, n)) == len(data) and line_count(data) < n


def head(data: bytes, lines: int) -> bytes:
    """The first ``lines`` lines of ``data`` (all of it when shorter)."""
    if lines <= 0:
        return b""
    view = np.frombuffer(data, dtype=np.uint8)
    span = 256 * lines  # a guess at their length, doubled until it holds them
    while True:
        ends = np.flatnonzero(view[:span] == _NL)
        if ends.size >= lines:
            return data[: int(ends[lines - 1]) + 1]
        if span >= len(data):
            return data
        span *= 2


def pieces(data: bytes, size: int | None = None) -> Iterator[bytes]:
    """``data`` cut after a newline roughly every ``size`` bytes (default PIECE_BYTES)."""
    size = size or PIECE_BYTES
    start = 0
    while start < len(data):
        cut = data.find(b"\n", start + size) if start + size < len(data) else -1
        end = len(data) if cut < 0 else cut + 1
        yield data[start:end]
        start = end


def newlines(data: bytes) -> np.ndarray:
    """Offsets of the newlines in ``data``."""
    return np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NL)


def lines_at(piece: bytes, rows: np.ndarray, first_line: int, ends: np.ndarray | None = None) -> pl.DataFrame:
    """The (line_no, line) rows of the 0-based line indices ``rows`` of ``piece``, as read_lines
    reads them; ``first_line`` is the line number of the piece's first line; ``ends``: the piece's
    newline offsets (:func:`newlines`) when already known."""
    if rows.size == 0:
        return pl.DataFrame(schema={LINE_NO: pl.Int64, LINE: pl.String})
    ends = newlines(piece) if ends is None else ends
    starts = np.concatenate(([0], ends + 1))
    ends = np.concatenate((ends, [len(piece)]))
    picked = b"\n".join(piece[starts[i] : ends[i]] for i in rows.tolist()) + b"\n"
    frame = read_lines(picked)
    if frame.height != rows.size:  # a blank or \r-split picked line: read the piece whole
        whole = read_lines(piece)
        return whole[rows].with_columns(pl.col(LINE_NO) + (first_line - 1))
    return frame.with_columns(pl.Series(LINE_NO, rows + first_line, dtype=pl.Int64))
