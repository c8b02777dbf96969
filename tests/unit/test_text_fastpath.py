"""The text fast path (polars tokens, a piece of the log at a time) reads every log exactly as the
general per-shape path does: every fixture and every real log, forced through both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import pieces, textfast
from logdoctor.model import Run
from tests.conftest import FIXTURES

TEXT_SUFFIXES = (".log", ".txt", ".out", ".md")
#: Small pieces, so that a made-up log is tokenised in several pieces.
SMALL_PIECE = 2048
#: Pieces each fixture and real log is cut into (of at least MIN_PIECE bytes): seams at varied places
#: in every log, without the fixed cost of a 2 KB piece (~1,300 pieces for a 2.7 MB real log; a
#: 60 KB fixture's 30 pieces cost three times its 8).
PIECES = 8
MIN_PIECE = 512


def _piece(path: Path) -> int:
    """The piece size that cuts ``path`` into about PIECES pieces."""
    return max(MIN_PIECE, path.stat().st_size // PIECES)


def _text_logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)


def _load(path: Path, fast: bool, monkeypatch: pytest.MonkeyPatch, piece: int = SMALL_PIECE) -> Run | str:
    monkeypatch.setattr(pieces, "FAST_MIN_LINES", 0 if fast else 10**9)
    monkeypatch.setattr(pieces, "PIECE_BYTES", piece)
    try:
        return pipeline.load(str(path), fmt="text")
    except LogdoctorError as err:
        return str(err)


def _fast_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Lines the fast path read itself (0 when it declined the log), the log in one piece (whether it
    takes a log on is decided on the log's head, whatever the pieces; cut in 2 KB pieces this count
    cost as much as the comparisons below)."""
    monkeypatch.setattr(pieces, "FAST_MIN_LINES", 0)
    from logdoctor.ingest.parsers.textshape import Extracted

    fast = textfast.fast_rows(path.read_bytes(), FieldMap(), Extracted())
    return fast.lines - fast.rest.height if fast else 0


def assert_same_run(path: Path, monkeypatch: pytest.MonkeyPatch, piece: int = SMALL_PIECE) -> None:
    fast, slow = _load(path, True, monkeypatch, piece), _load(path, False, monkeypatch, piece)
    if isinstance(slow, str) or isinstance(fast, str):
        assert fast == slow
        return
    assert_frame_equal(fast.table, slow.table)
    assert_frame_equal(fast.evals, slow.evals)
    assert fast.meta == slow.meta


FIXTURE_LOGS = _text_logs(FIXTURES)


def test_fixtures_exercise_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    read = [_fast_read(p, monkeypatch) for p in FIXTURE_LOGS]
    assert sum(n > 0 for n in read) >= 20  # the comparison below is not vacuous


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=[p.name for p in FIXTURE_LOGS])
def test_fast_path_equals_general_path_on_fixtures(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_same_run(path, monkeypatch, _piece(path))


@pytest.mark.reallogs
def test_fast_path_equals_general_path_on_real_logs(reallogs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _text_logs(reallogs_dir)
    assert len(logs) >= 25
    for path in logs:
        assert_same_run(path, monkeypatch, _piece(path))


def test_pieces_cut_after_newlines_and_cover_the_data() -> None:
    data = b"".join(f"line {i} ".encode() * (i % 7) + b"\n" for i in range(500)) + b"tail"
    parts = list(pieces.pieces(data, 100))
    assert b"".join(parts) == data and len(parts) > 5
    assert all(p.endswith(b"\n") for p in parts[:-1])
    assert sum(pieces.line_count(p) for p in parts) == pieces.line_count(data) == 501


def test_lines_at_reads_chosen_lines_like_read_lines() -> None:
    piece = b"a 1\nb\xff 2\n\nc\x1fd\r\nlast"
    got = pieces.lines_at(piece, np.array([1, 2, 3, 4]), first_line=10)
    assert got["line_no"].to_list() == [11, 12, 13, 14]
    assert got["line"].to_list() == ["b\ufffd 2", "", "c d", "last"]


def _mixed_log(n: int) -> bytes:
    """Template lines with the values the general path reads differently mixed in."""
    out = ["[config] a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16"]
    odd = [
        "step {s} | loss=nan t=12ms fp=0badc0de",  # nan: general path
        "step {s} | loss=2.5 t=nanms fp=0badc0de",  # ``nanms`` is no value there
        "step {s} | loss=2.5 t=12ms fp=xyz",  # not a fingerprint
        "step {s} | loss=1,234.5 t=12ms fp=0badc0de",  # thousands separator
        "step {s} | loss=2.5 t=3h 35m fp=0badc0de",  # longer line, a duration
        "step {s} | loss=2.5  t=12ms fp=0badc0de",  # two blanks
    ]
    for s in range(1, n + 1):
        out.append(f"step {s} | loss={1 + (s % 97) / 50:.4f} t={s % 13}ms fp={s * 2654435761 % 2**32:08x}")
        if s % 37 == 0:
            out.append(odd[(s // 37) % len(odd)].format(s=s))
    return ("\n".join(out) + "\n").encode()


def test_fast_path_hands_what_it_cannot_read_to_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mixed.log"
    path.write_bytes(_mixed_log(3000))
    assert _fast_read(path, monkeypatch) > 2900
    assert_same_run(path, monkeypatch)


def test_head_and_line_count_agree_with_a_plain_loop() -> None:
    """pieces.head and pieces.line_count (numpy scans) against bytes.find / bytes.count."""
    rng = np.random.default_rng(5)
    parts = [b"\n", b"a", b"bb\n", b"x" * 700 + b"\n", b"", b"\r\n"]
    for _ in range(400):
        data = b"".join(parts[i] for i in rng.integers(0, len(parts), rng.integers(0, 60)))
        lines = int(rng.integers(0, 70))
        end = -1
        for _ in range(lines):
            end = data.find(b"\n", end + 1)
            if end < 0:
                break
        expected = data if lines and end < 0 else data[: end + 1]
        assert pieces.head(data, lines) == expected
        assert pieces.line_count(data) == data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))


@pytest.mark.parametrize("odd", [b"caf\xc3\xa9 warm-up", b"bad byte \xff here"], ids=["utf8", "invalid"])
def test_fast_path_reads_non_ascii_pieces_as_the_general_path(
    odd: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Strict UTF-8 first, the lossy decoder when a piece is not valid UTF-8: the same rows."""
    lines = _mixed_log(3000).split(b"\n")
    lines[1500] = odd
    lines[2000] = b"step 2000 | loss=2.5 t=12ms fp=" + odd  # a template-shaped line with the odd bytes
    path = tmp_path / "odd.log"
    path.write_bytes(b"\n".join(lines))
    assert _fast_read(path, monkeypatch) > 2900
    assert_same_run(path, monkeypatch)


def test_layout_splits_where_lines_have_fewest_tokens() -> None:
    split = textfast.layout("step 5/100 | loss=2.5 acc=0.5 lr=3e-4")
    assert split is not None
    sep, tokens = split
    assert sep == "=" and len(tokens) == 4
    assert [t.suffix for t in tokens[:3]] == [" | loss", " acc", " lr"]
    blank = textfast.layout("step: 5 loss: 2.5 acc: 0.5")
    assert blank is not None and blank[0] == " " and len(blank[1]) == 6
    assert textfast.layout("no values here") == (" ", [textfast.Token(w, ()) for w in ("no", "values", "here")])


def test_values_whose_sum_overflows_are_read_by_the_general_path_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path tests all of a line's values at once (their sum is finite); two values near
    the float limit overflow that sum, and the general path reads the line the same way."""
    big = [1e308 if s % 50 == 0 else 1.5 for s in range(3001)]
    rows = [f"step {s} | loss={1 + s % 7 / 10} grad_norm={big[s]} tok/s={big[s]}" for s in range(1, 3001)]
    path = tmp_path / "big.log"
    path.write_text("\n".join(rows) + "\n")
    assert 2900 < _fast_read(path, monkeypatch) < 3000
    assert_same_run(path, monkeypatch)
