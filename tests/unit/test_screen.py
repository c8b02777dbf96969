"""The literal screen (ingest/parsers/screen.py) never rules out a line that polars' regex matches,
and rules out the usual lines of a small log, so that their queries are skipped."""

from __future__ import annotations

import polars as pl
import pytest

from logdoctor.ingest.parsers import (
    evalsections,
    events,
    lexicon,
    lines,
    markers,
    metereval,
    overflows,
    statedclasses,
    text,
    textblocks,
    textshape,
)
from logdoctor.ingest.parsers.screen import Lines, needs
from logdoctor.ingest.parsers.textrules import GLUED_RECORD, LEVEL_PREFIX, RANK_PREFIX, WRAPPED
from tests.conftest import FIXTURES, REALLOGS

#: Every pattern a parser screens before its query (see the modules' ``Lines`` uses).
SCREENED = (
    *(p for p, _ in textblocks._BARE),
    textblocks.BATCH_LINE,
    textblocks._CKPT,
    text.RESTART_MARK,
    textshape.NAN_WORD,
    textshape.DASHED_KEY,
    textshape.AT_KEY,
    RANK_PREFIX,
    WRAPPED,
    LEVEL_PREFIX,
    GLUED_RECORD,
    lines.DATETIME,
    markers.EPOCH_START,
    markers.EPOCH_END,
    markers.EPOCH_BAR,
    markers.EPOCH_COUNT_START,
    markers.BAR_COUNT,
    markers.RESUME_LINE,
    markers.RUN_HEADER,
    markers._RESUME_STEP,
    markers._NUM_EPOCHS,
    markers._ACCUM,
    markers._PLANNED,
    markers._SAMPLES,
    markers._CONFIG_PLAN,
    markers._EPOCH_BATCHES,
    markers._OTHER,
    statedclasses.STATED,
    statedclasses.VOCAB,
    "(?i)overflow",
    overflows.SKIP_COUNTER,
    *(k.pattern for k in lexicon.SIGNALS),
    lexicon.TRACEBACK,
    events.CHAINED,
    markers._PATIENCE,
    markers._EPOCH_NUM,
    textblocks._COCO_LITERAL,
    evalsections.HEADER.pattern,
    metereval.METER_EVAL,
)
SUFFIXES = (".log", ".txt", ".out", ".md")
REAL = REALLOGS


@pytest.fixture(scope="module")
def all_lines() -> pl.Series:
    """One line of each shape (digits aside) of every text fixture and real log under 1 MB."""
    files = [p for d in (FIXTURES, REALLOGS) if d.is_dir() for p in sorted(d.rglob("*"))]
    texts = [p.read_bytes() for p in files if p.is_file() and p.suffix in SUFFIXES and p.stat().st_size < 1_000_000]
    every = pl.Series("line", b"\n".join(texts).replace(b"\r", b"\n").decode("utf-8", "replace").split("\n"))
    return pl.DataFrame({"line": every, "shape": every.str.replace_all(r"\d+", "0")}).unique(
        "shape", keep="first", maintain_order=True
    )["line"]


@pytest.mark.parametrize("pattern", SCREENED, ids=range(len(SCREENED)))
def test_no_line_polars_matches_is_ruled_out(all_lines: pl.Series, pattern: str) -> None:
    hits = all_lines.filter(all_lines.str.contains(pattern))
    missed = [line for line in hits.to_list() if not Lines.of(pl.Series([line])).may_match(pattern)]
    assert missed == []


def _flat(need: tuple[object, ...]) -> list[object]:
    """The requirement with its nesting of single parts dropped: literals as (text, any case)."""
    if need[0] == "lit":
        return [need[1:]]
    parts = [_flat(n) for n in need[1]]  # type: ignore[attr-defined]
    if need[0] == "or":
        return [("or", parts)]
    return [x for p in parts for x in p]


def test_literals_of_a_pattern() -> None:
    assert _flat(needs(r"^\s*(\d+) train (\S+)\s*$")) == [(" train ", False)]
    either = ("or", [[("update", True)], [("steps", True)]])
    assert _flat(needs(r"(?i)max_(?:update|steps)")) == [("max_", True), either]
    assert _flat(needs(r"a?b*(?:c|d*)")) == []  # optional parts, and an alternative that needs nothing
    assert _flat(needs(r"(ab)+x(?i:y)c{2}")) == [("ab", False), ("x", False), ("y", True), ("c", False)]


@pytest.mark.parametrize(
    "pattern",
    [
        r"[[:alpha:]]+x",
        r"\p{L}x",
        r"[a&&b]x",
        r"(?x) a b",
        r"\x{41}",
        r"[[a]b]c",
        "(?i)é",
        r"(?P<k>x)",
        r"(unclosed",
        r"\<word\>",
        r"\b{start}x",
    ],
)
def test_syntax_read_otherwise_by_rust_is_not_screened(pattern: str) -> None:
    assert needs(pattern) == ("and", ())
    assert Lines.of(pl.Series(["nothing here"])).may_match(pattern)


def test_screen_rules_out_what_cannot_match() -> None:
    canonical = Lines.of(pl.Series(["step 10/400 | loss=2.5 acc=0.1 lr=3e-4 epoch=0 | batch: n_seq=8 tokens=4096"]))
    assert not any(canonical.may_match(p) for p, _ in textblocks._BARE)
    assert not canonical.may_match(textblocks.BATCH_LINE)
    assert not canonical.may_match_any([k.pattern for k in lexicon.SIGNALS])
    assert canonical.may_match(markers.EPOCH_START)  # ``epoch`` is there: the query decides


def test_any_case_literals_only_on_ascii_text() -> None:
    assert not Lines.of(pl.Series(["plain text"])).may_match("(?i)overflow")
    assert Lines.of(pl.Series(["GRADIENT OVERFLOW"])).may_match("(?i)overflow")
    # polars folds case the Unicode way (the Kelvin sign is a k): non-ASCII text is not screened
    assert Lines.of(pl.Series(["\u212a"])).may_match("(?i)k")
    assert not Lines.of(pl.Series(["\u212a"])).may_match("k")


def test_large_inputs_are_not_screened(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.ingest.parsers import screen

    monkeypatch.setattr(screen, "MAX_LINES", 1)
    assert Lines.of(pl.Series(["a", "b"])).may_match("zzz")


def test_a_non_ascii_literal_is_screened_only_where_case_never_folds() -> None:
    """Keras 3's bar ``━`` is one character to both engines; under case folding a non-ASCII letter can
    match ASCII text (the Kelvin sign U+212A folds to 'k'), so a case-insensitive one is not screened."""
    plain = Lines.of(pl.Series(["step 10/400 | loss=2.5"]))
    assert not plain.may_match(r"^\s*(\d+)/(\d+) ━+ [^-]* - ")
    assert Lines.of(pl.Series(["12/477 ━━━━ 3s 7ms/step - loss: 0.5"])).may_match(r"^\s*(\d+)/(\d+) ━+ [^-]* - ")
    assert not plain.may_match("é") and Lines.of(pl.Series(["café"])).may_match("é")
    assert plain.may_match("(?i)\u212a") and plain.may_match("(?i:é)x")
