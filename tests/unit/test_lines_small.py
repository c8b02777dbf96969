"""A small log split into lines by Python (ingest/parsers/lines.py ``_split_small``) gives the rows
polars' CSV reader gives: on edge cases and on every text fixture and real log."""

from __future__ import annotations

import pytest
from polars.testing import assert_frame_equal

from logdoctor.ingest.parsers import lines
from logdoctor.ingest.parsers.lines import read_lines
from tests.conftest import FIXTURES, REALLOGS

EDGES = [
    b"a\nb\n",
    b"a\nb",
    b"\n\na\n\n",
    b"a\n\n\n",
    b"\xef\xbb\xbfa\nb\n",
    b"\xef\xbb\xbf",
    b"\xef\xbb\xbf\n",
    b"\xef\xbb\xbf\xef\xbb\xbfa\n",
    b"x\n\xef\xbb\xbfa\n",
    b"a\rb\n",
    b"a\r\rb\r\n",
    b"\xef\xbb\xbfa\rb",
    b"  \na\n",
    b"a\x00b\n",
    b'"q"\n"x,y"\n',
    b"#c\nx\n",
    b"x\n \n",
    b"a\tb\x1fc\n",
    "\x85x\n\x0b\x0cz\u2028y\n".encode(),
]


def _csv(data: bytes, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        m.setattr(lines, "SMALL_BYTES", -1)
        return read_lines(data)


@pytest.mark.parametrize("data", EDGES, ids=range(len(EDGES)))
def test_edge_cases_split_as_the_csv_reader_splits_them(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lines._split_small(data.replace(b"\r\n", b"\n")) is not None
    assert_frame_equal(read_lines(data), _csv(data, monkeypatch))  # type: ignore[arg-type]


def test_invalid_utf8_is_left_to_the_csv_reader() -> None:
    assert lines._split_small(b"ok\n\xff\xfe bad\n") is None
    assert read_lines(b"ok\n\xff\xfe bad\n")[lines.LINE].to_list() == ["ok", "\ufffd\ufffd bad"]


def test_every_small_text_log_splits_as_the_csv_reader_splits_it(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [p for d in (FIXTURES, REALLOGS) if d.is_dir() for p in sorted(d.rglob("*")) if p.is_file()]
    small = [p.read_bytes() for p in files if p.stat().st_size <= lines.SMALL_BYTES and p.suffix != ".py"]
    checked = 0
    for data in small:
        if lines._split_small(data.replace(b"\r\n", b"\n")) is not None:
            checked += 1
            assert_frame_equal(read_lines(data), _csv(data, monkeypatch))  # type: ignore[arg-type]
    assert checked > 100
