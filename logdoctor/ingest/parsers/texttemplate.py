"""A representative line's layout, compiled once into polars expressions over its tokens.

A line is cut on one separator into tokens (read at CSV speed); each token is literal text or text
around values. As the general path reads it (textrules.SHAPE_VALUE), blanks before a value are not
part of a line's shape, so they are free here too: Megatron's ``iteration       20/    1000 |``
and ``iteration    20000/    1000 |`` are one template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from logdoctor.ingest.parsers.textrules import VALUE, value_spans


@dataclass(frozen=True, slots=True)
class Token:
    """One separator-delimited token of the template: literal text, or text around values."""

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


def _lead(col: pl.Expr, gap: str) -> pl.Expr:
    """A value's text after ``gap``'s blanks: free before a value, as in a line's shape."""
    return col.str.strip_chars_start() if gap != gap.rstrip() else col


def _strip(col: pl.Expr, tok: Token) -> pl.Expr:
    """The token without its literal prefix and suffix (and the blanks before its first value)."""
    # rows without the prefix or suffix are rejected by _affixed, so the affixes' lengths are cut
    # off unchecked: tail/head by a negative count are ~2x cheaper than slice or strip_*
    if tok.suffix:
        col = col.str.head(-len(tok.suffix))
    if core := tok.prefix.rstrip():
        col = col.str.tail(-len(core))
    return _lead(col, tok.prefix)


def _affixed(col: pl.Expr, tok: Token) -> pl.Expr:
    """True where the token has the template's prefix (up to its blanks) and suffix."""
    core = tok.prefix.rstrip()
    ok = col.str.starts_with(core) if core else col.is_not_null()
    return ok & col.str.ends_with(tok.suffix) if tok.suffix else ok


def _inner(tok: Token, line: str) -> list[str]:
    """The texts between every two values of a token (``/`` in ``254/52000``)."""
    spans = value_spans(line)
    return [line[spans[a][1] : spans[b][0]] for a, b in zip(tok.values, tok.values[1:], strict=False)]


def inner_separator(tok: Token, line: str) -> str | None:
    """The one text (up to the blanks before a value) between every two values of a token, if any."""
    seps = {gap.rstrip() for gap in _inner(tok, line)}
    if len(seps) != 1:
        return None
    return seps.pop() or None


def _multi(col: pl.Expr, tok: Token, line: str, used: set[int]) -> tuple[pl.Expr, dict[int, pl.Expr]]:
    """Values of a token that holds several (``254/52000``): split on one repeated separator when
    the template allows, else an anchored regex (a match test alone when no value is used)."""
    gaps = _inner(tok, line)
    if sep := inner_separator(tok, line):
        body = _strip(col, tok)
        parts = body.str.split_exact(sep, len(gaps))
        ok = _affixed(col, tok) & body.str.count_matches(sep, literal=True).eq(len(gaps))
        firsts = ["", *gaps]  # the blanks before the first value went with the prefix
        return ok, {vi: _lead(parts.struct[j], firsts[j]) for j, vi in enumerate(tok.values)}
    group = "({})" if used.intersection(tok.values) else "{}"
    inside = "".join(re.escape(g.rstrip()) + r"\s*" + group.format(VALUE) for g in [tok.prefix, *gaps])
    pattern = "^" + inside + re.escape(tok.suffix) + "$"
    if group == "{}":
        return col.str.contains(pattern), {}
    groups = col.str.extract_groups(pattern)
    return groups.struct[0].is_not_null(), {vi: groups.struct[j] for j, vi in enumerate(tok.values)}


def token_exprs(tokens: list[Token], line: str, used: set[int]) -> tuple[pl.Expr, dict[int, pl.Expr]]:
    """The expression that says a row fits the template, and a String expression per used value."""
    ok = pl.col(f"_t{len(tokens)}").is_null()
    values: dict[int, pl.Expr] = {}
    for j, tok in enumerate(tokens):
        col = pl.col(f"_t{j}")
        if not tok.values:  # an empty token reads as null (``||``, two blanks, a line's last ``|``)
            ok = ok & (col == tok.text if tok.text else col.fill_null("") == "")
        elif len(tok.values) == 1:
            ok = ok & _affixed(col, tok)
            values[tok.values[0]] = _strip(col, tok)
        else:
            fits, vals = _multi(col, tok, line, used)
            ok = ok & fits
            values.update(vals)
    return ok, values


#: Characters the fast path may split lines on: between tokens (``a=1 b=2``, ``| lm loss: 2.5 |``)
#: or between a key and its value; never part of a value (textrules.VALUE).
SEPARATORS = (" ", "=", "|")


def split_cost(tokens: list[Token], line: str, used: set[int] | None = None) -> int:
    """Work to read a line split into ``tokens``: a column each, and a regex for a token whose
    values are not split on one repeated separator (a match test, ~10x cheaper than extracting
    groups, when none of its values is ``used``; all are by default)."""
    cost = len(tokens)
    for t in tokens:
        if len(t.values) > 1 and inner_separator(t, line) is None:
            cost += 20 if used is None or used.intersection(t.values) else 2
    return cost


def layouts(line: str, used: set[int] | None = None) -> list[tuple[str, list[Token]]]:
    """Every way to split ``line`` that cuts no value, cheapest first."""
    splits = [(sep, tokens) for sep in SEPARATORS if sep in line and (tokens := template(line, sep))]
    return sorted(splits, key=lambda st: split_cost(st[1], line, used))


def layout(line: str) -> tuple[str, list[Token]] | None:
    """The cheapest way to split lines of the representative ``line`` (fewest columns: ``=`` for
    ``key=value`` lines, a blank for ``key: value`` lines); None when every separator cuts a value."""
    found = layouts(line)
    return found[0] if found else None
