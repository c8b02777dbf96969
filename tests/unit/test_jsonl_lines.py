"""JSON-lines splitting: the polars split gives the lines the per-line Python split gives."""

from __future__ import annotations

import polars as pl
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logdoctor.ingest.parsers import jsonl
from logdoctor.ingest.sources import Source


def _python_lines(data: bytes) -> pl.DataFrame:
    """The reference: decode with replacement, CR/CRLF end lines, split, strip."""
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    frame = pl.DataFrame({"line": pl.Series(lines, dtype=pl.String)}).with_row_index("line_no", offset=1)
    return frame.with_columns(pl.col("line").str.strip_chars(), pl.col("line_no").cast(pl.Int64))


PIECES = [b'{"a": 1}', b"\n", b" ", b"\t", b"\r", b"\r\n", b"\xff", b"\xc3\xa9", b"\x1f", b"#", b'"', b"\x0b", b"x"]


@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_lines_equal_the_python_split(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert_frame_equal(jsonl._lines(Source.from_bytes("x.jsonl", data)), _python_lines(data))


def test_utf8_logs_take_the_polars_split() -> None:
    data = b'{"loss": 1}\n\n  {"loss": 2, "k": "\xc3\xa9"}\n'
    assert_frame_equal(jsonl._split(data), _python_lines(data))
