"""Fast path: the lines of a log's dominant template, read a piece at a time as tokens (CSV speed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import pieces as _pieces
from logdoctor.ingest.parsers.lines import DATETIME, LINE, LINE_NO, read_lines
from logdoctor.ingest.parsers.pieces import fewer_lines, head, line_count, lines_at, pieces
from logdoctor.ingest.parsers.textblocks import apply_rules, bare_rules, has_blocks, rewritten
from logdoctor.ingest.parsers.textplan import STRING_COLUMNS, Plan, plan_for, total_loss_keys
from logdoctor.ingest.parsers.textrules import (
    LEVEL_PREFIX,
    RANK_PREFIX,
    VALUE,
    WRAPPED,
    shape_of,
    value_spans,
)
from logdoctor.ingest.parsers.textshape import DURATION, NAN_WORD, Extracted, rows
from logdoctor.ingest.parsers.texttemplate import Token, layout, layouts, token_exprs

__all__ = ["FastRead", "Token", "fast_rows", "layout"]

SAMPLE = 4000
#: Lines the fast path reads: steps, and loss records without a step (HF Trainer's stdout dicts).
_ROLES = ("train", "unstepped")
#: A value in the thousands spelling, as textrules.VALUE reads it whole (``1,284,997``).
_THOUSANDS = r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$"
_WHOLE_VALUE = f"^{VALUE}$"


Rules = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Choice:
    """The dominant template: its line as the general path rewrites it (textblocks: a Keras bar
    becomes ``batches 3/285 |``), its plan, the values of its log-record prefix (the plan's
    indices count from after them) and the rewrites that apply to its lines."""

    line: str
    plan: Plan
    skip: int
    rules: Rules


def _message(rep: str) -> tuple[str, str, int, Rules] | None:
    """The line the fast path reads for ``rep`` (``rep`` itself, or as a bare-record rewrite leaves
    it), the message the general path reads in it (lines.clean: a log-record prefix up to the level
    name dropped), how many values the dropped prefix holds, and the rewrites; None when cleaning
    changes more than a prefix, or the message's values are not the line's last ones."""
    if re.match(RANK_PREFIX, rep) or re.search(WRAPPED, rep):
        return None
    rules = bare_rules(rep)
    line = apply_rules(pl.Series([rep]), rules).item() if rules else rep
    if rewritten(line):
        return None
    msg = re.sub(LEVEL_PREFIX, "", line, count=1)
    if msg != line and (rules or not line.endswith(msg) or re.search(DATETIME, msg)):
        return None
    cut = len(line) - len(msg)
    spans, inner = value_spans(line), value_spans(msg)
    skip = len(spans) - len(inner)
    if [(a - cut, b - cut) for a, b in spans[skip:]] != inner:
        return None
    return line, msg, skip, rules


def _prefix_len(line: str) -> int:
    """Length of the log-record prefix the general path drops from ``line`` (see _message)."""
    return len(line) - len(re.sub(LEVEL_PREFIX, "", line, count=1))


def _choose(frame: pl.DataFrame, fields: FieldMap) -> _Choice | None:
    """The dominant training-line shape of the first lines (as the general path rewrites them),
    when it suits the fast path."""
    raw = frame.head(SAMPLE)[LINE]
    shapes = shape_of(apply_rules(raw))
    sample = pl.DataFrame({LINE: raw, "s": shapes})
    counts = sample.group_by("s").agg(pl.col(LINE).first(), pl.len()).sort("len", descending=True)
    for rep, n in zip(counts[LINE].head(3), counts["len"].head(3), strict=False):
        read = _message(rep)
        if n < sample.height // 10 or read is None:
            continue
        line, msg, skip, rules = read
        if re.search(DURATION, msg):  # the general path reads ``3h 35m`` as one word
            continue
        # planned as the general path plans it (``number of nan_ iterations``): same key names
        plan = plan_for(re.sub(NAN_WORD, r"\g<1> nan_\g<2>", msg), fields)
        # a total loss under another name: the general path reads it and says so in a note
        if plan.role in _ROLES and not plan.derived_step and plan.ppl is None and not total_loss_keys(plan):
            return _Choice(line, plan, skip, rules)
    return None


@dataclass(frozen=True, slots=True)
class FastRead:
    """What the fast path left: the lines it did not read, and the log's physical line count."""

    rest: pl.DataFrame
    lines: int


@dataclass(frozen=True, slots=True)
class _Layout:
    """How the lines of the dominant template are split and read."""

    sep: str
    tokens: list[Token]
    rep: str
    plan: Plan
    #: values of the log-record prefix, before the message's (the plan's indices count from after them)
    skip: int
    #: value index -> the token that holds it
    column: dict[int, int]
    #: the shape of the message, as textshape.extract names it
    shape: str
    #: rewrites applied to each line before it is split (then split as a column, not as CSV)
    rules: Rules


def _used(plan: Plan) -> set[int]:
    """Indices of the values a plan reads."""
    return {*plan.train.values(), *plan.evals.values(), *([plan.total] if plan.total is not None else [])}


def _compile(sep: str, tokens: list[Token], chosen: _Choice) -> _Layout:
    column = {vi: j for j, tok in enumerate(tokens) for vi in tok.values}
    line = chosen.line
    msg = re.sub(NAN_WORD, r"\g<1> nan_\g<2>", line[_prefix_len(line) :])
    shape = shape_of(pl.Series([msg])).item()
    return _Layout(sep, tokens, line, chosen.plan, chosen.skip, column, shape, chosen.rules)


def _best_layout(chosen: _Choice, sample: bytes) -> _Layout | None:
    """The split that reads the most of the first lines (blank-padded counters such as Megatron's
    ``iteration       20/    1000 |`` change the number of blanks, not of ``|``), cheapest first."""
    best: tuple[int, _Layout] | None = None
    lines = line_count(sample)
    used = {i + chosen.skip for i in _used(chosen.plan)}
    for sep, tokens in layouts(chosen.line, used):
        how = _compile(sep, tokens, chosen)
        parsed = _piece_rows(sample, how, 1, lines)
        fits = int(parsed["_ok"].sum()) if parsed is not None else -1
        if best is None or fits > best[0]:
            best = (fits, how)
    return best[1] if best else None


def _tokens(piece: bytes, sep: str, columns: int, encoding: Literal["utf8", "utf8-lossy"]) -> pl.DataFrame:
    """The first ``columns`` ``sep``-separated tokens of each line of ``piece``, String columns
    ``_t0``, ``_t1``, ... (null where a line has fewer)."""
    return pl.read_csv(
        piece,
        has_header=False,
        separator=sep,
        quote_char=None,
        encoding=encoding,
        schema={f"_t{i}": pl.String for i in range(columns)},
        truncate_ragged_lines=True,
        missing_columns="insert",
        extra_columns="ignore",  # a first line longer than the template sets no column count
    )


def _split(lines: pl.Series, sep: str, columns: int) -> pl.DataFrame:
    """``_tokens`` of lines already read (and rewritten): an empty token is null, as read_csv reads it."""
    parts = lines.str.split(sep)
    return pl.DataFrame([parts.list.get(i, null_on_oob=True).replace("", None).alias(f"_t{i}") for i in range(columns)])


def _piece_rows(piece: bytes, how: _Layout, first: int, lines: int) -> pl.DataFrame | None:
    """``_ok``, ``line_no`` (numbered from ``first``) and the typed values (``_v{i}``) of every
    line of one piece of ``lines`` lines; None when its tokens do not line up with its lines."""
    sep, tokens, rep, plan, skip = how.sep, how.tokens, how.rep, how.plan, how.skip
    if how.rules:
        tok = _split(apply_rules(read_lines(piece)[LINE], how.rules), sep, len(tokens) + 1)
    else:
        try:  # strict UTF-8 decodes valid text as the lossy decoder does, ~25% faster
            tok = _tokens(piece, sep, len(tokens) + 1, "utf8")
        except pl.exceptions.ComputeError:  # invalid UTF-8 somewhere in the piece
            tok = _tokens(piece, sep, len(tokens) + 1, "utf8-lossy")
    if tok.height != lines:
        return None
    used = _used(plan)
    ok, values = token_exprs(tokens, rep, {i + skip for i in used})
    names = {i: name for name, i in {**plan.evals, **plan.train}.items()}
    commas = b"," in piece  # scanned once: a piece is megabytes
    columns: list[pl.Expr] = []
    numbers: list[pl.Expr] = []
    for i in sorted(used):
        v, text = pl.col(f"_v{i}"), values[i + skip]
        if names.get(i) in STRING_COLUMNS:  # a fingerprint the general path reads as a value
            columns.append(text.alias(f"_v{i}"))
            ok = ok & v.str.contains(_WHOLE_VALUE)
            continue
        if commas and tok[f"_t{how.column[i + skip]}"].str.contains(",", literal=True).any():
            # ``435,566``: one value to the general path only in the thousands spelling, read without commas
            ok = ok & (~text.str.contains(",", literal=True) | text.str.contains(_THOUSANDS))
            text = text.str.replace_all(",", "", literal=True)
        # nan/inf go to the general path: ``nanms`` holds no value there (no word boundary)
        columns.append(text.cast(pl.Float64, strict=False).alias(f"_v{i}"))
        numbers.append(v)
    if numbers:  # one test for all: the sum is finite only when no value is null, nan or inf (a
        # sum that overflows sends a line of finite values to the general path, which reads it alike)
        ok = ok & pl.sum_horizontal(*numbers, ignore_nulls=False).is_finite()
    # each value is stripped and cast once, in with_columns; the test reads the typed columns
    # (one select holding both strips and casts every value twice: polars does not share them)
    frame = tok.lazy().with_columns(*columns)
    line_no = pl.int_range(first, first + tok.height, dtype=pl.Int64).alias(LINE_NO)
    typed = (pl.col(f"_v{i}") for i in sorted(used))
    return frame.select(ok.fill_null(False).alias("_ok"), line_no, *typed).collect()


@dataclass(frozen=True, slots=True)
class _PieceRead:
    """One piece read: its template lines' values and its other lines' text (None when there are
    none), with their line numbers, and its line count."""

    kept: pl.DataFrame
    rest: pl.DataFrame | None
    lines: int


def _read_piece(piece: bytes, how: _Layout, first: int) -> _PieceRead | None:
    """The lines of ``piece``, whose first line is line ``first`` of the log."""
    lines = line_count(piece)  # bytes.count: ~10x cheaper than finding each newline
    parsed = _piece_rows(piece, how, first, lines)
    if parsed is None:
        return None
    ok = parsed["_ok"]
    if ok.all():  # every line is a template line (the usual piece): nothing to hand on
        return _PieceRead(parsed, None, lines)
    return _PieceRead(parsed.filter(ok), lines_at(piece, np.flatnonzero(~ok.to_numpy()), first), lines)


def fast_rows(data: bytes, fields: FieldMap, out: Extracted) -> FastRead | None:
    """Read the lines of the dominant template at CSV speed, a piece of the log at a time (so
    that no table of every line's tokens or text is ever built); None when the log does not suit
    the fast path (then nothing was added to ``out``)."""
    if b"\x1b" in data or b"\x08" in data or fewer_lines(data, _pieces.FAST_MIN_LINES):
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    sample = head(data, SAMPLE)
    opening = read_lines(sample)
    if has_blocks(opening[LINE]):  # records over several lines are joined by the general path
        return None
    chosen = _choose(opening, fields)
    how = _best_layout(chosen, sample) if chosen else None
    if chosen is None or how is None:
        return None
    plan = chosen.plan
    kept: list[pl.DataFrame] = []
    rest: list[pl.DataFrame] = []
    first = 1
    for piece in pieces(data):
        read = _read_piece(piece, how, first)
        if read is None:
            return None
        kept.append(read.kept)
        if read.rest is not None:
            rest.append(read.rest)
        first += read.lines
    table = pl.concat(kept)
    rows(table, plan, out, value=lambda i: pl.col(f"_v{i}"), cast=False, shape=how.shape)
    out.aliases.update(plan.aliases)
    if plan.role == "unstepped":  # as textshape.extract counts and names them
        out.skips["no step"] += table.height
        out.keys_seen.update(plan.train, plan.evals)
    return FastRead(pl.concat(rest) if rest else read_lines(b""), first - 1)
