"""Fast path for logs whose metric lines are single-blank separated tokens of one template."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.lines import LINE, LINE_NO, read_lines
from logdoctor.ingest.parsers.pieces import head, line_count, lines_at, newlines, pieces
from logdoctor.ingest.parsers.textplan import STRING_COLUMNS, Plan, plan_for, total_loss_keys
from logdoctor.ingest.parsers.textrules import (
    LEVEL_PREFIX,
    RANK_PREFIX,
    SHAPE_VALUE,
    VALUE,
    WRAPPED,
    value_spans,
)
from logdoctor.ingest.parsers.textshape import DURATION, NAN_WORD, Extracted, rows

#: Below this many lines the general path is fast enough.
MIN_LINES = 20_000
SAMPLE = 4000
_PREFIXED = re.compile(f"{LEVEL_PREFIX}|{RANK_PREFIX}")
_WRAPPED = re.compile(WRAPPED)
_NAN_WORD = re.compile(NAN_WORD)
_DURATION = re.compile(DURATION)
_WHOLE_VALUE = f"^{VALUE}$"


@dataclass(frozen=True, slots=True)
class Token:
    """One blank-separated token of the template: literal text, or text around values."""

    text: str
    values: tuple[int, ...]
    prefix: str = ""
    suffix: str = ""


def template(line: str, sep: str = " ") -> list[Token] | None:
    """Split a representative line into ``sep``-separated tokens; None when a value straddles two."""
    spans = value_spans(line)
    tokens: list[Token] = []
    pos = 0
    vi = 0
    for text in line.split(sep):
        end = pos + len(text)
        inside: list[int] = []
        while vi < len(spans) and spans[vi][0] < end:
            if spans[vi][0] < pos or spans[vi][1] > end:
                return None
            inside.append(vi)
            vi += 1
        if inside:
            first, last = spans[inside[0]], spans[inside[-1]]
            tokens.append(Token(text, tuple(inside), line[pos : first[0]], line[last[1] : end]))
        else:
            tokens.append(Token(text, ()))
        pos = end + 1
    return tokens


def _strip(col: pl.Expr, tok: Token) -> pl.Expr:
    """The token without its literal prefix and suffix."""
    # rows without the prefix or suffix are rejected by _affixed, so the affixes' lengths are cut
    # off unchecked: tail/head by a negative count are ~2x cheaper than slice or strip_*
    if tok.prefix:
        col = col.str.tail(-len(tok.prefix))
    return col.str.head(-len(tok.suffix)) if tok.suffix else col


def _affixed(col: pl.Expr, tok: Token) -> pl.Expr:
    """True where the token has the template's prefix and suffix."""
    ok = col.str.starts_with(tok.prefix) if tok.prefix else col.is_not_null()
    return ok & col.str.ends_with(tok.suffix) if tok.suffix else ok


def _inner_separator(tok: Token, line: str) -> str | None:
    """The one text between every two values of a token (``/`` in ``254/52000``), if there is one."""
    spans = value_spans(line)
    seps = {
        line[spans[a][1] : spans[b][0]] for a, b in zip(tok.values, tok.values[1:], strict=False)
    }
    if len(seps) != 1:
        return None
    return seps.pop() or None


def _multi(col: pl.Expr, tok: Token, line: str) -> tuple[pl.Expr, dict[int, pl.Expr]]:
    """Values of a token that holds several (``254/52000``): split on one repeated separator when
    the template allows, else an anchored regex."""
    spans = value_spans(line)
    k = len(tok.values)
    if sep := _inner_separator(tok, line):
        body = _strip(col, tok)
        parts = body.str.split_exact(sep, k - 1)
        ok = _affixed(col, tok) & body.str.count_matches(sep, literal=True).eq(k - 1)
        return ok, {vi: parts.struct[j] for j, vi in enumerate(tok.values)}
    pieces, prev = [re.escape(tok.prefix)], spans[tok.values[0]][0]
    for vi in tok.values:
        pieces.append(re.escape(line[prev : spans[vi][0]]) + f"({VALUE})")
        prev = spans[vi][1]
    groups = col.str.extract_groups("^" + "".join(pieces) + re.escape(tok.suffix) + "$")
    return groups.struct[0].is_not_null(), {vi: groups.struct[j] for j, vi in enumerate(tok.values)}


def _token_exprs(tokens: list[Token], line: str) -> tuple[pl.Expr, dict[int, pl.Expr]]:
    """The expression that says a row fits the template, and a String expression per value index."""
    ok = pl.col(f"_t{len(tokens)}").is_null()
    values: dict[int, pl.Expr] = {}
    for j, tok in enumerate(tokens):
        col = pl.col(f"_t{j}")
        if not tok.values:
            ok = ok & (col == tok.text)
        elif len(tok.values) == 1:
            ok = ok & _affixed(col, tok)
            values[tok.values[0]] = _strip(col, tok)
        else:
            fits, vals = _multi(col, tok, line)
            ok = ok & fits
            values.update(vals)
    return ok, values


def _choose(frame: pl.DataFrame, fields: FieldMap) -> tuple[str, Plan] | None:
    """The dominant training-line shape of the first lines, when it suits the fast path."""
    sample = frame.head(SAMPLE).select(
        LINE, pl.col(LINE).str.replace_all(SHAPE_VALUE, "#").alias("s")
    )
    counts = sample.group_by("s").agg(pl.col(LINE).first(), pl.len()).sort("len", descending=True)
    for rep, n in zip(counts[LINE].head(3), counts["len"].head(3), strict=False):
        if n < sample.height // 10 or _PREFIXED.match(rep) or _WRAPPED.search(rep):
            continue
        if _DURATION.search(rep):  # the general path reads ``3h 35m`` as one word
            continue
        # planned as the general path plans it (``number of nan_ iterations``): same key names
        plan = plan_for(_NAN_WORD.sub(r"\g<1> nan_\g<2>", rep), fields)
        # a total loss under another name: the general path reads it and says so in a note
        if plan.role == "train" and not plan.derived_step and plan.ppl is None and not total_loss_keys(plan):
            return rep, plan
    return None


@dataclass(frozen=True, slots=True)
class FastRead:
    """What the fast path left: the lines it did not read, and the log's physical line count."""

    rest: pl.DataFrame
    lines: int


#: Characters the fast path may split lines on: between tokens (``a=1 b=2``) or between a key and
#: its value; never part of a value (textrules.VALUE).
SEPARATORS = (" ", "=")


def _split_cost(tokens: list[Token], line: str) -> int:
    """Work to read a line split into ``tokens``: a column each, and a regex for a token whose
    values are not split on one repeated separator."""
    regex = sum(len(t.values) > 1 and _inner_separator(t, line) is None for t in tokens)
    return len(tokens) + 20 * regex


def layout(line: str) -> tuple[str, list[Token]] | None:
    """How to split lines of the representative ``line``: the separator whose tokens are cheapest
    to read (fewest columns: ``=`` for ``key=value`` lines, a blank for ``key: value`` lines), and
    the tokens; None when every separator cuts a value."""
    splits = [(sep, tokens) for sep in SEPARATORS if sep in line and (tokens := template(line, sep))]
    if not splits:
        return None
    return min(splits, key=lambda st: _split_cost(st[1], line))


@dataclass(frozen=True, slots=True)
class _Layout:
    """How the lines of the dominant template are split and read."""

    sep: str
    tokens: list[Token]
    rep: str
    plan: Plan


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


def _piece_rows(piece: bytes, how: _Layout, first: int, lines: int) -> pl.DataFrame | None:
    """``_ok``, ``line_no`` (numbered from ``first``) and the typed values (``_v{i}``) of every
    line of one piece of ``lines`` lines; None when its tokens do not line up with its lines."""
    sep, tokens, rep, plan = how.sep, how.tokens, how.rep, how.plan
    try:  # strict UTF-8 decodes valid text as the lossy decoder does, ~25% faster
        tok = _tokens(piece, sep, len(tokens) + 1, "utf8")
    except pl.exceptions.ComputeError:  # invalid UTF-8 somewhere in the piece
        tok = _tokens(piece, sep, len(tokens) + 1, "utf8-lossy")
    if tok.height != lines:
        return None
    ok, values = _token_exprs(tokens, rep)
    used = {
        *plan.train.values(),
        *plan.evals.values(),
        *([plan.total] if plan.total is not None else []),
    }
    names = {i: name for name, i in {**plan.evals, **plan.train}.items()}
    columns: list[pl.Expr] = []
    numbers: list[pl.Expr] = []
    for i in sorted(used):
        v = pl.col(f"_v{i}")
        if names.get(i) in STRING_COLUMNS:  # a fingerprint the general path reads as a value
            columns.append(values[i].alias(f"_v{i}"))
            ok = ok & v.str.contains(_WHOLE_VALUE)
        else:  # nan/inf go to the general path: ``nanms`` holds no value there (no word boundary)
            columns.append(values[i].cast(pl.Float64, strict=False).alias(f"_v{i}"))
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
    ends = newlines(piece)  # counts the lines, and finds the lines left to the general path
    lines = ends.size + (not piece.endswith(b"\n"))
    parsed = _piece_rows(piece, how, first, lines)
    if parsed is None:
        return None
    ok = parsed["_ok"]
    if ok.all():  # every line is a template line (the usual piece): nothing to hand on
        return _PieceRead(parsed, None, lines)
    return _PieceRead(parsed.filter(ok), lines_at(piece, np.flatnonzero(~ok.to_numpy()), first, ends), lines)


def _fewer_lines(data: bytes, n: int) -> bool:
    """True when ``data`` has fewer than ``n`` lines (without counting the newlines of a big log)."""
    return len(head(data, n)) == len(data) and line_count(data) < n


def fast_rows(data: bytes, fields: FieldMap, out: Extracted) -> FastRead | None:
    """Read the lines of the dominant template at CSV speed, a piece of the log at a time (so
    that no table of every line's tokens or text is ever built); None when the log does not suit
    the fast path (then nothing was added to ``out``)."""
    if b"\x1b" in data or _fewer_lines(data, MIN_LINES):
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None
    chosen = _choose(read_lines(head(data, SAMPLE)), fields)
    split = layout(chosen[0]) if chosen else None
    if chosen is None or split is None:
        return None
    rep, plan = chosen
    sep, tokens = split
    how = _Layout(sep, tokens, rep, plan)
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
    rows(pl.concat(kept), plan, out, value=lambda i: pl.col(f"_v{i}"), cast=False)
    out.aliases.update(plan.aliases)
    return FastRead(pl.concat(rest) if rest else read_lines(b""), first - 1)
